"""An episode's id never changes and never exists twice, whatever happens to its feed: items whose id changes (a new
guid scheme, guids added, no guid and a moved enclosure or link, no guid and an edited title or a corrected date)
keep the id of the episode they are (ingest/identity.py:reconcile), over real HTTP (tests/feedserver.py); and two
different episodes are never taken for one."""

from __future__ import annotations

from pathlib import Path

import pytest
from feedserver import FeedServer, serve
from soak.state import index_docs

from podsearch.catalog import Catalog
from podsearch.config import load_config
from podsearch.episodes import Show
from podsearch.reindex import ingest, reindex
from podsearch.requests import SearchRequest
from podsearch.service import Library

TOPICS = ["volcano ash over the harbour", "sourdough starters", "knife skills", "pickling cabbage", "smoked fish"]


def item(n: int, *, guid: str | None = None, enclosure: str | None = None, link: str | None = None,
         title: str | None = None, date: int | None = None, transcript: bool = True, notes: str = "",
         hour: int = 10) -> str:
    parts = [f"<title>{title or f'Kitchen {n}: {TOPICS[(n - 1) % 5]}'}</title>",
             f"<pubDate>Mon, {date or n:02d} Jan 2024 {hour:02d}:00:00 GMT</pubDate>"]
    if notes:
        parts.append(f"<description>{notes}</description>")
    if guid:
        parts.append(f'<guid isPermaLink="false">{guid}</guid>')
    if enclosure:
        parts.append(f'<enclosure url="{enclosure}" length="1000" type="audio/mpeg"/>')
    if link:
        parts.append(f"<link>{link}</link>")
    if transcript:
        parts.append(f'<podcast:transcript url="t/k-{n}.vtt" type="text/vtt"/>')
    return "<item>" + "".join(parts) + "</item>"


def feed(items: list[str], title: str = "Kitchen Radio", link: str = "https://example.org/") -> bytes:
    return (f'<?xml version="1.0"?><rss version="2.0" xmlns:podcast="https://podcastindex.org/namespace/1.0">'
            f"<channel><title>{title}</title><link>{link}</link>{''.join(items)}</channel></rss>").encode()


@pytest.fixture
def server(tmp_path: Path):
    root = tmp_path / "www"
    (root / "t").mkdir(parents=True)
    for n in range(1, 6):
        (root / "t" / f"k-{n}.vtt").write_text(
            f"WEBVTT\n\n00:00:01.000 --> 00:00:04.000\n<v Ana>Today: {TOPICS[n - 1]}, part {n}.\n", encoding="utf-8")
    with serve(root) as srv:
        yield srv


def config(tmp_path: Path, feeds: list[str] | None = None):
    return load_config({"data": str(tmp_path / "data"), "feeds": feeds or [], "allow_private_hosts": True},
                       environ={})


def run(tmp_path: Path, server: FeedServer, items: list[str]):
    server.files["/k.xml"] = feed(items)
    with Catalog.in_dir(tmp_path / "data") as cat:
        return ingest(config(tmp_path), cat, [server.url("k.xml")])


def stored(tmp_path: Path) -> dict[str, tuple[str, int]]:
    with Catalog.in_dir(tmp_path / "data") as cat:
        return {r["id"]: (r["title"], r["gone"]) for r in cat.db.execute("SELECT id, title, gone FROM episodes")}


N = range(1, 6)
CASES = {
    # (a) a new guid scheme: kitchen-N becomes a URL
    "new guids": ([item(n, guid=f"kitchen-{n}", enclosure=f"https://cdn.example/k/{n}.mp3") for n in N],
                  [item(n, guid=f"https://newhost.example/ep/{n}", enclosure=f"https://cdn.example/k/{n}.mp3")
                   for n in N]),
    # (b) no guid, the enclosure's host changes (the id was the enclosure URL)
    "enclosure host": ([item(n, enclosure=f"https://cdn1.example/k/kitchen-{n}.mp3") for n in N],
                       [item(n, enclosure=f"https://cdn2.example/media/kitchen-{n}.mp3") for n in N]),
    # (c) no guid nor enclosure, the link changes (the id was the link)
    "link": ([item(n, link=f"https://example.org/ep/{n}") for n in N],
             [item(n, link=f"https://example.org/episodes/{n}/", transcript=False) for n in N]),
    # (d) no guid, enclosure nor link, the title edited (the id was a hash of title and date)
    "title edited": ([item(n) for n in N], [item(n, title=f"Kitchen Radio #{n}") for n in N]),
    # (e) guids added where there were none (the id was the enclosure URL)
    "guids added": ([item(n, enclosure=f"https://cdn.example/k/{n}.mp3") for n in N],
                    [item(n, guid=f"kitchen-{n}", enclosure=f"https://cdn.example/k/{n}.mp3") for n in N]),
}


