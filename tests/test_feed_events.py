"""Four real-world events, with feeds served over real HTTP on 127.0.0.1 (tests/feedserver.py, faultserver.py):
a feed moves (a new address, a 301 or 308, ``itunes:new-feed-url``, ``podcast:guid``), a feed is dropped from
the config, transcript hosts are down (a port that refuses, a server that never answers, the run's
deadline), and a transcript is edited at an unchanged URL. (A reindex killed with SIGKILL is in
test_reliability_crash.py.)"""

from __future__ import annotations

import json
import re
import sqlite3
import time
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from faultserver import Drip, Fault, FaultServer, RedirectLoop, Silent, Status
from soak.state import index_docs

from podsearch.catalog import SCHEMA_VERSION, Catalog
from podsearch.cli import main
from podsearch.config import load_config
from podsearch.errors import CatalogError
from podsearch.reindex import reindex
from podsearch.service import Library

GUID = "917393e3-1b1e-5cef-ace4-edaa54e1f810"


def vtt(n: int, words: str = "") -> str:
    return (f"WEBVTT\n\n00:00:01.000 --> 00:00:04.000\n<v Ana Host>Episode {n}: herons wading at dawn. {words}\n\n"
            f"00:00:05.000 --> 00:00:09.000\n<v Bo Guest>Egrets and bitterns in reed beds, part {n}.\n")


def feed(numbers: range | list[int], title: str = "Heron Hour", *, link: str = "https://example.org/herons",
         guid: str = "", new_feed_url: str = "", transcripts: str = "t/ep-{n}.vtt") -> bytes:
    items = "".join(
        f'<item><title>Episode {n}</title><guid isPermaLink="false">heron-{n}</guid>'
        f"<pubDate>Mon, 0{1 + n % 9} Jan 2024 10:00:00 GMT</pubDate>"
        f'<podcast:transcript url="{transcripts.format(n=n)}" type="text/vtt"/></item>' for n in numbers)
    extra = (f"<podcast:guid>{guid}</podcast:guid>" if guid else "") + (
        f"<itunes:new-feed-url>{new_feed_url}</itunes:new-feed-url>" if new_feed_url else "")
    return (f'<?xml version="1.0"?><rss version="2.0" xmlns:podcast="https://podcastindex.org/namespace/1.0" '
            f'xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd"><channel><title>{title}</title>'
            f"<link>{link}</link>{extra}{items}</channel></rss>").encode()


@pytest.fixture
def www(tmp_path: Path) -> Path:
    root = tmp_path / "www"
    for folder in ("a", "b"):
        (root / folder / "t").mkdir(parents=True)
        for n in range(1, 6):
            (root / folder / "t" / f"ep-{n}.vtt").write_text(vtt(n), encoding="utf-8")
    (root / "a" / "feed.xml").write_bytes(feed(range(1, 4)))
    (root / "b" / "feed.xml").write_bytes(feed(range(1, 4)))
    return root


@pytest.fixture
def server(www: Path):
    srv = FaultServer(www).start()
    yield srv
    srv.stop()


def config(tmp_path: Path, feeds: list[str], **settings):
    return load_config({"data": str(tmp_path / "data"), "feeds": feeds, "allow_private_hosts": True,
                        "fetch_timeout": 2.0, **settings}, environ={})


def state(data: Path) -> dict:
    with Catalog.in_dir(data) as cat:
        return {
            "shows": [s.id for s in cat.shows()],
            "episodes": {e.id: (e.show_id, e.transcript_source) for e in cat.episodes()},
            "gone": sorted(r[0] for r in cat.db.execute("SELECT id FROM episodes WHERE gone = 1")),
            "feeds": {f["source"]: (f["origin"], f["url"], f["show_id"], f["last_status"]) for f in cat.feeds()},
        }


def ok(report) -> None:
    assert not report.failed, report.errors


# -- a feed moves -------------------------------------------------------------------------------------


def test_a_feed_listed_at_a_new_address_is_the_same_show(tmp_path: Path, server: FaultServer) -> None:
    old, new = server.url("a/feed.xml"), server.url("b/feed.xml")
    ok(reindex(config(tmp_path, [old])))
    before = state(tmp_path / "data")
    report = reindex(config(tmp_path, [new]))  # the config now lists the same feed at its new address
    ok(report)
    after = state(tmp_path / "data")
    assert after["shows"] == before["shows"] == ["heron-hour"]
    assert after["episodes"].keys() == before["episodes"].keys() == {"heron-1", "heron-2", "heron-3"}
    assert all(source.startswith(server.url("b/t/")) for _, source in after["episodes"].values())
    assert after["gone"] == [] and report.gone == 0
    assert after["feeds"] == {new: ("config", None, "heron-hour", "ok")}  # the old address is no longer read
    assert [m["source"] for m in report.moves] == [new] and "3 of its 3 episode guids" in report.moves[0]["how"]
    assert report.feeds_dropped == [old]
    library = Library(tmp_path / "data")  # stats says what the run did (it said "failed": false alone)
    try:
        last = library.stats()["last_reindex"]
    finally:
        library.close()
    assert last["moves"] == report.moves and last["notes"] == report.notes[:20] and last["counts"]["gone"] == 0
    assert last["counts"]["feeds"] == 1 and last["counts"]["updated"] + last["counts"]["unchanged"] == 3
    # every count the run reported (the transcripts not modified and read again for a new parser were left out)
    counts = {k: v for k, v in report.to_dict().items() if isinstance(v, int) and not isinstance(v, bool)}
    assert last["counts"] == counts and {"transcripts_not_modified", "transcripts_reparsed"} <= counts.keys()
    assert sorted(index_docs(tmp_path / "data")) == ["heron-1", "heron-2", "heron-3"]  # never two copies
    server.clear_log()
    ok(reindex(config(tmp_path, [new])))
    assert not any(r.path.startswith("/a/") for r in server.log())


