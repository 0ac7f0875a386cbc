"""The Whoosh engine's ranking (issue 15): BM25F over the fields, exclusions that hold on every match, a query in
capitals read as words, and the model's feedback on the top episodes; on small real indexes."""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from podsearch.engines.base import Document, EngineQuery
from podsearch.engines.compounds import splits
from podsearch.engines.querytext import as_typed, bare_words, hyphens_apart, hyphens_together, readings, words_apart
from podsearch.engines.whoosh import WhooshEngine, fast
from podsearch.engines.whoosh.bm25f import FieldsTerm, as_bm25f
from podsearch.engines.whoosh.exclusions import Excluding
from podsearch.engines.whoosh.query import parse, strategy
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


def test_a_joined_word_is_split_in_two_words_and_read_both_ways_where_it_is_a_plain_word() -> None:
    assert splits("python3") == [("py", "thon3"), ("pyt", "hon3"), ("pyth", "on3"), ("pytho", "n3"), ("python", "3")]
    assert splits("web3") == [("web", "3")]  # (shorter than five: only where letters meet digits)
    assert splits("open") == [] and splits("go1") == [("go", "1")]
    typed = 'opensource -opensource "opensource" title:opensource opensource* open-source OPENSOURCE python3 ANDMAYBE'
    assert bare_words(typed) == [["opensource"], ["OPENSOURCE", "python3"]]  # (in runs of neighbours)
    assert words_apart(typed, (("opensource", "open source"),)) == (
        '(opensource OR "open source") -opensource "opensource" title:opensource opensource* open-source '
        '(OPENSOURCE OR "open source") python3 ANDMAYBE')
    assert words_apart(typed, ()) == typed
    # two neighbours read as one word too; not across an operator, a quote or an excluded word
    assert bare_words('Type script AND web site "x y" java -z script') == [["Type", "script"], ["web", "site"],
                                                                          ["java"], ["script"]]
    assert words_apart("learn Type script fast, type -x script", (("type script", "typescript"),)) == (
        "learn ((Type script) OR typescript) fast, type -x script")


def test_a_hyphenated_word_is_read_as_its_parts_with_the_typed_form_preferred() -> None:
    assert hyphens_apart("fine-tuning language models") == "((fine AND tuning) ANDMAYBE fine-tuning) language models"
    assert hyphens_apart("covid-19 day-to-day") == (
        "((covid AND 19) ANDMAYBE covid-19) ((day AND to AND day) ANDMAYBE day-to-day)")
    # as typed: a quoted phrase, a field's value, a word excluded or required, versions and slashes
    for typed in ('"open-source community"', "title:real-gas", "coffee -open-source", "+wi-fi", "http/2 3.12", "a - b",
                  "open-sour*", "wi-fi~", "wi-fi^2", "x--y", "published:[2025-01-01 to 2025-12-31]",
                  "published:{2024-05 TO x-ray}", "2025-01-01 2-1"):
        assert hyphens_apart(typed) == typed
    assert hyphens_apart('"open-source" real-time') == '"open-source" ((real AND time) ANDMAYBE real-time)'
    # the parts together (OpenSearch's any-word reading), the same words left as typed
    assert hyphens_together("twenty-four hours, covid-19") == "(twenty AND four) hours, (covid AND 19)"
    for typed in ('"open-source community"', "title:real-gas", "coffee -open-source", "+wi-fi", "open-sour*",
                  "2025-01-01 2-1"):
        assert hyphens_together(typed) == typed


def test_a_joined_word_is_one_word_of_the_query_not_a_sentence() -> None:
    """More than 4 words are read on any word straight away; a joined word is one of them (``state-of-the-art
    zebra`` was five words, and answered 251 episodes as if any word would do, without saying so)."""
    assert [r.any_word for r in readings("state-of-the-art zebra", False)] == [False, True]
    assert [r.any_word for r in readings("don't stop believing now", False)] == [False, True]
    assert [r.any_word for r in readings("the state of the art", False)] == [True]


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


