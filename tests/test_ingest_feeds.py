"""Feed parsing: every item field, ids, durations, and the real-world, podcastparser and feedparser corpora."""

from __future__ import annotations

import json
import re
import time
from datetime import datetime
from pathlib import Path

import pytest

from podsearch.errors import FeedError
from podsearch.ingest.chapters import parse_chapters
from podsearch.ingest.feeds import episode_id, parse_feed, resolve_link
from podsearch.ingest.text import parse_duration

FEED = b"""<?xml version="1.0" encoding="UTF-8"?>
<rss version="2.0" xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd"
     xmlns:podcast="https://podcastindex.org/namespace/1.0" xmlns:psc="http://podlove.org/simple-chapters">
<channel>
  <title>Field &amp; Stream</title>
  <link>https://example.org/</link>
  <language>de-AT</language>
  <itunes:image href="art/cover.jpg"/>
  <itunes:category text="Science"><itunes:category text="Nature"/></itunes:category>
  <podcast:person role="host" href="https://example.org/ana">Ana Host</podcast:person>
  <item>
    <title>One</title>
    <guid isPermaLink="false">ep-1</guid>
    <pubDate>Tue, 07 May 2024 10:00:00 +0200</pubDate>
    <itunes:duration>PT2M37S</itunes:duration>
    <itunes:season>2</itunes:season>
    <itunes:episode>7</itunes:episode>
    <itunes:image href="https://cdn.example.org/one.jpg"/>
    <category>Birds</category>
    <enclosure url="audio/one.mp3" type="audio/mpeg" length="1"/>
    <description><![CDATA[<p>Notes <script>alert(1)</script><a href="javascript:x()">bad</a> <b>bold</b></p>]]></description>
    <podcast:person role="guest" group="cast" href="https://example.org/bo">Bo Guest</podcast:person>
    <podcast:person>Cy Third</podcast:person>
    <podcast:transcript url="t/one.vtt" type="text/vtt"/>
    <podcast:transcript url="https://cdn.example.org/one.json" type="application/json" language="en"/>
    <podcast:transcript url="t/one.srt" type="application/srt" rel="captions"/>
    <podcast:chapters url="chapters/one.json" type="application/json+chapters"/>
  </item>
  <item>
    <title>Two</title>
    <itunes:duration>1:02:03</itunes:duration>
    <enclosure url="https://example.org/two.mp3" type="audio/mpeg" length="1"/>
    <psc:chapters version="1.2">
      <psc:chapter start="00:01:02.500" title="Later" href="https://example.org/later"/>
      <psc:chapter start="0" title="Start"/>
    </psc:chapters>
  </item>
  <item>
    <title>Three</title>
    <guid>ep-1</guid>
  </item>
</channel>
</rss>
"""


def parsed():
    return parse_feed(FEED, "https://example.org/feeds/main.xml")


def test_every_item_field():
    feed = parsed()
    show = feed.show
    assert show.title == "Field & Stream"
    assert show.language == "de-AT"
    assert show.image == "https://example.org/feeds/art/cover.jpg"
    assert show.categories == ["Science", "Nature"]
    assert [p.name for p in show.persons] == ["Ana Host"]

    one, two = feed.episodes
    assert one.id == "ep-1"
    assert one.published == "2024-05-07T08:00:00Z"
    assert one.duration == 157
    assert (one.season, one.number) == (2, 7)
    assert one.image == "https://cdn.example.org/one.jpg"
    assert one.language == "de-AT"
    assert one.categories == ["Birds"]
    assert one.audio_url == "https://example.org/feeds/audio/one.mp3" and one.audio_type == "audio/mpeg"
    # Item-level persons replace the channel's, with their attributes.
    assert [(p.name, p.role, p.group, p.href) for p in one.persons] == [
        ("Bo Guest", "guest", "cast", "https://example.org/bo"), ("Cy Third", "", "", "")]
    # Every transcript, resolved against the feed URL (feedparser alone would keep only the last).
    assert [(t.url, t.type, t.language, t.rel) for t in one.transcript_links] == [
        ("https://example.org/feeds/t/one.vtt", "text/vtt", "", ""),
        ("https://cdn.example.org/one.json", "application/json", "en", ""),
        ("https://example.org/feeds/t/one.srt", "application/srt", "", "captions")]
    assert one.chapters_url == "https://example.org/feeds/chapters/one.json"
    # Show notes: sanitized for display, plain for the index.
    assert "<script" not in one.description_html and "javascript:" not in one.description_html
    assert "<b>bold</b>" in one.description_html
    assert one.description_text.startswith("Notes") and "alert" not in one.description_text

    # No guid: the enclosure URL is the id. Channel persons are inherited. Inline chapters are read, sorted.
    assert two.id == "https://example.org/two.mp3"
    assert two.duration == 3723 and two.published is None
    assert [p.name for p in two.persons] == ["Ana Host"]
    assert [(c.start, c.title, c.url) for c in two.chapters] == [(0, "Start", ""), (62.5, "Later", "https://example.org/later")]
    # The third item repeats guid ep-1: the first is kept, with a warning.
    assert any("duplicate episode id 'ep-1'" in w for w in feed.warnings)


