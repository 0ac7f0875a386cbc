"""Search on the site corpus (1,869 real episodes, slow): the podcast relevance sets through
``podsearch eval search`` beside FTS5, and excluded words that stay excluded for rare and common words.

The site is read from its 25 feeds, indexed and its model fitted once per session, by the same code the
evaluation command uses (``podsearch.evaluation.podcast.site_data``).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from podsearch.catalog import Catalog
from podsearch.engines.whoosh.analysis import spoken_analyzer
from podsearch.requests import SearchRequest
from podsearch.service import Library

pytestmark = pytest.mark.slow


@pytest.fixture(scope="session")
def site_eval(corpus: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The evaluation's data folder with the site built in it (``<folder>/site``)."""
    from podsearch.evaluation.podcast import site_data

    folder = tmp_path_factory.mktemp("eval")
    site_data(corpus / "site", folder / "site", lambda _msg: None)
    return folder


@pytest.fixture(scope="module")
def site_lib(site_eval: Path) -> Library:
    lib = Library(site_eval / "site")
    yield lib
    lib.close()


def test_the_podcast_sets_beat_fts5(site_eval: Path, corpus: Path, runner) -> None:
    """Known items, topical queries and the tags as queries, through the command as a user runs it; the dev
    figures of docs/search.md (known items 1.000 against FTS5's 0.945, topical 0.902 against 0.858) with some
    room."""
    from podsearch.evaluation.cli_search import search_cmd

    result = runner.invoke(search_cmd, ["--corpus", str(corpus), "--sets", "site", "--into", str(site_eval), "--json"],
                           catch_exceptions=False)
    assert result.exit_code == 0, result.output
    out = json.loads(result.output)
    known, topical = out["known items"], out["topical"]
    figures = json.dumps(out, indent=1)
    assert known["queries"] == 46 and topical["queries"] == 15
    assert known["podsearch"] >= 0.96 and known["podsearch"] >= known["fts5"], figures
    assert set(known["by_kind"]) == {"topic", "quote", "person", "typo"}
    assert all(h["podsearch"] >= 0.95 for h in known["halves"].values()), figures
    assert topical["podsearch"] >= 1.03 * topical["fts5"], figures
    assert all(h["podsearch"] >= 0.87 for h in topical["halves"].values()), figures
    # the guard: the dev labels' 48 tags given to 3 or more episodes, as queries (docs/search.md: 0.602 against 0.584)
    tags = out["tag topics"]
    assert tags["queries"] == 48 and tags["labelled"] == 209, figures
    assert tags["podsearch"] >= tags["fts5"], figures


def test_our_own_graded_queries_beat_fts5(site_eval: Path, corpus: Path) -> None:
    """Our 40 graded topical queries (bench/labels/README.md), a guard beside the dev set's 15: podsearch 0.812
    against FTS5's 0.735 (1.105 x) on 4 December 2026, 0.805 before fewer than a page with every word was ranked
    on any word (``ecash mints`` 0.642 -> 0.903). Every episode of the top 10 is judged."""
    from bench.ranking import our_topical
    from podsearch.engines.whoosh.ranking import RANKING
    from podsearch.feedback import FEEDBACK

    ours = our_topical(corpus, site_eval, True, RANKING, FEEDBACK)
    figures = json.dumps(ours.to_dict(per_query=True), indent=1)
    assert ours.queries == 40 and ours.fts5 is not None, figures
    assert ours.podsearch >= 1.08 * ours.fts5 and ours.podsearch >= 0.80, figures
    assert ours.per_query["X23"]["podsearch"] >= 0.85, figures
    assert ours.extra["unjudged in the top 10"] == 0, figures


def test_our_own_known_items_beat_fts5(site_eval: Path, corpus: Path) -> None:
    """Our 62 known-item queries (bench/labels/README.md: targets drawn by a seed, queries written blind), a guard
    beside the dev set's 46 (where podsearch is at 1.000): 0.902 against FTS5's 0.830 on 4 December 2026. Every
    quote finds its episode first; ``"Mat's a stay-at-home gopher dad"`` found nothing before a quoted phrase read
    a joined word as the index lays it out (whoosh/query.py, ``SpacedPhrase``)."""
    from bench.ranking import our_known
    from podsearch.engines.whoosh.ranking import RANKING
    from podsearch.feedback import FEEDBACK

    ours = our_known(corpus, site_eval, True, RANKING, FEEDBACK)
    figures = json.dumps(ours.to_dict(per_query=True), indent=1)
    assert ours.queries == 62 and ours.fts5 is not None, figures
    assert ours.podsearch >= ours.fts5 + 0.05 and ours.podsearch >= 0.90, figures
    assert ours.by_kind["quote"]["podsearch"] == 1.0 and ours.per_query["K306"]["podsearch"] == 1.0, figures