@pytest.mark.parametrize("case", list(CASES))
def test_an_item_whose_id_changed_keeps_its_episodes_id(tmp_path: Path, server: FeedServer, case: str) -> None:
    before_items, after_items = CASES[case]
    first = run(tmp_path, server, before_items)
    assert first.new == 5 and not first.failed, first.errors
    before = stored(tmp_path)
    report = run(tmp_path, server, after_items)
    assert not report.failed, report.errors
    after = stored(tmp_path)
    assert (report.new, report.gone) == (0, 0)  # was 5 new, 5 gone: every episode twice
    assert after.keys() == before.keys() and all(gone == 0 for _, gone in after.values())
    assert report.updated + report.unchanged == 5
    assert any("5 items with a new id are episodes the show has" in n for n in report.notes), report.notes
    if case == "title edited":
        assert sorted(t for t, _ in after.values()) == [f"Kitchen Radio #{n}" for n in N]


def test_the_new_id_is_recorded_and_kept_whatever_changes_next(tmp_path: Path, server: FeedServer) -> None:
    """Recognised once, an item keeps its episode's id even when the evidence is gone (title and date edited)."""
    old, new = CASES["new guids"]
    run(tmp_path, server, old)
    ids = stored(tmp_path).keys()
    run(tmp_path, server, new)
    edited = [item(n, guid=f"https://newhost.example/ep/{n}", enclosure=f"https://cdn9.example/{n}.mp3",
                   title=f"Retitled {n}", date=n + 10) for n in N]
    report = run(tmp_path, server, edited)
    assert (report.new, report.gone, report.updated) == (0, 0, 5)
    assert stored(tmp_path).keys() == ids and {t for t, _ in stored(tmp_path).values()} == {f"Retitled {n}" for n in N}


def test_the_index_holds_each_episode_once(tmp_path: Path, server: FeedServer) -> None:
    """`search volcano` found 10 hits for 5 episodes: the old ids stayed in the index, marked gone."""
    old, new = CASES["new guids"]
    server.files["/k.xml"] = feed(old)
    cfg = config(tmp_path, [server.url("k.xml")])
    assert not reindex(cfg).failed
    ids = sorted(index_docs(tmp_path / "data"))
    server.files["/k.xml"] = feed(new)
    report = reindex(cfg)
    assert not report.failed and (report.new, report.gone) == (0, 0)
    assert sorted(index_docs(tmp_path / "data")) == ids and len(ids) == 5
    library = Library(tmp_path / "data")
    try:
        assert library.search(SearchRequest(q="volcano")).total == 1
    finally:
        library.close()


@pytest.mark.parametrize("corrected", [{"date": 12}, {"hour": 18}])
def test_an_item_of_title_and_date_alone_whose_date_was_corrected_keeps_its_id(tmp_path: Path, server: FeedServer,
                                                                               corrected: dict) -> None:
    """An item with no guid, enclosure or link has the id `sha1:` of its title and date: the publisher correcting
    its date made it a new episode, the old one marked gone (both found). The same title, on exactly one episode
    that leaves the feed in this run and one item, nothing else different: it keeps its id."""
    run(tmp_path, server, [item(n, notes=f"Notes of {n}.") for n in N])
    before = stored(tmp_path)
    report = run(tmp_path, server, [item(n, notes=f"Notes of {n}.", **(corrected if n == 3 else {})) for n in N])
    assert not report.failed and (report.new, report.gone, report.updated) == (0, 0, 1), report.notes
    assert stored(tmp_path) == before
    assert any("1 items with a new id are episodes the show has" in n and "its date corrected" in n
               for n in report.notes), report.notes
    with Catalog.in_dir(tmp_path / "data") as cat:
        [ep_id] = [i for i, (title, _) in before.items() if title.startswith("Kitchen 3")]
        assert cat.episode(ep_id).published == ("2024-01-12T10:00:00Z" if "date" in corrected else "2024-01-03T18:00:00Z")


# -- two different episodes stay two ----------------------------------------------------------------------------


