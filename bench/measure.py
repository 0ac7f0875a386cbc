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