def test_a_quote_is_found_as_people_type_and_remember_it(site_eval: Path, corpus: Path) -> None:
    """The 24 quotes of the dev set and ours (``bench.quotes``) in a phone's quotes, with a final period, with their
    middle word left out or two words swapped: before 4 December 2026 the typographic ones lost 3 targets, and one
    remembered wrong found its episode 8 and 14 times of 24 (MRR@10 0.333 and 0.583); FTS5's phrase finds none."""
    from bench.quotes import figures, quotes
    from podsearch.evaluation.podcast import fts5_for
    from podsearch.evaluation.search import SearchBox

    rows = quotes(corpus)
    box, fts = SearchBox(site_eval / "site"), fts5_for(site_eval / "site")
    try:
        ours, theirs = figures(rows, lambda q: box.rank(q, 10)), figures(rows, lambda q: fts.rank(q, 10))
    finally:
        box.close()
        fts.close()
    assert len(rows) == 24
    assert ours["as written"] == ours["typographic quotes"] == ours["final period"] == 1.0, ours
    assert ours["middle word left out"] >= 0.85 and ours["two middle words swapped"] >= 0.95, ours  # (0.896, 1.000)
    # typed without quotes: 0.964 until a five-word sentence with a pronoun was read as one (5 December 2026)
    assert ours["without quotes"] == 1.0, ours
    assert theirs["middle word left out"] == theirs["two middle words swapped"] == 0.0, theirs


def stems(lib: Library, episode_id: str, analyzer) -> set[str]:
    ep = lib.catalog.episode(episode_id)
    show = lib.catalog.show(ep.show_id)
    return set(analyzer.texts("\n".join([ep.title, ep.description_text, ep.transcript_text, show.title,
                                         " ".join(p.name for p in ep.persons)])))


@pytest.mark.parametrize("x, y", [
    ("dockershim", "kubernetes"), ("utreexo", "bitcoin"), ("pettycoin", "lightning"), ("moltbook", "agents"),
    ("kubernetes", "docker"), ("python", "django"), ("bitcoin", "lightning"), ("privacy coinjoin", "wasabi"),
])
def test_x_minus_y_never_returns_an_episode_with_y(site_lib: Library, x: str, y: str) -> None:
    analyzer = spoken_analyzer("en")
    stem = analyzer.texts(y)[0]
    answer = site_lib.search(SearchRequest(q=f"{x} -{y}", per_page=100))
    for hit in answer.hits:
        assert stem not in stems(site_lib, hit.id, analyzer), (x, y, hit.id)
    # every episode with x and without y, and only those: the totals add up (when every word was required)
    with_x = site_lib.search(SearchRequest(q=x, per_page=1))
    with_both = site_lib.search(SearchRequest(q=f"{x} AND {y}", per_page=1))
    if not (answer.relaxed or with_x.relaxed or with_both.relaxed):
        assert answer.total == with_x.total - with_both.total, (x, y)


def test_rare_words_whose_every_episode_says_the_excluded_word_find_nothing(site_lib: Library) -> None:
    """The issue's cases: each rare word's episodes all hold the excluded word (this returned them)."""
    for q in ("dockershim -kubernetes", "utreexo -bitcoin", "pettycoin -lightning", "moltbook -agents"):
        word = q.split()[0]
        assert site_lib.search(SearchRequest(q=word)).total >= 1, word
        assert site_lib.search(SearchRequest(q=q)).hits == [], q


def test_a_query_in_capitals_finds_what_it_finds_in_lower_case(site_lib: Library) -> None:
    for q in ("TO BE OR NOT TO BE", "MINING POOL CENTRALIZATION", "HARDWARE WALLETS AND MULTISIG",
              "GO GENERICS OR TYPE PARAMETERS"):
        loud, quiet = site_lib.search(SearchRequest(q=q)), site_lib.search(SearchRequest(q=q.lower()))
        assert [h.id for h in loud.hits] == [h.id for h in quiet.hits] and loud.total == quiet.total, q
    assert site_lib.search(SearchRequest(q="HARDWARE WALLETS AND MULTISIG")).total > 0


