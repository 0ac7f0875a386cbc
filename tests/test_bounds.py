"""No request can take search down: each bound on a query's expansion, the deadline, fair sharing of workers,
the counters, and the load case (hostile clients beside an ordinary one, over real HTTP on loopback)."""

from __future__ import annotations

import re
import shutil
import time
from pathlib import Path

import pytest
from soak import hostile

from podsearch.config import load_config
from podsearch.engines import expansions
from podsearch.engines.querytext import RELAX_BELOW
from podsearch.engines.whoosh import bounds, fast
from podsearch.errors import Overloaded
from podsearch.requests import SearchRequest
from podsearch.service import Library
from podsearch.web import create_app
from podsearch.web.admission import Admission

HOSTILE = hostile.HOSTILE  # the queries of issue 17 and the like: each answers or is refused within 2 s


def _app(data: Path, **settings):
    return create_app(load_config({"data": str(data), **settings}, environ={}), {"TESTING": True})


def test_a_leading_wildcard_is_refused_with_the_fix(client) -> None:
    for q in ["*ing", "?oney", "honey *ees", "title:*ee"]:
        res = client.get("/api/search", query_string={"q": q})
        assert res.status_code == 400, q
        message = res.get_json()["error"]["message"]
        assert "starts with a wildcard" in message and "kube*" in message


def test_deep_parentheses_are_refused(client) -> None:
    res = client.get("/api/search", query_string={"q": "(" * 9 + "honey" + ")" * 9})
    assert res.status_code == 400 and "nests parentheses 9 deep" in res.get_json()["error"]["message"]
    assert client.get("/api/search", query_string={"q": "((honey) OR (bees))"}).status_code == 200


def test_a_star_alone_browses_every_episode_newest_first(client) -> None:
    every = client.get("/api/search", query_string={"q": "*", "per_page": 100}).get_json()
    assert every["total"] == 36 and len(every["hits"]) == 36
    dates = [h["published"] for h in every["hits"] if h["published"]]
    assert dates == sorted(dates, reverse=True)


def test_a_wildcard_runs_on_its_most_frequent_words_and_says_so(sample_data: Path, monkeypatch) -> None:
    client = _app(sample_data).test_client()
    whole = client.get("/api/search", query_string={"q": "ho*"}).get_json()
    assert whole["total"] > 0 and whole["notes"] == []
    many = client.get("/api/search", query_string={"q": "s*"}).get_json()
    assert "the 64 most frequent were searched" in many["notes"][0]
    monkeypatch.setattr(expansions, "MAX_EXPANSIONS", 3)
    client = _app(sample_data).test_client()  # a new engine: bounded queries are kept per engine
    cut = client.get("/api/search", query_string={"q": "ho*"}).get_json()
    assert 0 < cut["total"] <= whole["total"]
    assert len(cut["notes"]) == 1 and "the 3 most frequent were searched" in cut["notes"][0]
    page = client.get("/search", query_string={"q": "ho*"}).get_data(as_text=True)
    assert "the 3 most frequent were searched" in page


@pytest.mark.parametrize("q", ["host -qu*", "host NOT qu*", "-qu*", "host -(bees OR qu*)", "host -q?e*", "host -vo*"])
def test_an_excluded_pattern_excludes_every_word_it_matches(sample_data: Path, monkeypatch, q: str) -> None:
    """Searched, a pattern is its most frequent words; excluded, each of its words (at most MAX_MATCHING_WORDS):
    ``go -ch*`` found a site episode saying "choir", 'ch*' matching 818 words of which the 64 most frequent were
    excluded (a fuzzed walk, 5 December 2026)."""
    from podsearch.catalog import Catalog
    from podsearch.engines.whoosh.analysis import spoken_analyzer

    monkeypatch.setattr(expansions, "MAX_EXPANSIONS", 1)
    client = _app(sample_data).test_client()
    found = client.get("/api/search", query_string={"q": q, "per_page": 100, "correct": "false"}).get_json()
    pattern = re.compile({"qu*": "qu", "q?e*": "q.e", "vo*": "vo"}[q.split()[-1].strip("-)")])
    holding = []
    with Catalog.in_dir(sample_data) as catalog:
        for hit in found["hits"]:
            ep = catalog.episode(hit["id"])
            show = catalog.show(ep.show_id)
            text = "\n".join([ep.title, ep.description_text, ep.transcript_text, show.title if show else "",
                              " ".join(p.name for p in ep.persons)])
            if [w for w in spoken_analyzer().texts(text) if pattern.match(w)]:
                holding.append(hit["id"])
    assert found["hits"] and not holding and not found["notes"], (holding, found["notes"])
    searched = client.get("/api/search", query_string={"q": "host qu*"}).get_json()
    assert "the 1 most frequent were searched" in searched["notes"][0]  # (searched, it is bounded as before)