def test_ids_are_stable_and_fall_back_in_order():
    assert episode_id("g", "e", "l", "t", None) == "g"
    assert episode_id(" ", "e", "l", "t", None) == "e"
    assert episode_id("", "", "l", "t", None) == "l"
    hashed = episode_id("", "", "", "Title", "2024-01-01T00:00:00Z")
    assert hashed.startswith("sha1:") and hashed == episode_id("", "", "", "Title", "2024-01-01T00:00:00Z")
    assert hashed != episode_id("", "", "", "Title", None)
    # The same bytes from another URL give the same ids (a relative guid is not resolved against the feed URL).
    moved = parse_feed(FEED, "https://mirror.example.net/x.xml")
    assert [e.id for e in moved.episodes] == ["ep-1", "https://example.org/two.mp3"]


@pytest.mark.parametrize("text, seconds", [
    ("1834", 1834), ("30:34", 1834), ("1:02:03", 3723), ("01:02:03.6", 3724), ("PT2M37S", 157), ("PT1H", 3600),
    ("P1DT1S", 86401), ("pt0.5s", 0), ("", None), ("abc", None), ("-5", None), ("1:2:3:4", None), ("P", None),
    (None, None), (95, 95),
    # not finite, or longer than a year: no duration (1e309 crashed every reindex of a config holding the feed)
    ("1e309", None), ("inf", None), ("nan", None), ("P99999999999999999999D", None), ("99999999999", None),
    ("8784:00:00", 31622400),
])
def test_duration_forms(text, seconds):
    assert parse_duration(text) == seconds


ODD_NUMBERS = b"""<?xml version="1.0" encoding="UTF-8"?>
<rss version="2.0" xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd"><channel><title>Odd</title>
<item><guid>odd-1</guid><title>Huge</title><itunes:episode>99999999999999999999999</itunes:episode>
  <itunes:season>-99999999999999999999999</itunes:season></item>
<item><guid>odd-2</guid><title>Infinite</title><itunes:duration>1e309</itunes:duration><itunes:episode>7</itunes:episode></item>
</channel></rss>"""


def test_numbers_a_catalog_cannot_hold_are_no_numbers():
    """An episode number past 2**31 (SQLite's integers end at 2**63) or an infinite duration is read as absent,
    and the item is kept."""
    feed = parse_feed(ODD_NUMBERS, "https://example.org/odd.xml")
    assert [(e.id, e.number, e.season, e.duration) for e in feed.episodes] == [
        ("odd-1", None, None, None), ("odd-2", 7, None, None)]


@pytest.mark.parametrize("ref", ["&#xD800;", "&#56319;", "&#x110000;", "&#99999999;", "&#" + "9" * 5000 + ";"])
def test_a_reference_to_no_character_loses_no_episode(ref: str):
    """feedparser raised on a character reference naming no character (a surrogate, past U+10FFFF), and the whole
    feed was refused with its other items; it is read as U+FFFD, as a bad byte is decoded."""
    feed = parse_feed(ODD_NUMBERS.replace(b"<title>Huge", f"<title>Huge{ref} one".encode()),
                      "https://example.org/odd.xml")
    assert [(e.id, e.title) for e in feed.episodes] == [("odd-1", "Huge\ufffd one"), ("odd-2", "Infinite")]
    good = parse_feed(ODD_NUMBERS.replace(b"<title>Huge", b"<title>Huge&#8217;s &#x41;"), "https://example.org/o.xml")
    assert good.episodes[0].title == "Huge\u2019s A"


