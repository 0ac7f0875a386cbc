"""Hostile content: entity expansion and external entities in feeds, markup and script in every text field,
odd bytes and path traversal in ids, and property-based fuzzing of every query string (no input gives a 500).

(Every file of corpus/robustness/feedparser goes through the feed parser in test_ingest_feeds.py.)
"""

from __future__ import annotations

import html as html_lib
import re
import shutil
import time
import urllib.parse
from pathlib import Path

import pytest
from faultserver import serve_faults
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from soak.state import integrity

from podsearch.catalog import Catalog
from podsearch.config import load_config
from podsearch.reindex import reindex
from podsearch.web import create_app

SECRET = "TOP-SECRET-XXE-MARKER-4242"
PAYLOAD = """<script>alert("pwn")</script><img src=x onerror=alert(1)>"'&amp;"""
RAW_SCRIPT = '<script>alert("pwn")</script>'
VTT = "WEBVTT\n\n00:00:01.000 --> 00:00:04.000\n<v {who}>{text} herons wade in the marsh.\n"
ODD_GUIDS = ["../../etc/passwd", "a/b?c=d#e&f=%2F", "épisode-😀-名前", "x" * 3000, "..\\..\\windows\\win.ini",
             "%00 percent zero", "line one line two", "<b>bold</b> guid", "  spaced  ",
             "/2019/05/ep-12", "a//b/"]  # (a leading slash or an empty segment: 404s until 5 December 2026)


def item(guid: str, title: str, transcript: str = "", extra: str = "") -> str:
    link = f'<podcast:transcript url="{transcript}" type="text/vtt"/>' if transcript else ""
    return (f'<item><title>{title}</title><guid isPermaLink="false">{guid}</guid><description>About herons.</description>'
            f"{link}{extra}</item>")


def feed(items: str, title: str = "Hostile", doctype: str = "") -> bytes:
    return (f'<?xml version="1.0" encoding="UTF-8"?>{doctype}<rss version="2.0" '
            'xmlns:podcast="https://podcastindex.org/namespace/1.0" xmlns:psc="http://podlove.org/simple-chapters" '
            'xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd">'
            f"<channel><title>{title}</title><link>https://example.org/</link>{items}</channel></rss>").encode()


def xml_escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")


LAUGHS = "".join(f'<!ENTITY lol{i} "{("&lol" + str(i - 1) + ";") * 10}">' for i in range(1, 10))
DOCTYPES = {
    "billion-laughs": f'<!DOCTYPE rss [<!ENTITY lol0 "lol">{LAUGHS}]>',
    "xxe-file": '<!DOCTYPE rss [<!ENTITY xxe SYSTEM "file://{secret}">]>',
    "xxe-parameter": '<!DOCTYPE rss [<!ENTITY % ext SYSTEM "file://{secret}"> %ext;]>',
    "xxe-dtd": '<!DOCTYPE rss SYSTEM "{base}/evil.dtd">',
}
USES = {"billion-laughs": "&lol9;", "xxe-file": "&xxe;", "xxe-parameter": "plain", "xxe-dtd": "&evil;"}


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory):
    """One reindex of the entity feeds, the markup feed and the odd-id feed; yields (data, report, server)."""
    root = tmp_path_factory.mktemp("www")
    secret = root.parent / "secret.txt"
    secret.write_text(SECRET)
    with serve_faults(root) as server:
        server.files["/evil.dtd"] = f'<!ENTITY evil SYSTEM "file://{secret}">'.encode()
        sources = []
        for name, doctype in DOCTYPES.items():
            doc = doctype.format(secret=secret, base=server.base)
            use = USES[name]
            server.files[f"/{name}.xml"] = feed(item(f"{name}-1", f"Entity {use}", extra=f"<itunes:author>{use}</itunes:author>")
                                                 + item(f"{name}-2", "Second"), title=f"Feed {name}", doctype=doc)
            sources.append(server.base + f"/{name}.xml")
        esc = xml_escape(PAYLOAD)
        server.files["/t/script.vtt"] = VTT.format(who=PAYLOAD.replace(">", ""), text=PAYLOAD).encode()
        server.files["/markup.xml"] = feed(
            item("markup-1", esc, "t/script.vtt",
                 f"<itunes:author>{esc}</itunes:author><podcast:person href=\"javascript:alert(1)\">{esc}</podcast:person>"
                 f'<psc:chapters><psc:chapter start="00:00:01" title="{esc}"/></psc:chapters>'
                 f"<link>javascript:alert(1)</link><itunes:keywords>{esc}</itunes:keywords>"
                 f"<category>{esc}</category>"
                 f'<enclosure url="javascript:alert(1)" type="audio/mpeg" length="1"/>')
            .replace("<description>About herons.</description>", f"<description>{esc}</description>"),
            title=esc)
        server.files["/t/ok.vtt"] = VTT.format(who="Ana", text="Odd ids").encode()
        server.files["/odd.xml"] = feed("".join(item(xml_escape(g), f"Odd {n}", "t/ok.vtt") for n, g in enumerate(ODD_GUIDS)),
                                        title="Odd Ids")
        sources += [server.base + "/markup.xml", server.base + "/odd.xml"]
        data = tmp_path_factory.mktemp("hostile") / "data"
        started = time.monotonic()
        report = reindex(load_config({"data": str(data), "feeds": sources, "allow_private_hosts": True,
                                      "fetch_timeout": 5.0}, environ={}))
        report.seconds["wall"] = time.monotonic() - started
        yield data, report, server