def test_a_part_matching_too_many_words_is_refused(sample_data: Path, monkeypatch) -> None:
    monkeypatch.setattr(expansions, "MAX_MATCHING_WORDS", 5)
    client = _app(sample_data).test_client()
    res = client.get("/api/search", query_string={"q": "s*"})
    assert res.status_code == 400
    assert "'s*' is too broad: it matches more than 5 words" in res.get_json()["error"]["message"]
    res = client.get("/api/search", query_string={"q": "[a TO m]"})
    assert res.status_code == 400 and "too broad" in res.get_json()["error"]["message"]
    assert client.get("/api/search", query_string={"q": "honey"}).status_code == 200


def test_a_fuzzy_word_runs_on_its_most_frequent_near_words_and_at_most_two_edits(sample_data: Path, monkeypatch) -> None:
    client = _app(sample_data).test_client()

    def ids(q: str) -> set[str]:
        return {h["id"] for h in client.get("/api/search", query_string={"q": q, "per_page": 100}).get_json()["hits"]}

    honey = ids("honey")
    assert honey and honey <= ids("hone~") and not honey <= ids("hny~")  # one edit from honey; two
    assert honey <= ids("hny~2") and ids("hny~9") == ids("hny~2")  # more than two edits are read as two
    monkeypatch.setattr(expansions, "MAX_EXPANSIONS", 1)
    client = _app(sample_data).test_client()
    cut = client.get("/api/search", query_string={"q": "ba~2"}).get_json()
    assert cut["total"] > 0 and "the 1 most frequent were searched" in cut["notes"][0]


def test_a_fuzzy_word_reads_a_bounded_number_of_the_index_words(sample_data: Path, monkeypatch) -> None:
    """Its edit distance is computed for the words beginning with its first letter (or the letters kept as typed,
    ``word~2/3``), at most MAX_SCANNED_WORDS of them."""
    monkeypatch.setattr(expansions, "MAX_SCANNED_WORDS", 20)
    client = _app(sample_data).test_client()
    res = client.get("/api/search", query_string={"q": "sourdugh~"})
    assert res.status_code == 400
    message = res.get_json()["error"]["message"]
    assert "more than 20 words begin with 's'" in message and "sourdugh~1/2" in message
    assert client.get("/api/search", query_string={"q": "sourdugh~1/4"}).get_json()["total"] > 0


def test_the_suggestions_count_is_bounded_as_the_search_is(sample_data: Path, monkeypatch) -> None:
    """"Did you mean" counts the episodes of the query it would suggest; a pattern in it expands no further than
    in the search (before, ``sch*? language:ai`` took 1.4-1.7 s on the site corpus: its count expanded ``sch*?``
    to every word in five fields)."""
    from podsearch.engines import whoosh as engine
    bounded: list[str] = []

    def spy(query, reader, deadline=None, seen=None):
        bounded.append(repr(query))
        return bounds.bound(query, reader, deadline, seen)

    monkeypatch.setattr(engine, "bound", spy)
    answer = _app(sample_data).test_client().get("/api/search", query_string={"q": "ho* voclano", "correct": "false"})
    assert answer.get_json()["suggestion"] == "ho* volcano"
    assert any("'volcano'" in q and "Prefix('transcript', 'ho'" in q for q in bounded)


def test_a_pattern_is_expanded_once_per_index_generation(sample_data: Path, monkeypatch) -> None:
    """The suggestion's counts repeat the query's patterns in other queries (``ho* voclano``, then ``ho* volcano``):
    each field's pattern is expanded once, not once per query (a query of a dozen patterns spent 0.6 of its 1 s
    expanding them again for "did you mean")."""
    expanded: list[tuple[str, str]] = []
    expansion = bounds._expansion

    def spy(q, reader, shown, deadline, **how):
        expanded.append((q.fieldname, repr(q)))
        return expansion(q, reader, shown, deadline, **how)

    monkeypatch.setattr(bounds, "_expansion", spy)
    client = _app(sample_data).test_client()
    answer = client.get("/api/search", query_string={"q": "ho* voclano", "correct": "false"}).get_json()
    assert answer["suggestion"] == "ho* volcano"
    assert client.get("/api/search", query_string={"q": "ho* water"}).status_code == 200
    assert len(expanded) == len(set(expanded)) >= 5  # the pattern in each field, once


