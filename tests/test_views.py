"""The HTML pages, the embed widget and OpenSearch through the Flask client over the indexed bundled sample."""

from __future__ import annotations

import re
from html import unescape
from html.parser import HTMLParser
from urllib.parse import parse_qs, quote, urlsplit
from xml.etree import ElementTree as ET

import pytest
from conftest import ENGINES

BEES = "tag:example.org,2024:field-notes/ep-01"


def page(client, path: str, status: int = 200) -> str:
    response = client.get(path)
    assert response.status_code == status, (path, response.status_code, response.data[:300])
    assert response.mimetype == "text/html"
    return response.get_data(as_text=True)


class Links(HTMLParser):
    """Every <a> with its attributes and text."""

    def __init__(self) -> None:
        super().__init__()
        self.links: list[dict[str, str]] = []
        self._open: dict[str, str] | None = None

    def handle_starttag(self, tag, attrs):
        if tag == "a":
            self._open = {k: v or "" for k, v in attrs} | {"text": ""}
            self.links.append(self._open)

    def handle_endtag(self, tag):
        if tag == "a":
            self._open = None

    def handle_data(self, data):
        if self._open is not None:
            self._open["text"] += data


def links(html: str, css_class: str | None = None) -> list[dict[str, str]]:
    parser = Links()
    parser.feed(html)
    return [a for a in parser.links if css_class is None or css_class in a.get("class", "").split()]


def args(href: str) -> dict[str, list[str]]:
    return parse_qs(urlsplit(unescape(href)).query)


def test_home_has_landmarks_search_shows_and_recent(client):
    html = page(client, "/")
    assert '<a class="skip" href="#main">' in html and '<main id="main"' in html and "<footer>" in html
    assert '<label for="q"' in html and 'role="search"' in html and 'role="combobox"' in html
    assert 'rel="search" type="application/opensearchdescription+xml"' in html
    for show in ("Field Notes", "Signal Path", "The Long Table"):
        assert show in html
    assert html.count('href="/episodes/') >= 8, "recent episodes are listed"


def test_results_keep_the_query_and_show_total_time_and_moments(client):
    html = page(client, "/search?q=sourdough+starter")
    assert 'value="sourdough starter"' in html
    assert re.search(r'id="summary"[^>]*><strong>\d+</strong> episodes? for <bdi>“sourdough starter”</bdi> '
                     r'<span class="muted">· \d+ ms', html)
    moments = links(html, "moment")
    assert moments, "hits show their moments"
    for typed, shown in (('“sourdough starter”', "“sourdough starter”"), ('"sourdough starter"', "&#34;sourdough starter&#34;")):
        phrase = page(client, "/search?q=" + quote(typed))  # a phrase's own quotes delimit it, none added
        assert re.search(rf'id="summary"[^>]*><strong>\d+</strong> episodes? for <bdi>{shown}</bdi> <span', phrase), typed
    first = moments[0]
    t = args(first["href"])["t"][0]
    assert first["href"].endswith(f"#t{t}") and first["text"].count(":") == 1
    assert "<mark>" in html


def test_facets_are_links_that_keep_the_query_and_toggle(client):
    html = page(client, "/search?q=water&sort=date")
    facet_links = [a for a in links(html) if "/search?" in a["href"] and ("show=" in a["href"] or "from=" in a["href"])]
    assert facet_links
    for a in facet_links:
        assert args(a["href"])["q"] == ["water"] and args(a["href"])["sort"] == ["date"]
    year = next(a for a in facet_links if "from=" in a["href"])
    assert args(year["href"])["from"] == args(year["href"])["to"] and re.fullmatch(r"\d{4}", args(year["href"])["from"][0])
    show = next(a for a in facet_links if "show=" in a["href"])
    filtered = page(client, unescape(show["href"]))
    current = [a for a in links(filtered) if a.get("aria-current") == "true"]
    assert current and "show=" not in current[0]["href"], "the facet in use links to the search without it"
    assert 'aria-label="Remove filter Show:' in filtered


def test_pagination_and_sort(client):
    html = page(client, "/search?show=field-notes&per_page=5")
    assert "<strong>12</strong> episodes" in html
    pager = [a for a in links(html) if "page" in args(a["href"])]
    assert [a["text"].strip() for a in pager] == ["1", "2", "3", "Next ›"]
    assert all(args(a["href"])["per_page"] == ["5"] and args(a["href"])["show"] == ["field-notes"] for a in pager)
    last = page(client, "/search?show=field-notes&per_page=5&page=3")
    assert 'rel="prev"' in last and 'rel="next"' not in last and '<ol class="plain hits" start="11">' in last
    assert '<option value="oldest">Oldest first</option>' in html and '<select id="sort" name="sort">' in html


