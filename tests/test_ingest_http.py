"""Ingest over real HTTP (tests/feedserver.py on 127.0.0.1): identity across runs, conditional requests,
fallback between transcript formats, chapters, the loopback guard, and the exit status of `podsearch reindex`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from feedserver import FeedServer, serve

from podsearch.catalog import Catalog
from podsearch.cli import main
from podsearch.config import load_config
from podsearch.reindex import ingest

VTT = """WEBVTT

00:00:01.000 --> 00:00:04.000
<v Ana Host>Welcome to episode {n}: {topic}.

00:00:04.500 --> 00:00:09.000
<v Bo Guest>Herons wait very still in shallow water.
"""
TOPICS = {1: "grey herons hunting frogs at dawn", 2: "egrets nesting in tall reed beds", 3: "bitterns booming across the marsh",
          4: "storks migrating south over the Alps"}


def item(n: int, extra: str = "", title: str | None = None) -> str:
    return f"""<item><title>{title or f"Episode {n}"}</title><guid isPermaLink="false">ep-{n}</guid>
  <pubDate>Mon, 0{n} Jan 2024 10:00:00 GMT</pubDate>
  <podcast:transcript url="t/ep-{n}.vtt" type="text/vtt"/>{extra}</item>"""


def feed(items: list[str], title: str = "Heron Hour") -> bytes:
    return (f"""<?xml version="1.0"?><rss version="2.0" xmlns:podcast="https://podcastindex.org/namespace/1.0">