@pytest.mark.parametrize("status", [301, 308])
def test_a_permanent_redirect_moves_the_stored_address(tmp_path: Path, server: FaultServer, status: int) -> None:
    old, new = server.url("old/feed.xml"), server.url("b/feed.xml")
    server.faults["/old/feed.xml"] = RedirectLoop("/b/feed.xml", status=status)
    report = reindex(config(tmp_path, [old]))
    ok(report)
    assert state(tmp_path / "data")["feeds"] == {old: ("config", new, "heron-hour", "ok")}
    assert any("moved to " + new in note for note in report.notes)
    server.clear_log()
    second = reindex(config(tmp_path, [old]))
    ok(second)
    assert server.hits("/old/feed.xml") == 0 and second.feeds_unchanged == 1  # the old address is not asked
    assert [r.path for r in server.log() if r.path.endswith("feed.xml")] == ["/b/feed.xml"]
    # The operator then lists the new address: the same show, nothing read twice, the old row gone.
    third = reindex(config(tmp_path, [new]))
    ok(third)
    after = state(tmp_path / "data")
    assert after["shows"] == ["heron-hour"] and len(after["episodes"]) == 3
    assert after["feeds"] == {new: ("config", None, "heron-hour", "ok")}
    assert "the feed " + old + " moved here" in third.moves[0]["how"]


@pytest.mark.parametrize("status", [301, 308])
def test_a_permanent_redirect_is_recorded_only_once_a_feed_answered_there(tmp_path: Path, server: FaultServer,
                                                                          www: Path, status: int) -> None:
    """A 301 to a page that is no feed (a maintenance page) was recorded as the feed's new address before it was read:
    the feed failed at every later run, the redirect long gone, and the error named the source, not the page."""
    old = server.url("a/feed.xml")
    (www / "down.html").write_text("<html><body>Down for maintenance</body></html>", encoding="utf-8")
    ok(reindex(config(tmp_path, [old])))
    server.faults["/a/feed.xml"] = RedirectLoop("/down.html", status=status)
    report = reindex(config(tmp_path, [old]))
    assert report.feeds_failed == 1 and report.gone == 0 and not any("moved to" in n for n in report.notes)
    [error] = report.errors
    assert "not a feed" in error and f"read at {server.url('down.html')}, where {old} redirects" in error, error
    assert state(tmp_path / "data")["feeds"][old] == ("config", None, "heron-hour", "failed")
    del server.faults["/a/feed.xml"]
    server.clear_log()
    ok(reindex(config(tmp_path, [old])))
    assert server.hits("/down.html") == 0 and state(tmp_path / "data")["feeds"][old] == ("config", None, "heron-hour", "ok")


def test_a_temporary_redirect_keeps_the_listed_address(tmp_path: Path, server: FaultServer) -> None:
    old = server.url("old/feed.xml")
    server.faults["/old/feed.xml"] = RedirectLoop("/b/feed.xml", status=302)
    ok(reindex(config(tmp_path, [old])))
    assert state(tmp_path / "data")["feeds"][old][1] is None


def test_itunes_new_feed_url_moves_the_stored_address(tmp_path: Path, server: FaultServer, www: Path) -> None:
    old, new = server.url("a/feed.xml"), server.url("b/feed.xml")
    ok(reindex(config(tmp_path, [old])))
    (www / "a" / "feed.xml").write_bytes(feed(range(1, 4), new_feed_url=new))  # the publisher moved the feed
    (www / "b" / "feed.xml").write_bytes(feed(range(1, 5)))  # ... and published a new episode there
    report = reindex(config(tmp_path, [old]))
    ok(report)
    after = state(tmp_path / "data")
    assert after["shows"] == ["heron-hour"] and sorted(after["episodes"]) == [f"heron-{n}" for n in range(1, 5)]
    assert after["feeds"] == {old: ("config", new, "heron-hour", "ok")}
    assert report.new == 1 and any("itunes:new-feed-url" in note for note in report.notes)
    server.clear_log()
    ok(reindex(config(tmp_path, [old])))
    assert [r.path for r in server.log() if r.path.endswith("feed.xml")] == ["/b/feed.xml"]


def test_a_chain_of_new_feed_urls_is_followed_to_its_end(tmp_path: Path, server: FaultServer, www: Path) -> None:
    """A feed that moved twice (new-feed-url to a feed that names another) stayed at the first new address: its
    validators were kept, so every later run got a 304 there and never read where that one said it moved."""
    t = server.url("a/t") + "/ep-{n}.vtt"
    a, one, two, three = server.url("a/feed.xml"), server.url("m/1.xml"), server.url("m/2.xml"), server.url("m/3.xml")
    (www / "a" / "feed.xml").write_bytes(feed(range(1, 4), new_feed_url=one, transcripts=t))
    server.files["/m/1.xml"] = feed(range(1, 4), new_feed_url=two, transcripts=t)
    server.files["/m/2.xml"] = feed(range(1, 5), new_feed_url=three, transcripts=t)  # /m/3.xml is not up yet
    report = reindex(config(tmp_path, [a]))
    assert not report.failed and report.new == 4, report.errors
    assert state(tmp_path / "data")["feeds"][a] == ("config", two, "heron-hour", "ok")
    assert any(f"says it moved to {three} (itunes:new-feed-url at {two}), but it cannot be read there" in w
               and "404" in w and w.endswith(f"read at {two}") for w in report.warnings), report.warnings
    server.files["/m/3.xml"] = feed(range(1, 6), transcripts=t)  # now it is: the next run reads /m/2.xml in full
    server.clear_log()
    report = reindex(config(tmp_path, [a]))
    ok(report)
    assert report.new == 1 and state(tmp_path / "data")["feeds"][a] == ("config", three, "heron-hour", "ok")
    # the move is in the report's moves, where stats lists them (it was a note alone)
    assert report.moves == [{"source": a, "to": three, "how": "itunes:new-feed-url"}], report.moves
    assert [(r.path, r.conditional) for r in server.log() if r.path.startswith("/m/")] == [("/m/2.xml", False),
                                                                                           ("/m/3.xml", False)]
    server.clear_log()
    report = reindex(config(tmp_path, [a]))  # the end of the chain: asked conditionally, unchanged
    ok(report)
    assert report.feeds_unchanged == 1 and [r.path for r in server.log() if r.path.endswith(".xml")] == ["/m/3.xml"]


def test_a_chain_of_new_feed_urls_that_comes_back_is_not_followed(tmp_path: Path, server: FaultServer,
                                                                   www: Path) -> None:
    a, one, two = server.url("a/feed.xml"), server.url("m/1.xml"), server.url("m/2.xml")
    (www / "a" / "feed.xml").write_bytes(feed(range(1, 4), new_feed_url=one))
    server.files["/m/1.xml"] = feed(range(1, 4), new_feed_url=two)
    server.files["/m/2.xml"] = feed(range(1, 4), new_feed_url=one)  # back to /m/1.xml
    for _ in range(2):
        report = reindex(config(tmp_path, [a]))
        assert report.new + report.unchanged == 3 and not report.notes, report.notes
        assert any(f"says it moved to {one} (itunes:new-feed-url at {two}), an address the chain of its moves passed "
                   "already: not followed" in w for w in report.warnings), report.warnings
        assert state(tmp_path / "data")["feeds"][a][1] is None  # read where it was