def test_did_you_mean_and_no_results_help(client):
    html = page(client, "/search?q=vulcano&correct=false")
    assert "Did you mean" in html and 'href="/search?q=volcano&amp;correct=false"' in html
    assert "No episodes match" in html
    html = page(client, "/search?q=vulcano")  # (answered for the suggestion, with the way back)
    assert "Showing results for <strong><bdi>volcano</bdi></strong>" in html and "No episodes match" not in html
    assert 'href="/search?q=vulcano&amp;correct=false">Search instead for <bdi>vulcano</bdi></a>' in html
    html = page(client, "/search?q=volcano&person=nobody+at+all")
    assert "No episodes match" in html and 'href="/search?q=volcano">Search all episodes</a>' in html


def test_a_person_is_named_as_written(client):
    """The person filter in use and the person facet name her as the feed does ("Fiona MacLeod"), not as her
    lower-case key title-cased ("Fiona Macleod")."""
    html = page(client, "/search?person=fiona+macleod")
    assert 'aria-label="Remove filter Person: Fiona MacLeod"' in html and "Macleod" not in html


def test_empty_search_is_a_friendly_start(client):
    html = page(client, "/search")
    assert "Type a few words you remember" in html and 'href="/shows/field-notes"' in html


def test_bad_query_is_a_400_page_with_the_query_kept(client):
    html = page(client, "/search?q=bees&page=0", status=400)
    assert "page must be between" in html and 'value="bees"' in html and "podsearch</a>" in html


def test_markup_in_the_query_is_text(client):
    html = page(client, "/search?q=" + quote('<script>alert("x")</script>'))
    assert "<script>alert" not in html
    assert "&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;" in html


def test_episode_page_starts_at_t_and_links_every_paragraph(client):
    html = page(client, "/episodes/" + quote(BEES, safe="") + "?t=300")
    assert re.search(r'<audio id="player" controls preload="metadata" src="[^"]+#t=300\.0" data-start="300\.0"', html)
    anchors = re.findall(r'<p id="(t\d+)"( class="current")? data-start="([\d.]+)"', html)
    assert len(anchors) > 3 and len({a for a, _, _ in anchors}) == len(anchors)
    current = [(a, float(s)) for a, c, s in anchors if c]
    assert len(current) == 1 and current[0][1] <= 300
    later = [float(s) for _, _, s in anchors if float(s) > current[0][1]]
    assert not later or later[0] > 300, "the current paragraph is the one playing at t"
    assert 'href="?t=0#t0" data-t="0.0"' in html
    assert "Nearby episodes" in html and "because of:" in html and "Hannah Szabo" in html
    assert 'href="/search?person=Hannah+Szabo"' in html


def test_episode_without_t_does_not_preload_audio(client):
    html = page(client, "/episodes/" + quote(BEES, safe=""))
    assert 'preload="none"' in html and 'class="current"' not in html


@pytest.mark.parametrize("path", ["/episodes/no-such-episode", "/shows/no-such-show", "/nowhere"])
def test_not_found_pages_share_the_look(client, path):
    html = page(client, path, status=404)
    assert "We could not find that page" in html and 'class="brand"' in html and "Go to the search page" in html


def test_show_page_lists_episodes_newest_first_and_searches_inside(client):
    html = page(client, "/shows/field-notes")
    dates = re.findall(r'<time datetime="([^"]+)"', html)
    assert len(dates) == 12 and dates == sorted(dates, reverse=True)
    assert '<input type="hidden" name="show" value="field-notes">' in html and '<label for="show-q"' in html


def test_show_page_links_keep_the_page_size(client):
    """``/shows/field-notes?per_page=5``: "Older" led to page 2 of 50 a page ("No episodes yet.")."""
    html = page(client, "/shows/field-notes?per_page=5")
    older = re.search(r'<a href="([^"]+)" rel="next">', html).group(1).replace("&amp;", "&")
    assert "per_page=5" in older and "page=2" in older
    second = page(client, older)
    dates = re.findall(r'<time datetime="([^"]+)"', second)
    assert len(dates) == 5 and "per_page=5" in re.search(r'<a href="([^"]+)" rel="prev">', second).group(1)
    assert "per_page" not in page(client, "/shows/field-notes?page=1")  # (the default is not written out)


