"""The Whoosh engine's ranking (issue 15): BM25F over the fields, exclusions that hold on every match, a query in
capitals read as words, and the model's feedback on the top episodes; on small real indexes."""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from podsearch.engines.base import Document, EngineQuery
from podsearch.engines.whoosh import WhooshEngine
from podsearch.engines.whoosh.bm25f import FieldsTerm, as_bm25f
from podsearch.engines.whoosh.exclusions import Excluding
from podsearch.engines.whoosh.query import as_typed, parse, strategy
from podsearch.engines.whoosh.ranking import BEFORE, RANKING
from podsearch.feedback import FEEDBACK, OFF
from podsearch.requests import SearchRequest
from podsearch.service import Library


def doc(i: str, title: str = "", notes: str = "", transcript: str = "") -> Document:
    return Document(id=i, show_id="s", show="A Show", title=title, persons=[], speakers=[], notes=notes,
                    transcript=transcript, published=None, duration=None, language="en", link="", audio_url="",
                    content_hash=f"{i}{title}{notes}{transcript}")


class Docs:
    def __init__(self, docs: list[Document]) -> None:
        self.by_id = {d.id: d for d in docs}

    def hashes(self) -> dict[str, str]:
        return {i: d.content_hash for i, d in self.by_id.items()}

    def documents(self, ids: Iterable[str]) -> Iterator[Document]:
        return (self.by_id[i] for i in ids if i in self.by_id)


def engine(tmp_path: Path, docs: list[Document], ranking=RANKING) -> WhooshEngine:
    e = WhooshEngine(tmp_path / "data", ranking)
    e.sync(Docs(docs))
    return e


def hits(e: WhooshEngine, q: str) -> list[str]:
    return [h.id for h in e.search(EngineQuery(text=q, per_page=100)).hits]


def test_an_excluded_word_excludes_the_first_match_too(tmp_path: Path) -> None:
    """Whoosh's AndNot let its first match through when the excluded word's first posting came earlier."""
    docs = [doc("0", transcript="bitcoin only"), doc("1", transcript="utreexo and bitcoin"),
            doc("2", transcript="utreexo alone")]
    for ranking in (BEFORE, RANKING):
        e = engine(tmp_path / ranking.__class__.__name__ / str(ranking.bm25f), docs, ranking)
        assert hits(e, "utreexo -bitcoin") == ["2"]
        assert hits(e, "utreexo NOT bitcoin") == ["2"]
        assert hits(e, "bitcoin -utreexo") == ["0"]
        assert hits(e, "utreexo") and set(hits(e, "utreexo")) == {"1", "2"}
    assert isinstance(parse("utreexo -bitcoin"), Excluding)


def test_highlight_terms_leave_the_excluded_word_out(tmp_path: Path) -> None:
    e = engine(tmp_path, [doc("1", transcript="sourdough starter with rye"), doc("2", transcript="a starter")])
    found = e.search(EngineQuery(text="starter -rye"))
    assert [h.id for h in found.hits] == ["2"]
    assert "rye" not in set().union(*found.terms.values()) and "starter" in found.terms["transcript"]


def test_a_query_in_capitals_is_read_in_lower_case() -> None:
    assert as_typed("TO BE OR NOT TO BE") == "to be or not to be"
    assert as_typed("NASA OR ESA") == "nasa or esa"
    assert as_typed("nasa OR esa") == "nasa OR esa"  # a lower-case letter: operators are operators
    assert as_typed("Übermensch NOT") == "Übermensch NOT"
    assert as_typed("1984") == "1984"
    shouted, written = strategy("VOLCANO AND LAVA", False), strategy("volcano and lava", False)
    assert repr(shouted) == repr(written)


def test_minus_words_keep_the_fallback_written_operators_do_not() -> None:
    assert strategy("kimchi telegraph -cabbage", False)[1] is not None
    assert strategy("kimchi AND telegraph", False)[1] is None