def all_bytes(data: Path) -> bytes:
    return b"".join(p.read_bytes() for p in data.rglob("*") if p.is_file())


def test_entity_expansion_is_bounded_and_nothing_is_expanded(hostile) -> None:
    data, report, _ = hostile
    assert report.seconds["wall"] < 60
    assert integrity(data) == "ok"
    assert b"lollollollollollollollol" not in all_bytes(data)
    with Catalog.in_dir(data) as cat:
        for ep in cat.episodes():
            assert len(ep.title) < 200, ep.id


def test_external_entities_never_read_a_local_file_or_fetch_a_dtd(hostile) -> None:
    data, report, server = hostile
    assert SECRET.encode() not in all_bytes(data)
    assert not any(r.path == "/evil.dtd" for r in server.log()), "the feed's DTD was fetched"
    # Each entity feed is either refused with a reason or stored without the entity's content.
    with Catalog.in_dir(data) as cat:
        for name in DOCTYPES:
            source = server.base + f"/{name}.xml"
            state = cat.feed_state(source)
            assert state["last_status"] in {"ok", "failed"}, state
            if state["last_status"] == "failed":
                assert any(e.startswith(f"feed {source}:") for e in report.errors)


@pytest.fixture(scope="module")
def hostile_client(hostile):
    data, _, _ = hostile
    return create_app(load_config({"data": str(data)}, environ={}), {"TESTING": True}).test_client()


def markup_episode(data: Path):
    with Catalog.in_dir(data) as cat:
        return cat.episode("markup-1"), cat.show(cat.episode("markup-1").show_id)


def test_markup_is_stored_as_given(hostile) -> None:
    data, report, _ = hostile
    ep, show = markup_episode(data)
    assert not [e for e in report.errors if "markup" in e], report.errors
    assert RAW_SCRIPT in ep.title and RAW_SCRIPT in show.title
    assert any(RAW_SCRIPT in p.name for p in ep.persons)
    assert any(RAW_SCRIPT in c.title for c in ep.chapters)
    # Transcript formats carry markup of their own (VTT cue tags, HTML, tags in JSON bodies): tags are dropped,
    # their words kept; the words of a feed's text fields above are kept exactly.
    assert any('alert("pwn")' in s.text for s in ep.segments)
    assert not any("<script" in s.text for s in ep.segments)
    # Links that would run script are not kept.
    assert ep.link == "" and ep.audio_url == ""
    assert all(p.href == "" for p in ep.persons)


def _assert_escaped(html: str, where: str) -> None:
    assert RAW_SCRIPT not in html, f"{where}: raw <script> from the feed"
    assert "<img src=x onerror" not in html, f"{where}: raw <img onerror> from the feed"
    assert 'href="javascript:' not in html.lower() and "src=\"javascript:" not in html.lower(), where


def test_markup_is_rendered_escaped_on_every_page(hostile, hostile_client) -> None:
    data, _, _ = hostile
    ep, show = markup_episode(data)
    quoted = urllib.parse.quote(ep.id, safe="")
    pages = ["/", "/search?q=herons", f"/search?q={urllib.parse.quote(RAW_SCRIPT)}", f"/episodes/{quoted}",
             f"/episodes/{quoted}?t=2", f"/shows/{urllib.parse.quote(show.id, safe='')}", "/search?q=alert"]
    for path in pages:
        resp = hostile_client.get(path)
        assert resp.status_code == 200, (path, resp.status_code)
        html = resp.get_data(as_text=True)
        _assert_escaped(html, path)
    page = hostile_client.get(f"/episodes/{quoted}").get_data(as_text=True)
    assert "&lt;script&gt;alert(" in page  # shown as text, not dropped