<channel><title>{title}</title><link>https://example.org/</link>
<podcast:person role="host">Ana Host</podcast:person>
{"".join(items)}</channel></rss>""").encode()


@pytest.fixture
def site(tmp_path: Path) -> Path:
    root = tmp_path / "www"
    (root / "t").mkdir(parents=True)
    for n in range(1, 5):
        (root / "t" / f"ep-{n}.vtt").write_text(VTT.format(n=n, topic=TOPICS[n]), encoding="utf-8")
    (root / "t" / "broken.json").write_text("{not json", encoding="utf-8")
    (root / "t" / "blank.txt").write_text("\n\n", encoding="utf-8")
    (root / "ch.json").write_text(json.dumps({"version": "1.2.0", "chapters": [
        {"startTime": 60, "title": "Wading"}, {"startTime": 0, "title": "Intro"}, {"startTime": 5, "title": "x", "toc": False}]}))
    (root / "feed.xml").write_bytes(feed([
        item(1, '<podcast:transcript url="t/broken.json" type="application/json"/>'
                '<podcast:chapters url="ch.json" type="application/json+chapters"/>'),
        item(2), item(3)]))
    return root


@pytest.fixture
def server(site: Path):
    with serve(site) as srv:
        yield srv


def config(tmp_path: Path, **settings):
    return load_config({"data": str(tmp_path / "data"), **settings}, environ={})


def run(cfg, sources: list[str], **kw):
    with Catalog.in_dir(cfg.data_dir) as cat:
        return ingest(cfg, cat, sources, **kw)


def dump(data_dir: Path) -> dict:
    """Everything the catalog holds about shows, episodes and segments (not fetch times)."""
    with Catalog.in_dir(data_dir) as cat:
        q = cat.db.execute
        return {
            "shows": [tuple(r) for r in q("SELECT * FROM shows ORDER BY id")],
            "episodes": [tuple(r) for r in q("SELECT * FROM episodes ORDER BY id")],
            "segments": [tuple(r) for r in q("SELECT * FROM segments ORDER BY episode_id, seq")],
        }


def test_fields_transcripts_and_chapters_over_http(tmp_path, server):
    cfg = config(tmp_path, allow_private_hosts=True)
    report = run(cfg, [server.url("feed.xml")])
    assert (report.new, report.transcripts_fetched, report.transcripts_failed, report.errors) == (3, 3, 0, [])
    with Catalog.in_dir(cfg.data_dir) as cat:
        ep = cat.episode("ep-1")
    # JSON is richer than VTT but broken, so the VTT was taken instead.
    assert ep.transcript_source == server.url("t/ep-1.vtt")
    assert [(s.start, s.end, s.speaker) for s in ep.segments] == [(1.0, 4.0, "Ana Host"), (4.5, 9.0, "Bo Guest")]
    assert [(c.start, c.title) for c in ep.chapters] == [(0, "Intro"), (60, "Wading")]
    assert [p.name for p in ep.persons] == ["Ana Host"]


def test_a_guid_that_is_no_url_is_no_link(tmp_path, server, site):
    """<guid>kitchen-6</guid> (isPermaLink true by default) with no <link> became the link http://host/kitchen-6,
    resolved against the feed's URL: shown on the episode's page and sent to webhooks. Only a URL guid is a link."""
    (site / "guids.xml").write_bytes(feed([
        "<item><title>Six</title><guid>kitchen-6</guid></item>",
        "<item><title>Seven</title><guid>https://example.org/ep/7</guid></item>",
        '<item><title>Eight</title><guid>kitchen-8</guid><link>https://example.org/ep/8</link></item>']))
    cfg = config(tmp_path, allow_private_hosts=True)
    report = run(cfg, [server.url("guids.xml")])
    assert report.new == 3, report.errors
    with Catalog.in_dir(cfg.data_dir) as cat:
        links = {ep_id: cat.episode(ep_id).link for ep_id in ("kitchen-6", "https://example.org/ep/7", "kitchen-8")}
    assert links == {"kitchen-6": "", "https://example.org/ep/7": "https://example.org/ep/7",
                     "kitchen-8": "https://example.org/ep/8"}


def test_identity_across_runs(tmp_path, server, site):
    cfg = config(tmp_path, allow_private_hosts=True)
    url = server.url("feed.xml")
    assert run(cfg, [url]).new == 3
    before = dump(cfg.data_dir)

    # Unchanged: conditional requests for the feed and each stored transcript, all answered 304; nothing changes.
    server.clear_log()
    report = run(cfg, [url])
    assert sorted((r.path, r.status, r.conditional) for r in server.log()) == [
        ("/feed.xml", 304, True), ("/t/ep-1.vtt", 304, True), ("/t/ep-2.vtt", 304, True), ("/t/ep-3.vtt", 304, True)]
    assert (report.feeds_unchanged, report.unchanged, report.new, report.updated, report.gone) == (1, 3, 0, 0, 0)
    assert report.transcripts_not_modified == 3 and report.transcripts_fetched == 0
    assert not report.failed and dump(cfg.data_dir) == before

    # The same bytes again from a server without validators: read in full, still nothing changes.
    server.conditional = False
    server.clear_log()
    report = run(cfg, [url])
    # The transcripts are asked for again (the server ignores the validators), the chapters are not.
    assert sorted(r.path for r in server.log()) == ["/feed.xml", "/t/ep-1.vtt", "/t/ep-2.vtt", "/t/ep-3.vtt"]
    assert (report.unchanged, report.new, report.updated) == (3, 0, 0) and dump(cfg.data_dir) == before
    server.conditional = True

    # Episode 2 retitled, episode 3 left the feed, episode 4 is new.
    server.files["/feed.xml"] = feed([item(1, '<podcast:transcript url="t/broken.json" type="application/json"/>'
                                              '<podcast:chapters url="ch.json" type="application/json+chapters"/>'),
                                      item(2, title="Episode 2 (remastered)"), item(4)])
    report = run(cfg, [url])
    assert (report.new, report.updated, report.unchanged, report.gone) == (1, 1, 1, 1)
    with Catalog.in_dir(cfg.data_dir) as cat:
        assert cat.episode("ep-2").title == "Episode 2 (remastered)"
        kept = cat.db.execute("SELECT gone FROM episodes WHERE id = 'ep-3'").fetchone()
        assert kept["gone"] == 1 and cat.episode("ep-3").segments  # kept, marked, transcript intact
    # Episode 3 comes back: no longer gone. Then it leaves again with --prune: deleted.
    server.files.pop("/feed.xml")
    run(cfg, [url])
    with Catalog.in_dir(cfg.data_dir) as cat:
        assert cat.db.execute("SELECT gone FROM episodes WHERE id = 'ep-3'").fetchone()["gone"] == 0
    server.files["/feed.xml"] = feed([item(1), item(2)])
    assert run(cfg, [url], prune=True).gone == 2  # ep-3, and ep-4 that left when the old feed came back
    with Catalog.in_dir(cfg.data_dir) as cat:
        assert cat.episode("ep-3") is None and cat.episode("ep-4") is None and cat.episode("ep-1") is not None
    # Marked gone by a run without --prune, then pruned while the feed is unchanged (304): deleted too. They were
    # kept until the feed changed again (only a feed read in full was pruned).
    server.files["/feed.xml"] = feed([item(1)])
    assert run(cfg, [url]).gone == 1
    report = run(cfg, [url], prune=True)
    assert report.feeds_unchanged == 1 and report.gone == 1
    with Catalog.in_dir(cfg.data_dir) as cat:
        assert cat.episode("ep-2") is None and cat.episode("ep-1") is not None


PLAIN = ("Ana Host: 00:00:05\n\nWe spent OP\\_RETURN bytes on herons.\n\nAna Host: 00:01:10\n\nEgrets wade in the reeds.\n"
         "\nFriday: the egrets fly south.\n")
# What the parser gave for PLAIN until 6 December 2026: the times were paragraphs, the escape stayed, "Friday" spoke.
PLAIN_OLD = [("00:00:05", None, "Ana Host"), ("We spent OP\\_RETURN bytes on herons.", None, ""),
             ("00:01:10", None, "Ana Host"), ("Egrets wade in the reeds.", None, ""),
             ("the egrets fly south.", None, "Friday")]
PLAIN_NOW = [("We spent OP_RETURN bytes on herons.", 5.0, "Ana Host"), ("Egrets wade in the reeds.", 70.0, "Ana Host"),
             ("Friday: the egrets fly south.", 70.0, "Ana Host")]


def _as_an_older_podsearch_left_it(data_dir: Path, episode_id: str) -> None:
    """The catalog as a podsearch before schema 8 wrote it: no parser versions, and ``episode_id``'s transcript as
    the parser of then read it (PLAIN_OLD)."""
    import sqlite3
    from dataclasses import replace

    from podsearch.episodes import Segment

    with Catalog.in_dir(data_dir) as cat:
        ep = cat.episode(episode_id)
        cat.upsert_episode(replace(ep, segments=[Segment(t, start=s, speaker=p) for t, s, p in PLAIN_OLD]))
    db = sqlite3.connect(data_dir / Catalog.FILENAME)
    if "parser" in {r[1] for r in db.execute("PRAGMA table_info(transcripts)")}:
        db.execute("ALTER TABLE transcripts DROP COLUMN parser")
    db.execute("UPDATE meta SET value = '7' WHERE key = 'schema_version'")
    db.commit()
    db.close()


def _segments(data_dir: Path, episode_id: str) -> list[tuple]:
    with Catalog.in_dir(data_dir) as cat:
        return [(s.text, s.start, s.speaker) for s in cat.episode(episode_id).segments]


def test_a_transcript_parsed_by_an_older_parser_is_read_again_once(tmp_path, server, site):
    """A parser fix reaches the transcripts already stored: a catalog written before parser versions were kept
    (schema 7) reads each stored transcript once in full, without its validators, and parses it again; then back to
    conditional requests (304). Until 6 December 2026 they were asked conditionally, answered 304 and kept as the
    old parser read them. A transcript of another (older) version is read again alone; episode ids stay."""
    from podsearch.ingest.transcripts import PARSER_VERSION

    (site / "t" / "plain.txt").write_text(PLAIN, encoding="utf-8")
    server.files["/feed.xml"] = feed([item(1), item(2), item(3).replace(
        'url="t/ep-3.vtt" type="text/vtt"', 'url="t/plain.txt" type="text/plain"')])
    cfg = config(tmp_path, allow_private_hosts=True)
    url = server.url("feed.xml")
    assert run(cfg, [url]).new == 3
    assert _segments(cfg.data_dir, "ep-3") == PLAIN_NOW
    with Catalog.in_dir(cfg.data_dir) as cat:
        ids = sorted(e.id for e in cat.episodes())
        assert {cat.transcript_state(server.url(f"t/{n}"))["parser"] for n in ("ep-1.vtt", "plain.txt")} == {
            PARSER_VERSION}

    _as_an_older_podsearch_left_it(cfg.data_dir, "ep-3")
    assert _segments(cfg.data_dir, "ep-3") == PLAIN_OLD
    server.clear_log()
    report = run(cfg, [url])
    # The feed is asked conditionally (304); every stored transcript in full, without validators, once.
    assert sorted((r.path, r.status, r.conditional) for r in server.log()) == [
        ("/feed.xml", 304, True), ("/t/ep-1.vtt", 200, False), ("/t/ep-2.vtt", 200, False),
        ("/t/plain.txt", 200, False)]
    assert (report.transcripts_reparsed, report.transcripts_fetched, report.transcripts_not_modified) == (3, 3, 0)
    assert (report.updated, report.unchanged, report.new) == (1, 2, 0) and not report.failed, report.errors
    assert any("3 stored transcripts were read again" in n and f"version {PARSER_VERSION} now" in n
               for n in report.notes)
    assert _segments(cfg.data_dir, "ep-3") == PLAIN_NOW
    with Catalog.in_dir(cfg.data_dir) as cat:
        assert cat.schema_version() == 8 and sorted(e.id for e in cat.episodes()) == ids
        assert [r[0] for r in cat.db.execute("SELECT parser FROM transcripts")] == [PARSER_VERSION] * 3
        # One transcript parsed by an older version than this one (a later bump): read again alone.
        cat.db.execute("UPDATE transcripts SET parser = ? WHERE url = ?", (PARSER_VERSION - 1, server.url("t/ep-2.vtt")))

    server.clear_log()
    report = run(cfg, [url])
    assert sorted((r.path, r.status, r.conditional) for r in server.log()) == [
        ("/feed.xml", 304, True), ("/t/ep-1.vtt", 304, True), ("/t/ep-2.vtt", 200, False),
        ("/t/plain.txt", 304, True)]
    assert (report.transcripts_reparsed, report.transcripts_not_modified, report.unchanged) == (1, 2, 3)

    # Then conditional again, every one: nothing is read twice for a parser.
    server.clear_log()
    report = run(cfg, [url])
    assert sorted((r.path, r.status, r.conditional) for r in server.log()) == [
        ("/feed.xml", 304, True), ("/t/ep-1.vtt", 304, True), ("/t/ep-2.vtt", 304, True),
        ("/t/plain.txt", 304, True)]
    assert (report.transcripts_reparsed, report.transcripts_not_modified) == (0, 3) and not report.notes
    assert _segments(cfg.data_dir, "ep-3") == PLAIN_NOW


def test_a_transcript_without_validators_is_read_again_for_a_new_parser(tmp_path, server, site):
    """A transcript whose server sends no validators is not asked again (no cheap way to), but one parsed by an
    older parser is read once more; and a changed feed's episodes (plan, not plan_rechecks) are read again too."""
    (site / "t" / "plain.txt").write_text(PLAIN, encoding="utf-8")
    server.files["/feed.xml"] = feed([item(1).replace('url="t/ep-1.vtt" type="text/vtt"',
                                                      'url="t/plain.txt" type="text/plain"')])
    server.conditional = False
    cfg = config(tmp_path, allow_private_hosts=True)
    url = server.url("feed.xml")
    assert run(cfg, [url]).new == 1
    server.clear_log()
    run(cfg, [url])
    assert [r.path for r in server.log()] == ["/feed.xml"]  # the transcript is not asked again

    _as_an_older_podsearch_left_it(cfg.data_dir, "ep-1")
    server.clear_log()
    report = run(cfg, [url])
    assert sorted(r.path for r in server.log()) == ["/feed.xml", "/t/plain.txt"]
    assert _segments(cfg.data_dir, "ep-1") == PLAIN_NOW and (report.transcripts_reparsed, report.updated) == (1, 1)
    server.clear_log()
    assert run(cfg, [url]).transcripts_reparsed == 0 and [r.path for r in server.log()] == ["/feed.xml"]


