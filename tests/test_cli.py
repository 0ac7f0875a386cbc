"""The real CLI: every command documented with an example, demo, search, similar, stats, reindex, add."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import click
import pytest

from podsearch.cli import main

ROOT = Path(__file__).resolve().parents[1]


def _commands(group: click.Group, prefix: tuple[str, ...] = ()):
    for name, cmd in group.commands.items():
        yield prefix + (name,), cmd
        if isinstance(cmd, click.Group):
            yield from _commands(cmd, prefix + (name,))


def test_help_of_every_command_says_what_and_gives_an_example(runner):
    result = runner.invoke(main, ["--help"])
    assert result.exit_code == 0 and "Example" in result.output
    readme = (ROOT / "README.md").read_text() + (ROOT / "docs" / "cli.md").read_text()
    for path, _cmd in _commands(main):
        out = runner.invoke(main, [*path, "--help"])
        assert out.exit_code == 0, path
        assert "Example" in out.output, f"'podsearch {' '.join(path)} --help' has no example"
        assert f"podsearch {' '.join(path)}" in readme or f"`{' '.join(path)}`" in readme, \
            f"command {' '.join(path)} is not documented in README.md or docs/cli.md"


def test_console_script_and_module_entry_point():
    out = subprocess.run([sys.executable, "-m", "podsearch", "--version"], capture_output=True, text=True, check=True)
    assert "podsearch" in out.stdout


def test_search_json_finds_the_sample_topic(runner, sample_data: Path):
    result = runner.invoke(main, ["--data", str(sample_data), "search", "waggle dance", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["total"] >= 1
    top = data["hits"][0]
    assert top["id"] == "tag:example.org,2024:field-notes/ep-01"
    assert "<mark>" in top["snippet"]
    assert top["moments"] and top["moments"][0]["start"] is not None


def test_search_prints_hits_for_people(runner, sample_data: Path):
    result = runner.invoke(main, ["--data", str(sample_data), "search", "sourdough"])
    assert result.exit_code == 0
    assert "Sourdough" in result.output or "sourdough" in result.output
    assert "id: " in result.output


def test_search_says_when_fewer_than_a_page_hold_every_word(runner, sample_data: Path):
    """Six sample episodes say both words: the words are ranked on either, and the first line says so."""
    both = json.loads(runner.invoke(main, ["--data", str(sample_data), "search", "bread AND water", "--json"]).output)
    printed = runner.invoke(main, ["--data", str(sample_data), "search", "bread water"]).output
    assert printed.splitlines()[0].endswith(f" episodes with any of the words ({both['total']} with every word)")
    assert runner.invoke(main, ["--data", str(sample_data), "search", "water"]).output.splitlines()[0].endswith(
        " episodes")


def test_search_answers_a_misspelled_query_for_its_suggestion_unless_no_correct(runner, sample_data: Path):
    result = runner.invoke(main, ["--data", str(sample_data), "search", "waggle dnace", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["corrected"] == "waggle dance" and data["hits"][0]["id"] == "tag:example.org,2024:field-notes/ep-01"
    printed = runner.invoke(main, ["--data", str(sample_data), "search", "waggle dnace"]).output
    assert "for 'waggle dance', not 'waggle dnace' (--no-correct: as typed)" in printed
    typed = json.loads(runner.invoke(main, ["--data", str(sample_data), "search", "waggle dnace", "--no-correct",
                                            "--json"]).output)
    assert typed["corrected"] is None and typed["suggestion"] == "waggle dance"


def test_search_prints_the_answers_notes(runner, sample_data: Path):
    """A query of stop words only printed "0 episodes" and nothing else (the page says why)."""
    result = runner.invoke(main, ["--data", str(sample_data), "search", "the"])
    assert result.exit_code == 0
    assert result.output.splitlines()[0] == "0 episodes" and "note: " in result.output and "too common" in result.output


def test_search_prints_what_a_filter_or_a_field_left_out(runner, sample_data: Path, tmp_path: Path):
    """The page says how many matches a duration filter left out for having no length, and how many episodes a
    search in fields that found nothing finds anywhere; the command said it only with --json (until 6 December
    2026)."""
    printed = runner.invoke(main, ["--data", str(sample_data), "search", "title:pollination"]).output
    anywhere = json.loads(runner.invoke(main, ["--data", str(sample_data), "search", "pollination", "--json"]).output)
    assert printed.splitlines()[0] == "0 episodes" and anywhere["total"]
    assert (f"note: no episode has these words where the query asks for them; {anywhere['total']} episodes have them "
            "elsewhere: podsearch search pollination") in printed
    lines = tmp_path / "untimed.jsonl"
    lines.write_text("".join(json.dumps({"id": f"len-{n}", "show": "lengths", "title": f"Episode {n}",
                                         "description": "Talking about beekeeping.", **({"duration": 3600} if n else {})})
                             + "\n" for n in range(3)))
    data = str(tmp_path / "untimed")
    assert runner.invoke(main, ["--data", data, "-q", "import", str(lines)]).exit_code == 0
    printed = runner.invoke(main, ["--data", data, "search", "beekeeping", "--duration-min", "30"]).output
    assert printed.splitlines()[0] == "2 episodes", printed
    assert ("note: 1 matching episode was left out: its length is not known (search without --duration-min/"
            "--duration-max)") in printed
    assert "note:" not in runner.invoke(main, ["--data", data, "search", "beekeeping"]).output


@pytest.mark.parametrize("args, said", [(["--per-page", "500"], "--per-page must be between 1 and 100"),
                                        (["--from", "yesterday"], "--from must be a date like"),
                                        (["--language", "xx!!"], "--language must be a language code")])
def test_search_names_its_options_in_a_refusal(runner, sample_data: Path, args, said):
    """The API's parser named its parameters (``per_page must be between 1 and 100``) where the command's options
    are ``--per-page`` and the like."""
    result = runner.invoke(main, ["--data", str(sample_data), "search", "bees", *args])
    assert result.exit_code == 2 and said in result.output, result.output


def test_a_cli_search_leaves_the_servers_load_counters_alone(runner, sample_data: Path, tmp_path: Path):
    """``podsearch stats`` shows the serving process's counters (``server-load.json``): a CLI search wrote its own
    (one search, its own pid) over them."""
    import shutil

    data = tmp_path / "copy"
    shutil.copytree(sample_data, data)
    (data / "server-load.json").write_text(json.dumps({"searches": 299, "pid": 1}))
    for _ in range(2):
        assert runner.invoke(main, ["--data", str(data), "search", "bees", "--json"]).exit_code == 0
    assert json.loads((data / "server-load.json").read_text()) == {"searches": 299, "pid": 1}


def test_similar_json_ranks_by_topic_and_never_returns_itself(runner, sample_data: Path):
    bees = "tag:example.org,2024:field-notes/ep-01"
    result = runner.invoke(main, ["--data", str(sample_data), "similar", bees, "-k", "3", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    ids = [s["id"] for s in data["similar"]]
    assert bees not in ids and len(ids) == 3
    # The honey episode (The Long Table) and the swarm-robotics episode (Signal Path) are about bees too.
    assert {"https://example.org/signal-path/episodes/1?v=1"} & set(ids)
    assert all(s["reasons"] for s in data["similar"])
    scores = [s["score"] for s in data["similar"]]
    assert scores == sorted(scores, reverse=True)


def test_similar_unknown_id_is_a_clear_error(runner, sample_data: Path):
    result = runner.invoke(main, ["--data", str(sample_data), "similar", "nope"])
    assert result.exit_code == 1
    assert "No episode with id 'nope'" in result.output


def test_stats_json(runner, sample_data: Path):
    result = runner.invoke(main, ["--data", str(sample_data), "stats", "--json"])
    assert result.exit_code == 0
    data = json.loads(result.output)
    assert data["episodes"] == 36 and data["shows"] == 3
    assert data["with_transcript"] == 36
    assert data["last_reindex"]["failed"] is False


def test_stats_text_reads_as_words(runner, sample_data: Path):
    """The figures other parts add (the server's load) were printed as Python: ``{'searches': 1, ..., 'x': None}``."""
    (sample_data / "server-load.json").write_text(json.dumps({"searches": 299, "timed_out": 0, "pid": 4242}))
    result = runner.invoke(main, ["--data", str(sample_data), "stats"])
    assert result.exit_code == 0
    line = next(x for x in result.output.splitlines() if x.startswith("server load: "))
    assert line.startswith("server load: searches 299, timed out 0, pid 4242") and "{" not in result.output
    assert "None" not in result.output


def test_commands_on_an_empty_data_folder_say_what_to_do(runner, tmp_path: Path):
    result = runner.invoke(main, ["--data", str(tmp_path / "empty"), "search", "bees"])
    assert result.exit_code == 1
    assert "Run 'podsearch reindex' first" in result.output


def test_reindex_without_feeds_is_misuse(runner, tmp_path: Path):
    """... and leaves nothing behind (it made the data folder and an empty catalog in it)."""
    result = runner.invoke(main, ["--data", str(tmp_path / "d"), "reindex"])
    assert result.exit_code == 2
    assert "No feeds" in result.output
    assert not (tmp_path / "d").exists()


def test_add_then_reindex_then_unchanged(runner, tmp_path: Path):
    from podsearch.sample import sample_feeds

    data = str(tmp_path / "d")
    feed = sample_feeds()[0]
    assert runner.invoke(main, ["--data", data, "add", feed]).output.startswith("added ")
    again = runner.invoke(main, ["--data", data, "add", feed])  # (it said "added" again)
    assert again.exit_code == 0 and "was added already" in again.output
    first = runner.invoke(main, ["--data", data, "-q", "reindex", "--json"])
    assert first.exit_code == 0, first.output
    report = json.loads(first.output)
    assert report["new"] == 12 and report["failed"] is False
    second = json.loads(runner.invoke(main, ["--data", data, "-q", "reindex", "--json"]).output)
    assert second["new"] == 0 and second["updated"] == 0 and second["unchanged"] == 12
    assert runner.invoke(main, ["--data", data, "-q", "reindex"]).output.startswith("1 feed (1 unchanged")  # not "1 feeds"
    assert second["index"] == {"added": 0, "updated": 0, "removed": 0}
    assert second["model"] == "unchanged"


def test_an_address_added_in_another_spelling_is_the_same_feed(runner, tmp_path: Path):
    """`HTTP://…`, `…/mini/../mini/k.xml` and `…/k.xml#frag` were each added as a feed of their own, and `remove` of
    the plain spelling then found none of them."""
    data = str(tmp_path / "d")
    first = runner.invoke(main, ["--data", data, "add", "HTTP://Feeds.Example.org:80/mini/../mini/k.xml#frag"])
    assert first.exit_code == 0 and "http://feeds.example.org/mini/k.xml" in first.output, first.output
    for spelling in ("http://feeds.example.org/mini/k.xml", "http://FEEDS.example.org/./mini/k.xml#top"):
        again = runner.invoke(main, ["--data", data, "add", spelling])
        assert again.exit_code == 0 and "was added already" in again.output, (spelling, again.output)
    assert runner.invoke(main, ["--data", data, "feeds"]).output.count("feeds.example.org") == 1
    gone = runner.invoke(main, ["--data", data, "remove", "http://feeds.example.org:80/mini/k.xml"])
    assert gone.exit_code == 0 and "removed http://feeds.example.org/mini/k.xml" in gone.output, gone.output
    assert "feeds.example.org" not in runner.invoke(main, ["--data", data, "feeds"]).output


def test_add_refuses_what_is_not_a_feed_source(runner, tmp_path: Path):
    result = runner.invoke(main, ["--data", str(tmp_path / "d"), "add", "ftp://example.org/feed"])
    assert result.exit_code == 2
    result = runner.invoke(main, ["--data", str(tmp_path / "d"), "add", str(tmp_path / "missing.xml")])
    assert result.exit_code == 2
    # no host (taken, and every later reindex failed on it), a port past 65535, nothing at all (named nothing)
    for source, said in [("http://", "no feed address: it has no host"), ("https://example.org:99999/f.xml", "port"),
                         ("", "No feed given"), ("  ", "No feed given")]:
        result = runner.invoke(main, ["--data", str(tmp_path / "d"), "add", source])
        assert result.exit_code == 2 and said in result.output, (source, result.output)


def test_reindex_with_a_config_file_and_a_broken_feed_exits_1(runner, tmp_path: Path):
    from podsearch.sample import sample_feeds

    broken = tmp_path / "broken.xml"
    broken.write_bytes(b"this is not a feed at all")
    cfg = tmp_path / "podsearch.toml"
    listed = ", ".join(f'"{p}"' for p in [sample_feeds()[1], str(broken)])
    cfg.write_text(f"feeds = [{listed}]\n")
    result = runner.invoke(main, ["--data", str(tmp_path / "d"), "--config", str(cfg), "-q", "reindex"])
    assert result.exit_code == 1
    assert "broken.xml" in result.output and "not a feed" in result.output
    assert "12 new" in result.output  # the good feed went in all the same
    # without -q the failure is said once, as its error: line (the library's log said it again before, as
    # "WARNING podsearch.ingest.run: feed ... failed"); a process of its own, whose logging the command sets up
    done = subprocess.run([sys.executable, "-m", "podsearch", "--data", str(tmp_path / "d"), "--config", str(cfg),
                           "reindex"], capture_output=True, text=True, timeout=300)
    said = [line for line in (done.stdout + done.stderr).splitlines() if "broken.xml" in line and "not a feed" in line]
    assert done.returncode == 1 and len(said) == 1 and said[0].startswith("error: "), done.stderr


@pytest.mark.parametrize("args", [["reindex", "--bogus"], ["search"], ["similar"]])
def test_misuse_exits_2(runner, args):
    assert runner.invoke(main, args).exit_code == 2


@pytest.mark.parametrize("command", [["reindex"], ["serve"], ["demo", "--no-serve"], ["stats"], ["search", "go"],
                                     ["import", "episodes.jsonl"]])
@pytest.mark.parametrize("env, message", [
    ({"PODSEARCH_THREADS": "0"}, "bad value for threads"),
    ({"PODSEARCH_DATA": "IS_A_FILE"}, "is a file, not a folder"),
    ({"PODSEARCH_ENGINE": "opensearch", "PODSEARCH_OPENSEARCH_URL": "notaurl"}, "opensearch_url must be"),
    ({"PODSEARCH_ENGINE": "opensearch", "PODSEARCH_OPENSEARCH_URL": "http://127.0.0.1:99999"},
     "its port is no number from 1 to 65535"),
])
def test_a_refused_setting_is_misuse_said_plainly_by_every_command(runner, tmp_path: Path, monkeypatch, command,
                                                                   env, message):
    """Exit 2 (misuse), one line naming the setting, no traceback: ``serve`` and ``demo`` read the settings
    outside their error handling and ended in a traceback; ``reindex`` said 1, which means a feed failed."""
    afile = tmp_path / "catalog.txt"
    afile.write_text("x")
    (tmp_path / "episodes.jsonl").write_text(json.dumps({"id": "a", "title": "t", "show": "s"}) + "\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PODSEARCH_FEEDS", str(tmp_path / "feed.xml"))
    monkeypatch.setenv("PODSEARCH_PORT", "0")
    for key, value in env.items():
        monkeypatch.setenv(key, str(afile) if value == "IS_A_FILE" else value)
    if "PODSEARCH_DATA" not in env:
        monkeypatch.setenv("PODSEARCH_DATA", str(tmp_path / "d"))
    result = runner.invoke(main, command)
    assert result.exit_code == 2, (result.output, result.exception)
    assert isinstance(result.exception, SystemExit)  # said, not raised
    assert message in result.output and "Traceback" not in result.output


@pytest.mark.parametrize("args, message", [
    (["serve", "--threads", "0"], "--threads: bad value for threads"),
    (["serve", "--threads", "-2"], "--threads: bad value for threads"),
    (["serve", "--port", "99999"], "--port: bad value for port"),
    (["serve", "--port", "-1"], "--port: bad value for port"),
    (["demo", "--port", "70000"], "--port: bad value for port"),
    (["reindex", "--memory", "lots"], "--memory: bad value for build_memory"),
])
def test_an_option_is_checked_as_its_setting_is(runner, tmp_path: Path, monkeypatch, args, message):
    """``serve --threads 0`` started a server that took connections and never answered them (and ignored
    SIGTERM), ``--port 99999`` served on another port, ``--port -1`` ended in a traceback, while the same values
    in the config file or the environment were refused; ``--memory lots`` was said as ``--build-memory``."""
    monkeypatch.setenv("PODSEARCH_DATA", str(tmp_path / "d"))
    monkeypatch.setenv("PODSEARCH_FEEDS", str(tmp_path / "feed.xml"))
    result = runner.invoke(main, args)
    assert result.exit_code == 2, (result.output, result.exception)
    assert message in result.output and "Traceback" not in result.output


def test_serve_on_a_taken_port_says_so_in_one_line(tmp_path: Path, sample_data: Path):
    """The port taken ended ``serve`` in a traceback (OSError, errno 98); now one line and exit 1."""
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = subprocess.run([sys.executable, "-m", "podsearch", "--data", str(sample_data), "serve", "--port",
                               str(port)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 1, done.stderr
    assert f"Cannot listen on 127.0.0.1:{port}" in done.stderr and "Traceback" not in done.stderr


def test_commands_that_only_read_make_no_data_folder(runner, tmp_path: Path, monkeypatch):
    """``feeds`` and ``watch list`` on a mistyped ``--data`` made the folder and an empty catalog there, exit 0
    (after which ``stats`` said zeros instead of "No catalog"); now "No catalog", exit 1, and nothing made (``remove``
    too: it made them, then said "No feed", until 5 December 2026). With
    feeds in the config, ``feeds`` lists them as not read yet (before the first reindex)."""
    data = tmp_path / "mistyped"
    for command in (["watch", "list"], ["watch", "remove", "1"], ["feeds"], ["stats"],
                    ["remove", "https://example.org/feed.xml"]):
        result = runner.invoke(main, ["--data", str(data), *command])
        assert result.exit_code == 1 and "No catalog in" in result.output, (command, result.output)
    monkeypatch.setenv("PODSEARCH_FEEDS", str(tmp_path / "feed.xml"))
    listed = runner.invoke(main, ["--data", str(data), "feeds"])
    assert listed.exit_code == 0 and "feed.xml" in listed.output
    assert not data.exists()


@pytest.mark.parametrize("command", [["reindex"], ["import", "episodes.jsonl"], ["demo", "--no-serve"]])
def test_a_data_folder_that_cannot_be_made_is_a_clear_failure(runner, tmp_path: Path, monkeypatch, command):
    """A data folder under a file (or on a read-only file system) ended ``reindex`` and ``import`` in a
    traceback; now one line and exit 1 (the command was right, the machine refused)."""
    (tmp_path / "afile").write_text("x")
    (tmp_path / "episodes.jsonl").write_text(json.dumps({"id": "a", "title": "t", "show": "s"}) + "\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PODSEARCH_FEEDS", str(tmp_path / "feed.xml"))
    result = runner.invoke(main, ["--data", str(tmp_path / "afile" / "data"), *command])
    assert result.exit_code == 1, (result.output, result.exception)
    assert isinstance(result.exception, SystemExit)
    assert "afile" in result.output and "Traceback" not in result.output
    assert ("Cannot make the data folder" in result.output or "Cannot open the catalog" in result.output)


def test_stats_says_a_later_reindex_did_not_finish(runner, sample_data: Path, tmp_path: Path):
    """A reindex stopped by an error (here: the OpenSearch engine's cluster unreachable) left `stats` saying the
    run before it, "ok", as if it had not been tried."""
    from opensearch_node import free_port

    line = {"id": "late-1", "show": "Late", "title": "Late", "transcript": "Otters at night."}
    (tmp_path / "late.jsonl").write_text(json.dumps(line) + "\n", encoding="utf-8")
    failed = runner.invoke(main, ["--data", str(sample_data), "import", str(tmp_path / "late.jsonl")],
                           env={"PODSEARCH_ENGINE": "opensearch",
                                "PODSEARCH_OPENSEARCH_URL": f"http://127.0.0.1:{free_port()}",
                                "PODSEARCH_OPENSEARCH_TIMEOUT": "2"})
    assert failed.exit_code == 1, failed.output
    data = json.loads(runner.invoke(main, ["--data", str(sample_data), "stats", "--json"]).output)
    assert data["last_reindex"]["failed"] is False  # (the last that finished)
    [unfinished] = data["unfinished_reindexes"]
    assert "unavailable" in unfinished["aborted"]
    text = runner.invoke(main, ["--data", str(sample_data), "stats"]).output
    assert "did not finish: OpenSearch at http://127.0.0.1:" in text


@pytest.mark.parametrize("damaged", ["*.trm", "_MAIN_*.toc"])
def test_an_index_segment_that_cannot_be_read_is_said_in_one_line_and_a_reindex_rebuilds_it(runner, sample_data: Path,
                                                                                              damaged: str):
    """A segment file cut short (a full disk, a restore cut short) ended ``stats``, ``search`` and a plain ``reindex``
    in Whoosh's traceback (``UnpicklingError: invalid load key``), naming no file; only ``reindex --full``, which
    nothing suggested, repaired it. Now ``stats`` prints its figures with the index's error and exits 1 (a monitor
    sees it), ``search`` says it in one line, and a plain ``reindex`` rebuilds the index in full. The same for the
    index's table of contents cut short (Whoosh's ``exists_in`` raised)."""
    [generation] = (sample_data / "index").glob("gen-*")
    [terms] = generation.glob(damaged)
    terms.write_bytes(terms.read_bytes()[: min(20, terms.stat().st_size // 2) if damaged.endswith(".toc")
                                         else terms.stat().st_size // 2])
    stats = runner.invoke(main, ["--data", str(sample_data), "stats", "--json"])
    assert stats.exit_code == 1 and isinstance(stats.exception, SystemExit), stats.output
    figures = json.loads(stats.output)
    assert figures["episodes"] == 36 and f"The search index in {generation} cannot be read" in figures["index_error"]
    assert "run 'podsearch reindex'" in figures["index_error"]
    text = runner.invoke(main, ["--data", str(sample_data), "stats"])
    assert text.exit_code == 1 and "index: The search index in" in text.output and "Traceback" not in text.output
    search = runner.invoke(main, ["--data", str(sample_data), "search", "water"])
    assert search.exit_code == 1 and isinstance(search.exception, SystemExit)
    assert "cannot be read" in search.output and "run 'podsearch reindex'" in search.output
    again = runner.invoke(main, ["--data", str(sample_data), "reindex"])
    assert again.exit_code == 0, (again.output, again.exception)
    assert "index: 36 added" in again.output
    found = runner.invoke(main, ["--data", str(sample_data), "search", "water", "--json"])
    assert found.exit_code == 0 and json.loads(found.output)["total"] > 0
    assert runner.invoke(main, ["--data", str(sample_data), "stats"]).exit_code == 0


def test_a_damaged_catalog_is_said_in_one_line_by_every_command(runner, sample_data: Path):
    """A catalog whose first pages are damaged ended every command, ``stats`` and ``search`` too, in SQLite's
    traceback (``file is not a database``, at ``PRAGMA journal_mode``), naming no file; ``serve`` too. Now one line
    naming the catalog and what to do, exit 1."""
    catalog = sample_data / "catalog.sqlite"
    with catalog.open("r+b") as fh:
        fh.write(b"\x5a" * 4096)
    for command in (["stats"], ["search", "water"], ["feeds"], ["watch", "list"], ["reindex"]):
        result = runner.invoke(main, ["--data", str(sample_data), *command])
        assert result.exit_code == 1 and isinstance(result.exception, SystemExit), (command, result.output)
        assert f"Cannot open the catalog {catalog}: file is not a database; the file is damaged" in result.output
    done = subprocess.run([sys.executable, "-m", "podsearch", "--data", str(sample_data), "serve", "--port", "0"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 1 and "Cannot open the catalog" in done.stderr and "Traceback" not in done.stderr


@pytest.mark.skipif(not (hasattr(os, "geteuid") and os.geteuid() == 0 and shutil.which("setpriv")),
                    reason="reads a data folder it may not write as root without CAP_DAC_OVERRIDE (setpriv)")
def test_a_data_folder_it_may_not_write_is_said_in_one_line(sample_data: Path):
    """A data folder the user may read but not write (a server run as another user than the reindex) ended every
    command in ``attempt to write a readonly database``'s traceback. Now one line saying what to do, exit 1."""
    for path in [sample_data, *sample_data.rglob("*")]:
        path.chmod(path.stat().st_mode & ~0o222)
    try:
        done = subprocess.run(["setpriv", "--bounding-set", "-dac_override,-dac_read_search", "--", sys.executable,
                               "-m", "podsearch", "--data", str(sample_data), "stats"],
                              capture_output=True, text=True, timeout=120)
    finally:
        for path in [sample_data, *sample_data.rglob("*")]:
            path.chmod(path.stat().st_mode | 0o200)
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    assert "attempt to write a readonly database" in done.stderr and "who may write in the data folder" in done.stderr


@pytest.mark.skipif(not (hasattr(os, "geteuid") and os.geteuid() == 0 and shutil.which("setpriv")),
                    reason="reads a data folder it may not read as root without CAP_DAC_OVERRIDE (setpriv)")
def test_a_data_folder_or_part_it_may_not_read_is_said_in_one_line_with_what_to_do(sample_data: Path):
    """EACCES on the data folder, its catalog, an index or a model generation (a folder made by another user, 0700):
    the folder was said as a full disk ("free room and run it again"), an index generation as no index at all
    ("No index ...; run 'podsearch reindex' first", and ``stats`` said 0 documents, exit 0: Whoosh lists a folder
    it may not read as empty), the catalog without advice, the model with "rebuild it". Now each is one line naming
    the file and saying to run as a user who may read and write the data folder, exit 1, no traceback."""
    index = sample_data / "index" / (sample_data / "index" / "CURRENT").read_text().strip()
    model = sample_data / "model" / (sample_data / "model" / "CURRENT").read_text().strip()
    advice = "run it as a user who may read and write the data folder"
    import sqlite3

    db = sqlite3.connect(sample_data / "catalog.sqlite")
    episode_id = db.execute("SELECT id FROM episodes ORDER BY id LIMIT 1").fetchone()[0]
    db.close()

    def podsearch(*args: str) -> subprocess.CompletedProcess:
        done = subprocess.run(["setpriv", "--bounding-set", "-dac_override,-dac_read_search", "--", sys.executable,
                               "-m", "podsearch", "--data", str(sample_data), *args],
                              capture_output=True, text=True, timeout=120)
        assert "Traceback" not in done.stderr, done.stderr
        return done

    def refused(path: Path, commands: list[list[str]]) -> list[subprocess.CompletedProcess]:
        mode = path.stat().st_mode
        path.chmod(0)
        try:
            return [podsearch(*command) for command in commands]
        finally:
            path.chmod(mode)

    for done in refused(sample_data, [["stats"], ["search", "water"], ["reindex"], ["serve", "--port", "0"]]):
        assert done.returncode == 1 and len(done.stderr.strip().splitlines()) == 1, done.stderr
        assert f"Cannot read or write in the data folder {sample_data}" in done.stderr and "Permission denied" in \
            done.stderr and advice in done.stderr and "free room" not in done.stderr, done.stderr
    stats, search = refused(index, [["stats"], ["search", "water"]])
    assert stats.returncode == 1 and "index: 0 documents" not in stats.stdout, stats.stdout
    assert f"The search index in {index} cannot be read (PermissionError" in stats.stdout + stats.stderr
    assert search.returncode == 1 and f"The search index in {index} cannot be read (PermissionError" in search.stderr
    assert advice in search.stderr and "No index" not in search.stderr, search.stderr
    (stats,) = refused(sample_data / "catalog.sqlite", [["stats"]])
    assert stats.returncode == 1 and "unable to open database file; " in stats.stderr and advice in stats.stderr
    stats, similar = refused(model, [["stats"], ["similar", episode_id]])
    assert stats.returncode == 1 and advice in stats.stdout, stats.stdout
    assert similar.returncode == 1 and "Permission denied" in similar.stderr and advice in similar.stderr
    assert "rebuild it" not in similar.stderr, similar.stderr


def test_a_full_disk_during_a_reindex_is_said_in_one_line_with_its_cause(runner, sample_data: Path):
    """A rebuild that met a full disk (here a file size limit: EFBIG, as ENOSPC) ended in three chained tracebacks,
    the last ``ValueError: I/O operation on closed file`` (the writer's cleanup failing in turn), which was also
    what ``stats`` said of the run: the cause was hidden. Now one line with the cause, exit 1, ``stats`` names it
    too, the live index serves on, and a run with room completes."""
    import resource

    def small_files() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (300 * 1024, resource.RLIM_INFINITY))

    done = subprocess.run([sys.executable, "-m", "podsearch", "--data", str(sample_data), "reindex", "--full"],
                          capture_output=True, text=True, timeout=300, preexec_fn=small_files)
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr and "closed file" not in done.stderr, done.stderr
    assert f"Cannot write in the data folder {sample_data} (or the temporary folder): [Errno 27] File too large" \
        in done.stderr
    figures = json.loads(runner.invoke(main, ["--data", str(sample_data), "stats", "--json"]).output)
    assert [run["aborted"] for run in figures["unfinished_reindexes"]] == ["[Errno 27] File too large"]
    assert figures["index_documents"] == 36
    found = runner.invoke(main, ["--data", str(sample_data), "search", "water", "--json"])
    assert found.exit_code == 0 and json.loads(found.output)["total"] > 0
    again = runner.invoke(main, ["--data", str(sample_data), "reindex", "--full"])
    assert again.exit_code == 0, again.output
    assert not list((sample_data / "index").glob("*.tmp"))
    fresh = sample_data.parent / "fresh"  # the catalog's writes: SQLite says "disk I/O error"
    done = subprocess.run([sys.executable, "-m", "podsearch", "--data", str(fresh), "demo", "--no-serve"],
                          capture_output=True, text=True, timeout=300, preexec_fn=small_files)
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    assert f"Cannot write in the data folder {fresh} (or the temporary folder): disk I/O error" in done.stderr


def test_a_full_disk_during_an_incremental_index_write_is_said_and_leaves_no_segment(runner, tmp_path: Path):
    """The full-disk case of an incremental write (an import into an existing index, written in place): the commit
    failed with EFBIG/ENOSPC and closed Whoosh's writer, then cancelling it raised ``This writer is closed``: a
    traceback, and ``stats`` gave that line as the cause; the half-written segment stayed in the live index folder
    until a later commit worked. Found by the kill campaign of 5 December 2026 on a nearly full loop-mounted disk.
    Now one line with the cause, recorded, the live index unchanged and no file of the failed segment left."""
    import random
    import resource

    data = tmp_path / "data"
    small, big = tmp_path / "small.jsonl", tmp_path / "big.jsonl"
    small.write_text("".join(json.dumps({"id": f"s-{i}", "show": "Small", "title": f"Small {i}", "language": "en",
                                         "transcript": "water and bread " * 50}) + "\n" for i in range(3)))
    rng = random.Random(3)  # words no other episode has: a segment larger than the file size limit below
    words = ["".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(5, 10))) for _ in range(6000)]
    big.write_text(json.dumps({"id": "big-1", "show": "Big", "title": "Big one", "language": "en",
                               "transcript": " ".join(words)}) + "\n")
    assert runner.invoke(main, ["--data", str(data), "import", str(small)]).exit_code == 0
    live = data / "index" / (data / "index" / "CURRENT").read_text().strip()
    files = sorted(p.name for p in live.iterdir())

    def small_files() -> None:  # the catalog (127 KB) is below it, the new segment above
        resource.setrlimit(resource.RLIMIT_FSIZE, (300 * 1024, resource.RLIM_INFINITY))

    done = subprocess.run([sys.executable, "-m", "podsearch", "--data", str(data), "import", str(big)],
                          capture_output=True, text=True, timeout=300, preexec_fn=small_files)
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    assert "[Errno 27] File too large" in done.stderr and "writer is closed" not in done.stderr
    assert sorted(p.name for p in live.iterdir()) == files  # nothing of the failed segment
    figures = json.loads(runner.invoke(main, ["--data", str(data), "stats", "--json"]).output)
    assert [run["aborted"] for run in figures["unfinished_reindexes"]] == ["[Errno 27] File too large"]
    assert figures["index_documents"] == 3 and "index_error" not in figures
    again = runner.invoke(main, ["--data", str(data), "import", str(big)])
    assert again.exit_code == 0, again.output
    assert json.loads(runner.invoke(main, ["--data", str(data), "stats", "--json"]).output)["index_documents"] == 4


def test_a_full_disk_gets_its_room_back_and_the_cause_is_recorded(tmp_path: Path, sample_data: Path, runner):
    """On a disk that really fills up (a 4.6 MB tmpfs, the sample's 3.4 MB data folder on it, ``reindex --full``):
    the half-written index generation stayed there until the next run, keeping the disk full, and recording the
    failed run in the catalog failed in turn (``database or disk is full``), which replaced the cause in the message
    and left ``stats`` saying "killed, or running now". Now the folder is removed as the run fails, and the cause,
    ``No space left on device``, is both said and recorded."""
    mount = tmp_path / "small"
    mount.mkdir()
    made = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4600k", "tmpfs", str(mount)], capture_output=True)
    if made.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs here: {made.stderr.decode(errors='replace').strip()}")
    try:
        data = mount / "data"
        shutil.copytree(sample_data, data, ignore=shutil.ignore_patterns("server-load.json"))
        done = subprocess.run([sys.executable, "-m", "podsearch", "--data", str(data), "reindex", "--full"],
                              capture_output=True, text=True, timeout=300)
        assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
        assert "No space left on device" in done.stderr, done.stderr
        assert not list((data / "index").glob("*.tmp")) and not list((data / "model").glob("*.tmp"))
        figures = json.loads(runner.invoke(main, ["--data", str(data), "stats", "--json"]).output)
        assert [run["aborted"] for run in figures["unfinished_reindexes"]] == ["[Errno 28] No space left on device"]
        found = runner.invoke(main, ["--data", str(data), "search", "water", "--json"])
        assert found.exit_code == 0 and json.loads(found.output)["total"] > 0
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def test_a_reindex_refits_a_model_whose_files_are_cut_short(runner, sample_data: Path):
    """A plain ``reindex`` (the scheduled one too) said ``model: unchanged`` over a model whose ``vectorizer.pkl`` was
    cut short, so ``/similar`` stayed down until someone ran ``reindex --full`` (which rebuilds the index too: ten
    minutes on the site corpus). The model keeps its files' sizes now; a file that differs is said (``similar``, one
    line) and the next plain reindex refits the model, then leaves it unchanged again."""
    [generation] = (sample_data / "model").glob("gen-*")
    pickled = generation / "vectorizer.pkl"
    saved = pickled.stat().st_size
    pickled.write_bytes(pickled.read_bytes()[:5000])
    broken = runner.invoke(main, ["--data", str(sample_data), "similar", "x"])
    assert broken.exit_code == 1 and isinstance(broken.exception, SystemExit), broken.output
    assert f"vectorizer.pkl has 5,000 bytes of the {saved:,} saved); run 'podsearch reindex' to refit it" in broken.output
    again = runner.invoke(main, ["--data", str(sample_data), "reindex"])
    assert again.exit_code == 0 and "model: refitted" in again.output, again.output
    episode = json.loads(runner.invoke(main, ["--data", str(sample_data), "search", "water", "--json"]).output)
    near = runner.invoke(main, ["--data", str(sample_data), "similar", episode["hits"][0]["id"], "--json"])
    assert near.exit_code == 0 and json.loads(near.output)["similar"], near.output
    assert "model: unchanged" in runner.invoke(main, ["--data", str(sample_data), "reindex"]).output


def test_stats_says_whether_the_server_that_wrote_its_load_is_running(runner, sample_data: Path):
    """``server-load.json`` outlives the server: after it stopped (or died), ``stats`` showed its last figures as if
    it were serving. Now ``running``: whether its pid is alive."""
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    for pid, running in ((int(gone.stdout), False), (os.getpid(), True)):
        (sample_data / "server-load.json").write_text(json.dumps({"searches": 3, "pid": pid}))
        figures = json.loads(runner.invoke(main, ["--data", str(sample_data), "stats", "--json"]).output)
        assert figures["server_load"]["running"] is running, pid
        text = runner.invoke(main, ["--data", str(sample_data), "stats"]).output
        assert f"pid {pid}, written age seconds" in text and f"running {running}" in text


def test_stats_tells_a_model_that_cannot_be_used(runner, sample_data: Path):
    """``stats`` said nothing of the model: one cut short (``/similar`` and ``/readyz`` 503) or built by another
    version looked as healthy as a good one, exit 0. Now ``model_generation`` always, ``model_error`` with what to do
    (from its parameters and file sizes, without loading it), and exit 1 while there is one."""
    [generation] = (sample_data / "model").glob("gen-*")
    healthy = runner.invoke(main, ["--data", str(sample_data), "stats", "--json"])
    assert healthy.exit_code == 0 and json.loads(healthy.output)["model_generation"] == generation.name
    assert "model_error" not in json.loads(healthy.output)
    pickled = generation / "vectorizer.pkl"
    pickled.write_bytes(pickled.read_bytes()[:5000])
    cut = runner.invoke(main, ["--data", str(sample_data), "stats", "--json"])
    assert cut.exit_code == 1 and "vectorizer.pkl has 5,000 bytes" in json.loads(cut.output)["model_error"]
    text = runner.invoke(main, ["--data", str(sample_data), "stats"])
    assert text.exit_code == 1 and "model: The similarity model in" in text.output and "Traceback" not in text.output
    params = json.loads((generation / "params.json").read_text())
    (generation / "params.json").write_text(json.dumps({**params, "model_version": -1}))
    stale = json.loads(runner.invoke(main, ["--data", str(sample_data), "stats", "--json"]).output)
    assert stale["model_error"] == "The similarity model was built by another version; run 'podsearch reindex'."
    assert runner.invoke(main, ["--data", str(sample_data), "reindex"]).exit_code == 0
    assert runner.invoke(main, ["--data", str(sample_data), "stats"]).exit_code == 0