def test_a_feed_whose_reading_fails_unforeseen_is_reported_and_the_others_read(tmp_path, monkeypatch):
    """Fault injection: reading one feed raises what no rule foresaw; that feed is reported and skipped, the run
    goes on with the next (before, the exception ended the whole reindex)."""
    from podsearch.config import load_config
    from podsearch.ingest import run as ingest_run
    from podsearch.reindex import reindex
    good, bad = tmp_path / "good.xml", tmp_path / "bad.xml"
    good.write_bytes(ODD_NUMBERS)
    bad.write_bytes(ODD_NUMBERS.replace(b"odd-", b"trap-").replace(b"<title>Odd</title>", b"<title>Trap</title>"))
    real = ingest_run.parse_feed

    def parse(content, source, **kw):
        if source.endswith("bad.xml"):
            raise OverflowError("cannot convert float infinity to integer")
        return real(content, source, **kw)

    monkeypatch.setattr(ingest_run, "parse_feed", parse)
    config = load_config({"data": str(tmp_path / "data"), "feeds": [str(bad), str(good)]}, environ={})
    report = reindex(config)
    assert report.feeds_failed == 1 and report.new == 2
    assert any("bad.xml: could not be read (OverflowError" in e for e in report.errors)


def test_relative_links_of_a_local_feed(tmp_path):
    feed = tmp_path / "f" / "feed.xml"
    assert resolve_link(str(feed), "../t/a.vtt") == (str(tmp_path / "t" / "a.vtt"), True)
    # Absolute paths and file: URLs written in a feed are kept as written and are not local (refused on fetch).
    assert resolve_link(str(feed), "/etc/passwd") == ("/etc/passwd", False)
    assert resolve_link(str(feed), "file:///etc/passwd") == ("file:///etc/passwd", False)
    assert resolve_link("https://a.example/x/feed.xml", "../t.vtt") == ("https://a.example/t.vtt", False)


def test_not_a_feed_is_a_feed_error():
    with pytest.raises(FeedError, match="not a feed"):
        parse_feed(b"<html><body>hello</body></html>", "https://example.org/page")
    with pytest.raises(FeedError, match="not a feed"):
        parse_feed(b"", "https://example.org/empty")


# -- the corpus -----------------------------------------------------------------------------------------------

_ITEM = re.compile(rb"<item[\s>].*?</item\s*>", re.S | re.I)
_TRANSCRIPT_TAG = re.compile(rb"<podcast:transcript\b[^>]*\burl\s*=", re.I)


def real_feeds(corpus: Path) -> list[Path]:
    real = corpus / "feeds" / "real"
    return sorted(real.glob("*.xml")) + sorted((real / "partytime").rglob("*.xml")) + sorted((real / "namespace").glob("*.xml"))


def test_real_feeds_keep_every_transcript_link(corpus):
    files = real_feeds(corpus)
    assert len(files) == 40 + 19 + 2
    items = tags = 0
    for path in files:
        data = path.read_bytes()
        if path.name == "podcast-example.xml":  # the namespace's XSD test wrapper, not an RSS document
            with pytest.raises(FeedError, match="not a feed"):
                parse_feed(data, str(path))
            continue
        feed = parse_feed(data, str(path))
        expected = [len(_TRANSCRIPT_TAG.findall(item)) for item in _ITEM.findall(data)]
        assert [len(e.transcript_links) for e in feed.episodes] == expected, path.name
        items += len(expected)
        tags += sum(expected)
    assert items > 7000 and tags == 3565


def test_not_feeds_are_reported_with_a_reason(corpus):
    files = sorted((corpus / "feeds" / "real" / "not-feeds").iterdir())
    assert len(files) == 58
    for path in files:
        with pytest.raises(FeedError) as info:
            parse_feed(path.read_bytes(), str(path))
        assert str(info.value).startswith(f"{path}: not a feed (") and str(info.value).endswith(")")


def test_feedparser_robustness_files_parse_or_fail_cleanly(corpus):
    files = sorted(p for p in (corpus / "robustness" / "feedparser").rglob("*") if p.is_file())
    assert len(files) == 2107
    outcomes = {"episodes": 0, "empty feed": 0, "error": 0}
    started = time.monotonic()
    for path in files:
        t0 = time.monotonic()
        try:
            feed = parse_feed(path.read_bytes(), path.as_uri())
        except FeedError as exc:
            assert str(exc).startswith(path.as_uri())
            outcomes["error"] += 1
        else:
            if feed.episodes:
                outcomes["episodes"] += 1
            else:
                assert any("has no episodes" in w for w in feed.warnings), path
                outcomes["empty feed"] += 1
        assert time.monotonic() - t0 < 5, f"{path} took too long"
    assert time.monotonic() - started < 60
    assert outcomes["episodes"] > 1000 and outcomes["error"] > 0, outcomes


