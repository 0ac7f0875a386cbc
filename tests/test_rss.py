"""``/search.rss`` over the indexed sample: parses with feedparser, newest first, every filter, each item at its
best moment on the episode page, the results page and OpenSearch pointing at it, conditional GET."""

from __future__ import annotations

import html
import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path
from urllib.parse import parse_qs, quote, urlsplit

import feedparser
import pytest

from podsearch.config import load_config
from podsearch.reindex import import_jsonl

PODCAST = "{https://podcastindex.org/namespace/1.0}"


def feed(client, query: str):
    response = client.get(f"/search.rss?{query}")
    assert response.status_code == 200, response.get_data(as_text=True)[:500]
    assert response.mimetype == "application/rss+xml"
    parsed = feedparser.parse(response.data)
    assert parsed.bozo == 0, parsed.get("bozo_exception")
    assert parsed.version == "rss20"
    return response, parsed


def api_ids(client, query: str) -> list[str]:
    answer = client.get(f"/api/v1/search?{query}&sort=date&per_page=50").get_json()
    assert not answer["relaxed"], query  # these queries have every word in enough episodes
    return [h["id"] for h in answer["hits"]]


def test_a_feed_of_the_matching_episodes_newest_first_each_at_its_best_moment(client):
    response, parsed = feed(client, "q=bees")
    ids = api_ids(client, "q=bees")
    assert [e.id for e in parsed.entries] == ids and len(ids) >= 3  # guid: the episode id
    dates = [e.published_parsed for e in parsed.entries]
    assert all(dates) and dates == sorted(dates, reverse=True)
    assert parsed.feed.title == "podsearch: “bees”"
    assert parsed.feed.link == "http://localhost/search?q=bees&sort=date"
    hits = {h["id"]: h for h in client.get("/api/v1/search?q=bees&per_page=50").get_json()["hits"]}
    for entry in parsed.entries:
        hit = hits[entry.id]
        best = hit["moments"][0]
        url = urlsplit(entry.link)
        assert url.query == f"t={int(best['start'])}", entry.link
        page = client.get(url.path + "?" + url.query)  # the link opens the episode page, at that moment
        assert page.status_code == 200 and hit["title"] in page.get_data(as_text=True)
        assert "<b>" in entry.summary and best["speaker"] in entry.summary  # the words found, in bold
        assert entry.title == hit["title"] and entry.tags[0].term == hit["show"]
    # ids hold '/', ':' and '?': percent-encoded as one path segment, so the link names the same episode
    assert any("?" in e.id for e in parsed.entries)
    assert all(urlsplit(e.link).path == "/episodes/" + quote(e.id, safe="") for e in parsed.entries)


def test_the_moment_is_escaped_and_a_soundbite_in_the_podcast_namespace(client):
    response, _ = feed(client, "q=waggle+dance")
    root = ET.fromstring(response.data)
    items = root.findall("./channel/item")
    assert items
    for item in items:
        description = item.findtext("description")
        assert description.startswith("<p><a href=") and "<b>" in description  # HTML, as escaped text in XML
        bite = item.find(f"{PODCAST}soundbite")
        assert bite is not None and float(bite.get("duration")) > 0
        assert item.findtext("link").endswith(f"?t={int(float(bite.get('startTime')))}")
    assert b"&lt;b&gt;" in response.data  # escaped, not markup of the feed itself
    assert root.find("./channel/{http://www.w3.org/2005/Atom}link").get("rel") == "self"


def test_the_self_link_is_percent_encoded(client):
    """The feed's self link held the query as typed (``q=<script>``, quotes raw), where its channel link was
    percent-encoded."""
    response, _ = feed(client, 'q=%3Cscript%3E+%22water%22&show=field-notes')
    self_link = ET.fromstring(response.data).find("./channel/{http://www.w3.org/2005/Atom}link").get("href")
    assert self_link.endswith("/search.rss?q=%3Cscript%3E+%22water%22&show=field-notes"), self_link
    assert not set('<>" ') & set(self_link)


