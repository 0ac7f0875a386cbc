"""What the server refused, cut short and shed, counted per process and shared with ``podsearch stats``.

The counters live in the serving process; they are written (at most every few seconds, atomically) to
``<data>/server-load.json`` so that ``podsearch stats`` run beside the server can show them.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

FILENAME = "server-load.json"
WRITE_EVERY = 5.0  # seconds between writes of the file
KINDS = ("searches", "expensive", "refused", "timed_out", "shed")


class LoadCounters:
    """searches (run), expensive (of those, the expensive kind), refused (a bound said no: 400), timed_out
    (answered with what was found by the deadline, or 503 when that was nothing), shed (503: no room)."""

    def __init__(self, data_dir: Path | str | None = None) -> None:
        self.path = Path(data_dir) / FILENAME if data_dir is not None else None
        self._counts = dict.fromkeys(KINDS, 0)
        self._lock = threading.Lock()
        self._written = 0.0
        self.started = time.time()

    def add(self, kind: str, n: int = 1) -> None:
        with self._lock:
            self._counts[kind] += n
            due = time.monotonic() - self._written >= WRITE_EVERY
            if due:
                self._written = time.monotonic()
        if due:
            self.write()

    def snapshot(self) -> dict[str, Any]:
        with self._lock:
            return {**self._counts, "since": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(self.started)),
                    "pid": os.getpid()}

    def write(self) -> None:
        """The counters to the data folder, for ``podsearch stats`` (best effort: a read-only folder is fine)."""
        if self.path is None or not self.path.parent.is_dir():
            return
        tmp = self.path.with_name(f".{FILENAME}.{os.getpid()}.tmp")
        try:
            tmp.write_text(json.dumps(self.snapshot()), encoding="utf-8")
            os.replace(tmp, self.path)
        except OSError as exc:
            log.debug("cannot write %s: %s", self.path, exc)


def read_load(data_dir: Path | str) -> dict[str, Any] | None:
    """The serving process's counters as last written (None when no server has written any)."""
    path = Path(data_dir) / FILENAME
    try:
        found = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    found["written_age_seconds"] = round(time.time() - path.stat().st_mtime, 1)
    if isinstance(found.get("pid"), int):  # (the file outlives the server: its last figures read as current before)
        found["running"] = _running(found["pid"])
    return found


def _running(pid: int) -> bool:
    """Whether the process that wrote the figures is still running (on this machine)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError, ValueError):
        return pid > 0
    return True