def test_a_long_chain_of_new_feed_urls_is_followed_over_several_runs(tmp_path: Path, server: FaultServer,
                                                                      www: Path) -> None:
    from podsearch.ingest.run import MAX_MOVES

    last = MAX_MOVES + 2
    urls = [server.url("a/feed.xml")] + [server.url(f"m/{n}.xml") for n in range(1, last + 1)]
    t = server.url("a/t") + "/ep-{n}.vtt"
    (www / "a" / "feed.xml").write_bytes(feed(range(1, 4), new_feed_url=urls[1], transcripts=t))
    for n in range(1, last + 1):
        server.files[f"/m/{n}.xml"] = feed(range(1, 4), new_feed_url=urls[n + 1] if n < last else "", transcripts=t)
    report = reindex(config(tmp_path, [urls[0]]))
    assert any(f"more than {MAX_MOVES} moves in one run" in w for w in report.warnings), report.warnings
    assert state(tmp_path / "data")["feeds"][urls[0]][1] == urls[MAX_MOVES]
    ok(reindex(config(tmp_path, [urls[0]])))
    assert state(tmp_path / "data")["feeds"][urls[0]][1] == urls[last]


def test_podcast_guid_is_the_show_whatever_its_title(tmp_path: Path, server: FaultServer, www: Path) -> None:
    old, new = server.url("a/feed.xml"), server.url("b/feed.xml")
    (www / "a" / "feed.xml").write_bytes(feed(range(1, 4), guid=GUID))
    # New home, new title, new page, and the publisher's new platform kept only the two newest episodes.
    (www / "b" / "feed.xml").write_bytes(feed([3, 4], "Herons Weekly", link="https://herons.example/", guid=GUID))
    ok(reindex(config(tmp_path, [old])))
    report = reindex(config(tmp_path, [new]))
    ok(report)
    after = state(tmp_path / "data")
    assert after["shows"] == ["heron-hour"]  # the show keeps its id (so its page keeps its address)
    assert sorted(after["episodes"]) == [f"heron-{n}" for n in range(1, 5)] and after["gone"] == ["heron-1", "heron-2"]
    assert report.moves[0]["how"] == f"same podcast:guid {GUID}"
    with Catalog.in_dir(tmp_path / "data") as cat:
        assert cat.show("heron-hour").title == "Herons Weekly"


def test_a_feed_repeating_another_shows_episodes_stays_its_own_show(tmp_path: Path, server: FaultServer,
                                                                     www: Path) -> None:
    """A "best of" feed carries guids of a show that is still read: not a move (ids are qualified, as before)."""
    (www / "b" / "feed.xml").write_bytes(feed([1, 2], "The Best of Herons", link="https://best.example/"))
    ok(reindex(config(tmp_path, [server.url("a/feed.xml")])))
    report = reindex(config(tmp_path, [server.url("a/feed.xml"), server.url("b/feed.xml")]))
    ok(report)
    after = state(tmp_path / "data")
    assert after["shows"] == ["heron-hour", "the-best-of-herons"] and report.moves == []
    assert {"the-best-of-herons/heron-1", "the-best-of-herons/heron-2", "heron-1"} <= after["episodes"].keys()


def test_one_show_listed_at_two_addresses_is_read_once(tmp_path: Path, server: FaultServer) -> None:
    a, b = server.url("a/feed.xml"), server.url("b/feed.xml")
    ok(reindex(config(tmp_path, [a])))
    report = reindex(config(tmp_path, [a, b]))
    assert not report.failed and any("is the same show as" in w for w in report.warnings)
    after = state(tmp_path / "data")
    assert len(after["episodes"]) == 3 and after["feeds"][b][2:] == ("heron-hour", "duplicate")


# -- a feed is dropped, added, removed ------------------------------------------------------------------


def test_a_feed_dropped_from_the_config_is_no_longer_read(tmp_path: Path, server: FaultServer, www: Path,
                                                          runner) -> None:
    (www / "b" / "feed.xml").write_bytes(feed(range(1, 3), "Marsh Notes", transcripts="t/ep-{n}.vtt")
                                         .replace(b"heron-", b"marsh-"))
    a, b = server.url("a/feed.xml"), server.url("b/feed.xml")
    ok(reindex(config(tmp_path, [a, b])))
    # A run whose config lists no feeds (--config forgotten) reads the folder's feeds and drops none.
    forgot = reindex(config(tmp_path, []))
    ok(forgot)
    assert (forgot.feeds, forgot.feeds_dropped) == (2, []) and state(tmp_path / "data")["gone"] == []
    server.clear_log()
    report = reindex(config(tmp_path, [a]))
    ok(report)
    assert not any(r.path.startswith("/b/") for r in server.log())
    after = state(tmp_path / "data")
    assert after["gone"] == ["marsh-1", "marsh-2"] and report.feeds_dropped == [b]  # kept, marked
    assert list(after["feeds"]) == [a]
    pruned = reindex(config(tmp_path, [a, b]))
    ok(pruned)
    assert state(tmp_path / "data")["gone"] == []  # listed again: back
    ok(reindex(config(tmp_path, [a]), prune=True))
    after = state(tmp_path / "data")
    assert after["shows"] == ["heron-hour"] and not any(i.startswith("marsh-") for i in after["episodes"])
    assert sorted(index_docs(tmp_path / "data")) == ["heron-1", "heron-2", "heron-3"]


def test_a_feed_dropped_on_an_earlier_run_is_pruned_by_a_later_prune(tmp_path: Path, server: FaultServer, www: Path
                                                                      ) -> None:
    """Dropped from the config by a run without --prune, a feed's episodes stayed marked gone and searchable for
    good: a later `reindex --prune` no longer knew the feed (docs/operations.md says it deletes them)."""
    (www / "b" / "feed.xml").write_bytes(feed(range(1, 3), "Marsh Notes", transcripts="t/ep-{n}.vtt")
                                         .replace(b"heron-", b"marsh-"))
    a, b = server.url("a/feed.xml"), server.url("b/feed.xml")
    ok(reindex(config(tmp_path, [a, b])))
    ok(reindex(config(tmp_path, [a])))  # dropped, kept, marked gone
    assert state(tmp_path / "data")["gone"] == ["marsh-1", "marsh-2"]
    ok(reindex(config(tmp_path, [a]), prune=True))  # a later run
    after = state(tmp_path / "data")
    assert not any(i.startswith("marsh-") for i in after["episodes"]) and after["gone"] == []
    assert sorted(index_docs(tmp_path / "data")) == ["heron-1", "heron-2", "heron-3"]