def test_a_transcript_not_read_again_keeps_its_old_parse_and_version_until_it_is(tmp_path, server, site):
    """Reading a transcript again for a new parser that fails (here a 404) keeps the stored segments and their old
    version (a warning): the next run reads it again."""
    (site / "t" / "plain.txt").write_text(PLAIN, encoding="utf-8")
    server.files["/feed.xml"] = feed([item(1).replace('url="t/ep-1.vtt" type="text/vtt"',
                                                      'url="t/plain.txt" type="text/plain"')])
    cfg = config(tmp_path, allow_private_hosts=True)
    url = server.url("feed.xml")
    assert run(cfg, [url]).new == 1
    _as_an_older_podsearch_left_it(cfg.data_dir, "ep-1")
    server.missing.add("/t/plain.txt")
    report = run(cfg, [url])
    assert _segments(cfg.data_dir, "ep-1") == PLAIN_OLD and report.transcripts_reparsed == 0
    assert any("the stored transcript was kept" in w and "404" in w for w in report.warnings), report.warnings
    with Catalog.in_dir(cfg.data_dir) as cat:
        assert cat.transcript_state(server.url("t/plain.txt"))["parser"] is None
    server.missing.clear()
    server.clear_log()
    report = run(cfg, [url])
    assert [(r.path, r.conditional) for r in server.log() if r.path.startswith("/t/")] == [("/t/plain.txt", False)]
    assert _segments(cfg.data_dir, "ep-1") == PLAIN_NOW and report.transcripts_reparsed == 1