def test_a_fields_star_is_every_episode_without_reading_the_fields_words(sample_data: Path, monkeypatch) -> None:
    """``title:*`` or a ``*`` among words: Whoosh's fielded ``Every`` unions the postings of every word of the field
    (on the site corpus ``model * and not`` took 5.6 s of CPU, past the 1 s deadline, which it cannot see); it is
    read as every episode."""
    from whoosh.query import qcore
    fielded: list[str] = []
    matcher = qcore.Every.matcher

    def spy(self, searcher, context=None):
        if self.fieldname:
            fielded.append(self.fieldname)
        return matcher(self, searcher, context)

    monkeypatch.setattr(qcore.Every, "matcher", spy)
    client = _app(sample_data).test_client()

    def total(q: str) -> int:
        return client.get("/api/search", query_string={"q": q}).get_json()["total"]

    assert total("title:*") == total("transcript:*") == 36
    # (a word in at least RELAX_BELOW episodes: no any-word ranking, which would find every episode)
    assert total("water *") == total("water transcript:*") == total("water") >= RELAX_BELOW
    assert fielded == []


def test_too_many_clauses_are_refused(sample_data: Path, monkeypatch) -> None:
    monkeypatch.setattr(expansions, "MAX_CLAUSES", 20)
    client = _app(sample_data).test_client()
    res = client.get("/api/search", query_string={"q": "ho* OR be* OR wa*"})
    assert res.status_code == 400 and "the limit is 20" in res.get_json()["error"]["message"]


class _Clock:
    """The collector's clock: real for ``after`` readings, then an hour later (the deadline long past)."""

    def __init__(self, after: int) -> None:
        self.after, self.calls = after, 0

    def __call__(self) -> float:
        self.calls += 1
        return time.monotonic() + (3600 if self.calls > self.after else 0)


@pytest.mark.parametrize("sort", ["date", "relevance"])
def test_the_deadline_answers_with_what_was_found(site_index: Path, monkeypatch, sort: str) -> None:
    """The parts of a search that Whoosh matches (a date range), ranked or sorted by date, stop at the deadline with
    the matches they have."""
    lib, q = Library(site_index, search_deadline=5), "published:[2019 to 2023]"
    full = lib.search(SearchRequest(q=q, sort=sort))
    assert not full.timed_out and full.total > 128
    # past due at its first reading, after 128 matches in one segment (past due at the second reading, a cut needed
    # 256 matches in one segment: how the range's 326 fall among the segments is the build's, and CI's did not)
    monkeypatch.setattr(fast, "monotonic", _Clock(after=0))
    cut = lib.search(SearchRequest(q=q, sort=sort))
    assert cut.timed_out and 0 < cut.total < full.total and len(cut.hits) == 10
    assert lib.load.snapshot()["timed_out"] == 1


def test_an_answer_cut_short_is_neither_cached_nor_validated(site_index: Path, monkeypatch) -> None:
    """A partial answer (``timed_out``) carried ``Cache-Control: public`` and an ETag, so browsers and proxies kept
    it, and revalidating it got a 304 as if it were whole; a whole answer to the same request had the same ETag."""
    client = _app(site_index, search_deadline=5).test_client()
    for path in ("/api/search", "/search", "/search.rss"):
        monkeypatch.setattr(fast, "monotonic", _Clock(after=0))
        cut = client.get(path, query_string={"q": "published:[2019 to 2023]", "sort": "date"})
        monkeypatch.undo()
        assert cut.status_code == 200 and cut.headers["Cache-Control"] == "no-store" and "ETag" not in cut.headers, path
        if path == "/api/search":
            assert cut.get_json()["timed_out"]
        whole = client.get(path, query_string={"q": "published:[2019 to 2023]", "sort": "date"})
        assert "no-store" not in whole.headers.get("Cache-Control", ""), path
        assert whole.headers.get("ETag") or path == "/search", path  # (the page is not validated)