def test_opensearch_description(client):
    response = client.get("/opensearch.xml")
    assert response.status_code == 200 and response.mimetype == "application/opensearchdescription+xml"
    ns = {"os": "http://a9.com/-/spec/opensearch/1.1/"}
    root = ET.fromstring(response.data)
    urls = {u.get("type"): u.get("template") for u in root.findall("os:Url", ns)}
    assert urls["text/html"] == "http://localhost/search?q={searchTerms}"
    assert urls["application/x-suggestions+json"] == "http://localhost/opensearch/suggest?q={searchTerms}"
    suggest = client.get("/opensearch/suggest?q=volc")
    assert suggest.mimetype == "application/x-suggestions+json"
    prefix, completions = suggest.get_json()
    assert prefix == "volc" and any("volcano" in c.lower() for c in completions)


@pytest.mark.parametrize("engine_name", ENGINES)
def test_opensearch_suggestions_complete_the_whole_query(client):
    """A browser searches the completion it shows, as it is: for "honey volc" it was offered "volcano" (the word
    completing the last one), and picking it searched "volcano" alone, "honey" lost. The words before the last are
    kept, as the site's own typeahead keeps them."""
    prefix, completions = client.get("/opensearch/suggest", query_string={"q": "honey volc"}).get_json()
    assert prefix == "honey volc"
    words = [c for c in completions if c.lower().startswith("honey volc")]
    assert "honey volcano" in words, completions
    assert all(c.lower() != "volcano" for c in completions), completions
    assert client.get("/opensearch/suggest", query_string={"q": "volc"}).get_json()[1][:1] != []


def test_embed_widget_page(client):
    response = client.get("/embed/similar/" + quote(BEES, safe=""))
    assert response.status_code == 200 and "X-Frame-Options" not in response.headers
    html = response.get_data(as_text=True)
    items = links(html)
    assert items and all(a["target"] == "_top" for a in items)
    assert any(a["href"].startswith("https://example.org/") for a in items), "links go to the publisher's pages"
    # a feed's link, shown on every site whose widget lists that episode, is marked as the pages mark it (it had
    # no rel until 5 December 2026); a link to podsearch's own page is not
    assert all(a.get("rel") == "nofollow noopener noreferrer" for a in items if not a["href"].startswith("http://localhost/"))
    assert "because of:" in html and "Hive Minds" in html
    ours = links(page(client, "/embed/similar/" + quote(BEES, safe="") + "?link=podsearch&k=3"))
    assert len(ours) == 3 and all(a["href"].startswith("http://localhost/episodes/") and "rel" not in a for a in ours)
    page(client, "/embed/similar/" + quote(BEES, safe="") + "?link=elsewhere", status=400)
    page(client, "/embed/similar/no-such-episode", status=404)


def test_embed_script(client):
    response = client.get("/embed.js")
    assert response.status_code == 200 and response.mimetype == "text/javascript"
    body = response.get_data(as_text=True)
    assert '"http://localhost/embed/similar/__ID__"' in body and "data-podsearch-similar" in body
    assert "max-age" in response.headers["Cache-Control"]


FIELD_NOTES_1 = quote("tag:example.org,2024:field-notes/ep-01", safe="")


@pytest.mark.parametrize("path", ["/", "/search?q=volcano", "/search", f"/episodes/{FIELD_NOTES_1}", "/shows/field-notes",
                                  f"/embed/similar/{FIELD_NOTES_1}", "/episodes/no-such-episode"])
def test_pages_let_only_their_own_scripts_run(client, path: str) -> None:
    """The policy said ``frame-ancestors 'self'`` only: a script that got into a page (an escaping slip with a
    feed's text) would have run. Each page names a fresh nonce that its own scripts, and only they, carry; no
    plugins, no <base> (5 December 2026)."""
    responses = [client.get(path), client.get(path)]
    nonces = []
    for response in responses:
        policy = dict(p.strip().split(" ", 1) for p in response.headers["Content-Security-Policy"].split(";"))
        assert policy["object-src"] == "'none'" and policy["base-uri"] == "'none'", policy
        nonce = re.fullmatch(r"'nonce-([A-Za-z0-9_-]{20,})'", policy["script-src"]).group(1)
        scripts = re.findall(r"<script\b[^>]*>", response.get_data(as_text=True))
        assert scripts and all(f'nonce="{nonce}"' in tag for tag in scripts), (path, scripts)
        nonces.append(nonce)
    assert nonces[0] != nonces[1]