def test_passages_score_the_densest_transcript_window(tmp_path: Path) -> None:
    """``Engine.passages``: the best window of the query's words (the index's positions), not their count."""
    filler = " ".join(f"filler{i}" for i in range(60))
    docs = [doc("close", transcript=f"{filler} lightning routing lightning routing {filler} {filler}"),
            doc("spread", transcript=f"lightning {filler} routing {filler} lightning {filler} routing"),
            doc("one", transcript=f"{filler} routing {filler}"),
            doc("none", transcript=filler)]
    e = engine(tmp_path, docs)
    terms = sorted(e.search(EngineQuery(text="lightning routing")).terms["transcript"])
    wide, narrow = e.passages(["close", "spread", "one", "none", "unknown"], terms, 200), \
        e.passages(["close", "spread", "one", "none", "unknown"], terms, 10)
    assert wide[0] == pytest.approx(wide[1]) and wide[0] > wide[2] > 0  # every occurrence fits in 200 words
    assert narrow[0] == pytest.approx(wide[0]) and narrow[1] < narrow[0]  # in 10 words only the close ones count
    assert narrow[1] > narrow[2] > 0 and wide[3] == wide[4] == narrow[3] == narrow[4] == 0.0
    assert e.passages(["close"], [], 10) == [0.0] and e.passages([], terms, 10) == []
    fresh = WhooshEngine(tmp_path / "data", RANKING)  # another engine (no search before it) reads the same
    assert fresh.passages(["close", "spread", "one", "none", "unknown"], terms, 10) == narrow
    # of many words only the rarest count (a wildcard's expansions, a pasted sentence): here "lightning" (2 episodes)
    with e._searcher() as s:
        docnums = [s.document_number(id=i) for i in ("close", "one")]
        rarest = fast.best_windows(s, "transcript", docnums, terms, 10, ["transcript"], most=1)
    assert rarest[0] > 0 and rarest[1] == 0.0  # "one" holds only "routing", the commoner word


def test_a_search_cut_short_rates_no_passages_and_its_moments_count_no_words(tmp_path: Path, sample_data: Path,
                                                                            monkeypatch) -> None:
    """A search already cut short by its deadline is not reordered by its passages, and past the deadline the
    moments read the query's words as they come, not counted most common first: on the site corpus a query of 26
    two-letter prefixes (1,152 words), cut short by its 1 s deadline, spent 0.6 s more rating its words for the
    passages and 0.3-0.8 s counting them for the moments (a fuzzed walk, 5 December 2026)."""
    import time

    from podsearch.engines.segments import ALWAYS_READ
    from podsearch.engines.whoosh.segments import segment_counts

    lib = Library(sample_data)
    try:
        rated: list[list[str]] = []
        passages, search = lib.engine.passages, lib.engine.search
        monkeypatch.setattr(lib.engine, "passages", lambda ids, *a: rated.append(ids) or passages(ids, *a))
        lib.search(SearchRequest(q="coffee"))
        assert rated  # (in time: rated)

        def cut_short(query):
            found = search(query)
            found.timed_out = True
            return found

        rated.clear()
        monkeypatch.setattr(lib.engine, "search", cut_short)
        assert lib.search(SearchRequest(q="coffee beans")).hits and not rated
    finally:
        lib.close()

    filler = " ".join(f"filler{i}" for i in range(60))
    docs = [replace(doc("close", transcript=f"{filler} lightning routing lightning routing {filler}"),
                    segments=(filler, "lightning routing lightning routing", filler)),
            replace(doc("one", transcript=f"{filler} routing {filler}"), segments=(filler, "routing", filler))]
    e = engine(tmp_path, docs)
    terms = sorted(e.search(EngineQuery(text="lightning routing")).terms["transcript"])

    class Counting:
        def __init__(self, searcher):
            self.searcher, self.counted = searcher, 0

        def doc_frequency(self, *args):
            self.counted += 1
            return self.searcher.doc_frequency(*args)

        def __getattr__(self, name):
            return getattr(self.searcher, name)

    many = set(terms) | {f"filler{i}" for i in range(60)} | {f"absent{i}" for i in range(ALWAYS_READ)}
    with e._searcher() as s:
        late = Counting(s)
        segment_counts(late, ["close", "one"], many, deadline=time.monotonic() - 1)
        assert late.counted == 0
        in_time = Counting(s)
        segment_counts(in_time, ["close", "one"], many, deadline=time.monotonic() + 60)
        assert in_time.counted == len(many)  # (in time: most common first, as before)


