"""Crash safety: ``kill -9`` a real ``podsearch reindex`` in each phase, 20 times (the harness is tests/soak/crash.py),
and once while Whoosh's worker processes build the index: none of them survives, the lock is taken over.

After each kill the catalog is intact, a Library serves the last good index and model, and the next reindex
gives exactly what an uninterrupted run gives. ``python tests/soak/crash.py --runs 100`` runs more.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from faultserver import FaultServer, RedirectLoop, Slow
from soak import crash
from soak.state import index_docs

from podsearch.catalog import Catalog
from podsearch.config import load_config
from podsearch.engines.whoosh import PARALLEL_FROM
from podsearch.reindex import reindex

RUNS = 20


@pytest.mark.slow
def test_kill_9_at_random_points_loses_nothing(corpus: Path, tmp_path: Path) -> None:
    lines: list[str] = []
    summary = crash.run(corpus, tmp_path, RUNS, seed=8, log=lines.append)
    print("\n".join(lines))
    assert summary["killed"] >= RUNS - 2, summary  # a trial whose process had already exited cannot be killed
    phases = summary["phases"]
    assert phases.get("fetching", 0) >= 3 and phases.get("index", 0) >= 3, summary
    assert phases.get("model-fit", 0) + phases.get("model-save", 0) >= 6, summary
    # Kills before the index commit must have left the old index serving, later ones the new one: both happen.
    served = " ".join(summary["served_after_kill"])
    assert "index=base" in served and "index=reference" in served, summary


def _start_reindex(data: Path, *args: str, config: Path | None = None) -> tuple[subprocess.Popen, crash._LogReader]:
    options = ["--config", str(config)] if config else []
    proc = subprocess.Popen([sys.executable, "-m", "podsearch", "--data", str(data), *options, "-v", "reindex", *args],
                            stderr=subprocess.PIPE, stdout=subprocess.DEVNULL)
    return proc, crash._LogReader(proc)


@pytest.fixture(scope="module")
def gotime_data(corpus: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One show with more episodes than the Whoosh engine's PARALLEL_FROM, indexed once from its file (copy it before use)."""
    data = tmp_path_factory.mktemp("gotime") / "data"
    config = load_config({"data": str(data), "feeds": [str(corpus / "site" / "feeds" / "gotime.xml")]}, environ={})
    report = reindex(config)
    assert not report.failed and report.new >= PARALLEL_FROM, report.errors[:3]
    return data


def test_kill_9_during_the_parallel_index_build_leaves_no_process_and_no_lock(gotime_data: Path,
                                                                              tmp_path: Path) -> None:
    data = tmp_path / "data"
    shutil.copytree(gotime_data, data)
    proc, lines = _start_reindex(data, "--full")
    watcher = crash.ChildWatcher(proc.pid)
    deadline = time.monotonic() + 120
    # Whoosh forks its writer workers once the first batch of episodes is handed out.
    while len(watcher.seen) < 2 and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)
    assert len(watcher.seen) >= 2, f"no index workers were seen\n{lines.text()}"
    assert "writing the index: full rebuild" in lines.text()
    proc.kill()
    proc.wait(timeout=30)
    seen = watcher.stop()
    assert crash.wait_for_no_survivors(seen) == [], f"processes of the killed reindex survive: {seen}"

    again, lines = _start_reindex(data)
    assert again.wait(timeout=300) == 0, lines.text()
    lines.join(timeout=10)
    assert f"(pid {proc.pid}) ended without releasing its lock" in lines.text()
    assert "note: the last run (reindex, import or remove)" in lines.text()  # (a note, as docs/cli.md says)
    assert index_docs(data).keys() == index_docs(gotime_data).keys()


def _kitchen(items: list[tuple[str, int, str]]) -> bytes:
    """A feed of (guid, day, transcript path) items."""
    body = "".join(f'<item><title>Kitchen {day}</title><guid isPermaLink="false">{guid}</guid>'
                   f"<pubDate>Mon, {day:02d} Jan 2024 10:00:00 GMT</pubDate>"
                   f'<podcast:transcript url="{path}" type="text/vtt"/></item>' for guid, day, path in items)
    return (f'<?xml version="1.0"?><rss version="2.0" xmlns:podcast="https://podcastindex.org/namespace/1.0">'
            f"<channel><title>Kitchen Radio</title><link>https://example.org/</link>{body}</channel></rss>").encode()