def test_markup_comes_back_as_text_in_json(hostile, hostile_client) -> None:
    data, _, _ = hostile
    ep, _ = markup_episode(data)
    quoted = urllib.parse.quote(ep.id, safe="")
    for path in (f"/api/v1/episodes/{quoted}", "/api/v1/search?q=herons", f"/similar/{quoted}", "/api/v1/shows"):
        resp = hostile_client.get(path)
        assert resp.status_code == 200 and resp.mimetype == "application/json", (path, resp.status_code)
    assert RAW_SCRIPT in hostile_client.get(f"/api/v1/episodes/{quoted}").get_json()["title"]


def test_odd_ids_are_served_by_their_pages(hostile, hostile_client) -> None:
    data, _, _ = hostile
    with Catalog.in_dir(data) as cat:
        odd = [ep for ep in cat.episodes() if ep.title.startswith("Odd ")]
    assert len(odd) == len(ODD_GUIDS)
    for ep in odd:
        quoted = urllib.parse.quote(ep.id, safe="")
        for path in (f"/episodes/{quoted}", f"/similar/{quoted}", f"/api/v1/episodes/{quoted}", f"/api/v1/similar/{quoted}"):
            resp = hostile_client.get(path)
            assert resp.status_code == 200, (ep.id[:80], path[:80], resp.status_code)
        assert hostile_client.get(f"/api/v1/episodes/{quoted}").get_json()["id"] == ep.id


def test_the_sites_own_links_to_odd_ids_lead_to_them(hostile, hostile_client) -> None:
    """The links the pages write to an episode lead to it as a browser follows them (dot segments resolved): the
    guid ``../../etc/passwd`` was linked as ``/episodes/../../etc/passwd``, which a browser opens as ``/etc/passwd``
    (a 404; a feed could so make its result lead to any page of the site, found 5 December 2026)."""
    page = hostile_client.get("/shows/odd-ids?per_page=50").get_data(as_text=True)
    hrefs = [html_lib.unescape(h) for h in re.findall(r'href="(/episodes/[^"]*)"', page)]
    assert len(hrefs) == len(ODD_GUIDS)
    for href in hrefs:
        resolved = urllib.parse.urlsplit(urllib.parse.urljoin("http://localhost/shows/odd-ids", href))
        assert resolved.path.startswith("/episodes/"), (href, resolved.path)
        resp = hostile_client.get(resolved.path)
        assert resp.status_code == 200 and ">Odd " in resp.get_data(as_text=True), (href, resp.status_code)


UNKNOWN_IDS = ["..%2F..%2Fetc%2Fpasswd", "../../etc/passwd", "%2e%2e/%2e%2e/etc/passwd", "%00", "a%00b", "a%0Ab", "a%0D%0Ab",
               "%FF%FE", "%C0%AE%C0%AE", "%E2%80%AE", "x" * 20000, "%25", "%", "..", ".", "//", "%2F", "a;b", "CON",
               "%F0%9F%98%80" * 500, "<script>alert(1)<%2Fscript>"]


@pytest.mark.parametrize("prefix", ["/episodes/", "/similar/", "/api/v1/episodes/", "/api/v1/similar/", "/shows/",
                                    "/api/v1/shows/"])
def test_unknown_odd_ids_are_a_clean_404_never_a_500(fuzz_client, prefix: str) -> None:
    for raw in UNKNOWN_IDS:
        resp = fuzz_client.get(prefix + raw)
        assert resp.status_code in (400, 404, 414), (prefix, raw[:40], resp.status_code)
        if prefix.startswith("/api/") or prefix == "/similar/":
            assert resp.get_json()["error"]["code"], (prefix, raw[:40])


# -- fuzzing the query string ------------------------------------------------------------------------------------

PARAMS = ["q", "page", "per_page", "sort", "show", "person", "from", "to", "duration_min", "duration_max", "language",
          "k", "same_show", "exclude_show", "min_score", "t", "text", "limit", "format"]
VALUE = st.one_of(st.text(max_size=60), st.sampled_from(["", "0", "-1", "1e309", "nan", "inf", "99999999999999999999",
                                                         "true", "2024-13-45", "relevance", "date", "*", "\x00", "%",
                                                         '"', "(", "AND", "OR NOT", "title:", "published:[2024 to]"]),
                  st.integers().map(str), st.floats(allow_nan=True).map(repr))
QUERIES = st.lists(st.tuples(st.one_of(st.sampled_from(PARAMS), st.text(max_size=10)), VALUE), max_size=6)


