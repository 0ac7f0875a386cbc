"""The pages in a real headless Chromium against a real ``podsearch serve``.

A small test feed is written to disk and indexed; its enclosures point at a silent WAV served (with Range
requests, so Chromium can seek) by a local HTTP server on 127.0.0.1. One episode carries script and markup
payloads in its title, notes, person names and transcript. The tests also write the screenshots in
docs/screenshots/ that the README shows.
"""

from __future__ import annotations

import html
import os
import re
import shutil
import threading
import time
import wave
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import quote
from xml.sax.saxutils import escape

import pytest
from conftest import ROOT, LiveServer, start_server

pytestmark = pytest.mark.browser

CHROMIUM = "chromium"  # found on PATH, as the Makefile looks for it; PODSEARCH_CHROMIUM names another
CHROMIUM_ARGS = ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
SCREENSHOTS = ROOT / "docs" / "screenshots"
AUDIO_SECONDS = 600
RATE = 8000
PAYLOAD = '<img src=x onerror="window.__pwned=1">'
SCRIPT_PAYLOAD = "<script>window.__pwned=2</script>"
# Titles, notes and transcripts are HTML-ish: raw markup in them is stripped at ingest, and markup written
# escaped is text that must be shown as such. Person names are plain text and keep the raw payload.
ENCODED = html.escape(PAYLOAD)
# A word longer than a phone is wide, in a transcript: it must wrap, not widen the page.
LONG_URL = "https://github.com/deep-earth/glacier-moraine-survey-archive/tree/master/field-seasons/moraine-profiles.md"

# (guid, show, title, date, speakers, topic sentences): enough text for the search index and the similarity model.
EPISODES = [
    ("kitchen-1", "kitchen", "Keeping a Sourdough Starter Alive", "Tue, 01 Oct 2024 06:00:00 +0000",
     ["Nora Field", "Sam Okoye"],
     ["A sourdough starter is flour and water colonised by wild yeast and lactic acid bacteria.",
      "Feed the starter every day with equal weights of flour and water and it will double in a few hours.",
      "Rye flour ferments faster than white flour because it carries more enzymes and more wild yeast.",
      "If the starter smells of acetone it is hungry; discard half and feed it again.",
      "Bakers keep a starter in the fridge between bakes and wake it with two warm feeds.",
      "The acid in a mature starter gives sourdough bread its tang and its keeping quality."]),
    ("kitchen-2", "kitchen", "Wild Yeast, Slow Bread", "Tue, 15 Oct 2024 06:00:00 +0000",
     ["Nora Field", "Ines Haddad"],
     ["Slow fermentation lets wild yeast and bacteria build flavour in the dough overnight.",
      "A levain is a portion of sourdough starter built up the night before the bake.",
      "Cold retarding the shaped loaf in the fridge makes the crust blister and the crumb open.",
      "Whole wheat flour drinks more water, so the dough needs a higher hydration.",
      "Steam in the first minutes of baking lets the bread spring before the crust sets.",
      "The starter, the flour and the time are the only ingredients that really matter."]),
    ("kitchen-3", "kitchen", "The Chemistry of Caramel", "Tue, 29 Oct 2024 06:00:00 +0000",
     ["Nora Field", "Paul Brandt"],
     ["Caramel is sugar broken down by heat into hundreds of new flavour compounds.",
      "Sucrose melts and then browns above one hundred and sixty degrees.",
      "A wet caramel starts with water and sugar; a dry caramel starts with sugar alone in the pan.",
      "Cream and butter stop the browning and turn caramel into a sauce.",
      "Salt sharpens the bitterness of a dark caramel and makes it taste sweeter.",
      "The Maillard reaction is different: it needs amino acids as well as sugar."]),
    ("earth-1", "earth", "Inside a Magma Chamber", "Mon, 07 Oct 2024 06:00:00 +0000",
     ["Ada Lind", "Tomas Rey"],
     ["A magma chamber is a body of molten rock a few kilometres under a volcano.",
      "As magma cools, crystals grow and the remaining melt becomes richer in silica and gas.",
      "Volcanologists read the crystals in lava like tree rings to date each eruption.",
      "Earthquakes swarm under the volcano when fresh magma pushes into the chamber.",
      "Satellite radar measures how the ground swells above a filling magma chamber.",
      "When the pressure of the gas exceeds the strength of the rock, the volcano erupts."]),
    ("earth-2", "earth", "Lava Flows of Iceland", "Mon, 21 Oct 2024 06:00:00 +0000",
     ["Ada Lind", "Gudrun Sig"],
     ["Iceland sits on a rift where the plates pull apart and basalt lava wells up.",
      "Fissure eruptions open long cracks that pour lava across the plain for weeks.",
      "Crews sprayed sea water on the lava flow to save the harbour of Heimaey.",
      "Basalt lava is runny because it holds little silica, so its gas escapes gently.",
      "The volcano at Fagradalsfjall drew hikers who watched the lava fountains at night.",
      "Magma from the mantle rises through the crust and feeds each new eruption."]),
    ("earth-3", "earth", f"Payload {ENCODED} {SCRIPT_PAYLOAD} episode", "Mon, 04 Nov 2024 06:00:00 +0000",
     [f"Mallory {PAYLOAD}", "Trent <b>bold</b>"],
     [f"Glacier payload line: {ENCODED} and {SCRIPT_PAYLOAD} inside moraine talk.",
      "Glaciers carve valleys and leave moraines of rock behind when the ice retreats.",
      "Ice cores hold bubbles of ancient air recording centuries of climate.",
      "A glacier creeps downhill like a frozen river of ice.",
      "Meltwater beneath glaciers lubricates bedrock sliding.",
      "Crevasses split where glaciers bend across bedrock steps.",
      f"The survey archive is at {LONG_URL} for anyone."]),
]
SPLIT = "kitchen-3"  # its transcript has paragraphs starting within a second and two starting in the same one
SHOWS = {"kitchen": ("The Kitchen Lab", "Food science for home cooks: fermentation, sugar, heat and the chemistry of flavour."),
         "earth": ("Deep Earth", "Volcanoes, glaciers and the restless planet under our feet, with the people who study them.")}