def test_a_transcript_the_parsers_refuse_keeps_its_segments_and_is_not_read_again_until_it_changes(tmp_path, server,
                                                                                                   site):
    """A stored transcript read again (for a new parser, or edited at its source) that the parsers refuse keeps its
    segments, is said once, and is then asked for conditionally (304): until 6 December 2026 its old validators and
    version stayed, so every run read it in full and refused it again, with the same warning."""
    server.files["/feed.xml"] = feed([item(1), item(2)])
    cfg = config(tmp_path, allow_private_hosts=True)
    url = server.url("feed.xml")
    assert run(cfg, [url]).new == 2
    kept = _segments(cfg.data_dir, "ep-2")
    (site / "t" / "ep-2.vtt").write_bytes(b"%PDF-1.4 not a transcript")  # edited into something else
    for reparse in (False, True):
        if reparse:  # the same bytes, stored by an older parser: read in full once for the new one
            from podsearch.ingest.transcripts import PARSER_VERSION
            with Catalog.in_dir(cfg.data_dir) as cat:
                cat.db.execute("UPDATE transcripts SET parser = ? WHERE url = ?",
                               (PARSER_VERSION - 1, server.url("t/ep-2.vtt")))
        server.clear_log()
        report = run(cfg, [url])
        assert [(r.path, r.status) for r in server.log() if r.path == "/t/ep-2.vtt"] == [("/t/ep-2.vtt", 200)]
        assert any("the stored transcript was kept" in w and "not a transcript" in w for w in report.warnings)
        assert _segments(cfg.data_dir, "ep-2") == kept and not report.failed and report.transcripts_reparsed == 0
        server.clear_log()
        report = run(cfg, [url])
        assert sorted((r.path, r.status, r.conditional) for r in server.log() if r.path.startswith("/t/")) == [
            ("/t/ep-1.vtt", 304, True), ("/t/ep-2.vtt", 304, True)]
        assert not report.warnings and _segments(cfg.data_dir, "ep-2") == kept