def test_did_you_mean_on_the_site(site_lib: Library) -> None:
    assert site_lib.search(SearchRequest(q="kubernetis", correct=False)).suggestion == "kubernetes"
    assert site_lib.search(SearchRequest(q="kubernetis")).corrected == "kubernetes"
    for q in ("tax returns", "title:volcano", "<script>alert(1)</script>", "schnorr signatures", "go generics"):
        suggestion = site_lib.search(SearchRequest(q=q, correct=False)).suggestion
        assert suggestion in ("", None) or (" to " not in f" {suggestion} " and "scrape" not in suggestion
                                            and not suggestion.startswith("time ")), (q, suggestion)
    assert not site_lib.search(SearchRequest(q="schnorr signatures")).suggestion
    for typo, meant in (("kuberentes", "kubernetes"), ("postgress", "postgres")):  # in 1 transcript each
        assert site_lib.search(SearchRequest(q=typo)).corrected == meant
    for rare in ("libhoney", "moltbook", "pettycoin", "graphene", "utreexo"):  # rare, and no typo
        answer = site_lib.search(SearchRequest(q=rare, correct=False))
        assert answer.total and not answer.suggestion, (rare, answer.suggestion)
    for q in ("Pynchon", "quinoa", "Straße"):  # words of a language: answered as typed, a suggestion beside them
        answer = site_lib.search(SearchRequest(q=q))
        assert not answer.corrected and answer.total == 0, (q, answer.corrected, answer.total)
    # a word of the language the suggestion would replace stays, and the typo beside it is corrected: "eruption" is
    # held under its stem only ("erupt"), so the speller offered "erupting" too, and the real-word rule then kept
    # "voclano" as typed (6 episodes, ranked on "eruption" alone)
    answer = site_lib.search(SearchRequest(q="voclano eruption"))
    assert answer.corrected == "volcano eruption" and answer.total > 6, (answer.corrected, answer.total)


@pytest.mark.parametrize("q, target", [
    ("except if you want to buy drugs", "btc:bitcoin-explained/scaling-to-billions-of-users"),
    ("I'm not blaming the open source developers", "btc:stephan-livera-podcast/2021-02-26-gleb-naumenko"),
    ("I'm not blaming open source developers", "btc:stephan-livera-podcast/2021-02-26-gleb-naumenko"),
])
def test_a_quote_typed_without_quotes_finds_its_episode_first(site_lib: Library, q: str, target: str) -> None:
    """Two of the dev set's quotes typed without their quotes were not in the top 10 (the long query ranked on
    any word); the few episodes that say the words in order, a few places apart at most, now come first. A topic
    of five words or fewer is left to the ranking ("bias and fairness in ai", said by two episodes, one about
    something else)."""
    assert site_lib.search(SearchRequest(q=q)).hits[0].id == target
    topic = [h.id for h in site_lib.search(SearchRequest(q="bias and fairness in ai")).hits]
    assert topic[0] == "changelog:practicalai:17"


@pytest.mark.parametrize("prefix, person", [("mat r", "Mat Ryer"), ("sean du", "Sean DuBois"),
                                            ("mat", "Mat Ryer")])
def test_typeahead_offers_the_person_the_prefix_names_before_titles(site_lib: Library, prefix: str,
                                                                    person: str) -> None:
    """`mat r` offered eight titles with a word in "r" ("Welcome Remarks") and no Mat Ryer."""
    offered = site_lib.suggest(prefix)
    people = [s["text"] for s in offered if s["kind"] == "person"]
    assert person in people and offered.index({"kind": "person", "text": person}) <= 3, offered


def test_a_shows_undated_episodes_are_listed_by_number_highest_first(site_lib: Library) -> None:
    """The 341 Go Time episodes of the site corpus have no date: the show page listed #1, #10, #100, #101 ..."""
    ids = [e.id for e in site_lib.episodes_of("go-time", 400)]
    assert ids[:3] == ["changelog:gotime:340", "changelog:gotime:339", "changelog:gotime:338"] and len(ids) == 341
    assert ids.index("changelog:gotime:100") < ids.index("changelog:gotime:99") < ids.index("changelog:gotime:10")


