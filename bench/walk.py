"""Requests an attacker may send, valid but expensive, against a running ``podsearch serve``: each one's wall time
and the server's CPU for it (alone, ``/proc/<pid>/stat``), and a cheap search's wait beside 4-8 of them running at once.

    python -m bench.walk --port 8080 --pid <server pid> --data <its data> single [NAME ...]
    python -m bench.walk --port 8080 --pid <server pid> --data <its data> beside NAME --clients 6 --seconds 20
    python -m bench.walk --port 8080 --pid <server pid> pages  # item 1: 100-hit pages of long queries

The probe comes from 127.0.0.2 (the server's fair queue serves by client address), the load from 127.0.0.1.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import statistics
import threading
import time
from urllib.parse import urlencode

LONG = [
    "how do you think about building a team when the company is growing really fast and everyone is remote",
    "what is the best way to learn programming if you have never written any code before in your life",
    "the history of the internet and how open source software changed the way we build things together",
    "machine learning models in production monitoring data drift and retraining pipelines at scale",
    "why do people find it so hard to talk about money with their friends and family members",
    "climate change policy carbon taxes renewable energy and what governments should do next",
    "kubernetes containers docker deployment cloud infrastructure developer experience and tooling",
    "startup founders raising venture capital hiring the first engineers and finding product market fit",
]
EP = "https://changelog.com/gotime/1"  # replaced by --episode


def walk_routes(shows: list[str], episode: str = "changelog:gotime:200", timed: str = "changelog:backstage:7",
                big_show: str = "bitcoin-conference-talks") -> dict[str, str]:
    """The walk's requests on the site corpus (``shows``: its show ids), by name: every route at its limits."""
    def at(path: str, **params: object) -> str:
        return path + "?" + urlencode(params, doseq=True)

    long = ("because world different education cloud machine market music government language people customers really "
            "developer javascript company something country answer energy money policy business climate python project "
            "school community economy research actually could medicine performance history question university friends "
            "software would security family bitcoin database health engineering children model learning like think right "
            "kubernetes teacher network product things server story")
    typos = "kubernets programing databse sofware enginering developr containr netwrok secrity perfomance bitcon lightnig"
    patterns = " ".join(p + "*" for p in "go da th in co pr wo re li kn ye pe".split())
    fuzzy = " ".join(w + "~2" for w in "kubernetes programming database software engineering developer container "
                     "network security performance".split())
    slop = '"' + " ".join(long.split()[:30]) + '"~100000'
    w12 = "people really think going know like things would could actually because something"
    return {
        "search_word": at("/api/v1/search", q="volcano"),
        "search_long_100": at("/api/v1/search", q=long, per_page=100),
        "search_long_100_p10": at("/api/v1/search", q=long, per_page=100, page=10),
        "search_long_date": at("/api/v1/search", q=long, per_page=100, sort="date"),
        "search_long_oldest_p10": at("/api/v1/search", q=long, per_page=100, page=10, sort="oldest"),
        "search_typos_100": at("/api/v1/search", q=typos, per_page=100),
        "search_patterns_100": at("/api/v1/search", q=patterns, per_page=100),
        "search_fuzzy_100": at("/api/v1/search", q=fuzzy, per_page=100),
        "search_slop_100": at("/api/v1/search", q=slop, per_page=100),
        "search_filters": at("/api/v1/search", q=long, per_page=100, show=shows, person="adam stacoviak",
                             **{"from": "2015", "to": "2026"}, duration_min=1, duration_max=500, language="en"),
        "search_filter_only": at("/api/v1/search", q="", show=shows, per_page=100, page=10),
        "search_50_long_show_ids": at("/api/v1/search", q="bitcoin", show=[f"x{i}" * 100 for i in range(50)],
                                      per_page=100),
        "search_person_100": at("/api/v1/search", q="bitcoin", person="a" * 100, per_page=100),
        "search_12w_50": at("/api/v1/search", q=w12, per_page=50),
        "search_12w_50_date": at("/api/v1/search", q=w12, per_page=50, sort="date", page=20),
        "search_typo12_50": at("/api/v1/search", q=typos, per_page=50),
        "search_phrase12_50": at("/api/v1/search", q=f'"{w12}"', per_page=50),
        "html_search_long_100": at("/search", q=long, per_page=100),
        "html_search_patterns_100": at("/search", q=patterns, per_page=100),
        "html_search_p10_100": at("/search", q="people going think", per_page=100, page=10, sort="date"),
        "html_12w_50": at("/search", q=w12, per_page=50),
        "rss_long": at("/search.rss", q=long, per_page=100),
        "rss_patterns": at("/search.rss", q=patterns, per_page=100),
        "rss_12w": at("/search.rss", q=w12),
        "suggest_1": at("/api/v1/suggest", q="s"),
        "suggest_long": at("/api/v1/suggest", q=("the people really think about software because the community would "
                                                 "like to know what c")),
        "suggest_accents": at("/api/v1/suggest", q="é"),
        "os_suggest": at("/opensearch/suggest", q="s"),
        "os_suggest_long": at("/opensearch/suggest", q="kubernetes programming database software engineering "
                                                       "developer container netw"),
        "similar_ep": at(f"/api/v1/similar/{episode}", k=50, same_show="false"),
        "similar_ep_t2": at(f"/api/v1/similar/{timed}", k=50, t=1200, same_show="false"),
        "similar_ep_filters": at(f"/api/v1/similar/{episode}", k=50, exclude_show=shows[:-1], min_score=0),
        "similar_text": at("/api/v1/similar", text=((long + " ") * 60)[:19900], k=50),
        "similar_site": at(f"/similar/{timed}", k=50, t=100),
        "episode": f"/episodes/{episode}",
        "episode_t": f"/episodes/{episode}?t=3000",
        "episode_api": f"/api/v1/episodes/{episode}",
        "show_api_deep": at(f"/api/v1/shows/{big_show}", page=4, per_page=100),
        "show_api_1000": at("/api/v1/shows/go-time", page=1000, per_page=100),
        "show_page": at(f"/shows/{big_show}", page=4, per_page=100),
        "shows": "/api/v1/shows",
        "home": "/",
        "openapi": "/api/openapi.json",
    }


