"""Whoosh and OpenSearch behind the same API, in one run: relevance on the dev known-item queries (MRR@10 over
``/api/search``), search latency over HTTP on the query mix, index size, and (given the reindex logs) build time.

    python -m bench.engines --whoosh DATA --opensearch DATA --url http://127.0.0.1:9200 --index site
    python -m bench.engines --build 10000 --site-data DATA --url http://127.0.0.1:9200 --name 10k
    python -m bench.engines --whoosh DATA --whoosh-build bench/results/100k.json --opensearch DATA2 --sync --name 100k

Both data folders hold the same catalog; the second's index lives in OpenSearch (``podsearch --data DATA
reindex`` with ``PODSEARCH_ENGINE=opensearch``). ``--build N`` makes them first: N synthetic episodes resampled
from the site catalog in ``--site-data`` (bench/corpus.py), imported with Whoosh (timed by phase), the catalog
copied and indexed into OpenSearch (timed). MRR is measured on the site corpus only (the known items are site
episodes). ``--sync`` indexes the ``--opensearch`` folder's catalog (a copy of the ``--whoosh`` one) into OpenSearch
first, timed, and ``--whoosh-build`` takes the Whoosh build's figures from the ``bench.run`` results file of that
folder's build (at 100k the Whoosh build is the bench's own). Results go to ``bench/results/engines-<name>.json``.
"""

from __future__ import annotations

import argparse
import csv
import json
import time
from pathlib import Path
from typing import Any

from .measure import machine, summary
from .queries import MIX, api_params
from .server import Server

RESULTS = Path(__file__).parent / "results"
KNOWN_ITEMS = Path(__file__).resolve().parents[1].parent / "shared" / "corpus" / "eval" / "known_items.dev.tsv"


def known_items(path: Path) -> list[dict[str, str]]:
    with open(path, encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(fh, delimiter="\t", quoting=csv.QUOTE_NONE))


def mrr_at_10(server: Server, items: list[dict[str, str]]) -> tuple[float, dict[str, int]]:
    """MRR@10 of the known-item queries, and each query's rank of its target (0: not in the top 10)."""
    ranks = {}
    for row in items:
        status, body = server.get("/api/search", {"q": row["query"], "per_page": 10})
        if status != 200:
            raise RuntimeError(f"{row['qid']}: HTTP {status}: {body}")
        ids = [h["id"] for h in body["hits"]]
        ranks[row["qid"]] = ids.index(row["target_guid"]) + 1 if row["target_guid"] in ids else 0
    return sum(1 / r for r in ranks.values() if r) / len(ranks), ranks


def latency(server: Server, rounds: int) -> dict[str, float]:
    for q in MIX:  # warm-up
        server.get("/api/search", api_params(q))
    samples = []
    for _ in range(rounds):
        for q in MIX:
            started = time.perf_counter()
            status, _ = server.get("/api/search", api_params(q))
            samples.append((time.perf_counter() - started) * 1000)
            if status != 200:
                raise RuntimeError(f"{q.text}: HTTP {status}")
    return summary(samples)


def measure(name: str, data: Path, env: dict[str, str], items: list[dict[str, str]], rounds: int,
            work: Path) -> dict[str, Any]:
    # the answer store off (as bench/run.py): every request works the search out, so the engines are timed
    with Server(data, work / f"{name}.log", env={"PODSEARCH_ANSWER_STORE": "0", **env}) as server:
        mrr, ranks = mrr_at_10(server, items)
        out = {"mrr_at_10": round(mrr, 4), "ranks": ranks, "search_http": latency(server, rounds)}
        status, ready = server.get("/readyz")
        out["episodes"] = ready.get("episodes") if isinstance(ready, dict) else None
    return out


def build(count: int, site_data: Path, work: Path, url: str, index: str) -> tuple[Path, Path, dict[str, Any]]:
    """Both data folders of ``count`` synthetic episodes, and the build figures."""
    import shutil

    from podsearch.catalog import Catalog
    from podsearch.config import load_config
    from podsearch.engines import open_engine
    from podsearch.reindex import import_jsonl

    from .corpus import episode_line, synthetic_jsonl

    base = work / "engines-site.jsonl"
    if not base.exists():
        with Catalog.in_dir(site_data) as cat, open(base, "w", encoding="utf-8") as fh:
            shows = {s.id: s.title for s in cat.shows()}
            for episode_id in cat.hashes():
                ep = cat.episode(episode_id)
                fh.write(json.dumps(episode_line(ep, shows.get(ep.show_id, ep.show_id))) + "\n")
    jsonl, meta = synthetic_jsonl(base, work / f"engines-{count}.jsonl", count)
    whoosh_data, os_data = work / f"engines-{count}-whoosh", work / f"engines-{count}-opensearch"
    for folder in (whoosh_data, os_data):
        shutil.rmtree(folder, ignore_errors=True)
    started = time.perf_counter()
    report = import_jsonl(load_config({"data": str(whoosh_data)}, environ={}), jsonl, full=True)
    figures: dict[str, Any] = {"episodes": count, "whoosh": {"import_s": round(time.perf_counter() - started, 1),
                                                             "seconds": report.seconds}}
    shutil.copytree(whoosh_data, os_data)
    figures["whoosh"]["index_bytes"] = open_engine(whoosh_data).size_bytes()
    figures["opensearch"] = index_opensearch(os_data, url, index)
    print("build", json.dumps(figures))
    return whoosh_data, os_data, figures