def test_past_the_deadline_the_first_hits_moments_read_their_words_for_a_tenth_of_a_second(tmp_path: Path,
                                                                                           monkeypatch) -> None:
    """The first hits' moments read ``ALWAYS_READ`` (64) of the query's words whatever the time: for a page of 100
    hits of twelve two-letter prefixes (767 words) that took 0.12 s on a quiet machine after the 1 s deadline had
    passed, 0.1-0.3 s under load. Now they read for at most ``GRACE`` seconds after the deadline, or after the count
    began when that is later (a search cut short still shows a moment), and say they were cut short; in time,
    every word is read. (Each word's positions read here take 5 ms, as from a slow disk.)"""
    import time

    from podsearch.engines.whoosh import segments

    filler = [f"filler{i}" for i in range(60)]
    docs = [replace(doc(name, transcript=" ".join(filler)), segments=(" ".join(filler[:30]), " ".join(filler[30:])))
            for name in ("a", "b")]
    e = engine(tmp_path, docs)
    read = segments.doc_positions

    def slow(*args):
        time.sleep(0.005)
        return read(*args)

    monkeypatch.setattr(segments, "doc_positions", slow)
    with e._searcher() as s:
        began = time.monotonic()
        late = segments.segment_counts(s, ["a", "b"], set(filler), deadline=began - 1)
        took = time.monotonic() - began
        assert took < 0.2, took  # GRACE, 0.1 s, and a word (before: 60 words, 0.3 s)
        assert set(late) == {"a", "b"} and not any(c.complete for c in late.values())
        assert all(0 < c.tokens.sum() < 60 for c in late.values())
        calm = segments.segment_counts(s, ["a", "b"], set(filler), deadline=time.monotonic() + 60)
        assert all(c.complete and c.tokens.sum() == 60 for c in calm.values())


def test_positions_read_for_a_search_are_kept_for_the_next(tmp_path: Path, monkeypatch) -> None:
    """``fast.doc_positions`` keeps what it read (a segment never changes): the page's moments and the next search
    on the same words do not read the posting blocks again, and a document without the word is remembered too."""
    docs = [doc("a", transcript="alpha beta alpha"), doc("b", transcript="beta gamma"), doc("c", transcript="alpha")]
    e = engine(tmp_path, docs)
    with e._searcher() as s:
        reader, _ = next(iter(s.reader().leaf_readers())) if not s.reader().is_atomic() else (s.reader(), 0)
        numbers = [s.document_number(id=i) for i in ("a", "b", "c")]
        first = fast.doc_positions(reader, "transcript", b"alpha", sorted(numbers))
        assert [(d, w.tolist()) for d, w in first] == [(numbers[0], [0, 2]), (numbers[2], [0])]

        def unread(*_args):
            raise AssertionError("read again")

        monkeypatch.setattr(fast, "_read_positions", unread)
        again = fast.doc_positions(reader, "transcript", b"alpha", sorted(numbers))
        assert [(d, w.tolist()) for d, w in again] == [(d, w.tolist()) for d, w in first]


def test_kept_arrays_are_bounded_by_bytes_empty_ones_too() -> None:
    """The postings' and positions' LRU counts each entry's overhead: "does not hold the word" (an empty array),
    kept for every hit of every search, cannot grow without bound; a key put twice is counted once."""
    import numpy as np

    kept = fast._Sized(100 * fast._Sized.ENTRY_BYTES)
    for i in range(10_000):
        kept.put(("word", i), (np.empty(0, np.int64),))
    assert len(kept) == 100 and kept.size == 100 * fast._Sized.ENTRY_BYTES
    kept.put(("word", 9_999), (np.arange(10, dtype=np.int64),))  # replaced (its old size given back), then the
    assert len(kept) == 99 and kept.size == 99 * fast._Sized.ENTRY_BYTES + 80  # oldest entry goes for its 80 bytes
    assert kept.get(("word", 9_999))[0].tolist() == list(range(10)) and kept.get(("word", 9_900)) is None


