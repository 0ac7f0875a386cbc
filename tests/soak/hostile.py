"""Hostile clients beside an ordinary one: ``clients`` threads send the expensive and malformed queries of
issue 17 to a real ``podsearch serve --threads N`` for ``seconds``, while one more client runs the dev
known-item queries (../shared/corpus/eval) and times them. Reports the ordinary client's statuses and
latencies, what the hostile ones got, and the server's load counters.

    python tests/soak/hostile.py --data DIR --seconds 30 --threads 8 --clients 8
"""

from __future__ import annotations

import argparse
import csv
import json
import statistics
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections import Counter
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
if str(HERE.parent) not in sys.path:
    sys.path.insert(0, str(HERE.parent))

from conftest import CORPUS, start_server  # noqa: E402

HOSTILE = ["*", "[a TO z]", "a* b* c*", "?????", "a*", "e*", "*a*", "s* OR t* OR p*", "k~5 l~5 m~5",
           "(" * 12 + "kubernetes" + ")" * 12, '"' + " ".join("abcdefghijklmnopqrst") + '"', "{a TO zz}",
           "ma* ta* pa*", "b?t*", "lig* OR bit* OR min*", "te?t* li* bi*", "s~2 c~2 p~2", "conversation~2 s~2/1",
           "s* kubernetis", "sch*? language:ai", "model * and not", "transcript:* go"]


def known_item_queries(corpus: Path = CORPUS) -> list[str]:
    with (corpus / "eval" / "known_items.dev.tsv").open(encoding="utf-8") as f:
        return [row["query"] for row in csv.DictReader(f, delimiter="\t")]


def get(base: str, q: str, timeout: float = 60) -> tuple[int, float]:
    started = time.perf_counter()
    try:
        with urllib.request.urlopen(f"{base}/api/search?{urllib.parse.urlencode({'q': q})}", timeout=timeout) as r:
            r.read()
            status = r.status
    except urllib.error.HTTPError as exc:
        status = exc.code
    return status, time.perf_counter() - started


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * p))]


def run(data: Path, seconds: float = 30, threads: int = 8, clients: int = 8,
        ordinary: list[str] | None = None) -> dict[str, Any]:
    ordinary = ordinary or known_item_queries()
    server = start_server(data, "--threads", str(threads))
    stop = threading.Event()
    hostile: Counter[int] = Counter()
    lock = threading.Lock()

    def hammer(n: int) -> None:
        i = n
        while not stop.is_set():
            status, _ = get(server.base, HOSTILE[i % len(HOSTILE)])
            with lock:
                hostile[status] += 1
            i += 1

    try:
        get(server.base, "warm")
        workers = [threading.Thread(target=hammer, args=(n,), daemon=True) for n in range(clients)]
        for w in workers:
            w.start()
        results: list[tuple[int, float]] = []
        ends = time.monotonic() + seconds
        while time.monotonic() < ends:
            for q in ordinary:
                results.append(get(server.base, q))
                if time.monotonic() >= ends:
                    break
        stop.set()
        for w in workers:
            w.join(timeout=120)
        try:
            with urllib.request.urlopen(server.url("/readyz"), timeout=10) as r:
                ready = json.loads(r.read())
        except urllib.error.HTTPError as exc:  # 503: saturated (or not ready); the body has the figures
            ready = json.loads(exc.read())
        load = ready.get("load", ready)
    finally:
        stop.set()
        server.stop()
    times = [s for _, s in results]
    return {"seconds": seconds, "threads": threads, "hostile_clients": clients,
            "ordinary": {"requests": len(results), "statuses": dict(Counter(c for c, _ in results)),
                         "p50_s": round(statistics.median(times), 3), "p99_s": round(percentile(times, 0.99), 3),
                         "max_s": round(max(times), 3)},
            "hostile": {"requests": sum(hostile.values()), "statuses": dict(hostile)}, "server_load": load}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", type=Path, required=True, help="an indexed data folder (e.g. the site corpus)")
    ap.add_argument("--seconds", type=float, default=30)
    ap.add_argument("--threads", type=int, default=8)
    ap.add_argument("--clients", type=int, default=8)
    args = ap.parse_args()
    print(json.dumps(run(args.data, args.seconds, args.threads, args.clients), indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
