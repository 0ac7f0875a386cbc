"""Soak: many reindex cycles under a running server that is searched all along.

Each cycle changes one feed (an episode leaves or comes back, a title changes), runs a real
``podsearch reindex`` (``--full`` every tenth cycle), then measures the server process (RSS from
/proc/<pid>/status, open files from /proc/<pid>/fd) and the data folder (bytes on disk, generation
folders, leftovers ending in ``.tmp``). Four clients search, ask for similar episodes and open episode
pages the whole time; any error fails the soak.

    python tests/soak/cycles.py --cycles 50
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from statistics import mean
from typing import Any

HERE = Path(__file__).resolve().parent
if str(HERE.parent) not in sys.path:
    sys.path.insert(0, str(HERE.parent))

from conftest import CORPUS, start_server  # noqa: E402
from faultserver import FaultServer  # noqa: E402
from soak.load import Tally, client, drain, episode_ids  # noqa: E402
from soak.state import disk_bytes, generation_dirs, integrity  # noqa: E402

from podsearch.config import load_config  # noqa: E402
from podsearch.reindex import reindex  # noqa: E402
from podsearch.sample import sample_feeds  # noqa: E402

SHOWS = ["afk", "spotlight", "rfc", "backstage", "bigtent", "brainscience"]
TOGGLED = "rfc"
_ITEM = re.compile(rb"<item>.*?</item>\s*", re.S)


def variant(xml: bytes, cycle: int) -> bytes:
    """Odd cycles: the newest episode left the feed and the next one's title changed; even cycles: as published."""
    if cycle % 2 == 0:
        return xml
    items = list(_ITEM.finditer(xml))
    second = items[1].group(0).replace(b"<title>", b"<title>Revised: ", 1)
    return xml[:items[0].start()] + second + xml[items[1].end():]


def process_figures(pid: int) -> dict[str, int]:
    status = Path(f"/proc/{pid}/status").read_text()
    rss = int(re.search(r"VmRSS:\s+(\d+) kB", status).group(1))
    fds = os.listdir(f"/proc/{pid}/fd")
    deleted = sum(1 for fd in fds if _link(pid, fd).endswith("(deleted)"))
    return {"rss_kb": rss, "fds": len(fds), "fds_on_deleted_files": deleted}


def _link(pid: int, fd: str) -> str:
    try:
        return os.readlink(f"/proc/{pid}/fd/{fd}")
    except OSError:
        return ""


def folder_figures(data: Path) -> dict[str, Any]:
    dirs = generation_dirs(data)
    leftovers = [str(p.relative_to(data)) for p in data.rglob("*") if p.name.endswith(".tmp")]
    return {"disk_bytes": disk_bytes(data), "index_generations": len(dirs["index"]), "model_generations": len(dirs["model"]),
            "leftovers": leftovers}


