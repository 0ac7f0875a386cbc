"""Faults while ingesting: feeds and transcripts served by a misbehaving server on 127.0.0.1 (tests/faultserver.py).

One reindex reads the three sample feeds (served over HTTP) next to one feed per fault and one feed whose
transcripts misbehave. Every fault ends in bounded time, is reported with its feed (or episode), leaves the
good feeds exactly as a run without faults stores them, and leaves the catalog intact. When the faults go
away, the next reindex picks up what was missed.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from faultserver import Drip, Endless, FaultServer, GzipBomb, RedirectLoop, Silent, Status, Truncated, serve_faults
from soak.state import catalog_dump, integrity

from podsearch.catalog import Catalog
from podsearch.config import load_config
from podsearch.reindex import reindex
from podsearch.service import Library

SAMPLE = Path(__file__).resolve().parents[1] / "src" / "podsearch" / "sample"
GOOD = ["feeds/field-notes.xml", "feeds/long-table.xml", "feeds/signal-path.xml"]
LIMITS = {"fetch_timeout": 1.0, "max_feed_bytes": 300_000, "max_transcript_bytes": 100_000, "allow_private_hosts": True,
          "fetch_workers": 4}
# Each run of the faulty feeds must end within this (drip and silence cost fetch_timeout each, 500s retry twice).
BOUND_SECONDS = 40.0

SMALL_FEED = b"""<?xml version="1.0" encoding="UTF-8"?>
<rss version="2.0"><channel><title>Would Be Fine</title><link>https://example.org/</link>
<item><title>One</title><guid>fine-1</guid><description>hello</description></item></channel></rss>"""

FEED_FAULTS = {
    "/bad/500.xml": Status(500),
    "/bad/404.xml": Status(404, b"not here"),
    "/bad/410.xml": Status(410, b"gone for good"),
    "/bad/drip.xml": Drip(SMALL_FEED, every=1.0),
    "/bad/silent.xml": Silent(),
    "/bad/endless.xml": Endless(),
    "/bad/loop-a.xml": RedirectLoop("/bad/loop-b.xml"),
    "/bad/loop-b.xml": RedirectLoop("/bad/loop-a.xml"),
    "/bad/self.xml": RedirectLoop(),
    "/bad/bomb.xml": GzipBomb(),
    "/bad/cut.xml": Truncated(SMALL_FEED, keep=60, content_type="application/rss+xml"),
}
# What the report must say about each (a fragment of the feed's error message).
FEED_ERRORS = {
    "/bad/500.xml": "500", "/bad/404.xml": "404", "/bad/410.xml": "410", "/bad/drip.xml": "",
    "/bad/silent.xml": "", "/bad/endless.xml": "300000", "/bad/loop-a.xml": "redirects", "/bad/self.xml": "redirects",
    "/bad/bomb.xml": "300000", "/bad/cut.xml": "",
}

VTT = "WEBVTT\n\n" + "".join(
    f"00:00:{i:02d}.000 --> 00:00:{i + 1:02d}.000\n<v Ana>Cue {i} about herons wading in the marsh.\n\n" for i in range(40))
SJIS_VTT = "WEBVTT\n\n00:00:01.000 --> 00:00:02.000\n" + "こんにちは、サギの話をしましょう。沼地の鳥です。" * 20
ACCENTED = "Café déjà vu: naïve façades, Ærø and Œuvre — 10 € ‘quoted’"


def transcript_feed(items: dict[str, tuple[str, str]]) -> bytes:
    """A feed with one episode per transcript link: {guid: (url, type)}."""
    body = "".join(
        f'<item><title>Episode {guid}</title><guid isPermaLink="false">{guid}</guid>'
        f'<description>About {guid}.</description><podcast:transcript url="{url}" type="{kind}"/></item>'
        for guid, (url, kind) in items.items())
    return (f'<?xml version="1.0" encoding="UTF-8"?><rss version="2.0" xmlns:podcast="https://podcastindex.org/namespace/1.0">'
            f'<channel><title>Transcript Trouble</title><link>https://example.org/tt</link>{body}</channel></rss>').encode()


TRANSCRIPTS = {
    # guid: (path, type in the feed, body or fault, expected: "ok" / "failed" / "either", text that must be read)
    "huge": ("/tt/huge.vtt", "text/vtt", VTT.encode() * 40, "failed", ""),
    "cut-http": ("/tt/cut.vtt", "text/vtt", Truncated(VTT.encode(), keep=700), "failed", ""),
    "cut-json": ("/tt/cut.json", "application/json",
                 b'{"version": "1.0.0", "segments": [{"speaker": "Ana", "startTime": 0, "body": "herons', "failed", ""),
    "cut-vtt": ("/tt/cut-cue.vtt", "text/vtt", VTT.encode()[:1500] + b"\n00:01:00.000 --> 00:0", "ok", "Cue 1 about herons"),
    "html-as-vtt": ("/tt/page.vtt", "text/vtt",
                    b"<!doctype html><html><head><title>Not found</title><script>var x=1;</script></head>"
                    b"<body><h1>Page not found</h1><p>Try the <a href='/'>home page</a>.</p></body></html>", "either", ""),
    "utf16": ("/tt/utf16.vtt", "text/vtt", ("WEBVTT\n\n00:00:01.000 --> 00:00:02.000\n" + ACCENTED + "\n").encode("utf-16"),
              "ok", ACCENTED),
    "latin1": ("/tt/latin1.srt", "application/srt",
               ("1\n00:00:01,000 --> 00:00:02,000\nCafé déjà vu: naïve façades et Ærø, c'est très joli à voir.\n\n"
                "2\n00:00:03,000 --> 00:00:04,000\nLes élèves étaient là, près du lac, où l'on dîne.\n").encode("latin-1"),
               "ok", "Café déjà vu: naïve façades"),
    "cp1252": ("/tt/cp1252.txt", "text/plain",
               ("Ana: \u201cSmart quotes\u201d \u2014 and the \u20ac sign, na\u00efve caf\u00e9 talk. " * 30).encode("cp1252"),
               "ok", "\u201cSmart quotes\u201d \u2014 and the \u20ac sign"),
    "shift-jis": ("/tt/sjis.vtt", "text/vtt", (SJIS_VTT + "\n").encode("shift_jis"), "ok", "サギの話をしましょう"),
    "gb18030-declared": ("/tt/gb.txt", "text/plain", "主持人：今天我们谈谈苍鹭。".encode("gb18030"), "ok", "今天我们谈谈苍鹭"),
    "t500": ("/tt/500.vtt", "text/vtt", Status(500), "failed", ""),
    "t404": ("/tt/404.vtt", "text/vtt", Status(404), "failed", ""),
    "tdrip": ("/tt/drip.vtt", "text/vtt", Drip(VTT.encode(), every=1.0), "failed", ""),
    "tbomb": ("/tt/bomb.vtt", "text/vtt", GzipBomb(content_type="text/vtt"), "failed", ""),
    "fine": ("/tt/fine.vtt", "text/vtt", VTT.encode(), "ok", "Cue 39 about herons"),
}


def install(server: FaultServer) -> list[str]:
    """Set up the faults; returns the faulty feed URLs (the transcript feed last)."""
    server.faults.update(FEED_FAULTS)
    for _guid, (path, _kind, body, _expect, _text) in TRANSCRIPTS.items():
        if isinstance(body, bytes):
            server.files[path] = body
            server.content_types[path] = "text/vtt" if path.endswith(".vtt") else "application/octet-stream"
        else:
            server.faults[path] = body
    server.content_types["/tt/gb.txt"] = "text/plain; charset=GB18030"  # only the server says how to read it
    server.files["/tt/feed.xml"] = transcript_feed({g: (v[0], v[1]) for g, v in TRANSCRIPTS.items()})
    bad = [server.base + p for p in FEED_FAULTS if p != "/bad/loop-b.xml"]
    return bad + [server.base + "/tt/feed.xml"]


def config(data: Path, feeds: list[str]):
    return load_config({"data": str(data), "feeds": feeds, **LIMITS}, environ={})


@pytest.fixture(scope="module")
def server():
    with serve_faults(SAMPLE) as srv:
        yield srv


@pytest.fixture(scope="module")
def reference(server: FaultServer, tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[tuple]]:
    """What the good feeds store when nothing misbehaves."""
    data = tmp_path_factory.mktemp("reference") / "data"
    report = reindex(config(data, [server.url(g) for g in GOOD]))
    assert not report.failed, report.errors
    return catalog_dump(data, {s[0] for s in catalog_dump(data)["shows"]})


@pytest.fixture(scope="module")
def faulty_run(server: FaultServer, tmp_path_factory: pytest.TempPathFactory):
    data = tmp_path_factory.mktemp("faulty") / "data"
    bad = install(server)
    good = [server.url(g) for g in GOOD]
    feeds = [good[0], *bad[:5], good[1], *bad[5:], good[2]]  # good feeds before, between and after the faults
    started = time.monotonic()
    report = reindex(config(data, feeds))
    return data, report, time.monotonic() - started, bad


def test_every_fault_ends_in_bounded_time(faulty_run) -> None:
    _, report, seconds, _ = faulty_run
    assert seconds < BOUND_SECONDS, f"the faulty reindex took {seconds:.1f} s"
    assert report.failed and report.exit_code == 1


def test_each_faulty_feed_is_reported_with_its_reason(faulty_run, server: FaultServer) -> None:
    _, report, _, bad = faulty_run
    assert report.feeds == 3 + len(bad)
    assert report.feeds_failed == len(FEED_ERRORS)
    for path, fragment in FEED_ERRORS.items():
        lines = [e for e in report.errors if e.startswith(f"feed {server.base}{path}:")]
        assert len(lines) == 1, (path, report.errors)
        assert fragment in lines[0], lines[0]


def test_the_catalog_records_each_failure_and_stays_intact(faulty_run, server: FaultServer) -> None:
    data, _, _, _ = faulty_run
    assert integrity(data) == "ok"
    with Catalog.in_dir(data) as cat:
        states = {f["source"]: f for f in cat.feeds()}
    for path in FEED_ERRORS:
        state = states[server.base + path]
        assert state["last_status"] == "failed" and state["last_error"], state
        assert not state["show_id"]


def test_good_feeds_are_stored_exactly_as_without_faults(faulty_run, reference) -> None:
    data, _, _, _ = faulty_run
    sample_shows = {s[0] for s in reference["shows"]}
    assert catalog_dump(data, sample_shows) == reference


def test_misbehaving_transcripts_are_reported_per_episode_and_the_rest_is_read(faulty_run) -> None:
    data, report, _, _ = faulty_run
    with Catalog.in_dir(data) as cat:
        show_id = cat.show_id_for_source(next(s["source"] for s in cat.feeds() if s["source"].endswith("/tt/feed.xml")))
        assert show_id, "the transcript feed itself must be stored"
        episodes = {ep.id: ep for ep in cat.episodes(show_id, with_segments=True)}
    assert set(episodes) == set(TRANSCRIPTS)  # no episode is lost because its transcript misbehaved
    for guid, (_path, _kind, _body, expect, text) in TRANSCRIPTS.items():
        ep = episodes[guid]
        reported = [e for e in report.errors if f"episode {guid!r}" in e]
        joined = " ".join(s.text for s in ep.segments)
        if expect == "failed":
            assert not ep.segments and len(reported) == 1, (guid, reported, joined[:200])
        elif expect == "ok":
            assert ep.segments and not reported, (guid, reported)
            assert text in joined, (guid, joined[:300])
        else:  # read or reported, never garbage
            assert bool(ep.segments) != bool(reported), (guid, reported)
        assert "<html" not in joined.lower() and "<script" not in joined.lower(), guid
        assert "\ufffd" not in joined, (guid, joined[:200])


def test_the_index_and_model_were_built_from_what_was_read(faulty_run) -> None:
    data, report, _, _ = faulty_run
    library = Library(data)
    with Catalog.in_dir(data) as cat:
        assert library.engine.doc_count() == cat.counts()["episodes"]
    assert report.model == "refitted"
    assert library.similar("fine", 3).similar


def test_when_the_faults_go_away_the_next_reindex_picks_up_what_was_missed(faulty_run, server: FaultServer,
                                                                            tmp_path: Path) -> None:
    data, _, _, bad = faulty_run
    fixed = server.base + "/bad/500.xml"
    fault = server.faults.pop("/bad/500.xml")
    tfault = server.faults.pop("/tt/500.vtt")
    server.files["/bad/500.xml"] = SMALL_FEED
    server.files["/tt/500.vtt"] = VTT.encode()
    try:
        report = reindex(config(data, []), sources=[fixed, server.base + "/tt/feed.xml"])
    finally:
        server.faults["/bad/500.xml"], server.faults["/tt/500.vtt"] = fault, tfault
        del server.files["/bad/500.xml"], server.files["/tt/500.vtt"]
    assert report.feeds_failed == 0 and report.feeds_unchanged == 0  # a feed with a failed transcript is read again
    with Catalog.in_dir(data) as cat:
        assert cat.feed_state(fixed)["last_status"] == "ok"
        assert cat.episode("fine-1") is not None
        assert "Cue 3 about herons" in cat.episode("t500").transcript_text
    assert integrity(data) == "ok"