# -- podcastparser's expected parses ---------------------------------------------------------------------------

# Documented in docs/ingest.md ("Deliberate differences from podcastparser"); nothing else may differ.
PP_DIFFERENCES = {
    # podcastparser resolves a relative guid against the feed URL; we keep the guid as written.
    "relative guid": lambda case, field, theirs, ours: field == "guid" and theirs.endswith("/" + ours),
    # podcastparser prefers the link to the enclosure when there is no guid; we follow the order.
    "link before enclosure": lambda case, field, theirs, ours: case == "no_guid" and field == "guid",
}
# podcastparser drops items without an enclosure URL and items without a title and several enclosures;
# we keep them (transcripts and notes are searchable without audio). max_episodes is a parameter test.
PP_EXTRA_ITEMS_OK = {"no_enclosure", "no_title_multi_enclosure", "no_url", "max_episodes"}


def _pp_seconds(iso: str | None) -> int:
    return int(datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp()) if iso else 0


def test_podcastparser_cases_agree(corpus):
    folder = corpus / "feeds" / "podcastparser"
    cases = sorted(folder.glob("*.rss"))
    assert len(cases) == 70
    compared = set()
    for rss in cases:
        expected = json.loads(rss.with_suffix(".json").read_text(encoding="utf-8"))
        source = f"file://tests/data/{rss.name}"  # the URL podcastparser's own tests parse with
        ours = {e.id: e for e in parse_feed(rss.read_bytes(), source, base_url=source).episodes}
        by_guid = {ep.id: ep for ep in ours.values()}
        for theirs in expected["episodes"]:
            mine = by_guid.get(theirs["guid"]) or next(
                (e for e in ours.values() if theirs["guid"].endswith("/" + e.id)), None) or next(
                (e for e in ours.values() if e.title == theirs["title"]), None)
            assert mine is not None, (rss.name, theirs["guid"])
            encl = [e["url"] for e in theirs.get("enclosures", [])]
            pairs = {
                "title": (theirs["title"], mine.title),
                "guid": (theirs["guid"], mine.id),
                "published": (theirs.get("published", 0), _pp_seconds(mine.published)),
                "duration": (theirs.get("total_time") or 0, mine.duration or 0),
                "enclosure": (encl[0] if encl else "", mine.audio_url),
            }
            if "transcript_url" in theirs:
                pairs["transcripts"] = (theirs["transcript_url"], mine.transcript_links[0].url)
            if "chapters_json_url" in theirs:
                pairs["chapters_url"] = (theirs["chapters_json_url"], mine.chapters_url)
            if theirs.get("chapters"):
                pairs["chapters"] = (
                    [(c["start"], c["title"], c.get("href", ""), c.get("image", "")) for c in theirs["chapters"]],
                    [(int(c.start), c.title, c.url, c.img) for c in mine.chapters])
            for field, (want, got) in pairs.items():
                if want != got:
                    allowed = [name for name, ok in PP_DIFFERENCES.items() if ok(rss.stem, field, want, got)]
                    assert allowed, f"{rss.name}: {field}: podcastparser {want!r}, ours {got!r}"
                compared.add(field)
        if rss.stem not in PP_EXTRA_ITEMS_OK:
            assert len(ours) == len(expected["episodes"]), rss.name
    assert compared == {"title", "guid", "published", "duration", "enclosure", "transcripts", "chapters_url", "chapters"}


def test_chapter_times_are_finite_seconds():
    """A JSON chapter at 1e309 or "NaN" seconds was kept, and the episode's answer then held Infinity or NaN, which
    no JSON parser reads; such a chapter is left out, an unreadable end is no end, and nesting too deep is an error
    of the chapters file (reported with the episode's other extras), not a crash."""
    chapters = parse_chapters(json.dumps({"chapters": [
        {"startTime": 1e309, "title": "infinite"}, {"startTime": "NaN", "title": "nan"}, {"startTime": -1, "title": "before"},
        {"startTime": 5, "endTime": float("inf"), "title": "open end"}, {"title": "from the start"}]}).encode())
    assert [(c.start, c.end, c.title) for c in chapters] == [(0.0, None, "from the start"), (5.0, None, "open end")]
    with pytest.raises(ValueError, match="nested too deep"):
        parse_chapters(b"[" * 100000)


