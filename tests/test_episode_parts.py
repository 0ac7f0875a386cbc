"""A long transcript is shown in parts (answers.PART_SEGMENTS paragraphs a page, and an API answer), every part
reachable and every moment's link landing on the part that holds it. Until 5 December 2026 the page held every
paragraph: a 15 MB VTT of 300,000 half-second cues made a 66 MB page at 6 s of CPU per GET (docs/reliability.md).

Real parts: a JSON-lines import into a Whoosh index, served by ``podsearch serve`` (waitress) on 127.0.0.1."""

from __future__ import annotations

import json
import re
import urllib.error
import urllib.request
from collections.abc import Iterator

import pytest
from conftest import start_server

from podsearch import answers

PART_SEGMENTS = 2000  # answers.PART_SEGMENTS (named here so that the code before the parts fails, not errs)
TIMED, UNTIMED, SHORT, BACK = "long-timed", "long-untimed", "short-timed", "long-backwards"
N = 2 * PART_SEGMENTS + 500  # three parts, the last of 500


def _word(i: int) -> str:
    return {2300: "zebrafinch", 4400: "quokka"}.get(i, f"word{i % 50}")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator:
    from podsearch.config import load_config
    from podsearch.reindex import import_jsonl

    root = tmp_path_factory.mktemp("parts")
    lines = [
        {"id": TIMED, "show": "Parts", "title": "Long timed", "audio_url": "https://example.org/a.mp3",
         "segments": [{"start": i * 0.5, "end": i * 0.5 + 0.5, "speaker": f"S{i}", "text": f"{_word(i)} heron"}
                      for i in range(N)]},
        {"id": UNTIMED, "show": "Parts", "title": "Long untimed",
         "transcript": "\n\n".join(f"{'pangolin' if i == 2399 else f'word{i % 50}'} egret" for i in range(2500))},
        # times that go back (two recordings joined) and a stretch without times: seconds said before a part
        {"id": BACK, "show": "Parts", "title": "Long backwards", "audio_url": "https://example.org/c.mp3",
         "segments": [{"start": None if 3000 <= i < 3100 else (i % 2600) * 0.5, "text": f"word{i % 50} stork"}
                      for i in range(N)]},
        {"id": SHORT, "show": "Parts", "title": "Short timed", "audio_url": "https://example.org/b.mp3",
         "segments": [{"start": i * 3.0, "text": f"{'axolotl' if i == 40 else _word(i)} ibis"} for i in range(60)]},
    ]
    (root / "eps.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    import_jsonl(load_config({"data": str(root / "data")}, environ={}), root / "eps.jsonl")
    live = start_server(root / "data", "--no-access-log")
    yield live
    live.stop()


def get(server, path: str, status: int = 200) -> str:
    try:
        with urllib.request.urlopen(server.url(path), timeout=30) as resp:
            assert resp.status == status
            return resp.read().decode()
    except urllib.error.HTTPError as exc:
        assert exc.code == status, (path, exc.code)
        return exc.read().decode()


def paragraphs(html: str) -> list[str]:
    return re.findall(r'<p id="([tp][\d-]+)"', html)


def moment_link(server, q: str) -> str:
    html = get(server, f"/search?q={q}")
    links = re.findall(r'class="moment ts" href="([^"]+)"', html)
    assert links, html
    return links[0].replace("&amp;", "&")


def test_a_long_transcript_is_shown_in_parts_with_links_to_every_one(server) -> None:
    assert getattr(answers, "PART_SEGMENTS", None) == PART_SEGMENTS
    first = get(server, f"/episodes/{TIMED}")
    assert len(paragraphs(first)) == PART_SEGMENTS
    assert "Part 1 of 3: paragraphs 1–2,000 of 4,500." in first
    assert f'href="/episodes/{TIMED}?part=2#tr-h" rel="next"' in first
    assert f'href="/episodes/{TIMED}?part=3#tr-h" aria-label="Part 3"' in first
    last = get(server, f"/episodes/{TIMED}?part=3")
    assert len(paragraphs(last)) == 500 and paragraphs(last)[-1] == f"t{int((N - 1) * 0.5)}-{N}"
    assert "Part 3 of 3: paragraphs 4,001–4,500 of 4,500." in last and 'rel="next"' not in last
    # a time link of a later part keeps its part (the paragraph before may be of the same second, in the part before)
    assert 'href="?t=2000&amp;part=3#t2000"' in last
    get(server, f"/episodes/{TIMED}?part=4", 404)


def test_a_moments_link_lands_on_the_part_holding_it(server) -> None:
    """The search's moment links (``?t=1150#t1150``, ``#p2400``) name the part when it is not the first; a time
    alone (the feeds' and watches' links: ``?t=1150``) opens the part of the paragraph playing then."""
    link = moment_link(server, "zebrafinch")
    assert link == f"/episodes/{TIMED}?t=1150&part=2#t1150", link
    html = get(server, link.split("#")[0])
    assert '<p id="t1150" class="current" data-start="1150.0">' in html and "zebrafinch heron" in html
    html = get(server, f"/episodes/{TIMED}?t=1150")
    assert "Part 2 of 3" in html and '<p id="t1150" class="current"' in html
    assert "Part 3 of 3" in get(server, f"/episodes/{TIMED}?t=2200")
    link = moment_link(server, "pangolin")
    assert link == f"/episodes/{UNTIMED}?part=2#p2400", link
    assert '<p id="p2400">' in get(server, link.split("#")[0])


def test_the_search_feeds_link_a_moment_without_a_time_to_its_paragraph(server) -> None:
    """A feed's item links the episode at its best moment: ``?t=1150`` when it has a time; a transcript without
    times was linked ``?t=0``, the top of the page (779 of the site corpus's 1,869 episodes), where the search
    page links the paragraph (``?part=2#p2400``)."""
    for q, page_link in (("pangolin", f"/episodes/{UNTIMED}?part=2#p2400"),
                         ("zebrafinch", f"/episodes/{TIMED}?t=1150&part=2#t1150")):
        assert moment_link(server, q) == page_link
        item = re.search(r"<item>.*?<link>([^<]+)</link>", get(server, f"/search.rss?q={q}"), re.S)
        assert item, q
        assert item.group(1).replace("&amp;", "&") == server.url(page_link if q == "pangolin" else
                                                                 f"/episodes/{TIMED}?t=1150"), q


def test_every_part_stays_searchable(server) -> None:
    assert moment_link(server, "quokka") == f"/episodes/{TIMED}?t=2200&part=3#t2200"


def test_a_short_transcript_is_one_part_and_its_links_are_as_before(server) -> None:
    html = get(server, f"/episodes/{SHORT}?t=120")
    assert len(paragraphs(html)) == 60 and 'class="parts' not in html and "part=" not in html
    assert '<p id="t120" class="current" data-start="120.0"><a class="ts" href="?t=120#t120"' in html
    assert moment_link(server, "axolotl") == f"/episodes/{SHORT}?t=120#t120"


def test_the_api_answers_a_part_of_the_transcript_at_a_time(server) -> None:
    data = json.loads(get(server, f"/api/v1/episodes/{TIMED}"))
    assert len(data["segments"]) == PART_SEGMENTS and data["segments"][0]["text"] == "word0 heron"
    assert (data["segments_total"], data["segments_from"], data["transcript_part"], data["transcript_parts"]) == \
        (N, 0, 1, 3)
    data = json.loads(get(server, f"/api/v1/episodes/{TIMED}?part=3"))
    assert len(data["segments"]) == 500 and data["segments_from"] == 4000
    assert data["segments"][400] == {"text": "quokka heron", "start": 2200.0, "end": 2200.5, "speaker": "S4400"}
    assert json.loads(get(server, f"/api/v1/episodes/{TIMED}?part=4", 404))["error"]["code"] == "not_found"
    short = json.loads(get(server, f"/api/v1/episodes/{SHORT}"))
    assert len(short["segments"]) == 60 and short["transcript_parts"] == 1


def test_a_part_reads_the_text_of_its_own_segments_only(server) -> None:
    """The page and the API read the starts of every segment (for the anchors and the part of ``t``) but the text of
    one part: reading all 300,000 segments of a hostile transcript cost 0.6 s of the 0.85 s a page took after the
    parts came (the API's answer 0.7 s; now 0.2 s and 0.02 s)."""
    from podsearch.config import load_config
    from podsearch.web import create_app
    from podsearch.web.context import EXTENSION

    app = create_app(load_config({"data": str(server.data)}, environ={}), {"TESTING": True})
    client = app.test_client()
    assert client.get(f"/episodes/{TIMED}?part=2").status_code == 200  # (opens this thread's catalog)
    statements: list[str] = []
    app.extensions[EXTENSION].catalog.db.set_trace_callback(statements.append)
    for path in (f"/episodes/{TIMED}?t=1150", f"/api/v1/episodes/{TIMED}?part=3"):
        assert client.get(path).status_code == 200
    texts = [s for s in statements if "SELECT text" in s and "FROM segments" in s]
    assert len(texts) == 2 and all("seq >= " in s for s in texts), texts


def test_a_page_reads_the_times_of_its_own_part_only(server) -> None:
    """The page read the start of every segment for its anchors and the part playing at ``t`` (0.11 s for a
    transcript of 300,000 cues, whichever part was asked): it reads the times of its part (and the one before it),
    and asks SQLite which paragraph plays at ``t`` and which seconds were said before the part. The rows, anchors,
    part and paragraph playing are those read from every start (``ListedTimes``), times that go back included."""
    from conftest import ListedTimes

    from podsearch.config import load_config
    from podsearch.service import Library
    from podsearch.web import create_app
    from podsearch.web.context import EXTENSION
    from podsearch.web.views import LibraryTimes, transcript_rows

    app = create_app(load_config({"data": str(server.data)}, environ={}), {"TESTING": True})
    client = app.test_client()
    assert client.get(f"/episodes/{TIMED}?part=2").status_code == 200  # (opens this thread's catalog)
    statements: list[str] = []
    app.extensions[EXTENSION].catalog.db.set_trace_callback(statements.append)
    for path in (f"/episodes/{TIMED}?t=1150", f"/episodes/{BACK}?part=3", f"/episodes/{BACK}?t=100"):
        assert client.get(path).status_code == 200
    starts = [s for s in statements if re.match(r"\s*SELECT start FROM segments", s)]
    assert starts, statements
    for sql in starts:  # each a part's range at most (and the one before it)
        lo, hi = map(int, re.search(r"seq >= (\d+) AND seq < (\d+)", sql).groups())
        assert hi - lo <= PART_SEGMENTS + 1, sql

    lib = Library(server.data)
    try:
        for episode_id in (TIMED, BACK, UNTIMED, SHORT):
            listed = ListedTimes(lib.catalog.segment_starts(episode_id))
            read = lambda a, b, e=episode_id: lib.segments(e, a, b)  # noqa: E731
            for t in (None, 0, 0.4, 1, 99.7, 1150, 1299.9, 1300, 1500, 2199, 5000):
                for part in (None, 1, 2, 3):
                    if part and part > -(-listed.count() // PART_SEGMENTS):
                        continue
                    want = transcript_rows(listed, t, part, read)
                    got = transcript_rows(LibraryTimes(lib, episode_id), t, part, read)
                    assert [r["anchor"] for r in got[0]] == [r["anchor"] for r in want[0]], (episode_id, t, part)
                    assert got[1:] == want[1:] and got[0] == want[0], (episode_id, t, part)
        rows = [r["anchor"] for r in
                transcript_rows(LibraryTimes(lib, BACK), None, 3, lambda a, b: lib.segments(BACK, a, b))[0]]
        assert len(rows) == len(set(rows)) and any(re.fullmatch(r"t\d+-\d+", a) for a in rows[:10])
    finally:
        lib.close()


def test_similar_to_a_moment_reads_the_text_of_its_two_minutes_only(server) -> None:
    """``/similar/<id>?t=`` read the text of every segment of the episode to keep those of the two minutes around
    ``t``: 0.6 s of CPU for a transcript of 300,000 cues, in a worker no search slot bounds. It reads those minutes'
    text alone, the same text."""
    from podsearch.config import load_config
    from podsearch.service import Library, segments_around
    from podsearch.web import create_app
    from podsearch.web.context import EXTENSION

    app = create_app(load_config({"data": str(server.data)}, environ={}), {"TESTING": True})
    client = app.test_client()
    assert client.get(f"/api/v1/similar/{SHORT}").status_code == 200  # (opens this thread's catalog and the model)
    statements: list[str] = []
    app.extensions[EXTENSION].catalog.db.set_trace_callback(statements.append)
    answer = client.get(f"/api/v1/similar/{TIMED}?t=1150")
    assert answer.status_code == 200 and answer.get_json()["t"] == 1150
    texts = [s for s in statements if re.search(r"SELECT\s+(\w+,\s*)*text\b", s) and "FROM segments" in s]
    assert texts and all("start >= 1090" in s and "start <= 1210" in s for s in texts), texts
    lib = Library(server.data)
    try:
        for t in (0, 30, 1150, 2249.5, 2300, 9999):
            whole = segments_around(lib.catalog.segments(TIMED), t)
            assert lib.catalog.text_between(TIMED, t - 60, t + 60) == whole, t
        assert "zebrafinch heron" in lib.catalog.text_between(TIMED, 1090, 1210)
    finally:
        lib.close()