def _require_chromium() -> str:
    found = os.environ.get("PODSEARCH_CHROMIUM") or shutil.which(CHROMIUM)
    if found and os.path.exists(found):
        return found
    message = f"{CHROMIUM} not found on PATH (Debian's chromium package; or set PODSEARCH_CHROMIUM)"
    if os.environ.get("CI") or os.environ.get("PODSEARCH_REQUIRE_CORPUS") == "1":
        pytest.fail(message)
    pytest.skip(message)


# -- a silent WAV served with Range support -------------------------------------------------------------
def silent_wav(path: Path, seconds: int = AUDIO_SECONDS) -> None:
    with wave.open(str(path), "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(1)
        w.setframerate(RATE)
        w.writeframes(b"\x80" * (RATE * seconds))


class AudioServer:
    """Serves one file at /audio.wav on 127.0.0.1, honouring ``Range: bytes=a-b``, and any HTML put in
    ``pages`` (a publisher's page on another origin, for the widget)."""

    def __init__(self, path: Path) -> None:
        data = path.read_bytes()
        pages: dict[str, bytes] = {}
        self.pages = pages

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: object) -> None:  # noqa: A002
                pass

            def handle(self) -> None:
                try:
                    super().handle()
                except (BrokenPipeError, ConnectionResetError):  # Chromium drops connections it no longer needs
                    pass

            def do_GET(self) -> None:  # noqa: N802
                if self.path in pages:
                    self.send_response(200)
                    self.send_header("Content-Type", "text/html; charset=utf-8")
                    self.send_header("Content-Length", str(len(pages[self.path])))
                    self.end_headers()
                    self.wfile.write(pages[self.path])
                    return
                if self.path.split("?")[0] != "/audio.wav":
                    self.send_response(404)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                start, end, status = 0, len(data) - 1, 200
                m = re.match(r"bytes=(\d*)-(\d*)$", self.headers.get("Range", ""))
                if m and (m.group(1) or m.group(2)):
                    if m.group(1):
                        start, end = int(m.group(1)), int(m.group(2)) if m.group(2) else len(data) - 1
                    else:
                        start = max(0, len(data) - int(m.group(2)))
                    end, status = min(end, len(data) - 1), 206
                body = data[start:end + 1]
                self.send_response(status)
                self.send_header("Content-Type", "audio/wav")
                self.send_header("Accept-Ranges", "bytes")
                self.send_header("Content-Length", str(len(body)))
                if status == 206:
                    self.send_header("Content-Range", f"bytes {start}-{end}/{len(data)}")
                self.end_headers()
                try:
                    self.wfile.write(body)
                except (BrokenPipeError, ConnectionResetError):
                    pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        self.base = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.url = self.base + "/audio.wav"

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


