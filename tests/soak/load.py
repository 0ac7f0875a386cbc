"""Load: concurrent clients on loopback against a real ``podsearch serve`` (waitress), mixing searches, similar
and episode pages, each on a kept-alive connection. Reports errors, p50/p99 latency and throughput.

    python tests/soak/load.py --clients 16 --seconds 60            # the sample plus the site corpus
    python tests/soak/load.py --data DIR --clients 16 --seconds 60  # an indexed data folder of your own
"""

from __future__ import annotations

import argparse
import http.client
import json
import random
import sys
import tempfile
import threading
import time
import urllib.parse
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
if str(HERE.parent) not in sys.path:
    sys.path.insert(0, str(HERE.parent))

from conftest import CORPUS, start_server  # noqa: E402

QUERIES = ["bees", "volcano eruption", "sourdough bread", "open source", "kubernetes", "machine learning models",
           '"deep sea"', "privacy", "bitcoin lightning", "python packaging", "testing in go", "climate clouds",
           "interview hiring", "databases", "burnout", "llm", "rust", "security", "music", "the"]


@dataclass
class Tally:
    latencies: dict[str, list[float]] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, kind: str, seconds: float, error: str = "") -> None:
        with self.lock:
            self.latencies.setdefault(kind, []).append(seconds)
            if error:
                self.errors.append(f"{kind}: {error}")


def pick(rng: random.Random, ids: list[str]) -> tuple[str, str]:
    """(kind, path) of one request: half searches (API and page), a quarter similar, a quarter episode pages."""
    roll = rng.random()
    quoted = urllib.parse.quote(rng.choice(ids), safe="")
    if roll < 0.30:
        return "api-search", "/api/v1/search?" + urllib.parse.urlencode({"q": rng.choice(QUERIES), "page": rng.choice("112")})
    if roll < 0.50:
        return "search-page", "/search?" + urllib.parse.urlencode({"q": rng.choice(QUERIES)})
    if roll < 0.75:
        return "similar", f"/similar/{quoted}?k=10"
    return "episode-page", f"/episodes/{quoted}"


def client(host: str, port: int, ids: list[str], stop: threading.Event, tally: Tally, seed: int) -> None:
    rng = random.Random(seed)
    conn = http.client.HTTPConnection(host, port, timeout=30)
    while not stop.is_set():
        kind, path = pick(rng, ids)
        started = time.perf_counter()
        error = ""
        try:
            conn.request("GET", path)
            resp = conn.getresponse()
            resp.read()
            if resp.status != 200:
                error = f"{resp.status} {path}"
            if resp.getheader("Connection", "").lower() == "close":
                conn.close()
                conn = http.client.HTTPConnection(host, port, timeout=30)
        except (OSError, http.client.HTTPException) as exc:
            error = f"{exc!r} {path}"
            conn.close()
            conn = http.client.HTTPConnection(host, port, timeout=30)
        tally.add(kind, time.perf_counter() - started, error)
    conn.close()


def drain(proc) -> list[str]:
    """Read a server's stdout and stderr in the background (a full pipe would block the server's logging).

    Returns the list the stderr lines are appended to.
    """
    lines: list[str] = []

    def pump(stream, keep: bool) -> None:
        for line in stream:
            if keep:
                lines.append(line.rstrip())

    for stream, keep in ((proc.stdout, False), (proc.stderr, True)):
        if stream is not None:
            threading.Thread(target=pump, args=(stream, keep), daemon=True).start()
    return lines


def percentile(values: list[float], q: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def run_load(base_url: str, ids: list[str], clients: int = 16, seconds: float = 60.0, seed: int = 1) -> dict[str, Any]:
    """Drive ``clients`` threads against ``base_url`` for ``seconds``; the figures as a dict."""
    parts = urllib.parse.urlsplit(base_url)
    tally, stop = Tally(), threading.Event()
    threads = [threading.Thread(target=client, args=(parts.hostname, parts.port, ids, stop, tally, seed + i), daemon=True)
               for i in range(clients)]
    started = time.perf_counter()
    for t in threads:
        t.start()
    time.sleep(seconds)
    stop.set()
    for t in threads:
        t.join(timeout=60)
    elapsed = time.perf_counter() - started
    everything = [x for values in tally.latencies.values() for x in values]
    return {
        "clients": clients,
        "seconds": round(elapsed, 1),
        "requests": len(everything),
        "errors": len(tally.errors),
        "first_errors": tally.errors[:10],
        "throughput_rps": round(len(everything) / elapsed, 1),
        "p50_ms": round(percentile(everything, 0.50) * 1000, 1),
        "p99_ms": round(percentile(everything, 0.99) * 1000, 1),
        "by_kind": {kind: {"requests": len(v), "p50_ms": round(percentile(v, 0.5) * 1000, 1),
                           "p99_ms": round(percentile(v, 0.99) * 1000, 1)} for kind, v in sorted(tally.latencies.items())},
        "error_kinds": dict(Counter(e.split(":")[0] for e in tally.errors)),
    }


def episode_ids(data: Path) -> list[str]:
    from podsearch.catalog import Catalog

    with Catalog.in_dir(data) as cat:
        return [ep.id for ep in cat.episodes(include_gone=False)]


def build_corpus_data(data: Path, corpus: Path = CORPUS) -> None:
    """Index the bundled sample and every site feed of the corpus (read as local files) into ``data``."""
    from podsearch.config import load_config
    from podsearch.reindex import reindex
    from podsearch.sample import sample_feeds

    feeds = [*sample_feeds(), *sorted(str(p) for p in (corpus / "site" / "feeds").glob("*.xml"))]
    report = reindex(load_config({"data": str(data), "feeds": feeds}, environ={}))
    if report.failed:
        raise RuntimeError(f"indexing the corpus failed: {report.errors[:5]}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=None, help="an indexed data folder (default: sample + site corpus)")
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--threads", type=int, default=4, help="waitress threads (podsearch serve --threads)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="podsearch-load-") as tmp:
        data = args.data
        if data is None:
            data = Path(tmp) / "data"
            print("indexing the sample and the site corpus ...", file=sys.stderr)
            build_corpus_data(data)
        ids = episode_ids(data)
        server = start_server(data, "--no-access-log", "--threads", str(args.threads))
        logged = drain(server.proc)
        try:
            figures = run_load(server.base, ids, args.clients, args.seconds)
        finally:
            server.proc.terminate()
            server.proc.wait(timeout=30)
    figures |= {"episodes": len(ids), "waitress_threads": args.threads, "server_log_lines": len(logged),
                "server_log_sample": logged[:5]}
    print(json.dumps(figures, indent=2))
    sys.exit(1 if figures["errors"] else 0)


if __name__ == "__main__":
    main()