def _moves_and_aliases(data: Path) -> tuple[dict, list, list]:
    with Catalog.in_dir(data) as cat:
        feeds = {f["source"]: (f["url"], f["last_modified"]) for f in cat.feeds()}
        aliases = sorted(tuple(r) for r in cat.db.execute("SELECT show_id, alias, episode_id FROM aliases"))
        episodes = sorted(tuple(r) for r in cat.db.execute("SELECT id, gone FROM episodes"))
    return feeds, aliases, episodes


def test_kill_9_between_a_move_and_its_episodes_records_neither(tmp_path: Path) -> None:
    """A feed that moved (a 301) and changed its guids in the same run: the move and the items' new ids (aliases)
    were committed before its episodes, while its transcripts were read. Killed there, the catalog said the feed
    was read at its new address, with the old address's validators (sent there next run: a 304 from a server that
    only compares dates, and what the new address holds was not read until it changed), though nothing had been
    read from there.
    Now the move and the aliases go in with the episodes, in one transaction: killed there, none of them is."""
    www = tmp_path / "www"
    (www / "t").mkdir(parents=True)
    for n in range(1, 5):
        (www / "t" / f"k{n}.vtt").write_text(f"WEBVTT\n\n00:00:01.000 --> 00:00:04.000\nKitchen {n} words.\n")
    (www / "a.xml").write_bytes(_kitchen([(f"k-{n}", n, f"t/k{n}.vtt") for n in range(1, 4)]))
    server = FaultServer(www).start()
    server.etags = False  # Last-Modified alone: /m.xml (served from memory) is older than a.xml's file
    try:
        a, m = server.url("a.xml"), server.url("m.xml")
        data = tmp_path / "data"
        cfg = tmp_path / "podsearch.toml"
        cfg.write_text(f'feeds = ["{a}"]\nallow_private_hosts = true\nfetch_timeout = 120\n', encoding="utf-8")
        assert not reindex(load_config({"data": str(data), "feeds": [a], "allow_private_hosts": True},
                                       environ={})).failed
        before = _moves_and_aliases(data)
        # The feed moves, its guids become URLs, and a new episode's transcript takes long: the kill comes then.
        server.faults["/a.xml"] = RedirectLoop("/m.xml", status=301)
        server.files["/m.xml"] = _kitchen([(f"https://example.org/k/{n}", n, f"t/k{n}.vtt") for n in range(1, 4)]
                                          + [("https://example.org/k/4", 4, "t/slow.vtt")])
        server.faults["/t/slow.vtt"] = Slow(b"WEBVTT\n\n00:00:01.000 --> 00:00:02.000\nSlow.\n", 600, "text/vtt")
        proc, lines = _start_reindex(data, config=cfg)
        deadline = time.monotonic() + 60
        while server.hits("/t/slow.vtt") == 0 and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.01)
        assert server.hits("/t/slow.vtt") == 1, lines.text()
        proc.kill()
        proc.wait(timeout=30)
        assert _moves_and_aliases(data) == before  # no move, no alias, no episode of the run
        # The next run does it all.
        server.faults["/t/slow.vtt"] = Slow(b"WEBVTT\n\n00:00:01.000 --> 00:00:02.000\nSlow.\n", 0, "text/vtt")
        report = reindex(load_config({"data": str(data), "feeds": [a], "allow_private_hosts": True}, environ={}))
        assert not report.failed and (report.new, report.gone) == (1, 0), report.errors
        feeds, aliases, episodes = _moves_and_aliases(data)
        assert feeds == {a: (m, "Sun, 09 Sep 2001 01:46:40 GMT")}  # (what /m.xml said)
        assert [alias for _, alias, _ in aliases] == [f"https://example.org/k/{n}" for n in range(1, 4)]
        assert episodes == [("https://example.org/k/4", 0), ("k-1", 0), ("k-2", 0), ("k-3", 0)]
    finally:
        server.stop()