def test_items_of_title_and_date_alone_are_not_taken_for_another_date_when_anything_doubts_it(
        tmp_path: Path, server: FeedServer) -> None:
    """Two "Trailer"s (no guid, enclosure nor link) of two dates stay two: both in the feed, one dated anew while
    the title names two episodes, one gone a run before, or the notes or transcript differ."""
    def trailer(date: int, **kw) -> str:
        return item(1, title="Trailer", date=date, transcript=False, **kw)

    run(tmp_path, server, [trailer(1), trailer(5), item(2)])
    report = run(tmp_path, server, [trailer(1), trailer(5), trailer(9), item(2)])  # a third, both others in the feed
    assert (report.new, report.gone) == (1, 0)
    report = run(tmp_path, server, [trailer(1), trailer(6), item(2)])  # the title names three stored episodes
    assert (report.new, report.gone) == (1, 2)
    assert len([t for t, _ in stored(tmp_path).values() if t == "Trailer"]) == 4

    tmp = tmp_path / "other"  # an episode that left the feed a run before: a new one of its title is new
    run(tmp, server, [item(1, title="Christmas special", date=24), item(2)])
    run(tmp, server, [item(2)])
    report = run(tmp, server, [item(1, title="Christmas special", date=25), item(2)])
    assert (report.new, report.gone) == (1, 0) and len(stored(tmp)) == 3

    tmp = tmp_path / "notes"  # another episode of the title in its place, with other notes
    run(tmp, server, [item(1, title="Bonus", notes="About knives.", transcript=False), item(2)])
    report = run(tmp, server, [item(1, title="Bonus", date=8, notes="About cabbage.", transcript=False), item(2)])
    assert (report.new, report.gone) == (1, 1) and len(stored(tmp)) == 3
    tmp = tmp_path / "transcript"  # ... or another transcript
    run(tmp, server, [item(1, title="Bonus"), item(2)])
    report = run(tmp, server, [item(4, title="Bonus", date=8), item(2)])
    assert (report.new, report.gone) == (1, 1) and len(stored(tmp)) == 3


def test_two_trailers_on_different_dates_stay_two(tmp_path: Path, server: FeedServer) -> None:
    trailer = item(1, guid="trailer-1", title="Trailer", date=1, transcript=False)
    run(tmp_path, server, [trailer, item(2, guid="ep-2")])
    # The old trailer leaves, a new one (another guid, another date, the same title and home page link) comes.
    report = run(tmp_path, server, [item(3, guid="trailer-2", title="Trailer", date=20, transcript=False,
                                         link="https://example.org/"), item(2, guid="ep-2")])
    assert (report.new, report.gone) == (1, 1) and not report.notes
    assert stored(tmp_path) == {"trailer-1": ("Trailer", 1), "trailer-2": ("Trailer", 0),
                                "ep-2": ("Kitchen 2: sourdough starters", 0)}


def test_items_of_one_date_are_told_apart(tmp_path: Path, server: FeedServer) -> None:
    """Two items of one date: a new guid scheme recognises each by its title; an item that replaces another of
    the same date, sharing only a file name that other items share too, is another episode."""
    run(tmp_path, server, [item(1, guid="a", title="Trailer", date=7, enclosure="https://cdn.example/1/audio.mp3"),
                           item(2, guid="b", date=7, enclosure="https://cdn.example/2/audio.mp3")])
    report = run(tmp_path, server, [item(1, guid="a2", title="Trailer", date=7, enclosure="https://cdn.example/1/audio.mp3"),
                                    item(2, guid="b2", date=7, enclosure="https://cdn.example/2/audio.mp3")])
    assert (report.new, report.gone) == (0, 0) and stored(tmp_path).keys() == {"a", "b"}
    with Catalog.in_dir(tmp_path / "data") as cat:
        assert cat.episode("a").title == "Trailer"
    report = run(tmp_path, server, [item(3, guid="c", title="Episode 1", date=7, transcript=False,
                                         enclosure="https://cdn.example/3/audio.mp3"),
                                    item(2, guid="b2", date=7, enclosure="https://cdn.example/2/audio.mp3")])
    assert (report.new, report.gone) == (1, 1) and stored(tmp_path)["a"] == ("Trailer", 1)


def test_two_items_of_one_title_and_date_are_not_guessed(tmp_path: Path, server: FeedServer) -> None:
    """Two "Bonus" items of one date change their guids, nothing else tells them apart: neither is guessed."""
    run(tmp_path, server, [item(1, guid="x", title="Bonus", date=3, transcript=False),
                           item(2, guid="y", title="Bonus", date=3, transcript=False)])
    report = run(tmp_path, server, [item(1, guid="x2", title="Bonus", date=3, transcript=False),
                                    item(2, guid="y2", title="Bonus", date=3, transcript=False)])
    assert (report.new, report.gone) == (2, 2)


