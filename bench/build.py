"""podsearch builds, timed by phase, each in its own process (so peak memory is that build's alone).

    python -m bench.build full JSONL DATA OUT.json [--procs N]     parse, catalog, index, model, neighbours
    python -m bench.build load JSONL DATA OUT.json                 parse and catalog alone
    python -m bench.build index CATALOG_DIR DATA OUT.json --procs 1 the Whoosh index alone (single writer)
    python -m bench.build model CATALOG_DIR DATA OUT.json          the similarity model alone (fit and save)
    python -m bench.build incremental JSONL DATA OUT.json          ``podsearch import`` of a few new episodes

``full`` streams the JSON-lines file through podsearch's own parser (``read_jsonl``: the *parse* phase) into
the catalog (*catalog*), then runs the pipeline's ``rebuild_derived(full=True)``: the Whoosh index
(*index*) and the similarity model, whose ``top_neighbours`` call is timed apart (*neighbours*; the rest is
*model*). ``incremental`` is ``podsearch.reindex.import_jsonl``, the code behind ``podsearch import``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

from .measure import peak_rss_mb, size_bytes


def _sizes(data: Path) -> dict[str, int]:
    return {"index_bytes": size_bytes(data / "index"), "model_bytes": size_bytes(data / "model"),
            "catalog_bytes": sum(size_bytes(p) for p in data.glob("catalog.sqlite*"))}


def _time_neighbours(box: dict[str, float]) -> None:
    from podsearch.similar import model  # the module whose fit calls top_neighbours

    original = model.top_neighbours

    def wrapped(*args: Any, **kwargs: Any) -> Any:
        started = time.perf_counter()
        try:
            return original(*args, **kwargs)
        finally:
            box["neighbours"] = box.get("neighbours", 0.0) + time.perf_counter() - started

    model.top_neighbours = wrapped


def _mark_index(marks: dict[str, list[float]]) -> None:
    """Record when the Whoosh index is written (wall-clock ``time.time()``: the sampler's clock) in ``marks``."""
    from podsearch.engines.whoosh import WhooshEngine

    original = WhooshEngine.sync

    def wrapped(self: Any, *args: Any, **kwargs: Any) -> Any:
        marks["index"] = [time.time(), 0.0]
        try:
            return original(self, *args, **kwargs)
        finally:
            marks["index"][1] = time.time()

    WhooshEngine.sync = wrapped  # type: ignore[method-assign]


def _set_procs(procs: int | None) -> None:
    if procs:
        from podsearch.engines import whoosh

        whoosh.BUILD_PROCS = procs


def _load(jsonl: Path, catalog: Any) -> dict[str, Any]:
    """The JSON-lines file into ``catalog``: episodes, errors, and the seconds parsing and writing took."""
    from podsearch.errors import PodsearchError
    from podsearch.ingest.jsonl import read_jsonl

    parse_s = catalog_s = 0.0
    count = errors = 0
    shows: set[str] = set()
    lines = read_jsonl(jsonl)
    with catalog.transaction():
        while True:
            t0 = time.perf_counter()
            item = next(lines, None)
            t1 = time.perf_counter()
            parse_s += t1 - t0
            if item is None:
                break
            if isinstance(item, PodsearchError):
                errors += 1
                continue
            if item.show.id not in shows:
                catalog.upsert_show(item.show)
                shows.add(item.show.id)
            catalog.upsert_episode(item.episode)
            count += 1
            catalog_s += time.perf_counter() - t1
    return {"episodes": count, "errors": errors, "parse": parse_s, "catalog": catalog_s}


def full(jsonl: Path, data: Path, procs: int | None = None) -> dict[str, Any]:
    from podsearch.catalog import Catalog
    from podsearch.progress import Progress
    from podsearch.reindex import Report, rebuild_derived

    _set_procs(procs)
    box: dict[str, float] = {}
    _time_neighbours(box)
    marks: dict[str, list[float]] = {}
    _mark_index(marks)
    data.mkdir(parents=True, exist_ok=True)
    report = Report()
    started, wall = time.perf_counter(), time.time()
    with Catalog.in_dir(data) as catalog:
        run_id = catalog.start_run()
        loaded = _load(jsonl, catalog)
        marks["load"] = [wall, time.time()]
        rebuild_derived(data, catalog, report, Progress(), full=True)
        marks["model"] = [marks["index"][1], time.time()]  # the similarity model, its neighbours included
        catalog.finish_run(run_id, report.to_dict())
    total = time.perf_counter() - started
    neighbours = box.get("neighbours", 0.0)
    phases = {"parse": loaded["parse"], "catalog": loaded["catalog"], "index": report.seconds["index"],
              "model": report.seconds["model"] - neighbours, "neighbours": neighbours}
    return {"episodes": loaded["episodes"], "errors": loaded["errors"],
            "seconds": {k: round(v, 3) for k, v in phases.items()}, "total_s": round(total, 3),
            "memory_mb": peak_rss_mb(), "index": report.index, "marks": marks, **_sizes(data)}


def load_only(jsonl: Path, data: Path) -> dict[str, Any]:
    """The catalog alone (for the ``index`` and ``model`` modes)."""
    from podsearch.catalog import Catalog

    data.mkdir(parents=True, exist_ok=True)
    started, wall = time.perf_counter(), time.time()
    with Catalog.in_dir(data) as catalog:
        loaded = _load(jsonl, catalog)
    return {**loaded, "load_s": round(time.perf_counter() - started, 3), "memory_mb": peak_rss_mb(),
            "marks": {"load": [wall, time.time()]}, **_sizes(data)}


def model_only(catalog_dir: Path, data: Path) -> dict[str, Any]:
    """The similarity model of a catalog, fitted and saved as a full reindex does, neighbours included."""
    from podsearch.catalog import Catalog
    from podsearch.generations import Generations
    from podsearch.similar import ModelParams, SimilarModel

    box: dict[str, float] = {}
    _time_neighbours(box)
    started, wall = time.perf_counter(), time.time()
    with Catalog.in_dir(catalog_dir) as catalog:
        model = SimilarModel.fit(catalog, ModelParams())
    model.save(Generations(data / "model"))
    return {"model_s": round(time.perf_counter() - started, 3), "neighbours_s": round(box.get("neighbours", 0.0), 3),
            "episodes": len(model.ids), "memory_mb": peak_rss_mb(), "model_bytes": size_bytes(data / "model"),
            "marks": {"model": [wall, time.time()]}}


def index_only(catalog_dir: Path, data: Path, procs: int | None) -> dict[str, Any]:
    from podsearch.catalog import Catalog
    from podsearch.documents import CatalogDocuments
    from podsearch.engines.whoosh import WhooshEngine

    _set_procs(procs)
    started, wall = time.perf_counter(), time.time()
    with Catalog.in_dir(catalog_dir) as catalog:
        counts = WhooshEngine(data).sync(CatalogDocuments(catalog), full=True)
    return {"index_s": round(time.perf_counter() - started, 3), "procs": procs, "index": counts,
            "memory_mb": peak_rss_mb(), "index_bytes": size_bytes(data / "index"),
            "marks": {"index": [wall, time.time()]}}


def incremental(jsonl: Path, data: Path) -> dict[str, Any]:
    from podsearch.config import load_config
    from podsearch.reindex import import_jsonl

    box: dict[str, float] = {}
    _time_neighbours(box)
    config = load_config({"data": str(data)}, environ={})
    started = time.perf_counter()
    report = import_jsonl(config, jsonl)
    total = time.perf_counter() - started
    seconds = dict(report.seconds)
    if "model" in seconds:
        seconds["neighbours"] = round(box.get("neighbours", 0.0), 3)
        seconds["model"] = round(seconds["model"] - seconds["neighbours"], 3)
    return {"new": report.new, "index": report.index, "model": report.model, "seconds": seconds,
            "total_s": round(total, 3), "memory_mb": peak_rss_mb()}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python -m bench.build")
    ap.add_argument("mode", choices=["full", "load", "index", "model", "incremental"])
    ap.add_argument("source", type=Path,
                    help="JSON-lines file (full, load, incremental) or catalog folder (index, model)")
    ap.add_argument("data", type=Path)
    ap.add_argument("out", type=Path)
    ap.add_argument("--procs", type=int, default=None)
    args = ap.parse_args(argv)
    if args.mode == "full":
        result = full(args.source, args.data, args.procs)
    elif args.mode == "load":
        result = load_only(args.source, args.data)
    elif args.mode == "index":
        result = index_only(args.source, args.data, args.procs)
    elif args.mode == "model":
        result = model_only(args.source, args.data)
    else:
        result = incremental(args.source, args.data)
    args.out.write_text(json.dumps(result, indent=1))


if __name__ == "__main__":
    sys.exit(main())