@pytest.mark.parametrize("query", [
    "q=water&show=field-notes",
    "q=water&person=maya+okafor",
    "q=water&from=2023-02&to=2023-12",
    "q=water&duration_min=30&duration_max=60",
    "q=water&lang=en",
    "q=water&language=en&show=signal-path&show=the-long-table",
    "show=field-notes",
])
def test_every_search_filter_is_taken(client, query):
    _, parsed = feed(client, query)
    ids = api_ids(client, query)
    assert ids and [e.id for e in parsed.entries] == ids


def test_page_and_per_page_and_sort_is_always_newest_first(client):
    _, all_of_them = feed(client, "q=water&per_page=20")
    _, second = feed(client, "q=water&per_page=5&page=2&sort=relevance")
    assert [e.id for e in second.entries] == [e.id for e in all_of_them.entries][5:10]
    _, default = feed(client, "q=water")
    assert len(default.entries) == min(50, len(api_ids(client, "q=water")))


def test_never_the_any_word_fallback(client):
    """The search box shows 'any of the words' when fewer than three episodes have every word; a feed does not."""
    answer = client.get("/api/v1/search?q=sourdough+honey&sort=date").get_json()
    assert answer["relaxed"] and answer["total"] > 0
    _, parsed = feed(client, "q=sourdough+honey")
    assert parsed.entries == []
    _, explicit = feed(client, "q=sourdough+AND+honey")
    assert explicit.entries == []
    # typed in capitals: its words joined by AND had no lower-case letter either, the AND was read as a word, and the
    # feed fell back to any word again (WAGGLE DANCE: 3 items, one with "dance" alone)
    for typed in ("SOURDOUGH HONEY", "WAGGLE DANCE"):
        _, shouting = feed(client, f"q={typed.replace(' ', '+')}")
        _, quiet = feed(client, f"q={typed.lower().replace(' ', '+')}")
        assert [e.id for e in shouting.entries] == [e.id for e in quiet.entries], typed


def test_the_fallback_and_the_every_word_search_share_one_deadline(sample_data: Path, monkeypatch):
    """A feed whose query falls back to any word searches again for every word: both within the request's one
    deadline, not a deadline each (a query of patterns spent it twice, 2.2 s for one feed)."""
    from podsearch.follow import standing_search
    from podsearch.requests import SearchRequest
    from podsearch.service import Library

    lib = Library(sample_data)
    try:
        deadlines = []
        search = lib.search
        monkeypatch.setattr(lib, "search", lambda req, deadline=None: deadlines.append(deadline) or search(req, deadline))
        result = standing_search(lib, SearchRequest(q="sourdough honey"))
        assert result.total == 0 and not result.relaxed
        assert len(deadlines) == 2 and deadlines[0] is not None and deadlines[0] == deadlines[1]
    finally:
        lib.close()


def test_never_the_spelling_suggestion(client):
    """The search box answers a misspelled query for its suggestion; a feed follows the words as written."""
    assert client.get("/api/v1/search?q=voclano").get_json()["corrected"] == "volcano"
    assert feed(client, "q=volcano")[1].entries
    _, parsed = feed(client, "q=voclano")
    assert parsed.entries == []


def test_bad_parameters_are_a_400_with_a_message(client):
    for query, message in (("q=bees&from=yesterday", "must be a date like"), ("q=bees&per_page=500", "per_page"),
                           ("q=bees&lang=!!", "lang (or language) must be a language code"),
                           ("q=" + "x" * 600, "the limit is 500")):
        response = client.get(f"/search.rss?{query}")
        assert response.status_code == 400 and message in response.get_data(as_text=True), query