def test_a_transcript_two_shows_link_is_parsed_again_for_both(tmp_path, server, site):
    """The catalog keeps a transcript's version by its URL: two shows' episodes that link one transcript are both
    parsed again in the run that reads it for a new parser (the second show's was asked conditionally after the
    first's stored the new version, answered 304, and kept the old parse), then both asked conditionally."""
    (site / "t" / "plain.txt").write_text(PLAIN, encoding="utf-8")
    plain = 'url="t/plain.txt" type="text/plain"'
    server.files["/feed.xml"] = feed([item(1).replace('url="t/ep-1.vtt" type="text/vtt"', plain)])
    server.files["/other.xml"] = feed([item(4).replace('url="t/ep-4.vtt" type="text/vtt"', plain)], title="Other Show")
    cfg = config(tmp_path, allow_private_hosts=True)
    urls = [server.url("feed.xml"), server.url("other.xml")]
    assert run(cfg, urls).new == 2
    for episode_id in ("ep-1", "ep-4"):
        _as_an_older_podsearch_left_it(cfg.data_dir, episode_id)
    server.clear_log()
    report = run(cfg, urls)
    assert _segments(cfg.data_dir, "ep-1") == _segments(cfg.data_dir, "ep-4") == PLAIN_NOW
    assert sorted((r.path, r.status, r.conditional) for r in server.log() if r.path.startswith("/t/")) == [
        ("/t/plain.txt", 200, False)] * 2
    assert (report.transcripts_reparsed, report.updated) == (2, 2)
    server.clear_log()
    report = run(cfg, urls)
    assert sorted((r.path, r.status, r.conditional) for r in server.log() if r.path.startswith("/t/")) == [
        ("/t/plain.txt", 304, True)] * 2
    assert report.transcripts_reparsed == 0


