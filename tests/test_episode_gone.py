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
        assert "This episode is no longer in its show" in page(gone_id)
        assert "no longer in its show" not in page(kept_id)
    finally:
        server.stop()
