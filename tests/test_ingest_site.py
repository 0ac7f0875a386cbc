"""All 25 feeds of corpus/site over real HTTP: every episode, its transcript in segments, its persons; then a
second run that only asks conditional questions (of every feed and stored transcript) and changes nothing."""

from __future__ import annotations

import csv
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from feedserver import serve

from podsearch.catalog import Catalog
from podsearch.config import load_config
from podsearch.reindex import ingest

pytestmark = pytest.mark.slow

PODCAST = "{https://podcastindex.org/namespace/1.0}"
EMPTY_TRANSCRIPTS = 1  # one btc-talks transcript file is 2 bytes: the episode goes in without one (a warning)


@pytest.fixture(scope="module")
def site_run(corpus: Path, tmp_path_factory: pytest.TempPathFactory):
    data = tmp_path_factory.mktemp("site") / "data"
    # The transcript URLs are relative to feeds served from 127.0.0.1, so private hosts must be allowed.
    config = load_config({"data": str(data), "allow_private_hosts": True}, environ={})
    with serve(corpus) as server:
        sources = [server.url(p) for p in sorted((corpus / "site" / "feeds").glob("*.xml"))]
        with Catalog.in_dir(data) as catalog:
            first = ingest(config, catalog, sources)
        before = _dump(data)
        server.clear_log()
        with Catalog.in_dir(data) as catalog:
            second = ingest(config, catalog, sources)
        yield {"data": data, "first": first, "second": second, "before": before, "after": _dump(data),
               "requests": server.log(), "sources": sources}


def _dump(data: Path) -> dict:
    with Catalog.in_dir(data) as cat:
        q = cat.db.execute
        return {"shows": q("SELECT * FROM shows ORDER BY id").fetchall().__len__(),
                "episodes": [tuple(r) for r in q("SELECT * FROM episodes ORDER BY id")],
                "segments": q("SELECT COUNT(*), TOTAL(LENGTH(text)), TOTAL(start) FROM segments").fetchone()[:]}


def test_every_episode_with_its_transcript(site_run, corpus):
    report = site_run["first"]
    assert (report.feeds, report.feeds_failed, report.new) == (25, 0, 1869)
    assert report.transcripts_fetched == 1869 - EMPTY_TRANSCRIPTS and report.transcripts_empty == EMPTY_TRANSCRIPTS
    assert report.transcripts_failed == 0 and report.errors == [] and not report.failed
    assert len(report.warnings) == EMPTY_TRANSCRIPTS and "transcript is empty" in report.warnings[0]

    with open(corpus / "site" / "INDEX.tsv", encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh, delimiter="\t"))
    assert len(rows) == 1869
    timed_types = {"application/json", "text/html", "text/vtt"}
    with Catalog.in_dir(site_run["data"]) as cat:
        for row in rows:
            ep = cat.episode(row["guid"])
            assert ep is not None, row["guid"]
            assert cat.show(ep.show_id).source.endswith(f"/site/feeds/{row['show']}.xml") and ep.title == row["title"].strip()
            assert ep.published == (f"{row['date']}T00:00:00Z" if row["date"] else None)
            assert ep.transcript_links[0].type == row["transcript_type"]
            assert ep.transcript_links[0].url.endswith("/site/" + row["transcript_path"].replace('"', "%22")) or \
                ep.transcript_links[0].url.endswith("/site/" + row["transcript_path"])
            if int(row["transcript_size"]) <= 2:
                assert ep.segments == []
                continue
            assert ep.segments and all(s.text for s in ep.segments), row["guid"]
            if row["transcript_type"] in timed_types:
                assert all(s.start is not None for s in ep.segments), row["guid"]
                starts = [s.start for s in ep.segments]
                assert max(starts) > 0, row["guid"]
            else:  # plain text: no times, unless a paragraph is a time alone (Speaker 0: 00:11:31)
                text = (corpus / "site" / row["transcript_path"]).read_text(encoding="utf-8")
                timed = bool(re.search(r"(?m)^(?:[^\n]{0,60}:(?:\*\*)? )?\[?(?:\d+:)?\d{1,2}:\d{2}\]?[ \t]*$", text))
                assert timed or all(s.start is None for s in ep.segments), row["guid"]


def test_persons_as_in_the_feed(site_run, corpus):
    with Catalog.in_dir(site_run["data"]) as cat:
        checked = 0
        for path in sorted((corpus / "site" / "feeds").glob("*.xml")):
            for item in ET.parse(path).getroot().iter("item"):
                want = [(p.text.strip(), (p.get("role") or "")) for p in item.iter(PODCAST + "person")]
                ep = cat.episode(item.findtext("guid").strip(), with_segments=False)
                assert [(p.name, p.role) for p in ep.persons] == want, ep.id
                checked += bool(want)
    assert checked > 1000


def test_second_run_is_conditional_and_changes_nothing(site_run):
    second, requests = site_run["second"], site_run["requests"]
    # Each feed and each stored transcript is asked again conditionally, and each answers 304.
    assert len(requests) == 25 + 1869 - EMPTY_TRANSCRIPTS and all(r.conditional and r.status == 304 for r in requests)
    feeds = {r.path for r in requests if r.path.startswith("/site/feeds/")}
    assert feeds == {"/" + s.split("/", 3)[3] for s in site_run["sources"]}
    assert second.transcripts_not_modified == 1869 - EMPTY_TRANSCRIPTS and second.transcripts_fetched == 0
    assert (second.feeds_unchanged, second.unchanged, second.new, second.updated, second.gone) == (25, 1869, 0, 0, 0)
    assert not second.failed and second.warnings == []
    assert site_run["after"] == site_run["before"]