# -- the test feed --------------------------------------------------------------------------------------
def write_feeds(root: Path, audio_url: str) -> list[Path]:
    import json

    feeds = []
    for show_id, (title, description) in SHOWS.items():
        items = []
        for guid, show, ep_title, date, speakers, lines in EPISODES:
            if show != show_id:
                continue
            segments = [{"speaker": speakers[i % len(speakers)], "startTime": i * 60.0 + 5, "endTime": i * 60.0 + 60,
                         "body": line + " " + lines[(i + 1) % len(lines)]} for i, line in enumerate(lines)]
            if guid == SPLIT:  # a paragraph starting within its second, two more sharing one (t125; t245, t245-6)
                segments[2]["startTime"] = 125.4
                first, rest = segments[4]["body"].split(". ", 1)
                segments[4:5] = [segments[4] | {"startTime": 245.2, "endTime": 245.7, "body": first + "."},
                                 segments[4] | {"startTime": 245.7, "body": rest}]
            (root / f"{guid}.json").write_text(json.dumps({"version": "1.0.0", "segments": segments}), encoding="utf-8")
            notes = f"<p>{escape(lines[0])}</p><ul><li>{escape(lines[1])}</li><li>{escape(lines[2])}</li></ul>"
            if ENCODED in ep_title:
                notes = (f"<p>Notes with {ENCODED}, {PAYLOAD} and {SCRIPT_PAYLOAD} and "
                         '<a href="javascript:window.__pwned=3">a link</a>.</p>')
            persons = "".join(f'<podcast:person role="{"host" if i == 0 else "guest"}">{escape(p)}</podcast:person>'
                              for i, p in enumerate(speakers))
            items.append(f"""<item><title>{escape(ep_title)}</title><guid isPermaLink="false">{guid}</guid>
<link>https://example.org/{guid}</link><pubDate>{date}</pubDate>
<description><![CDATA[{notes}]]></description>
<enclosure url="{escape(audio_url)}" type="audio/wav" length="{RATE * AUDIO_SECONDS}"/>
<itunes:duration>{AUDIO_SECONDS}</itunes:duration>{persons}
<podcast:transcript url="{guid}.json" type="application/json" language="en"/>
<psc:chapters version="1.2"><psc:chapter start="00:00:05" title="Welcome"/><psc:chapter start="00:03:05" title="The details"/>
<psc:chapter start="00:07:05" title="Wrapping up"/></psc:chapters></item>""")
        path = root / f"{show_id}.xml"
        path.write_text(f"""<?xml version="1.0" encoding="UTF-8"?>
<rss version="2.0" xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd"
 xmlns:podcast="https://podcastindex.org/namespace/1.0" xmlns:psc="http://podlove.org/simple-chapters"><channel>
<title>{escape(title)}</title><link>https://example.org/{show_id}</link><description>{escape(description)}</description>
<language>en</language><itunes:author>{escape(title)} team</itunes:author>
{''.join(items)}</channel></rss>""", encoding="utf-8")
        feeds.append(path)
    return feeds


@pytest.fixture(scope="module")
def audio(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AudioServer]:
    path = tmp_path_factory.mktemp("audio") / "audio.wav"
    silent_wav(path)
    server = AudioServer(path)
    yield server
    server.stop()


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory, audio: AudioServer) -> Iterator[LiveServer]:
    from podsearch.config import load_config
    from podsearch.reindex import reindex

    root = tmp_path_factory.mktemp("ui-feeds")
    feeds = write_feeds(root, audio.url)
    data = root / "data"
    report = reindex(load_config({"data": str(data), "feeds": [str(f) for f in feeds]}, environ={}))
    assert not report.errors and report.new == len(EPISODES) and report.transcripts_fetched == len(EPISODES), report
    server = start_server(data)
    yield server
    server.stop()


