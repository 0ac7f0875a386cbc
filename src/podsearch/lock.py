"""The reindex lock: one reindex at a time per data folder, held by the reindex process alone.

It is a POSIX record lock (``fcntl.lockf``), which belongs to the process that took it: a child the
reindex forks (Whoosh's index writer workers) does not inherit it, and the kernel releases it when the
holder dies, whatever its children do. (A ``flock`` lock, used before, belongs to the open file, which
forked children share: workers orphaned by a ``kill -9`` kept it, and every later reindex was refused.)
POSIX locks do not exclude threads of one process, so a registry does that here.

The holder writes its pid into the file and empties it when it lets go. A pid found there by the next
holder means the last one died holding the lock: that is said (the run then repairs what it left).
"""

from __future__ import annotations

import errno
import fcntl
import logging
import os
import threading
import time
from pathlib import Path

from .errors import PERMISSION_ADVICE, DataFolderError, ReindexRunning

log = logging.getLogger(__name__)

_held: set[str] = set()  # lock files held by this process (POSIX locks do not exclude its own threads)
_held_guard = threading.Lock()


class ReindexLock:
    def __init__(self, data_dir: Path, wait: bool = False, timeout: float | None = None) -> None:
        self.path = Path(data_dir) / "reindex.lock"
        self.wait = wait
        self.timeout = timeout
        self.previous_holder: int | None = None  # the pid of a holder that died holding the lock
        self._fd: int | None = None

    @property
    def taken_over(self) -> str:
        """A sentence for the run's report when the last holder died holding the lock, else ""."""
        if self.previous_holder is None:
            return ""
        return (f"the last run (reindex, import or remove) on {self.path.parent} (pid {self.previous_holder}) ended "
                "without releasing its lock (killed?); this run took it over and repairs what it left")

    def __enter__(self) -> ReindexLock:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise DataFolderError(f"Cannot make the data folder {self.path.parent}: {exc}{_advice(exc)}") from None
        deadline = None if self.timeout is None else time.monotonic() + self.timeout
        waiting = False
        while True:
            fd, holder = self._try_lock()
            if fd is not None:
                break
            if not self.wait or (deadline is not None and time.monotonic() > deadline):
                raise ReindexRunning(
                    f"Another reindex is running on {self.path.parent} (pid {holder}); wait for it, or use --wait.")
            if not waiting:
                log.info("another reindex (pid %s) is running on %s; waiting for it", holder, self.path.parent)
                waiting = True
            time.sleep(0.2)
        left = os.pread(fd, 64, 0).decode(errors="replace").strip()
        if left.isdigit() and int(left) != os.getpid():
            self.previous_holder = int(left)
            log.info("%s", self.taken_over)  # the run's report says it too
        os.ftruncate(fd, 0)
        os.pwrite(fd, str(os.getpid()).encode(), 0)
        os.fsync(fd)
        self._fd = fd
        return self

    def _try_lock(self) -> tuple[int | None, str]:
        """(the locked file, "") or (None, who holds it)."""
        key = str(self.path.resolve())
        with _held_guard:
            if key in _held:
                # Held by another thread of this process. The file must not be opened here: closing any
                # descriptor of it would release this process's lock.
                return None, str(os.getpid())
            try:
                fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
            except OSError as exc:
                raise DataFolderError(f"Cannot write in the data folder {self.path.parent}: {exc}{_advice(exc)}") from None
            try:
                fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError as exc:
                holder = os.pread(fd, 64, 0).decode(errors="replace").strip() or "another process"
                os.close(fd)
                if exc.errno in (errno.EAGAIN, errno.EACCES):
                    return None, holder
                raise
            _held.add(key)
            return fd, ""

    def __exit__(self, *exc: object) -> None:
        if self._fd is None:
            return
        os.ftruncate(self._fd, 0)
        with _held_guard:
            os.close(self._fd)  # closing releases the process's POSIX lock on the file
            _held.discard(str(self.path.resolve()))
        self._fd = None


def _advice(exc: OSError) -> str:
    """What to do about ``exc``, after a "; " ("" when the error says enough itself)."""
    return f"; {PERMISSION_ADVICE}" if exc.errno in (errno.EACCES, errno.EPERM) else ""