def test_bm25f_scores_a_word_once_over_its_fields(tmp_path: Path) -> None:
    """One idf per word (the largest document frequency over its fields), weighted frequencies added over the
    fields with each field's length normalisation, saturated once."""
    docs = [doc("1", title="otters", transcript="otters otters and beavers swim"),
            doc("2", transcript="beavers build dams in rivers all day long"),
            doc("3", notes="otters", transcript="herons fish")]
    ranking = replace(RANKING, weights=(("title", 2.0), ("notes", 1.5), ("transcript", 1.0)), k1=1.5,
                      b=(("transcript", 0.5),), b_default=0.75)
    e = engine(tmp_path, docs, ranking)
    scores = {h.id: h.score for h in e.search(EngineQuery(text="otters", per_page=10)).hits}
    n, df = 3, 1  # "otter" is in one title, one notes and one transcript: the largest field frequency is 1
    idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
    # field lengths in words (stop words "and", "in" dropped): title 1/0/0, notes 0/0/1, transcript 4/7/2
    avg = {"title": 1 / 3, "notes": 1 / 3, "transcript": 13 / 3}

    def norm(field: str, length: int, b: float) -> float:
        return 1 - b + b * length / avg[field]

    tf1 = 2.0 * 1 / norm("title", 1, 0.75) + 1.0 * 2 / norm("transcript", 4, 0.5)
    tf3 = 1.5 * 1 / norm("notes", 1, 0.75)
    expected = {i: idf * tf * 2.5 / (tf + 1.5) for i, tf in (("1", tf1), ("3", tf3))}
    assert scores == pytest.approx(expected, rel=1e-6)
    parsed = as_bm25f(parse("otters", ranking=BEFORE), {}, 1.2)
    assert isinstance(parsed, FieldsTerm) and set(parsed.weights) == {f for f, _ in BEFORE.weights}


def test_feedback_reorders_the_top_and_pages_stay_consistent(sample_data: Path) -> None:
    lib = Library(sample_data)
    try:
        for q in ("coffee", "fermentation", "volcano sound"):
            lib.feedback = OFF
            plain = lib.search(SearchRequest(q=q, per_page=30))
            lib.feedback = replace(FEEDBACK, weight=5.0)  # loud enough to change orders on a small sample
            fed = lib.search(SearchRequest(q=q, per_page=30))
            assert {h.id for h in fed.hits} == {h.id for h in plain.hits} and fed.total == plain.total
            assert [h.score for h in fed.hits] == sorted((h.score for h in fed.hits), reverse=True)
            pages = [h.id for p in (1, 2, 3) for h in lib.search(SearchRequest(q=q, page=p, per_page=2)).hits]
            assert pages == [h.id for h in fed.hits][:6]
        plain_lib = Library(sample_data)
        plain_lib.feedback = OFF
        changed = [q for q in ("coffee", "fermentation", "salt", "bees", "fire")
                   if [h.id for h in lib.search(SearchRequest(q=q, per_page=30)).hits] !=
                   [h.id for h in plain_lib.search(SearchRequest(q=q, per_page=30)).hits]]
        plain_lib.close()
        assert changed, "a loud feedback reorders some list"
    finally:
        lib.close()


def test_ranked_is_what_search_shows(sample_data: Path) -> None:
    """``podsearch eval search`` scores ``Library.ranked``: the ids and order of ``Library.search``'s pages."""
    lib = Library(sample_data)
    try:
        for q in ("coffee", "sourdough starter -rye", "VOLCANO AND LAVA", '"waggle dance"', "kimchi telegraph"):
            for page, per_page in ((1, 10), (2, 3), (1, 100)):
                req = SearchRequest(q=q, page=page, per_page=per_page)
                assert [h.id for h in lib.ranked(req).hits] == [h.id for h in lib.search(req).hits], (q, page)
    finally:
        lib.close()