@pytest.fixture(scope="module")
def browser():
    executable = _require_chromium()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        yield b
        b.close()


class Tab:
    """A page that records console errors and uncaught exceptions."""

    def __init__(self, browser, width: int = 1280, height: int = 800) -> None:
        self.context = browser.new_context(viewport={"width": width, "height": height})
        self.page = self.context.new_page()
        self.page.set_default_timeout(10000)
        self.errors: list[str] = []
        self.page.on("console", self._console)
        self.page.on("pageerror", lambda e: self.errors.append(f"pageerror: {e}"))

    def _console(self, message) -> None:
        if message.type == "error":
            self.errors.append(f"console: {message.text} at {message.location.get('url')}")

    def goto(self, url: str, status: int = 200):
        response = self.page.goto(url)
        assert response is not None and response.status == status, (url, response and response.status)
        return response

    def close(self) -> None:
        self.context.close()


@pytest.fixture
def tab(browser) -> Iterator[Tab]:
    t = Tab(browser)
    yield t
    t.close()


def episode_url(site: LiveServer, guid: str, **params: str) -> str:
    query = "&".join(f"{k}={v}" for k, v in params.items())
    return site.url("/episodes/" + quote(guid, safe="") + ("?" + query if query else ""))


def audio_at(page, seconds: float) -> None:
    page.wait_for_function(
        "t => { const a = document.getElementById('player');"
        " return a && a.readyState >= 1 && Math.abs(a.currentTime - t) < 1.5; }",
        arg=seconds, timeout=10000)


# -- the tests ------------------------------------------------------------------------------------------
def test_search_then_moment_plays_the_episode_from_there(site, tab):
    page = tab.page
    tab.goto(site.url("/"))
    page.get_by_role("combobox", name="Search episodes and transcripts").fill("magma chamber")
    page.keyboard.press("Enter")
    page.wait_for_url(re.compile(r"/search\?q=magma"))
    assert page.locator("#q").input_value() == "magma chamber", "the query stays in the box"
    hits = page.locator("li.hit")
    assert hits.count() >= 1
    assert "Inside a Magma Chamber" in hits.first.locator("h2").inner_text()
    assert re.search(r"\d+ episodes? for “magma chamber” · \d+ ms", page.locator("#summary").inner_text())
    assert hits.first.locator("mark").count() >= 1
    moment = hits.first.locator("a.moment").first
    label = moment.inner_text()  # "2:05"
    minutes, secs = label.split(":")
    expected = int(minutes) * 60 + int(secs)
    assert 0 < expected < AUDIO_SECONDS
    moment.click()
    page.wait_for_url(re.compile(rf"/episodes/earth-1\?t={expected}"))
    audio_at(page, expected)
    assert page.locator(f"#t{expected}").get_attribute("class") == "current"
    # a transcript timestamp and a chapter jump within the page
    page.locator(".transcript a.ts", has_text="5:05").click()
    audio_at(page, 305)
    page.locator(".chapters a", has_text="7:05").click()
    audio_at(page, 425)
    page.evaluate("document.getElementById('player').pause()")
    assert tab.errors == []


def test_facets_sort_and_empty_states(site, tab):
    page = tab.page
    tab.goto(site.url("/search?q=lava"))
    page.locator(".facets a", has_text="Deep Earth").click()
    page.wait_for_url(re.compile(r"show=deep-earth"))
    assert page.locator(".chips a", has_text="Show: Deep Earth").is_visible()
    page.locator("#sort").select_option("oldest")
    page.wait_for_url(re.compile(r"sort=oldest"))
    assert "show=deep-earth" in page.url
    tab.goto(site.url("/search?q=lava&show=the-kitchen-lab"))
    assert page.get_by_role("heading", name=re.compile("No episodes match")).is_visible()
    page.get_by_role("link", name="Search all episodes").click()
    page.wait_for_url(re.compile(r"/search\?q=lava$"))
    assert page.locator("li.hit").count() >= 1
    tab.goto(site.url("/search?q=glacers"))
    # answered for the spelling suggestion (the index's own word), with the way back to the words as typed
    assert "Showing results for glacier" in page.locator(".suggestion").inner_text()
    assert page.locator("li.hit").count() >= 1
    page.get_by_role("link", name="Search instead for glacers").click()
    page.wait_for_url(re.compile(r"correct=false"))
    assert "glacier" in page.locator(".suggestion a").inner_text()  # "Did you mean", the words as typed
    assert tab.errors == []


