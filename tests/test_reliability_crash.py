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
from soak import crash
from soak.state import index_docs

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


def _start_reindex(data: Path, *args: str) -> tuple[subprocess.Popen, crash._LogReader]:
    proc = subprocess.Popen([sys.executable, "-m", "podsearch", "--data", str(data), "-v", "reindex", *args],
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
    assert "writing the index (full rebuild)" in lines.text()
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