def test_feeds_lists_where_each_feed_came_from_and_remove_drops_an_added_one(tmp_path: Path, server: FaultServer,
                                                                              www: Path, runner) -> None:
    (www / "b" / "feed.xml").write_bytes(feed(range(1, 3), "Marsh Notes").replace(b"heron-", b"marsh-"))
    a, b = server.url("a/feed.xml"), server.url("b/feed.xml")
    toml = tmp_path / "podsearch.toml"
    toml.write_text(f'feeds = ["{a}"]\nallow_private_hosts = true\n', encoding="utf-8")
    base = ["--data", str(tmp_path / "data"), "--config", str(toml)]
    assert runner.invoke(main, [*base, "add", b]).exit_code == 0
    assert runner.invoke(main, [*base, "add", a]).exit_code == 2  # already listed in the config
    assert runner.invoke(main, [*base, "-q", "reindex"]).exit_code == 0
    listed = json.loads(runner.invoke(main, [*base, "feeds", "--json"]).output)
    assert [(f["source"], f["origin"], f["status"], f["episodes"], f["show_id"]) for f in listed] == [
        (a, "config", "ok", 3, "heron-hour"), (b, "add", "ok", 2, "marsh-notes")]
    text = runner.invoke(main, [*base, "feeds"]).output
    assert "config" in text and "add" in text and "3 episodes" in text
    # An added feed survives a reindex with the config; remove drops it, a config feed is not removed here.
    refused = runner.invoke(main, [*base, "remove", a])
    assert refused.exit_code == 2 and "listed in the config file" in refused.output
    assert runner.invoke(main, [*base, "remove", server.url("nowhere.xml")]).exit_code == 1
    removed = runner.invoke(main, [*base, "remove", b, "--prune"])
    assert removed.exit_code == 0, removed.output
    listed = json.loads(runner.invoke(main, [*base, "feeds", "--json"]).output)
    assert [f["source"] for f in listed] == [a]
    assert sorted(index_docs(tmp_path / "data")) == ["heron-1", "heron-2", "heron-3"]


# The catalogs older podsearches wrote: schema 1 (feeds, shows, episodes, segments, runs) and main's schema 2,
# which added the watches of issue 22 (as shipped; a schema-2 catalog is always of that kind).
SCHEMA_1 = """CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT);
    INSERT INTO meta VALUES ('schema_version', '1');
    CREATE TABLE feeds (source TEXT PRIMARY KEY, show_id TEXT, etag TEXT, last_modified TEXT, last_fetch REAL,
                        last_status TEXT, last_error TEXT);
    CREATE TABLE shows (id TEXT PRIMARY KEY, source TEXT, title TEXT NOT NULL, doc TEXT NOT NULL);
    CREATE TABLE episodes (id TEXT PRIMARY KEY, show_id TEXT NOT NULL REFERENCES shows(id), title TEXT NOT NULL,
                           published TEXT, doc TEXT NOT NULL, content_hash TEXT NOT NULL,
                           gone INTEGER NOT NULL DEFAULT 0, added_at REAL NOT NULL, updated_at REAL NOT NULL);
    CREATE INDEX episodes_show ON episodes(show_id, published);
    CREATE TABLE segments (episode_id TEXT NOT NULL REFERENCES episodes(id) ON DELETE CASCADE, seq INTEGER NOT NULL,
                           start REAL, "end" REAL, speaker TEXT NOT NULL DEFAULT '', text TEXT NOT NULL,
                           PRIMARY KEY (episode_id, seq));
    CREATE TABLE runs (id INTEGER PRIMARY KEY AUTOINCREMENT, started REAL NOT NULL, finished REAL, summary TEXT);
    INSERT INTO feeds (source, show_id, last_status) VALUES ('https://example.org/f.xml', 'f', 'ok');
    INSERT INTO shows VALUES ('f', 'https://example.org/f.xml', 'F', '{"id": "f", "title": "F"}');
    INSERT INTO episodes VALUES ('e1', 'f', 'One', NULL,
        '{"id": "e1", "show_id": "f", "title": "One", "persons": [{"name": "Ian McAllister"}]}', 'h', 0, 1, 1);
    INSERT INTO segments VALUES ('e1', 0, NULL, NULL, 'Ada deLuca', 'Hello.');"""
WATCHES_2 = """UPDATE meta SET value = '2' WHERE key = 'schema_version';
    CREATE TABLE watches (id INTEGER PRIMARY KEY AUTOINCREMENT, query TEXT NOT NULL,
                          filters TEXT NOT NULL DEFAULT '{}', webhook TEXT NOT NULL, secret TEXT NOT NULL,
                          created REAL NOT NULL, delivered INTEGER NOT NULL DEFAULT 0, last_delivered REAL,
                          last_error TEXT);
    CREATE TABLE watch_inbox (episode_id TEXT PRIMARY KEY REFERENCES episodes(id) ON DELETE CASCADE,
                              added REAL NOT NULL);
    CREATE TABLE watch_deliveries (id INTEGER PRIMARY KEY AUTOINCREMENT,
                                   watch_id INTEGER NOT NULL REFERENCES watches(id) ON DELETE CASCADE,
                                   uid TEXT NOT NULL UNIQUE, created REAL NOT NULL, body BLOB NOT NULL,
                                   attempts INTEGER NOT NULL DEFAULT 0, last_attempt REAL, last_error TEXT);
    CREATE TRIGGER watch_inbox_new AFTER INSERT ON episodes WHEN EXISTS (SELECT 1 FROM watches)
    BEGIN INSERT OR IGNORE INTO watch_inbox (episode_id, added) VALUES (NEW.id, NEW.added_at); END;
    INSERT INTO watches (query, webhook, secret, created) VALUES ('herons', 'https://hooks.example.org/h', 's', 1);"""