def test_nearby_episode_link(site, tab):
    page = tab.page
    tab.goto(episode_url(site, "kitchen-1"))
    nearby = page.locator(".nearby li a").first
    assert nearby.is_visible()
    title = nearby.inner_text()
    assert "Wild Yeast" in title, "the other bread episode is the nearest"
    assert "because of" in page.locator(".nearby .reasons").first.inner_text()
    nearby.click()
    page.wait_for_url(re.compile(r"/episodes/kitchen-2"))
    assert page.locator("h1").inner_text() == title
    assert tab.errors == []


def _typed(site, tab, text: str) -> tuple[Any, Any, Any]:
    """The home page with ``text`` typed in its search box and the typeahead's options shown: (page, box, options)."""
    page = tab.page
    tab.goto(site.url("/"))
    box = page.locator("#q")
    box.press_sequentially(text, delay=40)
    options = page.locator("#q-list [role=option]")
    options.first.wait_for(state="visible")
    return page, box, options


def test_typeahead_shows_suggestions_and_keyboard_picks_one(site, tab):
    page, box, options = _typed(site, tab, "sourd")
    assert box.get_attribute("aria-expanded") == "true"
    texts = [t.lower() for t in options.all_inner_texts()]
    assert any("sourdough" in t for t in texts), texts
    box.press("ArrowDown")
    assert box.get_attribute("aria-activedescendant") == "q-opt-0"
    box.press("Escape")
    assert page.locator("#q-list").is_hidden()
    assert tab.errors == []


def test_a_word_picked_from_the_typeahead_completes_the_last_word_and_keeps_the_others(site, tab):
    """``machine lear`` with ``learn`` picked searched ``learn``: the words before were thrown away."""
    page, box, options = _typed(site, tab, "caramel su")
    words = [i for i in range(options.count()) if options.nth(i).locator("small").count() == 0]
    assert words, options.all_inner_texts()
    word = options.nth(words[0]).inner_text().strip()
    for _ in range(words[0] + 1):
        box.press("ArrowDown")
    box.press("Enter")
    page.wait_for_url(re.compile(r"/search\?"))
    assert page.locator("#q").input_value() == f"caramel {word}"
    assert tab.errors == []


def test_no_console_errors_on_any_page(site, tab):
    pages = ["/", "/search", "/search?q=caramel", "/search?q=sugar&sort=date", "/search?q=qqqxxyz",
             "/shows/the-kitchen-lab", "/shows/deep-earth", "/embed/similar/kitchen-3", "/embed/similar/kitchen-3?link=podsearch"]
    for path in pages:
        tab.goto(site.url(path))
    tab.goto(episode_url(site, "kitchen-3", t="65"))
    audio_at(tab.page, 65)
    assert tab.errors == []
    # error pages share the look (their own 4xx status is the only console message Chromium writes)
    for path, status in [("/episodes/no-such-episode", 404), ("/search?q=x&page=0", 400), ("/nowhere", 404)]:
        tab.goto(site.url(path), status=status)
        assert tab.page.locator("header.site .brand").is_visible()
        assert tab.page.get_by_role("link", name="Go to the search page").is_visible() or status == 400
    unexpected = [e for e in tab.errors if "status of 40" not in e]
    assert unexpected == []


def test_payloads_render_as_text(site, tab):
    page = tab.page
    pages = [episode_url(site, "earth-3"), site.url("/search?q=glaciers"), site.url("/shows/deep-earth"), site.url("/"),
             site.url("/search?q=mallory"), site.url("/embed/similar/earth-1?same_show=false&k=10")]
    for url in pages:
        tab.goto(url)
        page.wait_for_load_state("load")
        assert page.evaluate("typeof window.__pwned") == "undefined", url
        assert page.locator("img").count() == 0, url
    tab.goto(episode_url(site, "earth-3"))
    assert PAYLOAD in page.locator("h1").inner_text()
    assert page.locator(".notes").get_by_text(PAYLOAD, exact=False).is_visible()
    assert page.locator(".persons").get_by_text(f"Mallory {PAYLOAD}").is_visible()
    assert page.locator(".persons").get_by_text("Trent <b>bold</b>").is_visible()
    assert page.locator(".transcript").get_by_text(PAYLOAD, exact=False).first.is_visible()
    assert page.locator(".notes a[href^=javascript]").count() == 0
    tab.goto(site.url("/search?q=glaciers"))
    assert PAYLOAD in page.locator("li.hit h2").first.inner_text()
    assert page.evaluate("typeof window.__pwned") == "undefined"
    assert tab.errors == []