def test_with_passages_reorders_the_top_by_its_best_window() -> None:
    from podsearch.engines.base import EngineHit
    from podsearch.feedback import with_passages

    hits = [EngineHit(str(i), 10.0 - i) for i in range(5)]
    fb = replace(FEEDBACK, depth=3, passage=0.5)
    moved = with_passages(hits, [0.0, 0.0, 4.0], fb)  # the third gains 0.5 x 10 = 5: first
    assert [h.id for h in moved] == ["2", "0", "1", "3", "4"] and moved[0].score == pytest.approx(13.0)
    assert with_passages(hits, [0.0, 0.0, 0.0], fb) == hits  # no window holds a word: the engine's order
    assert with_passages(hits, [1.0, 2.0, 4.0], OFF) == hits
    assert [h.id for h in with_passages(hits, [2.0, 2.0, 2.0], fb)] == [h.id for h in hits]  # ties keep the order
    top2 = with_passages(hits, [0.0, 4.0, 9.0], replace(fb, passage_depth=2))  # only the top 2 are judged by passage
    assert [h.id for h in top2] == ["1", "0", "2", "3", "4"]


def test_passages_only_reorder_the_top_and_pages_stay_consistent(sample_data: Path) -> None:
    lib = Library(sample_data)
    try:
        lib.feedback = replace(FEEDBACK, weight=0.0, passage=5.0)  # passages alone, loud
        changed = []
        for q in ("coffee", "fermentation", "salt", "bees", "fire"):
            fed = [h.id for h in lib.search(SearchRequest(q=q, per_page=30)).hits]
            pages = [h.id for p in (1, 2, 3) for h in lib.search(SearchRequest(q=q, page=p, per_page=2)).hits]
            assert pages == fed[:6]
            lib.feedback = OFF
            plain = [h.id for h in lib.search(SearchRequest(q=q, per_page=30)).hits]
            lib.feedback = replace(FEEDBACK, weight=0.0, passage=5.0)
            assert set(fed) == set(plain)
            changed += [q] if fed != plain else []
        assert changed, "a loud passage weight reorders some list"
    finally:
        lib.close()


def test_the_search_passages_setting_turns_the_passage_step_on(sample_data: Path) -> None:
    """On by default at 0.1 (docs/search.md); ``search_passages`` sets its weight (0 turns it off), and a loud
    weight reorders what the default ranking lists."""
    from conftest import sample_config

    default = Library.from_config(sample_config(sample_data, {}))
    off = Library.from_config(sample_config(sample_data, {}, search_passages=0.0))
    loud = Library.from_config(sample_config(sample_data, {}, search_passages=5.0))
    try:
        assert default.feedback.passage == 0.1 and default.feedback.passages
        assert off.feedback.passage == 0.0 and not off.feedback.passages
        assert loud.feedback.passage == 5.0 and loud.feedback.passages
        moved = []
        for q in ("coffee", "fermentation", "salt", "bees", "fire"):
            plain = [h.id for h in default.search(SearchRequest(q=q, per_page=30)).hits]
            fed = [h.id for h in loud.search(SearchRequest(q=q, per_page=30)).hits]
            assert set(plain) == set(fed)
            moved += [q] if plain != fed else []
        assert moved
    finally:
        default.close()
        off.close()
        loud.close()


def test_hits_that_tie_are_ranked_by_id_whatever_the_build() -> None:
    """Two copies of one talk scored alike to the last digit shown, and their order was the index build's numbering:
    a rebuild swapped our known item K310 with its copy (first to second). Ties within a millionth go by id."""
    from podsearch.engines.base import EngineHit
    from podsearch.feedback import FEEDBACK, with_passages

    hits = [EngineHit("talk/b-copy", 10.0 + 1e-9), EngineHit("talk/a", 10.0), EngineHit("other", 9.0)]
    ordered = with_passages(hits, [1.0, 1.0, 0.5], FEEDBACK)
    assert [h.id for h in ordered] == ["talk/a", "talk/b-copy", "other"]
    swapped = with_passages([hits[1], hits[0], hits[2]], [1.0, 1.0, 0.5], FEEDBACK)
    assert [h.id for h in swapped] == ["talk/a", "talk/b-copy", "other"]


def test_scores_within_a_millionth_in_the_reordered_top_are_a_tie_broken_by_id() -> None:
    """Two copies of one talk scored 39.768195 and 39.768194 in a fresh build of the site corpus (the last bits of a
    sum): rounded to six places they were no tie, and the copy came before our known item K310's episode."""
    from podsearch.engines.base import EngineHit
    from podsearch.feedback import _reordered

    head = [EngineHit("b-copy", 39.7681954), EngineHit("a-talk", 39.7681944), EngineHit("c-other", 39.7)]
    assert [h.id for h in _reordered(head, [], [0.0, 0.0, 0.0])] == ["a-talk", "b-copy", "c-other"]
    apart = [EngineHit("b", 40.0), EngineHit("a", 39.9)]
    assert [h.id for h in _reordered(apart, [], [0.0, 0.0])] == ["b", "a"]


