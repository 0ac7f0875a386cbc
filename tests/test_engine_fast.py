"""The numpy scoring of ranked searches (engines/whoosh/fast.py) gives what Whoosh's matchers give: the same top
ten with the same scores, the same total and the same matching documents, for every query of the bench mix, the
dev queries and the syntax cases, on the site corpus; deleted documents stay out."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import numpy as np
import pytest
from whoosh.query import Every

from podsearch.config import load_config
from podsearch.engines.whoosh import WhooshEngine, fast
from podsearch.engines.whoosh.query import strategy
from podsearch.engines.whoosh.scoring import page as whoosh_page
from podsearch.engines.whoosh.scoring import weighting
from podsearch.reindex import import_jsonl

ROOT = Path(__file__).resolve().parent.parent


def _queries() -> list[str]:
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    from bench.identity import requests

    return sorted({r["q"] for r in requests() if r["q"].strip()})


def _same(engine: WhooshEngine, texts: list[str], pagelen: int = 10) -> int:
    checked = 0
    with engine._index().searcher(weighting=weighting(engine.ranking)) as s:
        profiles = engine.profiles(s)
        for text in texts:
            first, fallback = strategy(text, False, profiles, engine.ranking)
            for q in (first, fallback):
                if q is None:
                    continue
                q, _ = engine._bounded(s, q, None)
                slow, _ = whoosh_page(q, s, 1, pagelen, None, None)
                quick = fast.Page(s, q, 1, pagelen, None, None)
                assert quick.total == slow.total, text
                assert set(quick.docs().tolist()) == set(slow.results.docs()), text
                a = [(h.docnum, h.score) for h in slow]
                b = [(h.docnum, h.score) for h in quick]
                assert [d for d, _ in a] == [d for d, _ in b], (text, a[:3], b[:3])
                assert all(math.isclose(x, y, rel_tol=1e-9, abs_tol=1e-12) for (_, x), (_, y) in zip(a, b)), text
                checked += 1
    return checked


@pytest.mark.slow
def test_the_top_ten_is_whooshs_on_the_bench_mix_and_the_dev_queries(site_index: Path) -> None:
    assert _same(WhooshEngine(site_index), _queries()) > 150


def _whoosh_by_date(newest: bool):
    """The order Whoosh's sorted collector gave a date-sorted search (the engine's, until 4 December 2026): on
    the date column, whose missing value is its largest, negated for newest first unless missing; then (since 6
    December 2026) on the order column (``base.listing_key``), the highest first when newest first."""
    from whoosh import sorting

    from podsearch.engines.whoosh.schema import make_schema

    order = sorting.FieldFacet("order", reverse=newest)
    if not newest:
        return sorting.MultiFacet([sorting.FieldFacet("published"), order])
    missing = make_schema()["published"].column_type.default_value()
    return sorting.MultiFacet([sorting.TranslateFacet(lambda key: key if key == missing else -key,
                                                      sorting.FieldFacet("published")), order])


def _same_date_order(engine: WhooshEngine, texts: list[str], pagelen: int = 8) -> int:
    checked = 0
    with engine._index().searcher(weighting=weighting(engine.ranking)) as s:
        for text in texts:
            q = strategy(text, False, engine.profiles(s), engine.ranking)[0] if text else Every()
            q, _ = engine._bounded(s, q, None)
            for newest in (True, False):
                places = fast.date_places(s.reader(), newest)
                for pagenum in (1, 2):
                    slow, _ = whoosh_page(q, s, pagenum, pagelen, None, _whoosh_by_date(newest))
                    quick = fast.Page(s, q, pagenum, pagelen, None, None, places)
                    assert quick.total == slow.total > pagelen, text  # (Whoosh shows a page past the end as the last)
                    assert [h.docnum for h in quick] == [h.docnum for h in slow], (text, newest, pagenum)
                    checked += 1
    return checked


def test_the_date_order_is_whooshs_sorted_collectors(site_index: Path) -> None:
    """Date-sorted searches (the search feeds, watches, ``sort=date`` and ``oldest``) are matched in numpy and
    ordered by ``fast.date_places``: the same pages as Whoosh's sorted collector, on the site corpus, whose
    Changelog shows have no dates (they come after every dated episode either way, by ``base.listing_key``)."""
    engine = WhooshEngine(site_index)
    assert _same_date_order(engine, ["", "go", "bitcoin", "open source -kubernetes", '"machine learning"', "lig*",
                                     "taproot OR kubernetes"]) == 28


def test_deleted_and_changed_episodes_and_several_segments(tmp_path: Path) -> None:
    data = tmp_path / "data"
    config = load_config({"data": str(data)}, environ={})
    words = ["otters", "beavers", "herons otters", "kingfishers", "muskrats otters"]
    lines = [{"id": f"ep-{n}", "show": "Upkeep", "title": f"Episode {n}", "transcript": f"We talk about {words[n % 5]}.",
              **({"published": f"2024-{1 + n % 12:02d}-{1 + n % 3:02d}"} if n % 4 else {})} for n in range(30)]
    (tmp_path / "a.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    import_jsonl(config, tmp_path / "a.jsonl")
    changed = [{**x, "transcript": "Nothing but weather."} for x in lines[:6]]  # six episodes change: new segment
    (tmp_path / "b.jsonl").write_text("".join(json.dumps(x) + "\n" for x in changed), encoding="utf-8")
    import_jsonl(config, tmp_path / "b.jsonl")
    engine = WhooshEngine(data)
    assert len(engine._index()._segments()) > 1  # the changed episodes are deleted in the first segment
    assert _same(engine, ["otters", "otters -herons", "weather", '"about otters"', "episode", "beavers OR weather",
                          "-otters", "NOT herons", "episode -(otters OR weather)"]) >= 9
    assert _same_date_order(engine, ["", "otters", "weather", "episode"], pagelen=2) == 16
    with engine._index().searcher(weighting=weighting(engine.ranking)) as s:
        q = strategy("otters", False, engine.profiles(s), engine.ranking)[0]
        scores, matched = fast.evaluate(q, s)
        ids = {s.stored_fields(int(d))["id"] for d in np.flatnonzero(matched)}
    assert "ep-0" not in ids and "ep-10" in ids  # ep-0 changed (its old copy is deleted), ep-10 did not
    with engine._index().searcher() as s:  # a term file's document frequency counts what the postings hold
        leaves = fast._leaves(s.reader())
        assert any(r.has_deletions() for r, _ in leaves)
        for r, _ in leaves:
            for term in r.lexicon("transcript"):
                assert r.doc_frequency("transcript", term) == len(fast.postings(r, "transcript", term)[0]), term


def _lucene_fits(places_of_each: list[list[int]], slop: int, again: tuple[int, ...] = ()) -> bool:
    """Brute force: one position per word (word i's less i) whose spread is at most ``slop``; the words of ``again``
    (one word said more than once) each at a position of its own."""
    from itertools import product

    return any(max(p - i for i, p in enumerate(c)) - min(p - i for i, p in enumerate(c)) <= slop
               and len({c[i] for i in again}) == len(again) for c in product(*places_of_each))


def test_a_sloppy_phrase_is_matched_as_lucene_counts_moves() -> None:
    """``fast.near`` (Whoosh's ``"…"~N`` since 4 December 2026) against trying every choice of positions, on random
    documents of three words, or of two with the first said again: the same documents for slops 2 to 5, 12 and 40
    (both ways of choosing the windows). A word said twice needs a position for each of its places, two different
    ones as in Lucene (until 5 December 2026 one position could serve both when the window spanned them)."""
    rng = np.random.default_rng(7)
    for slop in (0, 1, 2, 3, 4, 5, 12, 40):
        for _ in range(200):
            docs = {d: [sorted(set(rng.integers(0, 30, rng.integers(1, 4)).tolist())) for _ in range(3)]
                    for d in sorted(set(rng.integers(0, 50, 5).tolist()))}
            for said, again in ((docs, ()), ({d: [a, b, a] for d, (a, b, _) in docs.items()}, (0, 2)),
                                ({d: [a, a, b] for d, (a, b, _) in docs.items()}, (0, 1))):
                keys = [np.array([d * fast._SHIFT + p - i + fast._PLACE_BIAS for d, each in said.items() for p in each[i]],
                                 dtype=np.int64) for i in range(3)]
                expected = [d for d, each in said.items() if _lucene_fits(each, slop, again)]
                got = fast.near(keys, slop, places=range(3), again=[list(again)] if again else [])[0].tolist()
                assert got == expected, (slop, said, again)


def test_a_sloppy_phrase_never_runs_whooshs_matcher_and_stops_at_the_deadline(sample_data_template: Path,
                                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """Whoosh's sloppy matcher works inside a document, where no deadline is read: 40 common words within 100,000
    moves took 493 s of CPU on the site corpus. Every phrase is matched in numpy (a word said twice too), a
    window wider than the documents needs no matching, and a phrase past the deadline stops before its third word
    (an exact one too: 40 common words read 2.8 s of positions, cold, at 10k), said to be cut short."""
    engine = WhooshEngine(sample_data_template)

    def refused(*_a):
        raise AssertionError("Whoosh's matcher ran a phrase")

    monkeypatch.setattr(fast.Evaluator, "_whoosh", refused)
    with engine._index().searcher(weighting=weighting(engine.ranking)) as s:
        def matched(text: str, deadline: float | None = None) -> tuple[int, bool]:
            ev = fast.Evaluator(s, deadline)
            q, _ = engine._bounded(s, strategy(text, False, engine.profiles(s), engine.ranking)[0], None)
            return int(ev.run(q)[1].sum()), ev.timed_out

        # a word said twice is two positions, as in Lucene: "waggle" 182 and 190 of one transcript are 7 moves apart
        # (until 5 December 2026 one "waggle" was the phrase at any slop: 2 episodes); it ran Whoosh's matcher
        assert (matched('"waggle waggle"~7')[0], matched('"waggle waggle"~6')[0], matched('"waggle waggle"')[0]) == (1, 0, 0)
        assert matched('"waggle waggle"~100000')[0] == 1  # (no wide-window shortcut: one episode says it twice)
        assert matched('"forager dance"~100000') == matched("forager dance") != (0, False)  # every doc with both
        three = ('"returning forager performs"', '"returning performs forager"~5')
        assert all(matched(q)[0] >= 1 for q in three)
        # excluded alone, the phrase is matched in numpy too (Whoosh's NOT ran its own matcher: 216 s on the site
        # corpus for -"<40 common words>"~100000)
        for q in ('"forager dance"~100000', '"returning performs forager"~5'):
            assert matched(f"NOT {q}") == matched(f"-{q}") == (s.doc_count() - matched(q)[0], False)
        monkeypatch.setattr(fast, "monotonic", lambda: 1e12)  # past due: two words' positions read, not the third
        assert [matched(q, deadline=1.0) for q in three] == [(0, True), (0, True)]
        # a pattern's words past due: those not read yet are left out; excluded, every episode is (some were)
        patterns = "title:s* OR title:t*"
        assert 0 < matched(patterns, deadline=1.0)[0] < matched(patterns)[0] and matched(patterns, deadline=1.0)[1]
        assert matched(f"NOT ({patterns})", deadline=1.0) == (0, True) != matched(f"NOT ({patterns})")
        # excluded and cut short, a phrase excludes every episode holding its words (it excluded none)
        holding = matched("transcript:(returning forager performs)")[0]
        for q in ('transcript:"returning forager performs"', 'transcript:"returning performs forager"~5'):
            assert matched(f"NOT {q}", deadline=1.0) == (s.doc_count() - holding, True) != (s.doc_count(), True)
        # a phrase of two words after a part cut short is still read whole
        whole = matched('"forager performs"')[0]
        assert matched('"returning forager performs" OR "forager performs"', deadline=1.0) == (whole, True) != (0, True)


def test_a_phrase_among_a_few_documents_matches_what_it_matches_among_all(sample_data_template: Path) -> None:
    """A filter's documents are the phrase's candidates, and a few candidates' positions are read one by one
    (``fast.FEW_CANDIDATES``): the matches are those of the phrase over every document, within the filter."""
    engine = WhooshEngine(sample_data_template)
    with engine._index().searcher(weighting=weighting(engine.ranking)) as s:
        n = s.reader().doc_count_all()
        for text in ('"waggle waggle"~7', '"forager dance"', '"returning performs forager"~5', '"the starter"',
                     'NOT "forager dance"', '"sourdough starter" bread'):
            q, _ = engine._bounded(s, strategy(text, False, engine.profiles(s), engine.ranking)[0], None)
            everywhere = fast.Evaluator(s).run(q)[1]
            for allowed in (np.arange(n) % 2 == 0, np.arange(n) % 3 == 1, everywhere.copy()):
                within = fast.Evaluator(s, allowed=allowed).run(q)[1] & allowed
                assert (within == (everywhere & allowed)).all(), text