def run(workdir: Path, cycles: int, corpus: Path = CORPUS, log=print) -> dict[str, Any]:
    server = FaultServer(corpus).start()
    feeds = {show: (corpus / "site" / "feeds" / f"{show}.xml").read_bytes() for show in SHOWS}
    config = workdir / "podsearch.toml"
    urls = [server.url(f"site/feeds/{show}.xml") for show in SHOWS]
    config.write_text("allow_private_hosts = true\nfeeds = [\n" + "".join(f'  "{f}",\n' for f in [*sample_feeds(), *urls])
                      + "]\n", encoding="utf-8")
    data = workdir / "data"
    first = reindex(load_config({"config": str(config), "data": str(data)}, environ={}))
    if first.failed:
        raise RuntimeError(first.errors[:5])
    ids = episode_ids(data)
    live = start_server(data, "--no-access-log")
    logged = drain(live.proc)
    tally, stop = Tally(), threading.Event()
    clients = [threading.Thread(target=client, args=("127.0.0.1", int(live.base.rsplit(":", 1)[1]), ids, stop, tally, n),
                                daemon=True) for n in range(4)]
    for c in clients:
        c.start()
    rows: list[dict[str, Any]] = []
    failures: list[str] = []
    started = time.monotonic()
    try:
        time.sleep(3)  # let the server warm up (first searcher, model loaded) before the baseline
        rows.append({"cycle": 0, **process_figures(live.proc.pid), **folder_figures(data), "seconds": 0.0})
        for cycle in range(1, cycles + 1):
            server.files[f"/site/feeds/{TOGGLED}.xml"] = variant(feeds[TOGGLED], cycle)
            full = cycle % 10 == 0
            t0 = time.monotonic()
            proc = subprocess.run([sys.executable, "-m", "podsearch", "--config", str(config), "--data", str(data), "-q",
                                   "reindex", *(["--full"] if full else [])], capture_output=True, text=True, timeout=600)
            if proc.returncode != 0:
                failures.append(f"cycle {cycle}: reindex exited {proc.returncode}: {proc.stderr[-500:]}")
            time.sleep(1)  # the clients meet the new generation
            row = {"cycle": cycle, "full": full, **process_figures(live.proc.pid), **folder_figures(data),
                   "seconds": round(time.monotonic() - t0, 1), "requests": sum(len(v) for v in tally.latencies.values()),
                   "errors": len(tally.errors)}
            rows.append(row)
            log(json.dumps(row))
    finally:
        stop.set()
        for c in clients:
            c.join(timeout=60)
        live.proc.terminate()
        live.proc.wait(timeout=30)
        server.stop()
    summary = summarize(rows, tally, failures)
    summary["integrity"] = integrity(data)
    summary["server_log_lines"] = len(logged)
    summary["server_log_sample"] = sorted(set(logged))[:10]
    summary["minutes"] = round((time.monotonic() - started) / 60, 1)
    return summary


def summarize(rows: list[dict[str, Any]], tally: Tally, failures: list[str]) -> dict[str, Any]:
    head, tail = rows[1:11], rows[-10:]
    every = [x for v in tally.latencies.values() for x in v]
    out: dict[str, Any] = {
        "cycles": len(rows) - 1,
        "requests": len(every),
        "errors": len(tally.errors),
        "first_errors": tally.errors[:10],
        "rss_mb": {"start": round(rows[0]["rss_kb"] / 1024, 1), "first10_mean": round(mean(r["rss_kb"] for r in head) / 1024, 1),
                   "last10_mean": round(mean(r["rss_kb"] for r in tail) / 1024, 1),
                   "max": round(max(r["rss_kb"] for r in rows) / 1024, 1)},
        "fds": {"start": rows[0]["fds"], "min": min(r["fds"] for r in rows), "max": max(r["fds"] for r in rows),
                "last": rows[-1]["fds"], "max_on_deleted_files": max(r["fds_on_deleted_files"] for r in rows)},
        "disk_mb": {"start": round(rows[0]["disk_bytes"] / 2**20, 2), "max": round(max(r["disk_bytes"] for r in rows) / 2**20, 2),
                    "last": round(rows[-1]["disk_bytes"] / 2**20, 2)},
        "generations_max": {part: max(r[f"{part}_generations"] for r in rows) for part in ("index", "model")},
        "leftovers_last": rows[-1]["leftovers"],
        "reindex_seconds_mean": round(mean(r["seconds"] for r in rows[1:]), 1),
        "failures": failures,
    }
    problems = list(failures)
    if out["errors"]:
        problems.append(f"{out['errors']} client errors")
    if tail and max(r["fds"] for r in tail) > max(r["fds"] for r in head) + 4:
        problems.append("open files grew")
    if tail and out["rss_mb"]["last10_mean"] > 1.25 * out["rss_mb"]["first10_mean"]:
        problems.append("memory grew by more than 25%")
    if out["generations_max"]["index"] > 2 or out["generations_max"]["model"] > 2 or out["leftovers_last"]:
        problems.append("old generations or temporary files were not cleaned")
    if out["disk_mb"]["max"] > 3 * max(out["disk_mb"]["start"], 0.01):
        problems.append("disk use grew past 3x the start")
    out["problems"] = problems
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cycles", type=int, default=50)
    parser.add_argument("--workdir", type=Path, default=None)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="podsearch-soak-") as tmp:
        summary = run(args.workdir or Path(tmp), args.cycles, log=lambda line: print(line, file=sys.stderr))
    print(json.dumps(summary, indent=2))
    sys.exit(1 if summary["problems"] else 0)


if __name__ == "__main__":
    main()