@pytest.fixture(scope="module")
def fuzz_client(sample_data_template: Path, tmp_path_factory: pytest.TempPathFactory):
    data = tmp_path_factory.mktemp("fuzz") / "data"
    shutil.copytree(sample_data_template, data)
    return create_app(load_config({"data": str(data)}, environ={}), {"TESTING": True}).test_client()


def _fuzz(client, path: str, query: list[tuple[str, str]]) -> None:
    resp = client.get(path, query_string=query)
    assert resp.status_code < 500, (path, query, resp.status_code, resp.get_data(as_text=True)[:300])


FUZZ = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                       HealthCheck.too_slow])


@FUZZ
@given(query=QUERIES)
def test_fuzz_api_search(fuzz_client, query) -> None:
    _fuzz(fuzz_client, "/api/v1/search", query)


@FUZZ
@given(query=QUERIES)
def test_fuzz_search_page(fuzz_client, query) -> None:
    _fuzz(fuzz_client, "/search", query)


@FUZZ
@given(query=QUERIES)
def test_fuzz_suggest(fuzz_client, query) -> None:
    _fuzz(fuzz_client, "/api/v1/suggest", query)


@FUZZ
@given(query=QUERIES, which=st.sampled_from(["tag:example.org,2024:field-notes/ep-07", "nope", ""]))
def test_fuzz_similar(fuzz_client, query, which: str) -> None:
    _fuzz(fuzz_client, "/similar/" + urllib.parse.quote(which, safe="") if which else "/api/v1/similar", query)


@FUZZ
@given(raw=st.binary(max_size=200))
def test_fuzz_raw_query_bytes(fuzz_client, raw: bytes) -> None:
    encoded = urllib.parse.quote_from_bytes(raw, safe="=&%+;")
    for path in ("/api/v1/search", "/search", "/api/v1/suggest", "/api/v1/similar"):
        resp = fuzz_client.get(path + "?" + encoded)
        assert resp.status_code < 500, (path, raw, resp.status_code)


def test_a_transcript_nested_too_deep_fails_alone(tmp_path: Path) -> None:
    """A JSON transcript of 400 KB of brackets raised RecursionError, and the reindex of every feed ended with a
    traceback, at every run (found 5 December 2026): that transcript fails, the run goes on and indexes the rest."""
    with serve_faults(tmp_path) as server:
        server.files["/t/deep.json"] = b'{"segments": ' + b"[" * 200000 + b"]" * 200000 + b"}"
        server.files["/t/ok.vtt"] = VTT.format(who="Ana", text="Deep").encode()
        server.files["/deep.xml"] = feed(item("deep-1", "Deep brackets", "t/deep.json").replace("text/vtt", "application/json")
                                         + item("deep-2", "Shallow herons", "t/ok.vtt"))
        data = tmp_path / "data"
        report = reindex(load_config({"data": str(data), "feeds": [server.base + "/deep.xml"],
                                      "allow_private_hosts": True, "fetch_timeout": 5.0}, environ={}))
    assert report.transcripts_failed == 1 and report.exit_code == 1
    assert any("nested too deep" in problem for problem in report.errors + report.warnings), report.errors
    with Catalog.in_dir(data) as cat:
        assert {ep.id: bool(ep.segments) for ep in cat.episodes(with_segments=True)} == {"deep-1": False, "deep-2": True}
    client = create_app(load_config({"data": str(data)}, environ={})).test_client()
    assert client.get("/api/v1/search?q=wade").get_json()["total"] == 1


def test_the_transcript_links_tried_per_item_are_bounded(tmp_path: Path) -> None:
    """Every ``podcast:transcript`` of an item was tried: 20 items of 50 links that fail (404) made 1,000 requests
    at each run, to any host a feed names (found 5 December 2026). The richest eight are tried, and a warning says
    how many the item offered."""
    per_item = 50
    with serve_faults(tmp_path) as server:
        items = "".join(
            f'<item><title>Many {n}</title><guid isPermaLink="false">many-{n}</guid><description>About herons.'
            "</description>" + "".join(f'<podcast:transcript url="t/nope-{n}-{k}.vtt" type="text/vtt"/>'
                                        for k in range(per_item)) + "</item>"
            for n in range(20))
        server.files["/many.xml"] = feed(items)
        report = reindex(load_config({"data": str(tmp_path / "data"), "feeds": [server.base + "/many.xml"],
                                      "allow_private_hosts": True, "fetch_timeout": 5.0}, environ={}))
        asked = [r for r in server.log() if r.path.startswith("/t/nope-")]
    assert report.new == 20 and report.transcripts_failed == 20
    assert len(asked) == 20 * 8, len(asked)
    assert sum("offers 50 transcript links; only the first 8" in w for w in report.warnings) == 20
