"""An episode that left its feed stays in the catalog and the search (docs/ingest.md), and its page and the API
now say it has left: until 5 December 2026 nothing told a listener that the audio and the show's site might no
longer have it. A real local feed read twice by ``reindex``, the second time without one of its items, served by
``podsearch serve`` (waitress) on 127.0.0.1."""

from __future__ import annotations

import json
import os
import urllib.request
from pathlib import Path

from conftest import start_server

ITEM = """<item><guid>{guid}</guid><title>{title}</title><pubDate>Mon, 01 Jun 2026 10:00:00 GMT</pubDate>
<enclosure url="https://example.org/{guid}.mp3" type="audio/mpeg" length="1"/>
<description>Herons and egrets.</description></item>"""


def _feed(path: Path, items: list[tuple[str, str]], mtime: float) -> None:
    path.write_text('<?xml version="1.0"?><rss version="2.0"><channel><title>Wading Birds</title>'
                    '<link>https://example.org/</link>' + "".join(ITEM.format(guid=g, title=t) for g, t in items)
                    + "</channel></rss>", encoding="utf-8")
    os.utime(path, (mtime, mtime))


def test_a_gone_episode_says_so_on_its_page_and_in_the_api(tmp_path: Path) -> None:
    from podsearch.config import load_config
    from podsearch.reindex import reindex

    feed = tmp_path / "feed.xml"
    config = load_config({"data": str(tmp_path / "data"), "feeds": [str(feed)]}, environ={})
    _feed(feed, [("heron-1", "Grey herons"), ("egret-2", "Little egrets")], 1_780_000_000)
    assert reindex(config).new == 2
    _feed(feed, [("heron-1", "Grey herons")], 1_780_000_100)
    assert reindex(config).gone == 1
    server = start_server(tmp_path / "data", "--no-access-log")
    try:
        found = json.loads(urllib.request.urlopen(server.url("/api/v1/search?q=egrets")).read())
        gone_id = next(h["id"] for h in found["hits"] if h["title"] == "Little egrets")  # still searchable
        kept_id = next(h["id"] for h in found["hits"] if h["title"] == "Grey herons")

        def api(episode_id: str) -> dict:
            return json.loads(urllib.request.urlopen(server.url(f"/api/v1/episodes/{episode_id}")).read())

        def page(episode_id: str) -> str:
            return urllib.request.urlopen(server.url(f"/episodes/{episode_id}")).read().decode()

        assert api(gone_id)["gone"] is True and api(kept_id)["gone"] is False
        assert "This episode left its feed on" in page(gone_id)  # (since 6 December 2026 with its date)
        assert "left its feed" not in page(kept_id) and "no longer in its show" not in page(kept_id)
    finally:
        server.stop()