def test_embed_script_places_a_sized_widget_on_another_site(site, audio, tab):
    audio.pages["/publisher.html"] = f"""<!doctype html><html lang="en"><head><meta charset="utf-8">
<link rel="icon" href="data:,"><title>Publisher</title></head><body><h1>Lava Flows of Iceland</h1>
<div data-podsearch-similar="earth-2" data-k="3" data-link="podsearch"></div>
<script async src="{site.url('/embed.js')}"></script></body></html>""".encode()
    page = tab.page
    tab.goto(audio.base + "/publisher.html")
    frame_element = page.locator("iframe[title='Nearby episodes']")
    frame_element.wait_for(state="attached")
    widget = frame_element.element_handle().content_frame()
    widget.locator("li a").first.wait_for()
    assert widget.locator("li a").count() == 3
    assert widget.locator("li a").first.inner_text() == "Inside a Magma Chamber"
    assert widget.locator("li a").first.get_attribute("target") == "_top"
    page.wait_for_function("() => document.querySelector('iframe').style.height !== '360px'")

    def sizes() -> tuple[float, float]:
        return (frame_element.evaluate("f => f.getBoundingClientRect().height"),
                widget.evaluate("() => document.documentElement.scrollHeight"))

    # The widget reports its height whenever its layout changes; the iframe must settle on its content's height.
    deadline = time.monotonic() + 10
    height, inner = sizes()
    while abs(height - inner) > 8 and time.monotonic() < deadline:
        page.wait_for_timeout(100)
        height, inner = sizes()
    assert abs(height - inner) <= 8, (height, inner)
    widget.locator("li a").first.click()
    page.wait_for_url(re.compile(r"/episodes/earth-1$"))
    assert tab.errors == []


@pytest.mark.parametrize("name,width,height", [("desktop", 1280, 800), ("phone", 390, 844)])
def test_screenshots(site, browser, tmp_path, name, width, height):
    """Taken on every run; written to docs/screenshots/ (for the README) with UPDATE_SCREENSHOTS=1."""
    folder = SCREENSHOTS if os.environ.get("UPDATE_SCREENSHOTS") == "1" else tmp_path
    tab = Tab(browser, width, height)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        tab.goto(site.url("/search?q=sourdough+starter"))
        tab.page.screenshot(path=str(folder / f"results-{name}.png"))
        tab.goto(episode_url(site, "kitchen-1", t="125") + "#t125")
        audio_at(tab.page, 125)
        tab.page.evaluate("window.scrollTo(0, 0)")
        tab.page.screenshot(path=str(folder / f"episode-{name}.png"))
        assert (folder / f"episode-{name}.png").stat().st_size > 10_000
        assert tab.errors == []
        # nothing is wider than the screen
        assert tab.page.evaluate("document.documentElement.scrollWidth") <= width
    finally:
        tab.close()


def reasons_screenshot(browser, server: LiveServer, guid: str, path: Path) -> list[str]:
    """The episode page of ``guid`` scrolled to its nearby episodes, that section saved as ``path``; returns
    the reasons lines shown. Also used by hand for the site corpus's screenshot (docs/similar.md)."""
    tab = Tab(browser, 1280, 800)
    try:
        tab.goto(episode_url(server, guid))
        # the heading of the nearby episodes near the top, below the sticky player
        tab.page.evaluate("window.scrollTo(0, document.getElementById('nearby-h').getBoundingClientRect().top"
                          " + window.scrollY - 120)")
        path.parent.mkdir(parents=True, exist_ok=True)
        tab.page.screenshot(path=str(path))
        assert tab.errors == []
        return tab.page.locator(".nearby .reasons").all_inner_texts()
    finally:
        tab.close()


