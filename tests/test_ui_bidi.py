"""Feed text cannot reorder the page around it: a right-to-left override (U+202E) in a show name, a title or a
person's name reversed the text after it on the same line (the date after a show name, a person's role) until
5 December 2026. Each piece of feed text is now an isolate (``<bdi>``); right-to-left titles still read right to
left. Checked in a real headless Chromium against ``podsearch serve`` (see test_ui_browser.py)."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from conftest import start_server
from test_ui_browser import CHROMIUM_ARGS, _require_chromium

pytestmark = pytest.mark.browser

RLO = "\u202e"
HEBREW = "שלום עולם"

# (the element, and whether it is laid out after everything before it on its line, as an LTR line reads)
AFTER = """el => {
  const r = document.createRange();
  r.setStart(el.closest('.meta, li, p, h1, h2, div'), 0);
  r.setEndBefore(el);
  return [el.getBoundingClientRect().left, r.getBoundingClientRect().right];
}"""
# (the x of the first and the last character of an element's text)
ENDS = """el => {
  const t = document.createTreeWalker(el, NodeFilter.SHOW_TEXT).nextNode();
  const at = i => {
    const r = document.createRange(); r.setStart(t, i); r.setEnd(t, i + 1); return r.getBoundingClientRect().left;
  };
  return [at(0), at(t.length - 1)];
}"""


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator:
    from podsearch.config import load_config
    from podsearch.reindex import import_jsonl

    root = tmp_path_factory.mktemp("bidi")
    lines = [{"id": "rlo-1", "show": f"Evil{RLO}Show", "title": f"Evil{RLO}Title otters", "published": "2026-06-01",
              "duration": 600, "persons": [{"name": f"Ana{RLO}Mar", "role": "guest"}],
              "transcript": "We talk about otters and rivers."},
             {"id": "he-1", "show": HEBREW, "title": HEBREW, "published": "2026-05-01", "language": "he",
              "transcript": "שלום עולם otters"}]
    (root / "eps.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    import_jsonl(load_config({"data": str(root / "data")}, environ={}), root / "eps.jsonl")
    live = start_server(root / "data", "--no-access-log")
    yield live
    live.stop()


@pytest.fixture(scope="module")
def page(server):
    executable = _require_chromium()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        yield browser.new_page()
        browser.close()


def _after(page, selector: str) -> None:
    left, before = page.locator(selector).first.evaluate(AFTER)
    assert left >= before - 0.5, f"{selector} is drawn at {left}, left of the text before it (ending at {before})"


def test_an_override_in_a_show_name_does_not_reverse_the_date_after_it(server, page) -> None:
    page.goto(server.url("/"))
    _after(page, "ul.list li:has-text('Title') .meta time")
    page.goto(server.url("/search?q=otters"))
    _after(page, ".hit:has-text('Title') .meta time")


def test_an_override_in_a_persons_name_does_not_reverse_the_role(server, page) -> None:
    page.goto(server.url("/episodes/rlo-1"))
    _after(page, ".persons li span.muted")


def test_right_to_left_titles_still_read_right_to_left(server, page) -> None:
    page.goto(server.url("/episodes/he-1"))
    first, last = page.locator("#ep-title").evaluate(ENDS)
    assert first > last, (first, last)
    page.goto(server.url("/"))
    first, last = page.locator("ul.list li a", has_text=HEBREW).evaluate(ENDS)
    assert first > last, (first, last)


def test_the_query_cannot_reorder_the_title_or_the_summary_after_it(server, page) -> None:
    """The search page's own text around the reader's query: a right-to-left override typed or pasted in the box
    reversed what follows it in the tab's title ("· Search · podsearch"), the feed link's title and the summary line
    (the time the search took), until 6 December 2026. The query is an isolate, as feed text is."""
    import urllib.parse

    query = f"otters{RLO}x"
    page.goto(server.url("/search?" + urllib.parse.urlencode({"q": query})))
    assert page.title() == f"\u2068{query}\u2069 · Search · podsearch"
    feed_title = page.locator('link[rel="alternate"]').get_attribute("title")
    assert feed_title == f"podsearch: \u2068{query}\u2069, newest first"
    _after(page, "#summary > span.muted")