def test_the_date_an_episode_left_its_feed_is_kept_shown_and_cleared_when_it_comes_back(tmp_path: Path) -> None:
    """Only a ``gone`` flag was kept: the page and the API could not say when an episode left (5 December 2026).
    Now the catalog keeps when a run first found it gone (catalog schema 7): a later run that still finds it gone
    keeps that date, the page says "left its feed on ...", the API ``gone_since``; back in its feed, it is cleared."""
    import time

    from podsearch.catalog import Catalog
    from podsearch.config import load_config
    from podsearch.reindex import reindex

    feed = tmp_path / "feed.xml"
    data = tmp_path / "data"
    config = load_config({"data": str(data), "feeds": [str(feed)]}, environ={})
    both = [("heron-1", "Grey herons"), ("egret-2", "Little egrets")]
    _feed(feed, both, 1_780_000_000)
    assert reindex(config).new == 2
    _feed(feed, both[:1], 1_780_000_100)
    before = time.time()
    assert reindex(config).gone == 1
    after = time.time()
    with Catalog.existing(data) as catalog:
        gone_id = next(e.id for e in catalog.episodes() if e.title == "Little egrets")
        kept_id = next(e.id for e in catalog.episodes() if e.title == "Grey herons")
        gone, since = catalog.left_feed(gone_id)
        assert gone and since is not None and before <= since <= after
        assert catalog.left_feed(kept_id) == (False, None)
        catalog.db.execute("UPDATE episodes SET gone_since = 1780000000 WHERE id = ?", (gone_id,))  # (a known date)
    _feed(feed, both[:1] + [("ibis-3", "Sacred ibis")], 1_780_000_200)  # a later run: still gone, same date
    assert reindex(config).gone == 0
    server = start_server(data, "--no-access-log")
    try:
        episode = json.loads(urllib.request.urlopen(server.url(f"/api/v1/episodes/{gone_id}")).read())
        assert (episode["gone"], episode["gone_since"]) == (True, "2026-05-28T20:26:40Z")
        kept = json.loads(urllib.request.urlopen(server.url(f"/api/v1/episodes/{kept_id}")).read())
        assert (kept["gone"], kept["gone_since"]) == (False, None)
        page = urllib.request.urlopen(server.url(f"/episodes/{gone_id}")).read().decode()
        assert 'This episode left its feed on <time datetime="2026-05-28T20:26:40Z">28 May 2026</time>:' in page
    finally:
        server.stop()
    _feed(feed, [*both, ("ibis-3", "Sacred ibis")], 1_780_000_300)  # back in its feed
    assert reindex(config).gone == 0
    with Catalog.existing(data) as catalog:
        assert catalog.left_feed(gone_id) == (False, None)
        assert catalog.db.execute("SELECT gone_since FROM episodes WHERE id = ?", (gone_id,)).fetchone()[0] is None


def test_a_schema_6_catalog_gets_gone_since_and_its_gone_episodes_say_they_left_without_a_date(tmp_path: Path) -> None:
    """A catalog written before schema 7 is migrated in place: the column is added; an episode it had marked gone
    has no known date (``gone_since`` null, the page's sentence without one), and one found gone later has its date."""
    import sqlite3

    from podsearch.catalog import SCHEMA_VERSION, Catalog
    from podsearch.config import load_config
    from podsearch.reindex import reindex
    from podsearch.service import Library

    feed = tmp_path / "feed.xml"
    data = tmp_path / "data"
    config = load_config({"data": str(data), "feeds": [str(feed)]}, environ={})
    _feed(feed, [("heron-1", "Grey herons"), ("egret-2", "Little egrets"), ("ibis-3", "Sacred ibis")], 1_780_000_000)
    assert reindex(config).new == 3
    with Catalog.existing(data) as catalog:
        ids = {e.title: e.id for e in catalog.episodes()}
    # As schema 6 left it: no column, one episode gone.
    db = sqlite3.connect(data / "catalog.sqlite")
    db.execute("ALTER TABLE episodes DROP COLUMN gone_since")
    db.execute("UPDATE episodes SET gone = 1 WHERE id = ?", (ids["Little egrets"],))
    db.execute("UPDATE meta SET value = '6' WHERE key = 'schema_version'")
    db.commit()
    db.close()
    with Catalog.existing(data) as catalog:
        assert catalog.schema_version() == SCHEMA_VERSION == 8
        assert catalog.left_feed(ids["Little egrets"]) == (True, None)
    _feed(feed, [("heron-1", "Grey herons")], 1_780_000_100)
    assert reindex(config).gone == 1  # the ibis
    library = Library.from_config(config)
    try:
        assert library.episode_gone(ids["Little egrets"]) == (True, None)
        gone, since = library.episode_gone(ids["Sacred ibis"])
        assert gone and since is not None and since.endswith("Z")
    finally:
        library.close()
    server = start_server(data, "--no-access-log")
    try:
        page = urllib.request.urlopen(server.url(f"/episodes/{ids['Little egrets']}")).read().decode()
        assert "This episode is no longer in its show's feed:" in page
        episode = json.loads(urllib.request.urlopen(server.url(f"/api/v1/episodes/{ids['Little egrets']}")).read())
        assert (episode["gone"], episode["gone_since"]) == (True, None)
    finally:
        server.stop()