@pytest.mark.parametrize("schema", [1, 2])
def test_an_older_catalog_is_migrated(tmp_path: Path, schema: int) -> None:
    data = tmp_path / "data"
    data.mkdir()
    db = sqlite3.connect(data / Catalog.FILENAME)
    db.executescript(SCHEMA_1 + (";\n" + WATCHES_2 if schema == 2 else ""))
    db.commit()
    db.close()
    with Catalog.in_dir(data) as cat:
        assert cat.schema_version() == SCHEMA_VERSION == 8
        assert cat.person_names(["ian mcallister", "ada deluca"]) == {"ian mcallister": "Ian McAllister",
                                                                      "ada deluca": "Ada deLuca"}
        assert cat.feeds() == [{"source": "https://example.org/f.xml", "show_id": "f", "etag": None,
                                "last_modified": None, "last_fetch": None, "last_status": "ok", "last_error": None,
                                "origin": None, "url": None}]
        assert cat.transcript_state("x") is None
        assert [w["query"] for w in cat.watches()] == (["herons"] if schema == 2 else [])
        assert cat.pending_deliveries() == []
        assert cat.db.execute("SELECT name FROM sqlite_master WHERE name = 'watch_inbox_new'").fetchone()
    with Catalog.in_dir(data) as cat:  # opened again: nothing to do
        assert cat.schema_version() == 8


def test_a_catalog_of_a_newer_podsearch_is_refused(tmp_path: Path) -> None:
    with Catalog.in_dir(tmp_path) as cat:
        cat.db.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", (str(SCHEMA_VERSION + 1),))
    with pytest.raises(CatalogError, match="newer podsearch"):
        Catalog.in_dir(tmp_path)


# -- hosts that are down, the run's deadline ---------------------------------------------------------


def _dead_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.mark.parametrize("kind", ["refuses", "never answers", "drips"])
def test_a_transcript_host_that_is_down_is_skipped_and_reported_once(tmp_path: Path, server: FaultServer,
                                                                      www: Path, kind: str) -> None:
    """(``drips``: a host that answers, then sends a byte now and then, never ending in time. Its answer reset the
    count of failures, and each of its links cost the whole fetch_timeout, at every run, until 5 December 2026.)"""
    if kind == "refuses":
        host, silent = f"127.0.0.1:{_dead_port()}", None
    else:
        silent = FaultServer(www).start()
        fault = (lambda: Silent()) if kind == "never answers" else (lambda: Drip(b"WEBVTT\n\n" + b"x" * 200, every=0.1))
        silent.faults.update({f"/t/ep-{n}.vtt": fault() for n in range(1, 21)})
        host = f"127.0.0.1:{silent.port}"
    (www / "a" / "feed.xml").write_bytes(feed(range(1, 21), transcripts=f"http://{host}/t/ep-{{n}}.vtt"))
    try:
        started = time.monotonic()
        report = reindex(config(tmp_path, [server.url("a/feed.xml")], fetch_timeout=0.5))
        took = time.monotonic() - started
    finally:
        if silent is not None:
            silent.stop()
    assert report.new == 20 and report.transcripts_failed == 20  # every episode stored, without a transcript
    [down] = report.unreachable_hosts
    assert down["host"] == host and down["failed"] + down["skipped"] == 20, "\n".join(report.errors)
    assert down["cause"] == {"refuses": "connection refused", "never answers": "no answer", "drips": "too slow"}[kind]
    assert [e for e in report.errors if host in e] == report.errors and len(report.errors) == 1  # once
    assert "timed out" not in report.errors[0] or kind == "never answers"
    assert took < 15, took  # 20 links, 3 attempts each, would take minutes
    library = Library(tmp_path / "data")
    try:
        [stated] = library.stats()["last_reindex"]["unreachable_hosts"]
    finally:
        library.close()
    assert stated == {k: down[k] for k in ("host", "cause", "failed", "skipped")}
    if silent is not None:
        # Three timeouts in a row put the host down; requests in flight then (two per host) end as they do.
        assert sum(silent.hits(f"/t/ep-{n}.vtt") for n in range(1, 21)) <= 8


def test_the_reindex_deadline_stops_reading_and_indexes_what_was_read(tmp_path: Path, server: FaultServer,
                                                                      www: Path) -> None:
    silent = FaultServer(www).start()
    silent.faults["/slow.xml"] = Silent()
    try:
        feeds = [server.url("a/feed.xml"), f"http://127.0.0.1:{silent.port}/slow.xml", server.url("b/feed.xml")]
        started = time.monotonic()
        report = reindex(config(tmp_path, feeds, fetch_timeout=30.0, reindex_deadline=1.5))
        took = time.monotonic() - started
    finally:
        silent.stop()
    assert report.deadline_passed and report.failed
    assert any("deadline (1.5 s) passed" in e and "1 feeds not read" in e for e in report.errors), report.errors
    assert took < 20, took
    assert sorted(index_docs(tmp_path / "data")) == ["heron-1", "heron-2", "heron-3"]  # the first feed: indexed


def test_a_feed_that_never_answers_is_given_up_after_fetch_timeout(tmp_path: Path, server: FaultServer) -> None:
    """fetch_timeout is what one download may take: a feed that never answers was given up after twice it, and the
    error said so ("took longer than 2 s" with fetch_timeout = 1)."""
    server.faults["/slow.xml"] = Silent()
    started = time.monotonic()
    report = reindex(config(tmp_path, [server.url("slow.xml")], fetch_timeout=1.0))
    took = time.monotonic() - started
    [error] = [e for e in report.errors if "slow.xml" in e]
    assert "took longer than 1 s" in error, error
    assert server.hits("/slow.xml") == 1 and took < 1.9, took


# -- a transcript edited at an unchanged URL ---------------------------------------------------------


def test_an_edited_transcript_at_the_same_url_is_read_again(tmp_path: Path, server: FaultServer, www: Path) -> None:
    ok(reindex(config(tmp_path, [server.url("a/feed.xml")])))
    server.files["/a/t/ep-2.vtt"] = vtt(2, "Correction: those were grey herons, not egrets.").encode()
    server.clear_log()
    report = reindex(config(tmp_path, [server.url("a/feed.xml")]))
    ok(report)
    assert report.feeds_unchanged == 1 and report.updated == 1 and report.unchanged == 2
    assert (report.transcripts_fetched, report.transcripts_not_modified) == (1, 2)
    assert all(r.conditional for r in server.log())
    with Catalog.in_dir(tmp_path / "data") as cat:
        assert "grey herons" in cat.episode("heron-2").transcript_text