def test_an_exclusion_cut_short_by_the_deadline_excludes_more_never_less(site_index: Path, monkeypatch) -> None:
    """A part cut short answers with fewer matches than it has; excluded, that let through episodes holding what was
    excluded (``-published:[...]`` answered 1,741 of the 1,869 site episodes, past due: those after the range's
    first 128). Excluded, a part cut short takes every episode it did not reach as a match instead."""
    lib = Library(site_index, search_deadline=5)
    for q in ("NOT published:[2019 to 2023]", "podcast -published:[2019 to 2023]"):
        full = lib.search(SearchRequest(q=q, per_page=100))
        monkeypatch.setattr(fast, "monotonic", _Clock(after=0))
        cut = lib.search(SearchRequest(q=q, per_page=100))
        monkeypatch.undo()
        assert not full.timed_out and cut.timed_out and cut.total <= full.total, q
        years = [(h.published or "")[:4] for h in cut.hits]
        assert not [y for y in years if "2019" <= y <= "2023"], (q, years)


def test_a_search_past_its_deadline_before_its_first_match_answers_with_its_first_matches(
        site_index: Path, monkeypatch) -> None:
    """The deadline already gone when Whoosh starts matching a part (a stall, a cold first search): its first 128
    matches are still taken and shown, cut short, not a 503 (CI once got 503 for ``/search.rss?q=kubernetes``,
    the first search of a fresh app on a loaded machine, when Whoosh's collector sorted by date; words and phrases
    are now matched in arrays, ``fast``, and a date range by Whoosh)."""
    lib = Library(site_index, search_deadline=5)
    for q in ("published:[2019 to 2023]", "kubernetes"):
        full = lib.search(SearchRequest(q=q, sort="date"))
        monkeypatch.setattr(fast, "monotonic", _Clock(after=0))  # every reading of the matcher's clock past due
        cut = lib.search(SearchRequest(q=q, sort="date"))
        if q == "kubernetes":  # no part is Whoosh's: nothing reads the clock, the whole answer
            assert not cut.timed_out and cut.total == full.total > 128
        else:
            assert cut.timed_out and 0 < cut.total < full.total and len(cut.hits) == 10  # 128 a field at most
        monkeypatch.undo()


def test_a_search_that_found_nothing_by_its_deadline_is_a_503(sample_data: Path) -> None:
    client = _app(sample_data, search_deadline=1e-9).test_client()  # spent before the wildcard is expanded
    res = client.get("/api/search", query_string={"q": "ho*", "sort": "date"})
    assert res.status_code == 503 and res.get_json()["error"]["code"] == "overloaded"
    assert int(res.headers["Retry-After"]) >= 1 and "nothing within" in res.get_json()["error"]["message"]
    assert _app(sample_data, search_deadline=5).test_client().get("/api/search", query_string={"q": "ho*"}).status_code == 200


def test_expensive_searches_have_a_few_slots_and_ordinary_ones_keep_one_worker_free() -> None:
    gate = Admission(threads=8)
    assert (gate.search_slots, gate.expensive_slots) == (7, 2)
    with gate.slot(True), gate.slot(True):
        with pytest.raises(Overloaded, match="limited to 2 at once"):
            with gate.slot(True):
                pass
        with gate.slot(False):  # an ordinary search still runs
            assert gate.status()["searches_running"] == 3
    assert gate.status() == {"searches_running": 0, "search_slots": 7, "expensive_running": 0,
                             "expensive_slots": 2, "saturated": False}


def test_a_large_page_is_an_expensive_search() -> None:
    """A page's snippets and moments cost per hit: more than 50 results (the feed's page) share the expensive
    searches' slots (on OpenSearch a page of 100 for common words took 0.5 s of CPU, 1.4 s before its moments
    were bounded)."""
    from podsearch.requests import SearchRequest

    assert not SearchRequest(q="honey", per_page=50).expensive
    assert SearchRequest(q="honey", per_page=51).expensive
    assert SearchRequest(q="hon*").expensive and not SearchRequest(q="honey").expensive
    # so is a phrase's slop (its work grows with the positions of its words), not the phrase itself
    assert SearchRequest(q='"honey bees"~3').expensive and not SearchRequest(q='"honey bees"').expensive