def test_a_local_transcript_parsed_by_an_older_parser_is_read_again_once(tmp_path, runner):
    """A local feed's transcript (a path beside it) is read again for a new parser as one over HTTP is (its
    modification time did not change), then checked by its modification time again; `podsearch reindex` says how
    many were read again for a new parser."""
    folder = tmp_path / "show"
    folder.mkdir()
    (folder / "plain.txt").write_text(PLAIN, encoding="utf-8")
    (folder / "feed.xml").write_bytes(feed([item(1).replace('url="t/ep-1.vtt" type="text/vtt"',
                                                            'url="plain.txt" type="text/plain"')]))
    cfg = config(tmp_path)
    source = str(folder / "feed.xml")
    assert run(cfg, [source]).new == 1
    _as_an_older_podsearch_left_it(cfg.data_dir, "ep-1")
    report = run(cfg, [source])
    assert _segments(cfg.data_dir, "ep-1") == PLAIN_NOW
    assert (report.transcripts_reparsed, report.updated, report.transcripts_not_modified) == (1, 1, 0)
    report = run(cfg, [source])
    assert (report.transcripts_reparsed, report.updated, report.transcripts_not_modified) == (0, 0, 1)

    _as_an_older_podsearch_left_it(cfg.data_dir, "ep-1")
    toml = _toml(tmp_path / "podsearch.toml", [source])
    out = runner.invoke(main, ["--data", str(cfg.data_dir), "--config", str(toml), "reindex"])
    assert out.exit_code == 0, out.output
    assert "transcripts: 1 fetched (1 read again for a new parser), 0 not modified" in out.output
    assert "note: 1 stored transcript was read again in full and parsed again" in out.output
    out = runner.invoke(main, ["--data", str(cfg.data_dir), "--config", str(toml), "reindex"])
    assert "transcripts: 0 fetched, 1 not modified" in out.output and "read again" not in out.output


def test_loopback_transcript_refused_by_default(tmp_path, server):
    cfg = config(tmp_path)  # default settings: URLs inside feeds may not reach private or loopback addresses
    report = run(cfg, [server.url("feed.xml")])
    assert report.feeds_failed == 0 and report.new == 3  # the operator's feed URL is trusted
    assert report.transcripts_failed == 3 and report.failed and report.exit_code == 1
    assert report.errors and all("loopback" in e and "refused" in e for e in report.errors)
    assert "t/ep-2.vtt" in next(e for e in report.errors if "'ep-2'" in e)
    assert not [r for r in server.log() if r.path.startswith("/t/")]  # not a single request was sent