def get(port: int, path: str, source: str = "127.0.0.1", timeout: float = 60) -> tuple[int, float, bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout, source_address=(source, 0))
    t0 = time.perf_counter()
    try:
        conn.request("GET", path)
        resp = conn.getresponse()
        body = resp.read()
        return resp.status, time.perf_counter() - t0, body
    finally:
        conn.close()


def cpu(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def search(q: str, **params: object) -> str:
    return "/api/v1/search?" + urlencode({"q": q, **params})


_fresh = iter(range(time.time_ns(), 1 << 80))  # (from the clock: a second run against the same server would find the
# first run's answers kept under the same numbers)


def fresh(path: str) -> str:
    """``path`` made new to the answer store, which keeps a finished search's or /similar's answer."""
    if "search" not in path and "similar" not in path:
        return path
    return f"{path}{'&' if '?' in path else '?'}fresh={next(_fresh)}"


def single(port: int, pid: int, path: str, runs: int = 3, node_pid: int | None = None) -> dict[str, object]:
    """The request alone, ``runs`` times after one to warm: wall and server CPU, each the worst and the median
    (``node_pid``: an OpenSearch node's JVM, whose CPU for the request is given too)."""
    get(port, fresh(path))
    walls, cpus, nodes, status, size, extra = [], [], [], 0, 0, ""
    for _ in range(runs):
        before = cpu(pid)
        node_before = cpu(node_pid) if node_pid else 0.0
        status, wall, body = get(port, fresh(path))
        cpus.append(cpu(pid) - before)
        nodes.append(cpu(node_pid) - node_before if node_pid else 0.0)
        walls.append(wall)
        size = len(body)
        try:
            data = json.loads(body)
            if isinstance(data, dict) and "took_ms" in data:
                moments = sum(len(h.get("moments", [])) for h in data.get("hits", []))
                extra = f"hits={len(data['hits'])} moments={moments} timed_out={data['timed_out']}"
        except ValueError:
            pass
    return {"status": status, "bytes": size, "wall_p50": statistics.median(walls), "wall_max": max(walls),
            "cpu_p50": statistics.median(cpus), "cpu_max": max(cpus), "node_cpu_p50": statistics.median(nodes),
            "node_cpu_max": max(nodes), "extra": extra}


def beside(port: int, path: str, clients: int, seconds: float, probe: str, every: float = 0.3) -> dict[str, object]:
    """``clients`` loops sending ``path`` at once from 127.0.0.1 while a cheap search is asked every ``every`` s
    from 127.0.0.2: the probe's p50/p90 and statuses, and the load's answers."""
    stop = time.monotonic() + seconds
    load: list[tuple[int, float]] = []
    probes: list[tuple[int, float]] = []

    def loop() -> None:
        while time.monotonic() < stop:
            try:
                s, w, _ = get(port, fresh(path))
            except OSError:
                s, w = -1, 0.0
            load.append((s, w))

    threads = [threading.Thread(target=loop) for _ in range(clients)]
    for t in threads:
        t.start()
    time.sleep(1.0)
    while time.monotonic() < stop:
        s, w, _ = get(port, fresh(probe), source="127.0.0.2")
        probes.append((s, w))
        time.sleep(every)
    for t in threads:
        t.join()
    waits = sorted(w for _, w in probes)
    return {"probe_n": len(probes), "probe_p50": statistics.median(waits),
            "probe_p90": waits[int(0.9 * (len(waits) - 1))], "probe_max": waits[-1],
            "probe_status": sorted({s for s, _ in probes}), "load_n": len(load),
            "load_status": {s: sum(1 for x, _ in load if x == s) for s in sorted({s for s, _ in load})},
            "load_p50": statistics.median([w for _, w in load]) if load else None}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--pid", type=int, required=True)
    ap.add_argument("--node-pid", type=int, help="an OpenSearch node's JVM: its CPU per request too ('single')")
    ap.add_argument("what", choices=["pages", "single", "beside"])
    ap.add_argument("paths", nargs="*")
    ap.add_argument("--clients", type=int, default=6)
    ap.add_argument("--seconds", type=float, default=20)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--probe", default=search("volcano"))
    ap.add_argument("--queries", help="a file of queries for 'pages', one a line (default: LONG)")
    ap.add_argument("--routes", help="a file of 'name path' lines (default: walk_routes() of the site corpus's shows, "
                                     "read from --data's catalog): the paths named, every one when none is")
    ap.add_argument("--data", help="the served data folder (for its show ids)")
    a = ap.parse_intermixed_args()
    names = {}
    named: dict[str, str] = {}
    if a.routes:
        named = dict(line.split(" ", 1) for line in open(a.routes).read().splitlines() if line.strip())
    elif a.data:
        import sqlite3

        with sqlite3.connect(f"{a.data}/catalog.sqlite") as db:
            named = walk_routes([r[0] for r in db.execute("SELECT id FROM shows ORDER BY id")])
    if named:
        names = {v: k for k, v in named.items()}
        a.paths = [named.get(p, p) for p in a.paths] or list(named.values())
    if a.what == "pages":
        walls, cpus = [], []
        queries = open(a.queries).read().splitlines() if a.queries else LONG
        for q in queries:
            r = single(a.port, a.pid, search(q, per_page=100), runs=1)
            walls.append(r["wall_p50"])
            cpus.append(r["cpu_p50"])
            print(f"{r['wall_p50']:.3f}s wall {r['cpu_p50']:.2f}s cpu {r['extra']}  {q[:50]}")
        print(f"wall p50 {statistics.median(walls):.3f} max {max(walls):.3f}; cpu p50 {statistics.median(cpus):.2f} "
              f"max {max(cpus):.2f}")
    elif a.what == "single":
        for p in a.paths:
            r = single(a.port, a.pid, p, a.runs, a.node_pid)
            node = f"  node cpu p50 {r['node_cpu_p50']:.2f} max {r['node_cpu_max']:.2f}" if a.node_pid else ""
            print(f"{names.get(p, p[:60]):26} {r['status']} {r['bytes']:>8}B wall p50 {r['wall_p50']:.3f} max "
                  f"{r['wall_max']:.3f}  cpu p50 {r['cpu_p50']:.2f} max {r['cpu_max']:.2f}{node}  {r['extra']}",
                  flush=True)
    else:
        for p in a.paths:
            r = beside(a.port, p, a.clients, a.seconds, a.probe)
            print(f"{names.get(p, p[:60]):26} x{a.clients}: probe p50 {r['probe_p50']:.3f} p90 {r['probe_p90']:.3f} "
                  f"max {r['probe_max']:.3f} n={r['probe_n']} {r['probe_status']}; load {r['load_status']} "
                  f"p50 {r['load_p50']:.3f}", flush=True)


if __name__ == "__main__":
    main()
