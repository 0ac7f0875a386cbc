"""Generation folders swapped in atomically: ``<root>/CURRENT`` names the live folder.

A full rebuild writes a new folder and then replaces CURRENT with ``os.replace`` (atomic on POSIX), so a
reader always sees either the old or the new generation, and a crash leaves the old one serving.
"""

from __future__ import annotations

import logging
import os
import shutil
import time
from pathlib import Path

log = logging.getLogger(__name__)


class Generations:
    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self.pointer = self.root / "CURRENT"
        self._seen: tuple[tuple[int, int, int], tuple[str, float]] | None = None

    def current(self) -> Path | None:
        try:
            name = self.pointer.read_text(encoding="utf-8").strip()
        except FileNotFoundError:
            return None
        path = self.root / name
        return path if name and path.is_dir() else None

    def stamp(self) -> tuple[str, float]:
        """A cheap value that changes whenever a new generation is swapped in."""
        try:
            st = self.pointer.stat()
        except FileNotFoundError:
            return ("", 0.0)
        key = (st.st_ino, st.st_mtime_ns, st.st_size)  # publish() replaces the file: a new inode
        seen = self._seen
        if seen is not None and seen[0] == key:
            return seen[1]
        try:
            stamp = (self.pointer.read_text(encoding="utf-8").strip(), st.st_mtime)
        except FileNotFoundError:
            return ("", 0.0)
        self._seen = (key, stamp)
        return stamp

    def new(self) -> Path:
        self.root.mkdir(parents=True, exist_ok=True)
        name = f"gen-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}-{time.monotonic_ns() % 10**6:06d}"
        path = self.root / (name + ".tmp")
        path.mkdir()
        return path

    def publish(self, path: Path) -> Path:
        """Make a finished folder (from :meth:`new`) the live one, then clean up old ones."""
        final = path.with_name(path.name.removesuffix(".tmp"))
        os.replace(path, final)
        _fsync_dir(self.root)
        tmp = self.pointer.with_suffix(".tmp")
        tmp.write_text(final.name + "\n", encoding="utf-8")
        with open(tmp, "rb+") as fh:
            os.fsync(fh.fileno())
        os.replace(tmp, self.pointer)
        _fsync_dir(self.root)
        self.cleanup(keep=2)
        return final

    def cleanup(self, keep: int = 2) -> None:
        """Remove abandoned ``.tmp`` folders and all but the newest ``keep`` generations (the live one kept).

        The previous generation is kept so that a server that opened it a moment ago can finish its request.
        """
        if not self.root.is_dir():
            return
        live = self.current()
        done = sorted((p for p in self.root.iterdir() if p.is_dir() and not p.name.endswith(".tmp")),
                      key=lambda p: p.stat().st_mtime, reverse=True)
        if live is not None and _made(live.name):
            # A finished folder made after the live one was never made live: its run was killed between the folder's
            # rename and the pointer's (publish). Until 5 December 2026 it was kept as the newest, in the place and
            # the room of the previous generation, which was removed.
            for never in [p for p in done if p != live and _made(p.name) > _made(live.name)]:
                shutil.rmtree(never, ignore_errors=True)
                done.remove(never)
        for old in done[keep:]:
            if old != live:
                shutil.rmtree(old, ignore_errors=True)
        for tmp in self.root.glob("*.tmp"):
            if tmp.is_dir() and not _pid_alive(tmp):
                shutil.rmtree(tmp, ignore_errors=True)


    def drop_unfinished(self) -> None:
        """Remove the ``.tmp`` folders this process made (a run that failed: a full disk gets its room back now, not
        at the next run; a reindex holds the lock, so no other run of this process is writing one)."""
        if not self.root.is_dir():
            return
        for tmp in self.root.glob("*.tmp"):
            if tmp.is_dir() and _pid_of(tmp.name) == os.getpid():
                shutil.rmtree(tmp, ignore_errors=True)


def _made(name: str) -> str:
    """When :meth:`Generations.new` made a folder, as text that sorts in time (``20261205-203443``), from its name;
    "" for a name of another form."""
    parts = name.split("-")
    stamp = "-".join(parts[1:3])
    return stamp if len(parts) > 3 and parts[0] == "gen" and len(stamp) == 15 and stamp.replace("-", "").isdigit() else ""


def _pid_of(name: str) -> int | None:
    try:
        return int(name.split("-")[3])
    except (IndexError, ValueError):
        return None


def _pid_alive(path: Path) -> bool:
    """Whether the process that made a ``gen-<date>-<time>-<pid>-...`` folder is still running.

    A pid is used again once the one that had it is gone (32768 pids by default on Linux): a live process with
    that pid that started after the folder was made is another one, and the folder was abandoned. (Until 5 December
    2026 any live process with that pid kept the folder of a killed reindex, as big as the index, for as long as
    it ran: a `podsearch serve` that got the pid, for good.)"""
    pid = _pid_of(path.name)
    if pid is None:
        return False
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    started = _process_start(pid)
    if started is not None and started > _last_made(path) + 2:  # (2 s: the start is read to the second)
        return False
    return True


def _last_made(path: Path) -> float:
    """A time at or after the folder's making: its modification (the last file made in it), or the time in its name
    (local time, to the second), whichever is later. The process that made it started before."""
    try:
        named = time.mktime(time.strptime(_made(path.name), "%Y%m%d-%H%M%S"))
    except (ValueError, OverflowError):  # (a name of another form: "")
        named = 0.0
    try:
        return max(named, path.stat().st_mtime)
    except OSError:
        return time.time()


def _process_start(pid: int) -> float | None:
    """When process ``pid`` started (seconds since the epoch), where /proc tells (Linux); else None."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        ticks = int(stat.rsplit(")", 1)[1].split()[19])  # field 22, starttime: clock ticks after boot
        boot = next(int(line.split()[1]) for line in Path("/proc/stat").read_text().splitlines()
                    if line.startswith("btime "))
        return boot + ticks / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError, StopIteration):
        return None


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