def test_readyz_reports_saturation_and_counts(sample_data: Path) -> None:
    app = _app(sample_data, threads=2)
    client = app.test_client()
    client.get("/api/search", query_string={"q": "*honey"})
    ready = client.get("/readyz")
    assert ready.status_code == 200
    load = ready.get_json()["load"]
    assert load["search_slots"] == 1 and load["refused"] == 1 and load["saturated"] is False
    with app.extensions["podsearch_admission"].slot(False):
        busy = client.get("/readyz")
        assert busy.status_code == 503 and busy.get_json()["status"] == "saturated"
    assert client.get("/healthz").status_code == 200


def test_each_hostile_query_answers_or_is_refused_in_time(site_index: Path) -> None:
    """In-process CPU time per query on the site corpus (wall time depends on the machine's load)."""
    lib = Library(site_index)
    lib.search(SearchRequest(q="warm"))
    for q in HOSTILE:
        started = time.process_time()
        try:
            lib.search(SearchRequest(q=q))
        except Exception as exc:  # refused (400) or shed at its deadline (503): both answers
            assert type(exc).__name__ in {"QueryError", "TimedOut"}, (q, exc)
        assert time.process_time() - started < 2.0, q


@pytest.mark.slow
def test_hostile_clients_do_not_hold_up_an_ordinary_one(site_index: Path, tmp_path: Path) -> None:
    """8 clients send hostile queries for 10 s to ``serve --threads 8``; a ninth runs the dev known-item
    queries meanwhile and gets only 200s, promptly. The server counts what it refused and shed."""
    data = tmp_path / "data"
    shutil.copytree(site_index, data)
    figures = hostile.run(data, seconds=10, threads=8, clients=8)
    ordinary = figures["ordinary"]
    assert ordinary["statuses"] == {200: ordinary["requests"]}, figures
    assert ordinary["p99_s"] < 3.0, figures  # issue 17 asks 1.5 s over 30 s: tests/soak/hostile.py measures it
    assert set(figures["hostile"]["statuses"]) <= {200, 400, 503} and 400 in figures["hostile"]["statuses"]
    assert figures["server_load"]["refused"] > 0


def test_a_query_over_the_term_limit_is_refused_before_its_deadline(sample_data: Path, monkeypatch) -> None:
    """The limit was checked once every part was expanded: 65 two-letter prefixes of the site corpus ran into the
    deadline first (a 503, "found nothing by its deadline"), and were a 400 once their expansions were kept. The
    query is refused as soon as its expansions pass the limit; the parts after that are not expanded."""
    from podsearch.engines.whoosh import bounds

    monkeypatch.setattr(expansions, "MAX_CLAUSES", 20)
    made = []
    expansion = bounds._expansion
    monkeypatch.setattr(bounds, "_expansion", lambda q, *a, **k: made.append(q) or expansion(q, *a, **k))
    client = _app(sample_data).test_client()
    res = client.get("/api/search", query_string={"q": "ho* be* wa* co* st* te* pr* so*"})
    assert res.status_code == 400 and "asks for at least" in res.get_json()["error"]["message"], res.get_json()
    assert 0 < len(made) < 8 * 5, len(made)  # (8 parts in 5 fields: not all expanded)


@pytest.mark.parametrize("op", ["ANDNOT", "ANDMAYBE", "REQUIRE"])
def test_a_chain_of_binary_operators_is_read_once_a_word(monkeypatch, op: str) -> None:
    """Whoosh's parser read both sides of ``ANDNOT``, ``ANDMAYBE`` and ``REQUIRE`` twice, so a chain of them doubled
    its reading with each operator: ``weight ANDNOT weight ...`` took 3.5 s for 15 and held a worker for hours with
    30, before any deadline is read (a fuzzed walk of the site corpus, 5 December 2026)."""
    from whoosh.qparser import syntax

    from podsearch.engines.whoosh.query import parse

    read: list[str] = []
    word_query = syntax.WordNode.query
    monkeypatch.setattr(syntax.WordNode, "query", lambda self, parser: read.append(self.text) or word_query(self, parser))
    words = [f"{op.lower()}{i}" for i in range(14)]
    parse(f" {op} ".join(words))
    once = len(read) // len(words)  # (a word is read once in each field it is searched in)
    assert sorted(read) == sorted(words * once) and once <= 8, (once, len(read))