def test_a_letters_typeahead_words_come_from_the_warm_lexicon(sample_data: Path, monkeypatch) -> None:
    """The typeahead's words for a prefix are the most frequent the ``words`` field holds; for a first keystroke
    they were read from the term files, each word's frequency (0.5-3 s for one letter on the site corpus under
    load, a fuzzed walk, 5 December 2026). With the spelling lexicon in memory (made by ``warm``) a few dozen
    candidates are read, and the words are the same."""
    from podsearch.engines.whoosh import spelling
    from podsearch.lru import LRU

    monkeypatch.setattr(spelling, "_LEXICONS", LRU(4))  # (none made yet: another test's copy of the sample is alike)
    lib = Library(sample_data)
    try:
        e = lib.engine
        with e._searcher() as s:
            class Counting:
                def __init__(self) -> None:
                    self.counted = 0

                def doc_frequency(self, *args):
                    self.counted += 1
                    return s.doc_frequency(*args)

                def __getattr__(self, name):
                    return getattr(s, name)

            prefixes = ["s", "c", "b", "st", "w", "zz", "é"]
            cold = {}
            for p in prefixes:
                e._terms_cache = type(e._terms_cache)(1)
                cold[p] = e._frequent(s, "words", p, 8)
            assert spelling.loaded(s.reader()) is None and len(cold["s"]) == 8
            spelling.lexicon(s.reader())
            for p in prefixes:
                e._terms_cache = type(e._terms_cache)(1)
                counting = Counting()
                assert e._frequent(counting, "words", p, 8) == cold[p], p
                assert counting.counted <= 4 * 8 + 8, (p, counting.counted)
    finally:
        lib.close()


def test_a_word_said_only_in_an_episodes_sponsor_read_counts_as_not_said(tmp_path: Path) -> None:
    """Three episodes carry one sponsor read word for word (a run the model finds: similar/runs.py) that says
    "OpenTelemetry"; the episode that talks about it ranks first for the word, the read's episodes after it (not
    dropped). A query with syntax (a quoted word) is read as typed."""
    import json

    from podsearch.config import load_config
    from podsearch.reindex import import_jsonl

    read = ("This portion of the show is brought to you by Sentry, whose OpenTelemetry support sends the spans of every "
            "service to one place, so a slow request is found before your users ever find it. Visit sentry dot io "
            "today and try it free for a month.")
    topics = {"ad-1": "postgres indexes and query plans", "ad-2": "gardening tomatoes and compost",
              "ad-3": "compilers and register allocation"}
    lines = [{"id": i, "show": "Stack Show", "title": f"About {t}",
              "transcript": f"{f'We talk about {t}. ' * 6}{read} {f'We talk about {t}. ' * 6}"} for i, t in topics.items()]
    other = " ".join(f"We discuss release planning, code review and the team's rituals number {n}." for n in range(40))
    lines.append({"id": "otel", "show": "Stack Show", "title": "Observability",
                  "transcript": f"{other} We moved our services to OpenTelemetry last year and it changed how we debug. "
                                f"{other}"})
    lines += [{"id": f"x-{n}", "show": "Stack Show", "title": f"Misc {n}", "transcript": f"{other} filler{n}"}
              for n in range(4)]
    source = tmp_path / "a.jsonl"
    source.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    import_jsonl(load_config({"data": str(tmp_path / "data")}, environ={}), source)
    lib = Library(tmp_path / "data", search_deadline=0)
    try:
        def ranked(q: str) -> list[str]:
            return [h.id for h in lib.ranked(SearchRequest(q=q)).hits]

        found = ranked("opentelemetry")
        assert found[0] == "otel" and sorted(found) == ["ad-1", "ad-2", "ad-3", "otel"]
        assert ranked('"opentelemetry"')[0] != "otel"  # syntax: read as before, the read's short episodes first
        lib.feedback = replace(FEEDBACK, reads=False)
        assert ranked("opentelemetry")[0] != "otel"  # without the rule too
    finally:
        lib.close()