def test_pages_may_not_be_framed_by_other_sites_and_no_answer_is_sniffed(client):
    """No answer said ``nosniff``, and every page could be framed by any site; the widget's pages are made to be."""
    page_ = client.get("/search?q=volcano")
    assert page_.headers["X-Content-Type-Options"] == "nosniff"
    assert page_.headers["Content-Security-Policy"].endswith("; frame-ancestors 'self'")
    assert page_.headers["X-Frame-Options"] == "SAMEORIGIN"
    widget = client.get("/embed/similar/" + quote("tag:example.org,2024:field-notes/ep-01", safe=""))
    assert widget.status_code == 200 and "X-Frame-Options" not in widget.headers
    assert "frame-ancestors" not in widget.headers["Content-Security-Policy"]
    assert widget.headers["X-Content-Type-Options"] == "nosniff"
    api = client.get("/api/search?q=volcano")
    assert api.headers["X-Content-Type-Options"] == "nosniff" and "X-Frame-Options" not in api.headers


def test_a_refused_search_links_back_only_where_back_is_not_the_same_refusal(client):
    """``published:yesterday`` was answered "Back to the search for “published:yesterday”", a link to the same
    400; a page past the search's depth was headed "That search could not be read"."""
    bad = client.get("/search?q=published:yesterday")
    page = bad.get_data(as_text=True)
    assert bad.status_code == 400 and "That search could not be read" in page
    assert "Back to the search" not in page and 'value="published:yesterday"' in page  # (the box holds it)
    deep = client.get("/search?q=water&page=101")
    page = deep.get_data(as_text=True)
    assert deep.status_code == 400 and "That page of the search cannot be shown" in page
    assert 'href="/search?q=water">Back to the search for' in page


def test_an_episode_without_date_or_length_has_no_stray_separator(tmp_path):
    """Every Changelog and Talk Python episode of the site corpus read " · on the show's site": the separator stood
    for a date and a length it did not have."""
    import json

    from podsearch.config import load_config
    from podsearch.reindex import import_jsonl
    from podsearch.web.app import create_app

    config = load_config({"data": str(tmp_path / "data")}, environ={})
    line = {"id": "undated-1", "show": "Undated", "title": "No date", "link": "https://example.org/ep/1",
            "transcript": "We talk about otters."}
    (tmp_path / "a.jsonl").write_text(json.dumps(line) + "\n", encoding="utf-8")
    import_jsonl(config, tmp_path / "a.jsonl")
    page = create_app(config).test_client().get("/episodes/undated-1").get_data(as_text=True)
    assert '<p class="meta"><a href="https://example.org/ep/1" rel="nofollow noopener noreferrer">on the show' in page
    assert " · <a href=\"https://example.org/ep/1\"" not in page


def test_an_episode_with_a_length_shows_its_facts_as_text_and_a_link(client):
    """The date, length and "on the show's site" line of every episode with a length read as raw markup
    (``<time datetime=...>2 Aug 2023</time> · 46 min · <a href=...>``): the length came out of its macro marked
    safe, and ``join`` then escaped the plain strings around it."""
    html = page(client, "/episodes/" + quote(BEES, safe=""))
    facts = re.search(r'<h1 id="ep-title">.*?</h1>\s*<p class="meta">(.*?)</p>', html, re.S).group(1)
    assert "&lt;" not in facts and "&gt;" not in facts, facts
    assert re.search(r'<time datetime="[^"]+">[^<]+</time> · <span title="[\d:]+">\d+ min</span> · '
                     r'<a href="https://[^"]+" rel="nofollow noopener noreferrer">on the show(?:\x27|&#39;)s site</a>',
                     facts), facts


def test_a_moment_marks_its_own_paragraph_not_the_one_before(client):
    """A moment links ``?t=2082#t2082`` (its start second) for a paragraph starting at 2082.4: the page marked the
    paragraph before as the one playing (2082.4 > 2082), so two were highlighted, the moment's one by the fragment."""
    path = "/episodes/" + quote(BEES, safe="")
    starts = re.findall(r'<p id="(t\d+)" data-start="([\d.]+)"', page(client, path))
    fractional = [(anchor, float(s)) for anchor, s in starts if float(s) != int(float(s))]
    assert fractional, starts
    for anchor, start in fractional:
        html = page(client, f"{path}?t={int(start)}")
        current = re.findall(r'<p id="([^"]+)" class="current"', html)
        assert current == [anchor], (start, current)


