"""JSON-lines import (docs/ingest.md): good lines go in, a bad line is reported and does not stop the rest."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from podsearch.catalog import Catalog
from podsearch.cli import main
from podsearch.errors import PodsearchError
from podsearch.reindex import import_lines

GOOD = [
    {"id": "ep-1", "show": "Kitchen Radio", "title": "Sourdough starters", "description": "<p>Flour <b>and</b> water</p>",
     "published": "2024-05-01", "duration": "1:02:03", "audio_url": "https://example.org/1.mp3",
     "link": "https://example.org/1", "transcript": "Ana: Feed the starter daily.\n\nBo: Keep it warm."},
    {"id": "ep-2", "show": "Kitchen Radio", "title": "Knife skills", "published": "2024-05-08T10:00:00+02:00",
     "duration": 95, "number": "12", "persons": ["Ana", {"name": "Bo", "role": "guest"}],
     "segments": [{"start": 0, "end": 4.5, "speaker": "Ana", "text": "Hold the knife like this."},
                  {"start": 4.5, "speaker": "Bo", "text": "Like a pencil?"}, {"start": 9, "text": "  "}]},
]
BAD = [
    "{not json",
    json.dumps({"show": "Kitchen Radio", "title": "no id"}),
    json.dumps({"id": "ep-9", "title": "bad date", "published": "last Tuesday"}),
    json.dumps({"id": "ep-10", "title": "bad segment", "segments": [{"start": "soon", "text": "x"}]}),
    json.dumps(["a", "list"]),
    json.dumps({"id": "ep-11", "title": "bad number", "number": "twelve"}),
]


def write(path: Path, lines: list[str]) -> Path:
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_good_lines_go_in_and_bad_lines_are_reported(tmp_path):
    lines = [json.dumps(GOOD[0]), BAD[0], BAD[1], "", BAD[2], BAD[3], BAD[4], BAD[5], json.dumps(GOOD[1])]
    export = write(tmp_path / "export.jsonl", lines)
    with Catalog.in_dir(tmp_path / "data") as cat:
        report = import_lines(cat, export)
        assert (report.new, report.failed) == (2, True)
        assert report.errors == [
            f"{export}: line 2: not JSON (Expecting property name enclosed in double quotes)",
            f"{export}: line 3: missing id",
            f"{export}: line 5: published 'last Tuesday' is not an ISO date",
            f"{export}: line 6: segment 1 has a start or end that is not a number",
            f"{export}: line 7: expected a JSON object",
            f"{export}: line 8: number 'twelve' is not a whole number",
        ]
        one, two = cat.episode("ep-1"), cat.episode("ep-2")
        assert cat.show("kitchen-radio").title == "Kitchen Radio"
        assert (one.show_id, one.published, one.duration) == ("kitchen-radio", "2024-05-01T00:00:00Z", 3723)
        assert one.description_text == "Flour and water" and "<b>and</b>" in one.description_html
        assert [s.text for s in one.segments] == ["Ana: Feed the starter daily.", "Bo: Keep it warm."]
        assert (two.published, two.duration, two.number, one.number) == ("2024-05-08T08:00:00Z", 95, 12, None)
        assert [(p.name, p.role) for p in two.persons] == [("Ana", ""), ("Bo", "guest")]
        assert [(s.start, s.end, s.speaker) for s in two.segments] == [(0, 4.5, "Ana"), (4.5, None, "Bo")]

        # The same file again changes nothing; an edited line updates that episode only.
        again = import_lines(cat, export)
        assert (again.new, again.updated, again.unchanged) == (0, 0, 2)
        edited = dict(GOOD[1], title="Knife skills, part one")
        write(export, [json.dumps(GOOD[0]), json.dumps(edited)])
        changed = import_lines(cat, export)
        assert (changed.new, changed.updated, changed.unchanged, changed.errors) == (0, 1, 1, [])
        assert cat.episode("ep-2").title == "Knife skills, part one"


def test_hostile_values_are_reported_per_line_or_made_storable(tmp_path):
    """Found by fuzzing the import: each of these ended the whole import with a traceback."""
    lines = [
        json.dumps({"id": "h-1", "title": "persons not a list", "persons": 1}),
        json.dumps({"id": "h-2", "title": "a duration past any clock", "duration": "1e309"}),
        json.dumps({"id": "h-3", "title": "a number SQLite cannot hold", "number": "9" * 25}),
        json.dumps({"id": "h-4", "title": "lone \ud800 surrogate", "transcript": "half \udfff a character"}),
        "[" * 100000 + "]" * 100000,
        json.dumps(GOOD[0]),
        '{"id": "h-7", "title": "a moment at infinity", "segments": [{"start": 1e309, "text": "x"}]}',
        json.dumps({"id": "h-8", "title": "a moment before the start", "segments": [{"start": -5, "text": "x"}]}),
    ]
    export = write(tmp_path / "export.jsonl", lines)
    with Catalog.in_dir(tmp_path / "data") as cat:
        report = import_lines(cat, export)
        assert report.errors == [
            f"{export}: line 1: persons must be a list of names or objects",
            f"{export}: line 3: number '{'9' * 25}' is out of range (at most 2,147,483,647)",
            f"{export}: line 5: nested too deep to read",
            f"{export}: line 7: segment 1 has a start or end that is not a time in seconds (0 or more, finite)",
            f"{export}: line 8: segment 1 has a start or end that is not a time in seconds (0 or more, finite)",
        ]
        assert report.new == 3 and cat.episode("h-2").duration is None
        assert cat.episode("h-4").title == "lone \ufffd surrogate"
        assert cat.episode("h-4").segments[0].text == "half \ufffd a character"


def test_missing_file_is_an_error(tmp_path):
    with Catalog.in_dir(tmp_path / "data") as cat, pytest.raises(PodsearchError, match="no such file"):
        import_lines(cat, tmp_path / "nope.jsonl")


def test_import_command_exit_status(tmp_path, runner):
    data = str(tmp_path / "data")
    good = write(tmp_path / "good.jsonl", [json.dumps(line) for line in GOOD])
    result = runner.invoke(main, ["--data", data, "-q", "import", "--wait", str(good)])  # (as the lock's refusal says)
    assert result.exit_code == 0, result.output
    assert "2 new" in result.output
    assert result.output.startswith("episodes: 2 new") and "feeds" not in result.output  # (it said "0 feeds (...)")
    bad = write(good, [json.dumps(GOOD[0]), BAD[1]])  # the same export, now with a bad line
    result = runner.invoke(main, ["--data", data, "-q", "import", str(bad)])
    assert result.exit_code == 1 and "line 2: missing id" in result.output and "1 unchanged" in result.output


FEED = """<?xml version="1.0"?>
<rss version="2.0"><channel><title>Away From Keyboard</title><link>https://example.org/afk</link>
<item><guid>afk-12</guid><title>Twelve</title><description>The feed's own notes.</description></item>
<item><guid>afk-13</guid><title>Thirteen</title><description>More notes.</description></item>
</channel></rss>
"""


def test_an_import_cannot_take_a_feeds_episode_or_join_its_show(tmp_path, runner):
    """An imported line with a feed episode's id took that episode over (its show and text), and the feed's next run
    stored the feed's episode under a new id; a line whose show was the feed's show joined it, and the feed's next
    run marked it gone. Both are refused with the reason; the other lines go in."""
    feed = tmp_path / "afk.xml"
    feed.write_text(FEED, encoding="utf-8")
    data = str(tmp_path / "data")
    assert runner.invoke(main, ["--data", data, "-q", "add", str(feed)]).exit_code == 0
    assert runner.invoke(main, ["--data", data, "-q", "reindex"]).exit_code == 0
    with Catalog.in_dir(data) as catalog:
        show_id = catalog.episode_owner("afk-12")
    lines = [{"id": "afk-12", "show": "Kitchen Radio", "title": "Hijacked", "transcript": "sourdough"},
             {"id": "afk-bonus", "show": "Away From Keyboard", "title": "Bonus", "transcript": "hi"},
             {"id": "afk-bonus-2", "show": "Bonus", "show_id": show_id, "title": "Bonus", "transcript": "hi"},
             {"id": "kr-1", "show": "Kitchen Radio", "title": "Fine", "transcript": "bread"}]
    export = write(tmp_path / "export.jsonl", [json.dumps(line) for line in lines])
    result = runner.invoke(main, ["--data", data, "-q", "import", str(export)])
    assert result.exit_code == 1 and "1 new" in result.output, result.output
    assert f"line 1: the id 'afk-12' is an episode of the show '{show_id}', read from the feed" in result.output
    assert f"line 2: the show '{show_id}' is read from the feed" in result.output and "line 3: the show" in result.output
    feed.write_text(FEED.replace("More notes.", "More notes, edited."), encoding="utf-8")  # the feed changes
    assert runner.invoke(main, ["--data", data, "-q", "reindex"]).exit_code == 0
    with Catalog.in_dir(data) as catalog:
        ep = catalog.episode("afk-12")
        assert ep.title == "Twelve" and ep.show_id == show_id
        assert sorted(e.id for e in catalog.episodes(show_id)) == ["afk-12", "afk-13"]  # no copy, nothing gone
        assert catalog.episode("kr-1") is not None and catalog.episode("afk-bonus") is None


def test_an_id_on_two_lines_is_said(tmp_path, runner):
    """The same id on two lines of one file: one episode, the later line's, and a warning naming both lines (the
    later line silently won, "1 updated")."""
    second = {**GOOD[0], "title": "Sourdough starters, again"}
    export = write(tmp_path / "dup.jsonl", [json.dumps(GOOD[0]), json.dumps(GOOD[1]), json.dumps(second)])
    with Catalog.in_dir(tmp_path / "data") as cat:
        report = import_lines(cat, export)
        assert cat.episode("ep-1").title == "Sourdough starters, again"
    assert report.warnings == [f"{export}: line 3: the id 'ep-1' is also on line 1; an id is one episode: line 3 "
                               "replaces line 1"]
    assert not report.failed
    result = runner.invoke(main, ["--data", str(tmp_path / "data2"), "import", str(export)])
    assert result.exit_code == 0 and "warning: " + report.warnings[0] in result.output


def test_a_full_disk_is_not_reported_as_every_line_unreadable(tmp_path: Path):
    """With no room to write (here a file size limit), the language detector could not unpack its model to a
    temporary file, and the import reported every line as ``could not be read``, each with a traceback (260 lines:
    260 tracebacks, the lines blamed for the disk). Now the import stops at once with the machine's reason, one
    line, exit 1."""
    import resource
    import subprocess
    import sys

    lines = [{"id": f"ep-{i}", "show": "Bulk", "title": f"Episode {i}",
              "transcript": "The volcano erupted and the river carried ash for many miles downstream."}
             for i in range(40)]
    source = tmp_path / "episodes.jsonl"
    source.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    data = tmp_path / "data"
    made = subprocess.run([sys.executable, "-m", "podsearch", "--data", str(data), "import", str(source)],
                          capture_output=True, text=True, timeout=300)
    assert made.returncode == 0, made.stderr  # the catalog is there: what fails below is the temporary file

    def small_files() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (64 * 1024, resource.RLIM_INFINITY))

    lines = [{**line, "id": f"new-{i}"} for i, line in enumerate(lines)]
    source.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "podsearch", "--data", str(data), "import", str(source)],
                          capture_output=True, text=True, timeout=300, preexec_fn=small_files)
    assert done.returncode == 1, done.stderr
    assert "could not be read" not in done.stderr and "Traceback" not in done.stderr, done.stderr[:2000]
    assert "[Errno 27] File too large" in done.stderr and "free room and run it again" in done.stderr
