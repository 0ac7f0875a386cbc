"""The reindex lock: one reindex at a time per data folder, released by the kernel if the process dies."""

from __future__ import annotations

import fcntl
import logging
import os
import time
from pathlib import Path

from .errors import ReindexRunning

log = logging.getLogger(__name__)


class ReindexLock:
    def __init__(self, data_dir: Path, wait: bool = False, timeout: float | None = None) -> None:
        self.path = Path(data_dir) / "reindex.lock"
        self.wait = wait
        self.timeout = timeout
        self._fd: int | None = None

    def __enter__(self) -> ReindexLock:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        deadline = None if self.timeout is None else time.monotonic() + self.timeout
        waiting = False
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                holder = os.pread(fd, 64, 0).decode(errors="replace").strip() or "another process"
                if not self.wait or (deadline is not None and time.monotonic() > deadline):
                    os.close(fd)
                    raise ReindexRunning(
                        f"Another reindex is running on {self.path.parent} (pid {holder}); "
                        "wait for it, or use --wait.") from None
                if not waiting:
                    log.info("another reindex (pid %s) is running on %s; waiting for it", holder, self.path.parent)
                    waiting = True
                time.sleep(0.2)
        os.ftruncate(fd, 0)
        os.pwrite(fd, str(os.getpid()).encode(), 0)
        self._fd = fd
        return self

    def __exit__(self, *exc: object) -> None:
        if self._fd is not None:
            os.ftruncate(self._fd, 0)
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None