def test_conditional_get(client):
    first = client.get("/search.rss?q=bees")
    assert first.headers["ETag"].startswith('W/"') and first.headers["Last-Modified"]
    again = client.get("/search.rss?q=bees", headers={"If-None-Match": first.headers["ETag"]})
    assert again.status_code == 304 and again.data == b""
    since = client.get("/search.rss?q=bees", headers={"If-Modified-Since": first.headers["Last-Modified"]})
    assert since.status_code == 304
    other = client.get("/search.rss?q=honey", headers={"If-None-Match": first.headers["ETag"]})
    assert other.status_code == 200


def test_text_xml_cannot_carry_is_left_out(client, app, sample_data: Path, tmp_path: Path):
    line = {"id": "urn:test:ctrl", "show": "Odd", "title": "Vertical\x0btab \x01 glacier",
            "segments": [{"start": 3, "end": 9, "text": "glacier\x0b melt \x1f here & <there>"}]}
    path = tmp_path / "odd.jsonl"
    path.write_text(json.dumps(line) + "\n")
    import_jsonl(load_config({"data": str(sample_data)}, environ={}), path)
    _, parsed = feed(client, "q=glacier")
    [entry] = [e for e in parsed.entries if e.id == "urn:test:ctrl"]
    assert entry.title == "Verticaltab  glacier"
    assert "here &amp; &lt;there" in entry.summary  # text, escaped


def test_the_results_page_and_opensearch_point_at_the_feed(client):
    html = client.get("/search?q=bees&show=field-notes&sort=relevance&page=1").get_data(as_text=True)
    head = html.split("</head>")[0]
    [alternate] = re.findall(r'<link rel="alternate" type="application/rss\+xml"[^>]*href="([^"]+)"', head)
    visible = re.findall(r'<a href="([^"]+)" type="application/rss\+xml">', html)
    assert visible == [alternate]
    url = urlsplit(alternate.replace("&amp;", "&"))
    assert url.path == "/search.rss" and parse_qs(url.query) == {"q": ["bees"], "show": ["field-notes"]}
    assert client.get("/search.rss?" + url.query).status_code == 200
    assert "application/rss+xml" not in client.get("/search").get_data(as_text=True)  # no search, no feed
    opensearch = ET.fromstring(client.get("/opensearch.xml").data)
    templates = {u.get("type"): u.get("template") for u in opensearch.findall("{http://a9.com/-/spec/opensearch/1.1/}Url")}
    assert templates["application/rss+xml"] == "http://localhost/search.rss?q={searchTerms}"


def test_behind_a_url_prefix_the_links_keep_it(sample_data: Path):
    from podsearch.web import create_app

    app = create_app(load_config({"data": str(sample_data)}, environ={}), {"TESTING": True})
    client = app.test_client()
    response = client.get("/search.rss?q=bees", environ_overrides={"SCRIPT_NAME": "/pod"})
    parsed = feedparser.parse(response.data)
    assert all(e.link.startswith("http://localhost/pod/episodes/") for e in parsed.entries)
    assert parsed.feed.link.startswith("http://localhost/pod/search?")


def test_over_real_http_the_links_open_the_episode_pages(live_server):
    """waitress decodes the percent-encoded id ('/', ':', '?') back into the episode's id."""
    import urllib.request

    with urllib.request.urlopen(live_server.url("/search.rss?q=bees"), timeout=10) as response:
        parsed = feedparser.parse(response.read())
    assert parsed.bozo == 0 and any("?" in e.id and "/" in e.id for e in parsed.entries)
    for entry in parsed.entries:
        with urllib.request.urlopen(entry.link.replace("http://localhost", live_server.base), timeout=10) as page:
            assert page.status == 200 and html.escape(entry.title).encode() in page.read()


def test_a_refused_feed_query_is_told_in_json(client):
    """``/search.rss`` is an API (docs/api.md: every error is JSON); a refused query was answered with the search
    page's HTML."""
    res = client.get("/search.rss", query_string={"q": "published:x"})
    assert res.status_code == 400 and res.is_json
    assert res.get_json()["error"]["code"] == "bad_query" and "published:x" in res.get_json()["error"]["message"]
