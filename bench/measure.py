"""Small measuring helpers: percentiles, process memory, folder sizes, the machine's load."""

from __future__ import annotations

import os
import platform
import resource
import statistics
import subprocess
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any


def summary(samples_ms: list[float]) -> dict[str, float]:
    """p50 / p90 / p99 / mean / max of latencies in milliseconds (nearest-rank percentiles)."""
    if not samples_ms:
        return {"n": 0}
    ordered = sorted(samples_ms)

    def pct(p: float) -> float:
        return round(ordered[min(len(ordered) - 1, max(0, int(round(p / 100 * len(ordered) + 0.5)) - 1))], 3)

    return {"n": len(ordered), "p50": round(statistics.median(ordered), 3), "p90": pct(90), "p99": pct(99),
            "mean": round(statistics.fmean(ordered), 3), "max": round(ordered[-1], 3)}


def timed(calls: Iterable[Callable[[], Any]], rounds: int = 1, warmup: int = 1,
          cpu: list[float] | None = None) -> tuple[list[float], list[Any]]:
    """Run every call ``warmup`` times unmeasured, then ``rounds`` times; (milliseconds, last answers).

    With ``cpu``, the CPU milliseconds of this process per call are appended to it: on a shared machine
    the wall clock also counts the time other people's processes had the cores.
    """
    calls = list(calls)
    answers: list[Any] = [None] * len(calls)
    for _ in range(warmup):
        for call in calls:
            call()
    samples = []
    for _ in range(rounds):
        for i, call in enumerate(calls):
            started, cpu_started = time.perf_counter(), time.process_time()
            answers[i] = call()
            samples.append((time.perf_counter() - started) * 1000)
            if cpu is not None:
                cpu.append((time.process_time() - cpu_started) * 1000)
    return samples, answers


def proc_cpu_s(pid: int) -> float:
    """CPU seconds (user + system) a process has used so far, from /proc/<pid>/stat."""
    with open(f"/proc/{pid}/stat", encoding="ascii") as fh:
        fields = fh.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def peak_rss_mb() -> dict[str, float]:
    """Peak resident memory of this process and of its largest finished child, in MB."""
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    kids = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    return {"self": round(own, 1), "children": round(kids, 1), "peak": round(max(own, kids), 1)}


def proc_memory_mb(pid: int) -> dict[str, float]:
    """VmRSS (now) and VmHWM (peak) of a running process, from /proc, in MB."""
    out = {}
    with open(f"/proc/{pid}/status", encoding="ascii") as fh:
        for line in fh:
            key, _, value = line.partition(":")
            if key in {"VmRSS", "VmHWM"}:
                out["rss" if key == "VmRSS" else "peak"] = round(int(value.split()[0]) / 1024, 1)
    return out


def size_bytes(path: Path) -> int:
    if path.is_file():
        return path.stat().st_size
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file()) if path.exists() else 0


def machine() -> dict[str, Any]:
    load = os.getloadavg()
    return {"cpus": os.cpu_count(), "python": platform.python_version(), "platform": platform.platform(),
            "load_1_5_15": [round(x, 2) for x in load], "time": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
            "commit": code_commit()}


def code_commit() -> str | None:
    """The commit of the podsearch code being measured (``+dirty`` with uncommitted changes), or None."""
    import podsearch

    src = Path(podsearch.__file__).resolve().parent
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=src, capture_output=True, text=True,
                              timeout=10, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--", "."], cwd=src, capture_output=True, text=True,
                               timeout=10, check=True).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    return head + ("+dirty" if dirty else "")


def _tree(pid: int) -> list[int]:
    """``pid`` and all its descendants (from /proc/<pid>/task/*/children)."""
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        for task in Path(f"/proc/{p}/task").glob("*/children"):
            try:
                todo.extend(int(c) for c in task.read_text().split())
            except OSError:
                pass
    return out


def _proc_kb(pid: int, path: str, keys: tuple[str, ...]) -> dict[str, int]:
    found: dict[str, int] = {}
    try:
        with open(f"/proc/{pid}/{path}", encoding="ascii") as fh:
            for line in fh:
                key, _, value = line.partition(":")
                if key in keys:
                    found[key] = int(value.split()[0])
    except (OSError, ValueError):
        pass
    return found


def tree_memory_mb(pid: int) -> dict[str, float]:
    """Memory of a process and its descendants now: the sum of their RSS, the sum of their PSS (shared pages
    counted once, in shares: what the tree really occupies), the largest single RSS, and how many processes."""
    rss = pss = biggest = 0
    pids = _tree(pid)
    for p in pids:
        r = _proc_kb(p, "status", ("VmRSS",)).get("VmRSS", 0)
        rss += r
        biggest = max(biggest, r)
        pss += _proc_kb(p, "smaps_rollup", ("Pss",)).get("Pss", r)
    return {"rss": round(rss / 1024, 1), "pss": round(pss / 1024, 1), "largest": round(biggest / 1024, 1),
            "procs": len(pids)}


def files_bytes(path: Path) -> int:
    """Bytes in the files under ``path`` now, tolerating files that vanish while they are counted."""
    total = 0
    for root, _dirs, files in os.walk(path):
        for name in files:
            try:
                total += os.stat(os.path.join(root, name)).st_size
            except OSError:
                pass
    return total


class Sampler:
    """Samples a process tree's memory and the size of some folders every ``interval`` seconds, from a thread
    of the measuring process (never inside the measured one: a thread there would change what it does).

    ``peaks(windows)`` gives the high-water marks over the whole run and within named time windows
    (``{"index": (start, end)}`` in ``time.time()`` seconds): the build's phases.
    """

    def __init__(self, pid: int, folders: dict[str, Path], interval: float = 0.5) -> None:
        import threading

        self.pid, self.folders, self.interval = pid, folders, interval
        self.samples: list[dict[str, Any]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="bench-sampler", daemon=True)

    def __enter__(self) -> Sampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        while True:
            sample: dict[str, Any] = {"t": time.time(), **tree_memory_mb(self.pid)}
            for name, path in self.folders.items():
                sample[name] = files_bytes(path)
            self.samples.append(sample)
            if self._stop.wait(self.interval):
                return

    def peaks(self, windows: dict[str, tuple[float, float]] | None = None) -> dict[str, Any]:
        keys = ["rss", "pss", "largest", *self.folders]

        def peak(samples: list[dict[str, Any]]) -> dict[str, Any]:
            out = {f"{k}_peak": max((s[k] for s in samples), default=None) for k in keys}
            out.update(samples=len(samples), procs_peak=max((s["procs"] for s in samples), default=None))
            return out

        out = peak(self.samples)
        for name, (start, end) in (windows or {}).items():
            out[name] = peak([s for s in self.samples if start <= s["t"] <= end])
        return out

    def series(self, points: int = 200) -> list[dict[str, Any]]:
        """The samples thinned to about ``points`` (times relative to the first), for a plot."""
        if not self.samples:
            return []
        step = max(1, len(self.samples) // points)
        t0 = self.samples[0]["t"]
        return [{**s, "t": round(s["t"] - t0, 1)} for s in self.samples[::step]]