def test_reasons_of_the_demo_as_people_read_them(browser, sample_data, tmp_path):
    """The demo's fermentation episode: its nearby episodes' reasons are topics, no general word (issue 16).
    Written to docs/screenshots/reasons-demo.png with UPDATE_SCREENSHOTS=1."""
    from podsearch.similar.reasons import is_general

    folder = SCREENSHOTS if os.environ.get("UPDATE_SCREENSHOTS") == "1" else tmp_path
    server = start_server(sample_data)
    try:
        lines = reasons_screenshot(browser, server, "https://example.org/long-table/?p=1444",
                                   folder / "reasons-demo.png")
    finally:
        server.stop()
    reasons = [r for line in lines for r in line.removeprefix("because of: ").split(", ")]
    assert len(lines) >= 5 and "fermentation" in reasons, lines
    assert not [r for r in reasons if is_general(r)], lines
    assert (folder / "reasons-demo.png").stat().st_size > 10_000


def _highlighted(page) -> list[str]:
    """The ids of the transcript paragraphs drawn highlighted."""
    return page.evaluate("""() => Array.from(document.querySelectorAll('.transcript p'))
        .filter(p => getComputedStyle(p).backgroundColor !== getComputedStyle(document.body).backgroundColor
                     && getComputedStyle(p).backgroundColor !== 'rgba(0, 0, 0, 0)').map(p => p.id)""")


@pytest.mark.parametrize("t,anchor", [(125, "t125"), (245, "t245"), (245, "t245-6")])
def test_a_moment_highlights_exactly_its_paragraph(site, browser, t, anchor):
    """A moment's link (``?t=125#t125`` for a paragraph at 125.4; ``#t245-6``, the second paragraph starting in
    second 245) highlighted two paragraphs: the one named and, as the one playing, the paragraph before (125.4 > 125)
    or the first of that second. With and without the script, exactly the named one is."""
    for script in (True, False):
        context = browser.new_context(viewport={"width": 1280, "height": 800}, java_script_enabled=script)
        try:
            page = context.new_page()
            page.goto(episode_url(site, SPLIT, t=str(t)) + "#" + anchor)
            if script:
                audio_at(page, t)
                page.wait_for_timeout(300)  # (a timeupdate after the seek)
            assert _highlighted(page) == [anchor], (script, _highlighted(page))
            if script:
                assert page.locator(".transcript p.current").evaluate_all("ps => ps.map(p => p.id)") == [anchor]
        finally:
            context.close()


def test_a_long_url_does_not_widen_a_phone_page(site, browser):
    """A URL in a transcript laid out /search?q=bitcoin&page=2 602 px wide on a 390 px phone, an episode page 719:
    the phone grid's 1fr column grew to its longest word, and hits, snippets, moments and paragraphs did not wrap."""
    tab = Tab(browser, 390, 844)
    try:
        for url in (site.url("/search?q=survey+archive"), episode_url(site, "earth-3")):
            tab.goto(url)
            text = tab.page.locator("li.hit, .transcript").first.inner_text()
            assert "survey archive is at https://github.com/deep-earth/" in text.replace("\n", " "), url
            assert tab.page.evaluate("document.documentElement.scrollWidth") <= 390, url
        assert tab.errors == []
    finally:
        tab.close()