def test_chapter_links_are_http_only():
    """A chapter's url and img are links a client shows: only http(s) ones are kept, as for every other link of a
    feed (``javascript:`` and ``data:`` were served by the API until 5 December 2026)."""
    chapters = parse_chapters(json.dumps({"chapters": [
        {"startTime": 0, "title": "a", "url": "javascript:alert(1)", "img": "data:image/svg+xml,<svg onload=alert(1)>"},
        {"startTime": 1, "title": "b", "url": " JavaScript:alert(2)", "img": "vbscript:x"},
        {"startTime": 2, "title": "c", "url": "https://example.org/c", "img": "http://example.org/c.png"}]}).encode())
    assert [(c.url, c.img) for c in chapters] == [("", ""), ("", ""), ("https://example.org/c", "http://example.org/c.png")]


def test_a_link_every_item_shares_is_no_episode_id() -> None:
    """Five guid-less items without enclosures whose links were all the show's home page were one episode (the id
    was the link; four were dropped as duplicates). A link or an enclosure several items share, or the show's own
    link, names no one episode: those items are known by their title and date; a link of one item still is its id."""
    items = "".join(f"<item><title>Talk {n}</title><link>https://example.org/show</link>"
                    f"<pubDate>Mon, 0{n} Jan 2024 10:00:00 GMT</pubDate></item>" for n in range(1, 6))
    items += ("<item><title>Own page</title><link>https://example.org/show/own</link></item>"
              '<item><title>Same file A</title><enclosure url="https://example.org/a.mp3" type="audio/mpeg"/></item>'
              '<item><title>Same file B</title><enclosure url="https://example.org/a.mp3" type="audio/mpeg"/></item>')
    xml = (f'<?xml version="1.0"?><rss version="2.0"><channel><title>Show</title><link>https://example.org/show</link>'
           f"{items}</channel></rss>").encode()
    parsed = parse_feed(xml, "https://example.org/feed.xml")
    ids = [e.id for e in parsed.episodes]
    assert len(ids) == len(set(ids)) == 8 and not parsed.warnings
    assert "https://example.org/show/own" in ids and "https://example.org/show" not in ids
    assert sum(i.startswith("sha1:") for i in ids) == 7
    assert [e.id for e in parse_feed(xml, "https://example.org/feed.xml").episodes] == ids  # the same each time


@pytest.mark.parametrize("cut", [8, 30, 50, 70])
def test_a_feed_cut_short_is_refused_not_read_leniently(cut: int) -> None:
    """A feed cut inside its last item (a transfer cut off) was read leniently: the cut item became an "(untitled)"
    episode and the items after the cut were marked gone, exit 0. It is a failed feed now: skipped, nothing
    changed. A whole feed with an error elsewhere is still read leniently."""
    whole = FEED.decode() if isinstance(FEED, bytes) else FEED
    at = whole.rfind("<item") + cut
    with pytest.raises(FeedError, match="cut short"):
        parse_feed(whole[:at].encode(), "https://example.org/feed.xml")
    lenient = whole.replace("</channel>", "<bad attr=1></channel>", 1) + "\n<!-- end -->\n"
    assert parse_feed(lenient.encode(), "https://example.org/feed.xml").warnings


def test_chapters_are_bounded():
    """A chapters file of 400,000 entries (8 MB) was kept whole: its episode's page was 33 MB and took 4 s to draw at
    every view (found 5 December 2026). The earliest thousand are kept, from a file or inline (psc:chapter)."""
    chapters = parse_chapters(json.dumps({"chapters": [{"startTime": n} for n in range(5000, 0, -1)]}).encode())
    assert len(chapters) == 1000 and chapters[0].start == 1 and chapters[-1].start == 1000
    inline = "".join(f'<psc:chapter start="{n}" title="c{n}"/>' for n in range(3000))
    feed = (f'<?xml version="1.0"?><rss version="2.0" xmlns:psc="http://podlove.org/simple-chapters"><channel><title>S</title>'
            f"<item><title>t</title><guid>g</guid><psc:chapters>{inline}</psc:chapters></item></channel></rss>").encode()
    episode = parse_feed(feed, "https://example.org/feed.xml").episodes[0]
    assert len(episode.chapters) == 1000 and episode.chapters[-1].title == "c999"