def index_opensearch(os_data: Path, url: str, index: str) -> dict[str, Any]:
    """A full build of ``os_data``'s catalog into OpenSearch (a new index swapped in by alias), timed."""
    from podsearch.catalog import Catalog
    from podsearch.config import load_config
    from podsearch.documents import CatalogDocuments
    from podsearch.engines import open_engine

    config = load_config({"data": str(os_data), "engine": "opensearch", "opensearch_url": url,
                          "opensearch_index": index}, environ={})
    engine = open_engine(os_data, config)
    with Catalog.in_dir(os_data) as cat:
        count = len(cat.hashes())
        started = time.perf_counter()
        engine.sync(CatalogDocuments(cat), full=True)
        seconds = time.perf_counter() - started
    size = engine.size_bytes()
    return {"episodes": count, "index_s": round(seconds, 1), "docs_per_s": round(count / seconds, 1),
            "index_bytes": size, "bytes_per_episode": size // count, "machine": machine()}


def whoosh_build(results: Path) -> dict[str, Any]:
    """The Whoosh build figures of a ``bench.run`` results file (its build step, on the same catalog)."""
    data = json.loads(results.read_text())
    build = data["podsearch_build"]
    return {"episodes": build["episodes"], "seconds": build["seconds"], "build_s": round(sum(build["seconds"].values()), 1),
            "index_bytes": build["index_bytes"], "peak_rss_mb": build["memory_mb"]["peak"],
            "results": str(results), "commit": data["machine"].get("build_commit"),
            "load_before": data["machine"].get("build_load_before")}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--whoosh", type=Path, help="data folder indexed with Whoosh")
    ap.add_argument("--opensearch", type=Path, help="data folder whose index is in OpenSearch")
    ap.add_argument("--build", type=int, default=0, help="make both data folders of this many synthetic episodes")
    ap.add_argument("--site-data", type=Path, help="the site corpus's data folder (for --build)")
    ap.add_argument("--sync", action="store_true",
                    help="first index the --opensearch folder's catalog into OpenSearch (a full build, timed); that "
                         "folder holds a copy of the --whoosh folder's catalog.sqlite and model/ (/similar and /readyz "
                         "need the model)")
    ap.add_argument("--whoosh-build", type=Path,
                    help="a bench.run results file whose build step made the --whoosh folder: its figures go beside")
    ap.add_argument("--url", default="http://127.0.0.1:9200")
    ap.add_argument("--index", default="podsearch", help="the OpenSearch alias (opensearch_index)")
    ap.add_argument("--name", default="site")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--known-items", type=Path, default=KNOWN_ITEMS)
    ap.add_argument("--work", type=Path, default=Path("/tmp/podsearch-bench"))
    args = ap.parse_args(argv)
    args.work.mkdir(parents=True, exist_ok=True)
    out: dict[str, Any] = {"machine": machine()}
    if args.build:
        args.whoosh, args.opensearch, out["build"] = build(args.build, args.site_data, args.work, args.url, args.index)
    else:
        if args.whoosh_build:
            out.setdefault("build", {})["whoosh"] = whoosh_build(args.whoosh_build)
        if args.sync:
            out.setdefault("build", {})["opensearch"] = index_opensearch(args.opensearch, args.url, args.index)
            print("build", json.dumps(out["build"]["opensearch"]))
    items = known_items(args.known_items)
    engines = {"whoosh": (args.whoosh, {}),
               "opensearch": (args.opensearch, {"PODSEARCH_ENGINE": "opensearch", "PODSEARCH_OPENSEARCH_URL": args.url,
                                                "PODSEARCH_OPENSEARCH_INDEX": args.index})}
    out["queries"] = len(items)
    for name, (data, env) in engines.items():
        out[name] = measure(name, data, env, items, args.rounds, args.work)
        print(name, json.dumps({k: v for k, v in out[name].items() if k != "ranks"}))
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / f"engines-{args.name}.json").write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