def test_a_new_feed_url_that_cannot_be_read_leaves_the_feed_where_it_is(tmp_path: Path, server: FaultServer,
                                                                         www: Path) -> None:
    old, broken = server.url("a/feed.xml"), server.url("nowhere/feed.xml")
    (www / "a" / "feed.xml").write_bytes(feed(range(1, 4), new_feed_url=broken))
    report = reindex(config(tmp_path, [old]))
    assert report.new == 3 and not report.failed
    assert any("says it moved to " + broken in w and "404" in w for w in report.warnings)
    assert state(tmp_path / "data")["feeds"] == {old: ("config", None, "heron-hour", "ok")}


@pytest.mark.parametrize("spelled", ["", "?src=moved"])
def test_a_new_feed_url_where_another_listed_feed_is_read_is_not_followed(tmp_path: Path, server: FaultServer,
                                                                           www: Path, spelled: str) -> None:
    """Spotlight's feed named AFK's address (also in the config) as its new one: Spotlight's episodes were all
    marked gone, the show renamed, and AFK's episodes stored a second time under Spotlight's ids (and sent to the
    watches as new). The other feed's address is not followed; the feed is read where it is, with a warning."""
    a, b = server.url("a/feed.xml"), server.url("b/feed.xml")
    (www / "b" / "feed.xml").write_bytes(feed(range(1, 4), title="Egret Hour", link="https://example.org/egrets"))
    ok(reindex(config(tmp_path, [a, b])))
    before = state(tmp_path / "data")
    (www / "a" / "feed.xml").write_bytes(feed(range(1, 5), new_feed_url=b + spelled))
    report = reindex(config(tmp_path, [a, b]))
    assert report.new == 1 and report.gone == 0 and not report.failed, report.to_dict()
    assert any(f"says it moved to {b + spelled}" in w and f"where the feed {b} is read; not followed" in w
               for w in report.warnings), report.warnings
    after = state(tmp_path / "data")
    assert after["shows"] == before["shows"] == ["egret-hour", "heron-hour"]
    assert after["feeds"][a] == ("config", None, "heron-hour", "ok")
    assert len(after["episodes"]) == len(before["episodes"]) + 1


@pytest.mark.parametrize("status, location", [(301, "/b/feed.xml"), (308, "/b/feed.xml"), (302, "/b/feed.xml"),
                                              (301, "/b/x/../feed.xml"), (301, "/b/feed.xml?src=moved"),
                                              (307, "/b/./feed.xml/?utm_source=x&src=moved")])
def test_a_permanent_redirect_to_where_another_listed_feed_is_read_is_not_followed(tmp_path: Path, server: FaultServer,
                                                                                   www: Path, status: int,
                                                                                   location: str) -> None:
    """A 301 from Spotlight's feed to AFK's (also in the config) was recorded as Spotlight's move: Spotlight's
    episodes were marked gone and AFK's stored again under Spotlight's ids, for good. It is not followed (as
    itunes:new-feed-url is not): the feed fails this run, nothing is recorded, and it is read again once the
    redirect goes. A temporary redirect there, or to the address written another way, is not followed either (they
    were, the evening of 5 December 2026: the other show's episodes were taken for this one's)."""
    a, b = server.url("a/feed.xml"), server.url("b/feed.xml")
    (www / "b" / "feed.xml").write_bytes(feed(range(1, 4), title="Egret Hour", link="https://example.org/egrets"))
    ok(reindex(config(tmp_path, [a, b])))
    before = state(tmp_path / "data")
    server.faults["/a/feed.xml"] = RedirectLoop(location, status=status)
    report = reindex(config(tmp_path, [a, b]))
    assert report.failed and report.feeds_failed == 1 and (report.new, report.gone) == (0, 0), report.to_dict()
    [error] = report.errors
    assert error.startswith(f"feed {a}: ") and "redirects to http" in error and "not followed" in error, error
    assert f"is where the feed {b} is read" in error, error
    assert not any("moved to" in note for note in report.notes)
    after = state(tmp_path / "data")
    assert after["episodes"] == before["episodes"] and after["gone"] == [] and after["shows"] == before["shows"]
    assert after["feeds"][a] == ("config", None, "heron-hour", "failed")
    del server.faults["/a/feed.xml"]
    server.clear_log()
    ok(reindex(config(tmp_path, [a, b])))
    assert server.hits("/a/feed.xml") >= 1 and state(tmp_path / "data")["feeds"][a] == ("config", None, "heron-hour", "ok")


@pytest.mark.parametrize("target, registered, same", [
    ("http://h.example/b/feed.xml?src=moved", "http://h.example/b/feed.xml", True),
    ("HTTPS://H.example:443/b/x/../feed.xml/", "http://h.example/b/feed.xml", True),
    ("http://h.example/b/feed%2Exml", "http://h.example/b/feed.xml", True),
    ("http://h.example/feed.php?id=1&src=moved", "http://h.example/feed.php?id=1", True),
    ("http://h.example/feed.php?id=2", "http://h.example/feed.php?id=1", False),
    ("http://h.example/feed.php", "http://h.example/feed.php?id=1", False),
    ("http://h.example/b/feed.xml", "http://other.example/b/feed.xml", False),
    ("http://h.example:8080/b/feed.xml", "http://h.example/b/feed.xml", False),
    ("http://h.example/B/feed.xml", "http://h.example/b/feed.xml", False)])
def test_what_is_another_feeds_address(target: str, registered: str, same: bool) -> None:
    from podsearch.ingest.run import _same_feed

    assert (_same_feed(target, registered) is not None) is same


class _ByQuery(Fault):
    """One script, several feeds: the answer depends on the query (``{query: bytes or a redirect's Location}``)."""

    def __init__(self, answers: dict[str, bytes | str]) -> None:
        self.answers = answers

    def answer(self, handler, stop) -> None:
        found = self.answers.get(urlsplit(handler.path).query, b"")
        if isinstance(found, str):
            handler.send_response(301)
            handler.send_header("Location", found)
            handler.send_header("Content-Length", "0")
            handler.end_headers()
            return
        handler.send_response(200)
        handler.send_header("Content-Type", "application/rss+xml")
        handler.send_header("Content-Length", str(len(found)))
        handler.end_headers()
        handler.wfile.write(found)