def test_every_year_the_facet_offers_is_one_the_filter_takes(site_lib: Library) -> None:
    """`webrtc` offered the year "unknown" (8 undated episodes), which `from=unknown` refuses (a 400)."""
    years = site_lib.search(SearchRequest(q="webrtc")).facets["year"]
    assert years and site_lib.search(SearchRequest(q="webrtc")).total > sum(row["count"] for row in years)
    for row in years:
        kept = SearchRequest(q="webrtc", published_from=row["value"], published_to=row["value"])
        assert site_lib.search(kept).total == row["count"], row


@pytest.mark.parametrize("q", ["webrtc nat traversal", "schnorr signatures"])
def test_a_moment_links_the_paragraph_it_quotes(site_lib: Library, q: str) -> None:
    """The page's transcript gives paragraphs that start in one second ids of their own (``t255``, ``t255-15``);
    a moment linked ``#t255``, the first of them, where 15 paragraphs of an HTML transcript shared 16:06. A moment
    of a transcript without times had no link at all (every Bitcoin show)."""
    from conftest import ListedTimes

    from podsearch.follow import plain
    from podsearch.web.views import transcript_rows

    moments = [(h.id, m) for h in site_lib.search(SearchRequest(q=q, per_page=20)).hits for m in h.moments]
    assert moments
    for episode_id, m in moments:
        segments = site_lib.catalog.segments(episode_id)
        rows, *_ = transcript_rows(ListedTimes([s.start for s in segments]), None, None, lambda a, b, s=segments: s[a:b])
        said = " ".join(rows[m.segment]["seg"].text.split())
        assert rows[m.segment]["anchor"] == m.anchor and all(part.strip() in said for part in plain(m.text).split("…"))
    assert any(m.start is None and m.anchor.startswith("p") for _, m in moments) or q != "schnorr signatures"
    assert any("-" in m.anchor for _, m in moments) or q != "webrtc nat traversal"


def test_the_catalog_is_the_one_the_sets_were_judged_on(site_eval: Path) -> None:
    with Catalog.in_dir(site_eval / "site") as catalog:
        assert len(catalog.hashes()) == 1869


@pytest.mark.parametrize("per_page", [10, 7, 100])
def test_the_pages_of_a_query_naming_an_episode_hold_every_match_once(site_lib: Library, per_page: int) -> None:
    """``go time 14`` names Go Time #14, put first; every page said 483 episodes, but the pages together held 482:
    the episode at the end of the reordered top fell between it and the next page, paged from the engine's order."""
    seen: list[str] = []
    page, total = 1, None
    while True:
        result = site_lib.search(SearchRequest(q="go time 14", page=page, per_page=per_page))
        assert total is None or result.total == total
        total = result.total
        if not result.hits:
            break
        seen += [h.id for h in result.hits]
        page += 1
    assert seen[0] == "changelog:gotime:14" and len(seen) == len(set(seen)) == total > 100


def test_every_numbered_episode_is_found_first_by_its_show_and_number(site_lib: Library) -> None:
    """"go time 140" had Go Time #298 (which cites FIPS 140) first; of 300 site episodes drawn at random, a
    third came first when searched by show and number. Every episode with a number now comes first (with the
    other episode of that number when a show's seasons repeat one: Big Tent S1E7 and S2E7)."""
    rows = site_lib.catalog.db.execute("SELECT e.id, e.title, e.show_id, s.title, json_extract(e.doc, '$.number') "
                                       "FROM episodes e JOIN shows s ON s.id = e.show_id ORDER BY e.id")
    numbered = [tuple(r) for r in rows if r[4] is not None]
    assert len(numbered) > 1300
    alike: dict[tuple[str, int], set[str]] = {}
    for episode_id, _title, show_id, _show, number in numbered:
        alike.setdefault((show_id, number), set()).add(episode_id)
    for episode_id, _title, show_id, show, number in numbered[::5]:
        for q in (f"{show} {number}", f"{show.lower()} episode {number}"):
            first = [h.id for h in site_lib.search(SearchRequest(q=q, per_page=10)).hits]
            same = alike[(show_id, number)]
            assert episode_id in first[: len(same)] and set(first[: len(same)]) == same, (q, first[:3])
    assert site_lib.search(SearchRequest(q="Go Time #140")).hits[0].id == "changelog:gotime:140"
