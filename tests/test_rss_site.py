"""``/search.rss?q=kubernetes`` over the whole site corpus (slow: the session's site index).

The feed parses cleanly, has at least 10 entries, lists the dated episodes newest first and before the
undated ones (the Changelog and Talk Python feeds of the corpus carry no dates), and links each entry to its
episode page at a second (``?t=``), or at its paragraph when the transcript has no times (``#p12``).
"""

from __future__ import annotations

import html
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import feedparser
import pytest

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def site_client(site_index: Path):
    from podsearch.config import load_config
    from podsearch.web import create_app

    return create_app(load_config({"data": str(site_index)}, environ={}), {"TESTING": True}).test_client()


def test_kubernetes_feed_on_the_site_corpus(site_client):
    response = site_client.get("/search.rss?q=kubernetes")
    assert response.status_code == 200 and response.mimetype == "application/rss+xml"
    parsed = feedparser.parse(response.data)
    assert parsed.bozo == 0, parsed.get("bozo_exception")
    entries = parsed.entries
    assert len(entries) >= 10 and len(entries) == 50  # the default page of a feed
    total = site_client.get("/api/v1/search?q=kubernetes").get_json()["total"]
    assert total > 400

    dated = [e.published_parsed for e in entries if e.get("published_parsed")]
    assert len(dated) >= 3 and dated == sorted(dated, reverse=True)  # newest first
    first_undated = next(i for i, e in enumerate(entries) if not e.get("published_parsed"))
    assert first_undated == len(dated)  # and every dated one before the undated ones

    for entry in entries:  # at a second, or at the paragraph of a transcript without times (#p12)
        url = urlsplit(entry.link)
        assert url.path.startswith("/episodes/") and (list(parse_qs(url.query)) == ["t"] or
                                                      url.fragment.startswith("p")), entry.link
    timed = [e for e in entries if parse_qs(urlsplit(e.link).query).get("t", ["0"]) != ["0"]]
    assert len(timed) >= 40  # most entries start at a moment inside the episode
    for entry in entries[:5] + timed[:5]:
        page = site_client.get(entry.link)
        assert page.status_code == 200 and html.escape(entry.title) in page.get_data(as_text=True)
    assert all("kubernetes" in e.summary.lower() for e in timed)