def test_without_a_similarity_model_the_public_sees_no_path_or_command(sample_data, engine_settings):
    """The episode page (and the widget, on other sites) said "No similarity model in /srv/.../data. Run 'podsearch
    reindex' first." under Nearby episodes: a server path and an admin's command, shown to every listener."""
    import shutil

    from conftest import sample_config

    from podsearch.web import create_app

    shutil.rmtree(sample_data / "model")
    client = create_app(sample_config(sample_data, engine_settings), {"TESTING": True}).test_client()
    for path in ("/episodes/", "/embed/similar/"):
        html = page(client, path + quote(BEES, safe=""))
        assert "No nearby episodes yet." in html, path
        assert str(sample_data.parent) not in html and "reindex" not in html and "similarity model" not in html, path


def test_the_header_search_box_keeps_every_filter(client):
    """New words typed in the header's box kept the show, person and sort but dropped the year, duration and
    language, with nothing said."""
    asked = {"show": ["field-notes"], "person": ["Hannah Szabo"], "from": ["2023"], "to": ["2024"],
             "duration_min": ["10"], "duration_max": ["90"], "language": ["en"], "sort": ["date"]}
    html = page(client, "/search?q=water&" + "&".join(f"{k}={quote(v[0])}" for k, v in asked.items()))
    header = re.search(r'<header class="site">.*?</header>', html, re.S).group(0)
    kept: dict[str, list[str]] = {}
    for name, value in re.findall(r'<input type="hidden" name="([^"]+)" value="([^"]*)">', header):
        kept.setdefault(name, []).append(unescape(value))
    assert kept == asked
    refused = page(client, "/search?q=water&duration_min=-5", status=400)  # (a refused value is not carried on)
    assert 'type="hidden"' not in re.search(r'<header class="site">.*?</header>', refused, re.S).group(0)


def test_years_are_listed_newest_first_and_none_is_left_out(client, app):
    """The year facet listed years by their count (2023, 2024, 2025) and only the ten most counted: a search of the
    site corpus with hits in twelve years left out 2025 and 2026."""
    html = page(client, "/search?q=water")
    years = [a["text"] for a in links(html) if "from=" in a["href"]]
    assert len(years) >= 3 and years == sorted(years, reverse=True), years
    from types import SimpleNamespace

    from podsearch.requests import SearchRequest
    from podsearch.web.views import facet_links

    counts = {str(y): 100 - abs(2020 - y) * 7 for y in range(2015, 2027)}
    result = SimpleNamespace(facets={"year": [{"value": y, "label": y, "count": c} for y, c in
                                              sorted(counts.items(), key=lambda kv: -kv[1])]})
    with app.test_request_context("/search?q=bitcoin"):
        rows = dict(facet_links(result, SearchRequest(q="bitcoin")))["Year"]
    assert [r["label"] for r in rows] == [str(y) for y in range(2026, 2014, -1)]


def test_no_results_has_no_empty_filters_disclosure(client):
    """A search that finds nothing showed a "Filters" disclosure (on a phone) that opened on nothing."""
    html = page(client, "/search?q=qqqxxyz")
    assert "No episodes match" in html and "<summary>Filters</summary>" not in html and 'class="facets"' not in html
    assert '<div class="layout single">' in html
    found = page(client, "/search?q=water")
    assert "<summary>Filters</summary>" in found and '<div class="layout">' in found


def test_a_snippet_that_is_one_of_its_moments_is_not_shown_twice(client):
    """Most hits read the same passage twice, word for word: as the snippet and as the first moment below it."""
    html = page(client, "/search?q=water")
    hits = html.split('<li class="hit">')[1:]
    assert len(hits) >= 5
    for hit in hits:
        snippet = re.search(r'<p class="snippet">(.*?)</p>', hit, re.S)
        moments = re.findall(r'<a class="moment ts"[^>]*>[^<]*</a>(?: · <span class="who">[^<]*</span>:)? (.*?)</li>', hit,
                             re.S)
        assert moments or snippet, hit[:200]
        if snippet:
            assert snippet.group(1) not in moments, snippet.group(1)[:80]