def test_file_links_and_blank_transcripts(tmp_path, server, site):
    secret = tmp_path / "secret.txt"
    secret.write_text("Speaker: do not read me\n", encoding="utf-8")
    server.files["/feed.xml"] = feed([
        item(1).replace('url="t/ep-1.vtt" type="text/vtt"', f'url="{secret.as_uri()}" type="text/plain"'),
        item(2).replace('url="t/ep-2.vtt" type="text/vtt"', 'url="t/blank.txt" type="text/plain"')])
    cfg = config(tmp_path, allow_private_hosts=True)
    report = run(cfg, [server.url("feed.xml")])
    assert report.new == 2 and report.transcripts_failed == 1 and report.transcripts_empty == 1
    assert any("scheme not allowed" in e and "'ep-1'" in e for e in report.errors)
    assert any("transcript is empty" in w and "'ep-2'" in w for w in report.warnings)
    with Catalog.in_dir(cfg.data_dir) as cat:
        assert not cat.episode("ep-1").segments and not cat.episode("ep-2").segments


def test_one_bad_feed_does_not_stop_the_others(tmp_path, server, site):
    (site / "other.xml").write_bytes(feed([item(4)], title="Other Show"))
    (site / "page.html").write_text("<html><body>not a feed</body></html>")
    cfg = config(tmp_path, allow_private_hosts=True)
    report = run(cfg, [server.url("missing.xml"), server.url("page.html"), server.url("feed.xml"), server.url("other.xml")])
    assert (report.feeds, report.feeds_failed, report.new) == (4, 2, 4)
    assert any("missing.xml" in e and "404" in e for e in report.errors)
    assert any("page.html" in e and "not a feed" in e for e in report.errors)


def test_feedparser_robustness_sample_over_http(tmp_path, corpus):
    folder = corpus / "robustness" / "feedparser"
    files = sorted(p for p in folder.rglob("*.xml"))[::25]
    cfg = config(tmp_path, allow_private_hosts=True, fetch_timeout=5)
    with serve(folder) as srv:
        sources = [srv.url(p) for p in files]
        report = run(cfg, sources)
    assert report.feeds == len(files) > 80 and report.seconds["ingest"] < 60
    # Every feed either went in (with episodes, or reported as having none) or was reported with a reason.
    with Catalog.in_dir(cfg.data_dir) as cat:
        went_in = with_episodes = 0
        for source in sources:
            state = cat.feed_state(source)
            if state["last_status"] == "failed":
                assert state["last_error"] and any(e.startswith(f"feed {source}: ") for e in report.errors)
                continue
            went_in += 1
            if any(True for _ in cat.episodes(state["show_id"])):
                with_episodes += 1
            else:
                assert any(w == f"{source}: the feed has no episodes" for w in report.warnings), source
    assert went_in + report.feeds_failed == report.feeds and with_episodes > 30


def _toml(path: Path, feeds: list[str], **settings) -> Path:
    lines = ["feeds = [" + ", ".join(json.dumps(f) for f in feeds) + "]"]
    lines += [f"{k} = {json.dumps(v)}" for k, v in settings.items()]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_reindex_exit_codes(tmp_path, runner, server):
    data = str(tmp_path / "data")
    empty = runner.invoke(main, ["--data", data, "reindex"])
    assert empty.exit_code == 2 and "No feeds" in empty.output

    good = _toml(tmp_path / "good.toml", [server.url("feed.xml")], allow_private_hosts=True)
    ok = runner.invoke(main, ["--data", data, "--config", str(good), "-q", "reindex"])
    assert ok.exit_code == 0, ok.output
    assert "3 new" in ok.output

    bad = _toml(tmp_path / "bad.toml", [server.url("feed.xml"), server.url("gone.xml")], allow_private_hosts=True)
    failed = runner.invoke(main, ["--data", data, "--config", str(bad), "-q", "reindex"])
    assert failed.exit_code == 1
    assert "gone.xml" in failed.output and "404" in failed.output and "3 unchanged" in failed.output


def test_add_then_reindex(tmp_path, runner, server: FeedServer):
    data = str(tmp_path / "data")
    added = runner.invoke(main, ["--data", data, "add", server.url("feed.xml")])
    assert added.exit_code == 0, added.output
    result = runner.invoke(main, ["--data", data, "-q", "reindex", "--json"], env={"PODSEARCH_ALLOW_PRIVATE_HOSTS": "1"})
    assert result.exit_code == 0, result.output
    summary = json.loads(result.output)
    assert summary["new"] == 3 and summary["transcripts_fetched"] == 3