def test_nearby_episodes_come_before_the_transcript(site, browser):
    """The nearby episodes came after the whole transcript: on a phone 89,837 px down a Go Time page, and for the
    keyboard after every transcript link (two a paragraph) at every width. Now a link near the top leads there, the
    chapters and nearby episodes come before the transcript in reading order (on a phone, below the show notes), and
    on a wide screen they stay in the column beside the notes and the transcript."""
    for width in (390, 1280):
        tab = Tab(browser, width, 844)
        try:
            page = tab.page
            tab.goto(episode_url(site, "kitchen-1"))
            top = page.locator("article > header a[href='#nearby-h']")
            assert top.is_visible() and top.inner_text() == "Nearby episodes"
            box = {name: page.locator(sel).bounding_box() for name, sel in
                   (("notes", ".notes"), ("nearby", "#nearby-h"), ("transcript", "#tr-h"), ("side", ".side"))}
            if width == 390:
                assert box["notes"]["y"] < box["nearby"]["y"] < box["transcript"]["y"], box
            else:
                assert box["side"]["x"] > box["transcript"]["x"] + 200 and abs(box["side"]["y"] - box["notes"]["y"]) < 5
                notes_end = box["notes"]["y"] + box["notes"]["height"]
                assert box["transcript"]["y"] - notes_end < 80, box  # (no gap left under the notes)
            # the keyboard reaches a nearby episode before any transcript link
            page.locator("article > header h1").click()
            focused = []
            for _ in range(60):
                page.keyboard.press("Tab")
                focused.append(page.evaluate("document.activeElement.closest('.nearby') ? 'nearby' :"
                                             " document.activeElement.closest('.transcript') ? 'transcript' : 'other'"))
                if focused[-1] == "nearby":
                    break
            assert focused[-1] == "nearby" and "transcript" not in focused, (width, focused)
            top.click()
            page.wait_for_timeout(200)
            heading = page.locator("#nearby-h").bounding_box()
            player = page.locator(".player").bounding_box()
            assert heading["y"] >= player["y"] + player["height"] - 1, "the sticky player does not cover the heading"
            assert tab.errors == []
        finally:
            tab.close()


def test_the_hidden_paragraph_link_takes_no_room(site, browser):
    """Each paragraph's "#" link (shown on hover and focus) still took its room when hidden: a paragraph ending
    near the right edge wrapped onto a line that looked empty. At every width its paragraph is as tall with the link
    as without it."""
    tab = Tab(browser, 390, 844)
    try:
        tab.goto(episode_url(site, "kitchen-2"))
        grown = tab.page.evaluate("""async () => {
            const paras = Array.from(document.querySelectorAll('.transcript p')), links = document.querySelectorAll('.here');
            const heights = () => paras.map(p => p.getBoundingClientRect().height);
            const out = [];
            for (let w = 300; w <= 800; w += 2) {
                document.body.style.width = w + 'px';
                const shown = heights();
                links.forEach(a => a.style.display = 'none');
                const bare = heights();
                links.forEach(a => a.style.display = '');
                shown.forEach((h, i) => { if (h > bare[i] + 1) out.push([w, paras[i].id]); });
            }
            return out;
        }""")
        assert grown == [], grown[:5]
    finally:
        tab.close()


def test_the_keyboard_skips_to_the_results(site, tab):
    """The first result took 37 Tab presses at 1280 px: "Skip to content" landed on main, which starts with the sort
    and every filter link. On a page of results the first Tab offers "Skip to results", and the next Tab after it is
    the first result."""
    page = tab.page
    tab.goto(site.url("/search?q=lava"))
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.textContent") == "Skip to results"
    page.keyboard.press("Enter")
    page.keyboard.press("Tab")
    first = page.locator("li.hit h2 a").first
    assert first.evaluate("a => a === document.activeElement"), page.evaluate("document.activeElement.outerHTML")
    tab.goto(site.url("/search?q=qqqxxyz"))  # (no results: to the content, as on every other page)
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.textContent") == "Skip to content"
    assert tab.errors == []


def test_a_script_that_slips_into_a_page_does_not_run(site, tab):
    """The pages escape what feeds write (above); the policy is the second line: until 5 December 2026 it said
    ``frame-ancestors`` only, and markup that an escaping slip let through would have run. Script and an event
    handler put into the page (as a slip would) are refused by Chromium, while the page's own scripts (the
    player, the typeahead) run."""
    page = tab.page
    for url in (episode_url(site, "earth-3"), site.url("/embed/similar/earth-1")):
        tab.goto(url)
        page.evaluate("""() => {
            const s = document.createElement('script'); s.textContent = 'window.__pwned = 7'; document.body.appendChild(s);
            document.body.insertAdjacentHTML('beforeend', '<img src="data:," onload="window.__pwned = 8">');
        }""")
        page.wait_for_timeout(300)
        assert page.evaluate("typeof window.__pwned") == "undefined", url
        refused = [e for e in tab.errors if "Content Security Policy" in e]
        assert len(refused) >= 2, tab.errors
        tab.errors.clear()
    tab.goto(site.url("/"))
    page.get_by_role("combobox", name="Search episodes and transcripts").fill("magma")
    page.locator("[role=option]").first.wait_for()
    assert tab.errors == []