def test_a_redirect_to_its_own_address_with_more_query_is_followed(tmp_path: Path, server: FaultServer) -> None:
    """``feed.php?id=1`` moving to ``feed.php?id=1&v=2`` moves to its own address, though ``feed.php`` (another
    feed) is listed too: the closest registered address says whose it is."""
    base, mine = server.url("q/feed.php"), server.url("q/feed.php") + "?id=1"
    t = server.url("a/t") + "/ep-{n}.vtt"
    answers: dict[str, bytes | str] = {
        "": feed(range(1, 3), title="Egret Hour", link="https://example.org/egrets", transcripts=t),
        "id=1": feed(range(3, 5), transcripts=t), "id=1&v=2": feed(range(3, 6), transcripts=t)}
    server.faults["/q/feed.php"] = _ByQuery(answers)
    ok(reindex(config(tmp_path, [base, mine])))
    answers["id=1"] = "/q/feed.php?id=1&v=2"
    report = reindex(config(tmp_path, [base, mine]))
    ok(report)
    assert state(tmp_path / "data")["feeds"][mine] == ("config", mine + "&v=2", "heron-hour", "ok")
    assert report.new == 1 and report.gone == 0


def _no_transcripts(data: bytes) -> bytes:
    return re.sub(rb"<podcast:transcript[^>]*/>", b"", data)


def test_a_feed_cannot_lead_podsearch_to_a_private_address(tmp_path: Path, server: FaultServer, www: Path) -> None:
    """The feed's own address is the operator's choice (a loopback one here); where the feed says it moved
    (itunes:new-feed-url) or redirects to is the feed's, checked as a transcript link is. A new-feed-url was fetched
    unchecked, a private or loopback address too, and recorded as the feed's address; so was a redirect."""
    other = FaultServer(www).start()  # another origin on loopback: an internal service a feed should not reach
    try:
        inside, a = f"http://127.0.0.1:{other.port}/b/feed.xml", server.url("a/feed.xml")
        strict = {"allow_private_hosts": False}
        (www / "b" / "feed.xml").write_bytes(_no_transcripts(feed(range(1, 5))))
        (www / "a" / "feed.xml").write_bytes(_no_transcripts(feed(range(1, 4), new_feed_url=inside)))
        report = reindex(config(tmp_path, [a], **strict))
        ok(report)
        assert report.new == 3 and not any("moved to" in note for note in report.notes)
        assert any(f"says it moved to {inside}" in w and "(loopback)" in w for w in report.warnings), report.warnings
        assert state(tmp_path / "data")["feeds"][a] == ("config", None, "heron-hour", "ok")
        server.faults["/a/feed.xml"] = RedirectLoop(inside, status=301)  # a permanent redirect there
        report = reindex(config(tmp_path, [a], **strict))
        [error] = report.errors
        assert report.feeds_failed == 1 and f"refused {inside}" in error and "(loopback)" in error, error
        assert state(tmp_path / "data")["feeds"][a] == ("config", None, "heron-hour", "failed")
        del server.faults["/a/feed.xml"]
        assert other.log() == []
        # On the feed's own host (the operator's choice), it is followed.
        (www / "a" / "feed.xml").write_bytes(_no_transcripts(feed(range(1, 4), new_feed_url=server.url("b/feed.xml"))))
        report = reindex(config(tmp_path, [a], **strict))
        ok(report)
        assert report.new == 1 and state(tmp_path / "data")["feeds"][a][1] == server.url("b/feed.xml")
    finally:
        other.stop()


def test_a_move_to_a_private_address_recorded_unchecked_is_forgotten(tmp_path: Path, server: FaultServer,
                                                                      www: Path) -> None:
    other = FaultServer(www).start()
    try:
        inside, a = f"http://127.0.0.1:{other.port}/b/feed.xml", server.url("a/feed.xml")
        (www / "b" / "feed.xml").write_bytes(_no_transcripts(feed(range(1, 4))))
        (www / "a" / "feed.xml").write_bytes(_no_transcripts(feed(range(1, 4), new_feed_url=inside)))
        ok(reindex(config(tmp_path, [a])))  # private hosts allowed: followed and recorded
        assert state(tmp_path / "data")["feeds"][a][1] == inside
        other.clear_log()
        report = reindex(config(tmp_path, [a], allow_private_hosts=False))
        ok(report)
        assert any(f"was read at {inside}, where it moved, which is refused now" in w for w in report.warnings)
        assert state(tmp_path / "data")["feeds"][a] == ("config", None, "heron-hour", "ok") and other.log() == []
    finally:
        other.stop()


def _moved_to_m(tmp_path: Path, server: FaultServer) -> str:
    """The feed a/feed.xml, moved (a 301, recorded) to /m/feed.xml; the redirect then gone. Returns a's address."""
    a, m = server.url("a/feed.xml"), server.url("m/feed.xml")
    t = server.url("a/t") + "/ep-{n}.vtt"
    server.faults["/a/feed.xml"] = RedirectLoop("/m/feed.xml", status=301)
    server.files["/m/feed.xml"] = feed(range(1, 4), transcripts=t)
    ok(reindex(config(tmp_path, [a])))
    assert state(tmp_path / "data")["feeds"][a] == ("config", m, "heron-hour", "ok")
    del server.faults["/a/feed.xml"]
    return a


@pytest.mark.parametrize("status", [410, 404])
def test_a_feed_whose_new_address_is_gone_is_read_at_its_listed_address_again(tmp_path: Path, server: FaultServer,
                                                                              www: Path, status: int) -> None:
    """A feed whose recorded new address answered 410 Gone (or 404) was read there at every run, failing, and its
    listed address never asked again. It is now read at its listed address that run; the same show answering
    there, the move is forgotten (a note)."""
    a, m = _moved_to_m(tmp_path, server), server.url("m/feed.xml")
    server.faults["/m/feed.xml"] = Status(status, b"gone")
    (www / "a" / "feed.xml").write_bytes(feed(range(1, 5)))  # the publisher went back to the old address
    report = reindex(config(tmp_path, [a]))
    ok(report)
    assert (report.new, report.gone) == (1, 0)
    assert any(f"{m}, where it moved, answers HTTP {status}" in n and f"read at {a} again" in n
               and "the move is forgotten" in n for n in report.notes), report.notes
    assert state(tmp_path / "data")["feeds"][a] == ("config", None, "heron-hour", "ok")
    server.clear_log()
    ok(reindex(config(tmp_path, [a])))
    assert server.hits("/m/feed.xml") == 0 and server.hits("/a/feed.xml") == 1


