"""The reindex lock (lock.py) and children bound to their parent (procs.py), with real processes."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from soak.crash import survivors, wait_for_no_survivors

from podsearch.errors import ReindexRunning
from podsearch.lock import ReindexLock

HOLDER = textwrap.dedent("""
    import os, sys, time
    from pathlib import Path
    from podsearch.lock import ReindexLock
    from podsearch import procs
    if sys.argv[2] in ("bind", "poll"):
        procs.bind_children_to_me()
    if sys.argv[2] == "poll":  # as where prctl is missing: the child watches for its parent
        procs._prctl = None
    with ReindexLock(Path(sys.argv[1])):
        child = os.fork()
        if child == 0:
            time.sleep(60)
            os._exit(0)
        print(child, flush=True)
        time.sleep(60)
""")


def _holder(data: Path, mode: str) -> tuple[subprocess.Popen, int]:
    """A process that takes the lock, forks a child that sleeps, and sleeps; returns it and the child's pid."""
    proc = subprocess.Popen([sys.executable, "-c", HOLDER, str(data), mode], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    return proc, int(proc.stdout.readline())


def _start_time(pid: int) -> int:
    text = Path(f"/proc/{pid}/stat").read_text()
    return int(text[text.rindex(")") + 2:].split()[19])


def test_a_second_holder_in_the_same_process_is_refused(tmp_path: Path) -> None:
    with ReindexLock(tmp_path):
        with pytest.raises(ReindexRunning, match=f"pid {os.getpid()}"):
            ReindexLock(tmp_path).__enter__()
        with pytest.raises(ReindexRunning):
            ReindexLock(tmp_path, wait=True, timeout=0.3).__enter__()
    with ReindexLock(tmp_path) as lock:  # released: free again, and nothing was taken over
        assert lock.previous_holder is None and lock.taken_over == ""
    assert (tmp_path / "reindex.lock").read_text() == ""


def test_the_lock_is_held_by_the_parent_alone_and_taken_over_when_it_dies(tmp_path: Path) -> None:
    proc, child = _holder(tmp_path, "plain")
    seen = {child: _start_time(child)}
    try:
        with pytest.raises(ReindexRunning, match=f"pid {proc.pid}"):
            ReindexLock(tmp_path).__enter__()
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
        time.sleep(0.2)
        assert survivors(seen) == [child]  # a plain fork outlives its parent (the child is not bound)...
        with ReindexLock(tmp_path) as lock:  # ...but holds no lock: the dead holder's lock is taken over
            assert lock.previous_holder == proc.pid
            assert f"(pid {proc.pid}) ended without releasing its lock" in lock.taken_over
    finally:
        for pid in survivors(seen):
            os.kill(pid, signal.SIGKILL)


@pytest.mark.parametrize("mode", ["bind", "poll"])
def test_bound_children_die_with_their_parent(tmp_path: Path, mode: str) -> None:
    proc, child = _holder(tmp_path, mode)
    seen = {child: _start_time(child)}
    try:
        assert survivors(seen) == [child]
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
        assert wait_for_no_survivors(seen, timeout=5) == []
    finally:
        for pid in survivors(seen):
            os.kill(pid, signal.SIGKILL)