def test_a_time_is_shown_where_it_changes(tmp_path):
    """Transcripts with only section times (the site corpus's Changelog shows) repeated "0:00" on every paragraph of a
    section (eleven in a row on Go Time #200). A paragraph starting in the second of the one before shows no time of
    its own; each keeps its anchor (``t0-2``) and its start for the player."""
    import json

    from podsearch.config import load_config
    from podsearch.reindex import import_jsonl
    from podsearch.web.app import create_app

    config = load_config({"data": str(tmp_path / "data")}, environ={})
    segments = [{"start": s, "speaker": who, "text": f"Paragraph {i} about otters."}
                for i, (s, who) in enumerate([(0, "Ana"), (0, "Bo"), (0.5, "Ana"), (600, "Bo"), (600, "Ana"), (660, "Bo")])]
    line = {"id": "sections-1", "show": "Sections", "title": "Section times", "segments": segments}
    (tmp_path / "a.jsonl").write_text(json.dumps(line) + "\n", encoding="utf-8")
    import_jsonl(config, tmp_path / "a.jsonl")
    html = create_app(config).test_client().get("/episodes/sections-1?t=630").get_data(as_text=True)
    paras = re.findall(r'<p id="([^"]+)"( class="current")? data-start="([\d.]+)">(.*?)</p>', html, re.S)
    assert [(anchor, start) for anchor, _, start, _ in paras] == [
        ("t0", "0.0"), ("t0-2", "0.0"), ("t0-3", "0.5"), ("t600", "600.0"), ("t600-5", "600.0"), ("t660", "660.0")]
    assert [bool(re.search(r'class="ts"', text)) for _, _, _, text in paras] == [True, False, False, True, False, True]
    assert [anchor for anchor, current, _, _ in paras if current] == ["t600"]


def test_a_404_speaks_of_what_was_asked_for(client):
    """Every 404 (a show, a path) said "The episode may have been removed from its feed. Try searching for it:" and
    then offered a button to the home page, no search."""
    episode = page(client, "/episodes/no-such-episode", status=404)
    assert "The episode may have been removed from its feed" in episode and "Try searching for it:" not in episode
    assert "the search box above" in episode
    for path in ("/shows/no-such-show", "/nowhere"):
        assert "episode may have been removed" not in page(client, path, status=404), path
    assert "The show may have been removed" in page(client, "/shows/no-such-show", status=404)


def test_every_page_title_ends_with_podsearch(client):
    """The episode page's tab title was "episode · show", unlike every other page's "... · podsearch"."""
    for path in ("/episodes/" + quote(BEES, safe=""), "/search?q=water", "/shows/field-notes"):
        title = re.search(r"<title>(.*?)</title>", page(client, path)).group(1)
        assert title.endswith(" · podsearch"), (path, title)


def test_the_page_and_the_api_say_why_a_search_finds_nothing_or_little(tmp_path):
    """Over real waitress: a duration filter says how many matches it left out for having no known length, a
    search in a field that finds nothing how many episodes its words find elsewhere (with a link), and a query in a
    script no episode is written in says so (until 6 December 2026 all three were 0 or few with nothing said)."""
    import json
    import urllib.request
    from html import unescape

    from conftest import start_server

    from podsearch.config import load_config
    from podsearch.reindex import import_jsonl

    config = load_config({"data": str(tmp_path / "data")}, environ={})
    lines = [{"id": f"len-{n}", "show": "Lengths", "title": f"Episode {n}", "description": "Talking about beekeeping.",
              "language": "en", **({"duration": 3600} if n < 2 else {})} for n in range(5)]
    (tmp_path / "a.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    import_jsonl(config, tmp_path / "a.jsonl")
    server = start_server(tmp_path / "data")
    try:
        def get(path: str) -> str:
            with urllib.request.urlopen(server.url(path), timeout=30) as resp:
                return resp.read().decode("utf-8")

        api = json.loads(get("/api/v1/search?q=beekeeping&duration_min=30"))
        assert api["total"] == 2 and api["no_duration"] == 3 and api["without_fields"] is None
        page = unescape(get("/search?q=beekeeping&duration_min=30"))
        assert '3 matching episodes were left out: their length is not known.' in page
        assert json.loads(get("/api/v1/search?q=beekeeping"))["no_duration"] is None

        api = json.loads(get("/api/v1/search?q=title%3Abeekeeping"))
        assert api["total"] == 0 and api["without_fields"] == 5
        page = unescape(get("/search?q=title%3Abeekeeping"))
        assert 'id="without-fields"' in page and "5 episodes have them elsewhere" in page
        assert '<a href="/search?q=beekeeping">search <bdi>beekeeping</bdi></a>' in page

        page = unescape(get("/search?q=%E6%9D%B1%E4%BA%AC"))  # 東京
        assert "No episode is in a language written in Han script (東京): the episodes are in English." in page
    finally:
        server.stop()