def test_a_feed_gone_at_both_addresses_fails_naming_both(tmp_path: Path, server: FaultServer, www: Path) -> None:
    a, m = _moved_to_m(tmp_path, server), server.url("m/feed.xml")
    before = state(tmp_path / "data")
    server.faults["/m/feed.xml"] = Status(410, b"gone")
    server.missing.add("/a/feed.xml")
    report = reindex(config(tmp_path, [a]))
    [error] = report.errors
    assert report.feeds_failed == 1 and error.startswith(f"feed {a}: {m}, where it moved, answers HTTP 410"), error
    assert f"and {a}, its listed address: HTTP 404" in error and "list the feed's address now in the config" in error
    after = state(tmp_path / "data")
    assert after["episodes"] == before["episodes"] and after["gone"] == []
    assert after["feeds"][a] == ("config", m, "heron-hour", "failed")  # the move is kept: asked first next run


def test_another_show_at_the_listed_address_of_a_feed_gone_where_it_moved_is_not_read(tmp_path: Path,
                                                                                      server: FaultServer,
                                                                                      www: Path) -> None:
    """The old address now serves something else (the domain sold, another show): not this show's."""
    a, m = _moved_to_m(tmp_path, server), server.url("m/feed.xml")
    before = state(tmp_path / "data")
    server.faults["/m/feed.xml"] = Status(404, b"not found")
    (www / "a" / "feed.xml").write_bytes(feed(range(1, 3), "Egret Hour", link="https://egrets.example/")
                                         .replace(b"heron-", b"egret-"))
    report = reindex(config(tmp_path, [a]))
    [error] = report.errors
    assert report.feeds_failed == 1 and f"{m}, where it moved, answers HTTP 404" in error, error
    assert f"{a}, its listed address, serves another show ('Egret Hour', not 'heron-hour')" in error, error
    after = state(tmp_path / "data")
    assert after["episodes"] == before["episodes"] and after["gone"] == [] and after["shows"] == ["heron-hour"]
    assert after["feeds"][a] == ("config", m, "heron-hour", "failed")


def test_a_new_address_that_fails_otherwise_is_no_reason_to_read_the_old_one(tmp_path: Path, server: FaultServer,
                                                                             www: Path) -> None:
    """A 5xx (or no answer) at the new address is a failure there: the old address may hold a stale copy."""
    a = _moved_to_m(tmp_path, server)
    server.faults["/m/feed.xml"] = Status(500, b"oops")
    server.clear_log()
    report = reindex(config(tmp_path, [a], fetch_timeout=5.0))
    assert report.feeds_failed == 1 and "HTTP 500" in report.errors[0] and server.hits("/a/feed.xml") == 0


def test_a_refused_move_at_the_end_of_a_chain_goes_back_to_its_last_allowed_address(tmp_path: Path,
                                                                                     server: FaultServer,
                                                                                     www: Path) -> None:
    """A chain a -> m1 (the feed's own host) -> m2 (another, loopback) recorded while private hosts were allowed:
    refused now, the move is forgotten and the feed read at a again, which leads to m1 again, where it is read and
    recorded (the refused hop a warning): it does not stay at its listed address, nor fail."""
    other = FaultServer(www).start()
    try:
        a, m1, m2 = server.url("a/feed.xml"), server.url("m/1.xml"), f"http://127.0.0.1:{other.port}/b/feed.xml"
        (www / "a" / "feed.xml").write_bytes(_no_transcripts(feed(range(1, 4), new_feed_url=m1)))
        server.files["/m/1.xml"] = _no_transcripts(feed(range(1, 4), new_feed_url=m2))
        (www / "b" / "feed.xml").write_bytes(_no_transcripts(feed(range(1, 4))))
        ok(reindex(config(tmp_path, [a])))
        assert state(tmp_path / "data")["feeds"][a][1] == m2
        other.clear_log()
        report = reindex(config(tmp_path, [a], allow_private_hosts=False))
        ok(report)
        assert any(f"was read at {m2}, where it moved, which is refused now" in w for w in report.warnings)
        assert any(f"says it moved to {m2}" in w and "(loopback)" in w for w in report.warnings), report.warnings
        assert state(tmp_path / "data")["feeds"][a] == ("config", m1, "heron-hour", "ok") and other.log() == []
    finally:
        other.stop()


def test_a_local_feed_is_not_followed_to_its_new_feed_url(tmp_path: Path, server: FaultServer, www: Path) -> None:
    """A feed read from a file is the file the operator chose, whatever address its publisher gives it."""
    local = www / "a" / "feed.xml"
    local.write_bytes(feed(range(1, 4), new_feed_url=server.url("b/feed.xml")))
    report = reindex(config(tmp_path, [str(local)]))
    ok(report)
    assert not server.log() and report.notes == []
    assert state(tmp_path / "data")["feeds"] == {str(local): ("config", None, "heron-hour", "ok")}


@pytest.mark.parametrize("first", ["main", "best of"])
def test_a_best_of_on_the_main_shows_home_page_stays_its_own_show(tmp_path: Path, server: FaultServer, www: Path,
                                                                  first: str) -> None:
    """A "best of" on the main show's home page, both listed: two shows, both read. It took the main show over (the
    main show then titled as the "best of", or the other way), the second feed `duplicate` and never read again."""
    (www / "a" / "feed.xml").write_bytes(feed(range(1, 6), "Kitchen Radio", link="https://example.org/"))
    (www / "b" / "feed.xml").write_bytes(feed([1, 2, 3, 4, 6], "Best of Kitchen", link="https://example.org/"))
    (www / "b" / "t" / "ep-6.vtt").write_text(vtt(6), encoding="utf-8")
    main_feed, best = server.url("a/feed.xml"), server.url("b/feed.xml")
    ok(reindex(config(tmp_path, [main_feed] if first == "main" else [best])))
    report = reindex(config(tmp_path, [main_feed, best]))
    ok(report)
    after = state(tmp_path / "data")
    assert report.moves == [] and not any("same show" in w for w in report.warnings)
    assert after["shows"] == ["best-of-kitchen", "kitchen-radio"]
    assert {source: row[2:] for source, row in after["feeds"].items()} == {
        main_feed: ("kitchen-radio", "ok"), best: ("best-of-kitchen", "ok")}
    with Catalog.in_dir(tmp_path / "data") as cat:
        assert cat.show("kitchen-radio").title == "Kitchen Radio" and cat.show("best-of-kitchen").title == "Best of Kitchen"
    assert after["episodes"]["heron-5"][0] == "kitchen-radio"
    assert any(show == "best-of-kitchen" and i.endswith("heron-6") for i, (show, _) in after["episodes"].items())
    assert after["gone"] == []