def test_an_episode_replaced_by_another_of_its_title_and_date_stays_two(tmp_path: Path, server: FeedServer) -> None:
    """An episode deleted and a different one added in its place, with its title and date but its own guid,
    enclosure and link: the title and date made them one (the new episode overwrote the old and was never new, so no
    watch heard of it). Two of what names an episode differ: they stay two."""
    old = [item(n, guid=f"kitchen-{n}", enclosure=f"https://cdn.example/k/{n}.mp3", link=f"https://example.org/{n}")
           for n in range(1, 5)]
    run(tmp_path, server, old)
    other = item(3, guid="brand-new-x", enclosure="https://cdn.example/a/x.mp3", link="https://example.org/x",
                 transcript=False)
    report = run(tmp_path, server, [old[0], old[1], other, old[3]])
    assert (report.new, report.gone) == (1, 1), (report.new, report.gone, report.notes)
    assert stored(tmp_path)["kitchen-3"][1] == 1 and stored(tmp_path)["brand-new-x"][1] == 0


SHOWS = {"kaffe.xml": "Kafferumslöparna", "imo.xml": "いもほり倶楽部", "imo2.xml": "いもほり倶楽部",
         "emob.xml": "eMobilität &amp; Straße", "kitchen.xml": "Kitchen Radio"}


def serve_shows(server: FeedServer) -> list[str]:
    for name, title in SHOWS.items():
        server.files[f"/{name}"] = feed([item(n, guid=f"{name}-{n}", transcript=False) for n in (1, 2)], title=title,
                                        link=f"https://example.org/{name}")
    return [server.url(name) for name in SHOWS]


def show_ids(tmp_path: Path) -> dict[str, str]:
    with Catalog.in_dir(tmp_path / "data") as cat:
        return {r["source"].rsplit("/", 1)[1]: r["show_id"] for r in cat.db.execute("SELECT source, show_id FROM feeds")}


def test_a_new_shows_id_is_its_titles_words_accents_folded_other_scripts_kept(tmp_path: Path, server: FeedServer):
    """A show's id was its title's a-z and 0-9 alone: the corpus's Japanese show was "show", Kafferumslöparna
    "kafferumsl-parna", eMobilität "emobilit-t" (until 5 December 2026). Two shows never share one."""
    urls = serve_shows(server)
    report = reindex(config(tmp_path, urls))
    assert not report.failed, report.errors
    assert show_ids(tmp_path) == {"kaffe.xml": "kafferumsloparna", "imo.xml": "いもほり倶楽部", "imo2.xml": "いもほり倶楽部-2",
                                  "emob.xml": "emobilitat-strasse", "kitchen.xml": "kitchen-radio"}
    library = Library(tmp_path / "data")
    try:
        found = library.search(SearchRequest(q="*", shows=["いもほり倶楽部"], per_page=20))
        assert sorted(h.id for h in found.hits) == ["imo.xml-1", "imo.xml-2"]
        assert {f["value"] for f in library.search(SearchRequest(q="*")).facets["show"]} >= {"いもほり倶楽部", "kafferumsloparna"}
    finally:
        library.close()


def test_a_show_keeps_the_id_it_was_given_before(tmp_path: Path, server: FeedServer):
    """An id never changes: the shows of a data folder written before keep the ids the old rule gave them ("show",
    "kafferumsl-parna") through a full reindex; the new rule names new shows only."""
    urls = serve_shows(server)
    old = {"kaffe.xml": "kafferumsl-parna", "imo.xml": "show", "emob.xml": "emobilit-t-stra-e"}
    with Catalog.in_dir(tmp_path / "data") as cat:  # the shows and feeds as a reindex of the older podsearch left them
        for name, show_id in old.items():
            cat.upsert_show(Show(id=show_id, title=SHOWS[name].replace("&amp;", "&"), source=server.url(name)))
            cat.set_feed_state(server.url(name), show_id=show_id, last_status="ok")
    for full in (True, False):
        report = reindex(config(tmp_path, urls), full=full)
        assert not report.failed, report.errors
        assert show_ids(tmp_path) == {**old, "imo2.xml": "いもほり倶楽部", "kitchen.xml": "kitchen-radio"}
    with Catalog.in_dir(tmp_path / "data") as cat:
        assert {e.show_id for e in cat.episodes() if e.id.startswith("imo.xml")} == {"show"}
        assert {s.id for s in cat.shows()} == {*old.values(), "いもほり倶楽部", "kitchen-radio"}
