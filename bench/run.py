"""The benchmark: podsearch against SQLite FTS5, tantivy, Whoosh more_like and scikit-learn TF-IDF.

    python -m bench.run --corpus site          the 1,869 real episodes of the shared corpus
    python -m bench.run --corpus 10k           10,000 synthetic episodes resampled from them (see bench/corpus.py)
    python -m bench.run --corpus 100k          100,000 of them
    python -m bench.run --corpus 10k --steps latency,similar   re-measure on the builds already made

Steps: ``build`` (podsearch full build by phase in a child process), ``single`` (the Whoosh index of the same
catalog with a single writer, the baseline of the parallel build), ``peers`` (FTS5 and tantivy builds),
``latency`` (the query mix through ``podsearch serve`` over HTTP, through ``Library.search`` in-process, and
through FTS5 and tantivy in-process; server memory), ``similar`` (``/similar`` over HTTP, asked the first time
and again, and in-process, scikit-learn TF-IDF, Whoosh more_like), ``incremental`` (10 new episodes imported
into a copy of the build), ``profile`` (py-spy samples the server through the query mix: where the time goes;
bench/profile.py).
Results go to ``bench/results/<corpus>.json`` (sections of a
step not run are kept from the last run); ``python -m bench.report`` turns them into docs/benchmarks.md plots.
Work files (corpora, indexes) live in ``--work`` (default /tmp/podsearch-bench), never in the repository.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from . import corpus as corpora
from . import profile as profiling
from .measure import Sampler, machine, proc_cpu_s, proc_memory_mb, summary, timed
from .peers import FTS5, SklearnTfidf, Tantivy
from .queries import MIX, api_params, real_queries, search_request
from .server import Server, similar_path

RESULTS = Path(__file__).parent / "results"
PROFILE_S = 4.0  # seconds of the query mix the profile step samples at least
STEPS = ("build", "single", "peers", "latency", "profile", "similar", "incremental")
SIZES = {"site": None, "10k": 10_000, "100k": 100_000}
TARGETS = {  # (figure, comparison, limit): the issue's targets, checked on the 10k corpus
    "search_http_p50_ms": ("<=", 25.0), "search_http_p99_ms": ("<=", 100.0),
    "search_http_real_p50_ms": ("<=", 25.0), "search_http_real_p99_ms": ("<=", 100.0), "search_http_vs_fts5_p50": ("<=", 2.0),
    "similar_http_p50_ms": ("<=", 1.0), "incremental_share_of_full": ("<=", 0.05),
    "single_writer_vs_build_index": (">=", 2.0), "server_rss_mb": ("<=", 400.0),
}


class Bench:
    def __init__(self, name: str, jsonl: Path, work: Path, rounds: int, similar_samples: int,
                 more_like_samples: int, base: Path, results: Path) -> None:
        self.name, self.jsonl, self.work = name, jsonl, work
        self.rounds, self.similar_samples, self.more_like_samples = rounds, similar_samples, more_like_samples
        self.base = base  # the JSON-lines file new episodes are resampled from
        self.results_path = results
        self.data = work / "podsearch"
        self.reuse_build = False
        self.out: dict[str, Any] = json.loads(results.read_text()) if results.exists() else {}

    def save(self) -> None:
        self.results_path.parent.mkdir(parents=True, exist_ok=True)
        self.results_path.write_text(json.dumps(self.out, indent=1, sort_keys=True) + "\n")

    def child(self, *args: str, watch: Path | None = None) -> dict[str, Any]:
        """Run ``python -m bench.build ARGS`` while sampling the memory of its process tree and the size of the
        folder ``watch`` (an index folder: its segments and Whoosh's temporary files); the peaks, over the run and
        within the phases the child marked, go to ``sampled``, a thinned timeline to ``timeline``."""
        out = self.work / f"child-{args[0]}.json"
        cmd = [sys.executable, "-m", "bench.build", *args, str(out)]
        proc = subprocess.Popen(cmd, cwd=Path(__file__).resolve().parent.parent)
        with Sampler(proc.pid, {"scratch_bytes": watch} if watch else {}) as sampler:
            code = proc.wait()
        if code:
            raise subprocess.CalledProcessError(code, cmd)
        result = json.loads(out.read_text())
        result["sampled"] = sampler.peaks({k: tuple(v) for k, v in result.get("marks", {}).items()})
        result["timeline"] = sampler.series()
        return result

    def _episode_ids(self) -> list[str]:
        ids = []
        with open(self.jsonl, encoding="utf-8") as fh:
            for line in fh:
                ids.append(json.loads(line)["id"])
        return ids

    # -- steps ------------------------------------------------------------------------------
    def build(self) -> None:
        done = self.work / "child-full.json"
        if self.reuse_build and done.exists() and (self.data / "index").exists():
            self.out["podsearch_build"] = json.loads(done.read_text())  # a build that finished on its own
            return
        shutil.rmtree(self.data, ignore_errors=True)
        self.out["podsearch_build"] = self.child("full", str(self.jsonl), str(self.data), watch=self.data / "index")

    def single(self) -> None:
        """The Whoosh index of the same catalog with one writer in one process (the baseline)."""
        single_dir = self.work / "single-writer"
        shutil.rmtree(single_dir, ignore_errors=True)
        self.out["whoosh_single_writer"] = self.child("index", str(self.data), str(single_dir), "--procs", "1",
                                                      watch=single_dir / "index")
        shutil.rmtree(single_dir, ignore_errors=True)

    def peers(self) -> None:
        fts = FTS5(self.work / "fts5.sqlite")
        tv = Tantivy(self.work / "tantivy")
        self.out["fts5_build"] = {"total_s": round(fts.build(self.jsonl), 3), "bytes": fts.size()}
        self.out["tantivy_build"] = {"total_s": round(tv.build(self.jsonl), 3), "bytes": tv.size(), "threads": 2}

    def ensure_model(self) -> None:
        """Refit the similarity model when the podsearch code now running cannot read the saved one
        (a newer model version in the working tree); the index is left as built. Timed and recorded."""
        from podsearch.catalog import Catalog
        from podsearch.errors import IndexMissing
        from podsearch.generations import Generations
        from podsearch.progress import Progress
        from podsearch.reindex import Report, rebuild_derived
        from podsearch.similar import SimilarModel

        try:
            SimilarModel.load(Generations(self.data / "model"))
            return
        except IndexMissing:
            pass
        started = time.perf_counter()
        with Catalog.in_dir(self.data) as catalog:
            rebuild_derived(self.data, catalog, Report(), Progress())
        self.out["model_refit_before_serving_s"] = round(time.perf_counter() - started, 3)

    def latency(self) -> None:
        from podsearch.service import Library

        self.ensure_model()

        per_query: dict[str, dict[str, Any]] = {q.text + (f" [{q.show or q.years}]" if q.show or q.years else ""): {}
                                                 for q in MIX}
        keys = list(per_query)
        # The server's store of encoded answers is off: every pass works each search out (what a site's first
        # asking of a query costs); answers from the store are measured apart (search_http_stored).
        with Server(self.data, self.work / "server.log", env={"PODSEARCH_ANSWER_STORE": "0"}) as server:
            calls = [lambda q=q: server.get("/api/v1/search", api_params(q)) for q in MIX]
            timed(calls, rounds=0)  # warm up before reading the server's CPU clock
            cpu_before = proc_cpu_s(server.pid)
            ms, answers = timed(calls, rounds=self.rounds, warmup=0)
            server_cpu_ms = (proc_cpu_s(server.pid) - cpu_before) * 1000 / max(1, len(ms))
            memory = proc_memory_mb(server.pid)
            took = [a[1]["took_ms"] for a in answers if a[0] == 200]
            for key, (status, body) in zip(keys, answers):
                per_query[key]["podsearch"] = body["total"] if status == 200 else f"HTTP {status}"
            real = real_queries(corpora.SITE.parent / "eval")  # the dev sets' queries, typed by people
            real_calls = [lambda q=q: server.get("/api/v1/search", {"q": q}) for q in real]
            timed(real_calls, rounds=0)
            real_ms, real_answers = timed(real_calls, rounds=self.rounds, warmup=0)
        self.out["search_http"] = {**summary(ms), "server_took_ms_p50": summary(took).get("p50"),
                                   "server_cpu_ms_mean": round(server_cpu_ms, 3),
                                   "errors": sum(1 for a in answers if a[0] != 200)}
        self.out["search_http_real"] = {**summary(real_ms), "queries": len(real),
                                        "errors": sum(1 for a in real_answers if a[0] != 200)}
        self.out["server_memory_mb"] = memory
        with Server(self.data, self.work / "server-stored.log") as server:  # the store on: the mix asked again
            calls = [lambda q=q: server.get("/api/v1/search", api_params(q)) for q in MIX]
            ms, _ = timed(calls, rounds=self.rounds)
        self.out["search_http_stored"] = summary(ms)
        lib = Library(self.data)
        cpu: list[float] = []
        ms, _ = timed([lambda q=q: lib.search(search_request(q)) for q in MIX], rounds=self.rounds, cpu=cpu)
        self.out["search_inprocess"] = {**summary(ms), "cpu": summary(cpu)}
        for i, key in enumerate(keys):  # where the time goes, query by query (median of the rounds)
            per_query[key]["podsearch_inprocess_ms"] = summary(ms[i::len(MIX)])["p50"]
            per_query[key]["podsearch_inprocess_cpu_ms"] = summary(cpu[i::len(MIX)])["p50"]
        for label, engine in (("fts5", FTS5(self.work / "fts5.sqlite")), ("tantivy", Tantivy(self.work / "tantivy"))):
            engine.open()
            cpu = []
            ms, answers = timed([lambda q=q, e=engine: e.search(q) for q in MIX], rounds=self.rounds, cpu=cpu)
            self.out[f"search_{label}"] = {**summary(ms), "cpu": summary(cpu)}
            for key, answer in zip(keys, answers):
                per_query[key][label] = answer["total"]
        self.out["per_query_totals"] = per_query

    def profile(self) -> None:
        """py-spy samples the server through the query mix (after a warm-up pass): where the time goes, in
        buckets (``search_profile``), and a flame graph beside the results file."""
        self.ensure_model()
        raw = self.work / "search-profile.raw"
        svg = self.results_path.with_name(f"{self.name}-search-profile.svg")
        # the answer store off, as for the latency: with it, the warm-up's answers are served again and the
        # profile sees no search at all
        with Server(self.data, self.work / "server-profile.log", env={"PODSEARCH_ANSWER_STORE": "0"}) as server:
            calls = [lambda q=q: server.get("/api/v1/search", api_params(q)) for q in MIX]
            warm, _ = timed(calls, rounds=1)  # warm-up, then one pass timed
            # enough passes for PROFILE_S seconds of samples: a small corpus answers a pass in tens of ms
            rounds = max(self.rounds, math.ceil(PROFILE_S * 1000 / max(sum(warm), 1.0)))
            why = profiling.record(server.pid, raw, "raw", lambda: timed(calls, rounds=rounds, warmup=0))
            if why is None:
                why = profiling.record(server.pid, svg, "flamegraph", lambda: timed(calls, rounds=1, warmup=0))
        if why is not None:
            print(f"bench {self.name}: profile skipped: {why}", flush=True)
            self.out["search_profile"] = {"skipped": why}
            return
        self.out["search_profile"] = {**profiling.shares(raw.read_text()), "queries": len(MIX) * rounds,
                                      "rate_hz": profiling.RATE, "flamegraph": svg.name}

    def similar(self) -> None:
        from podsearch.service import Library

        self.ensure_model()
        ids = self._episode_ids()
        sample = random.Random(7).sample(ids, min(self.similar_samples, len(ids)))
        with Server(self.data, self.work / "server-similar.log") as server:
            calls = [lambda i=i: server.get(similar_path(i), {"k": 10}) for i in sample]
            # The first time an episode is asked, the answer is worked out; after that the server answers from
            # memory until the data changes (what an episode page's repeated visits get): both are measured.
            ms, _ = timed(calls, rounds=1, warmup=0)
            self.out["similar_http_first"] = summary(ms)
            ms, answers = timed(calls, rounds=self.rounds)
            self.out["similar_http"] = {**summary(ms), "errors": sum(1 for a in answers if a[0] != 200),
                                        "empty": sum(1 for a in answers if a[0] == 200 and not a[1]["similar"])}
            self.out.setdefault("server_memory_mb", {})["after_similar"] = proc_memory_mb(server.pid)
            # The floor under any answer of this stack: /healthz through the same client, waitress, Flask and app
            ms, _ = timed([lambda: server.get("/healthz") for _ in sample], rounds=self.rounds)
            self.out["http_floor"] = summary(ms)
        lib = Library(self.data)
        cpu: list[float] = []
        ms, _ = timed([lambda i=i: lib.similar(i, 10) for i in sample], rounds=self.rounds, cpu=cpu)
        self.out["similar_inprocess"] = {**summary(ms), "cpu": summary(cpu)}
        tfidf = SklearnTfidf()
        fit_s = tfidf.fit(self.jsonl)
        cpu = []
        ms, _ = timed([lambda i=i: tfidf.similar(i, 10) for i in sample], rounds=self.rounds, cpu=cpu)
        self.out["similar_sklearn_tfidf"] = {**summary(ms), "cpu": summary(cpu), "fit_s": round(fit_s, 3)}
        few = sample[: self.more_like_samples]
        index = lib.engine
        texts = {i: lib.catalog.episode(i).transcript_text for i in few}
        cpu = []
        ms, _ = timed([lambda i=i: index.more_like(i, texts[i], 10) for i in few], rounds=1, cpu=cpu)
        self.out["similar_whoosh_more_like"] = {**summary(ms), "cpu": summary(cpu)}

    def incremental(self) -> None:
        copy = self.work / "incremental"
        shutil.rmtree(copy, ignore_errors=True)
        shutil.copytree(self.data, copy)
        start = len(self._episode_ids()) + 1_000_000  # ids that cannot clash with the corpus
        new, _ = corpora.synthetic_jsonl(self.base, self.work / "new-10.jsonl", 10, seed=99, start=start)
        result = self.child("incremental", str(new), str(copy))
        shutil.rmtree(copy, ignore_errors=True)
        self.out["podsearch_incremental"] = result

    # -- summary ------------------------------------------------------------------------------
    def figures(self) -> None:
        o = self.out
        get = lambda *path: _dig(o, path)  # noqa: E731
        figures = {
            "search_http_p50_ms": get("search_http", "p50"), "search_http_p99_ms": get("search_http", "p99"),
            "search_http_real_p50_ms": get("search_http_real", "p50"),
            "search_http_real_p99_ms": get("search_http_real", "p99"),
            "search_http_stored_p50_ms": get("search_http_stored", "p50"),
            "search_inprocess_p50_ms": get("search_inprocess", "p50"),
            "search_http_vs_fts5_p50": _ratio(get("search_http", "p50"), get("search_fts5", "p50")),
            "search_inprocess_vs_fts5_p50": _ratio(get("search_inprocess", "p50"), get("search_fts5", "p50")),
            "search_inprocess_vs_tantivy_p50": _ratio(get("search_inprocess", "p50"), get("search_tantivy", "p50")),
            "search_inprocess_cpu_p50_ms": get("search_inprocess", "cpu", "p50"),
            "search_cpu_vs_fts5_p50": _ratio(get("search_inprocess", "cpu", "p50"), get("search_fts5", "cpu", "p50")),
            "search_cpu_vs_tantivy_p50": _ratio(get("search_inprocess", "cpu", "p50"), get("search_tantivy", "cpu", "p50")),
            "similar_http_p50_ms": get("similar_http", "p50"), "similar_inprocess_p50_ms": get("similar_inprocess", "p50"),
            "similar_http_first_p50_ms": get("similar_http_first", "p50"),
            "http_floor_p50_ms": get("http_floor", "p50"),
            "sklearn_vs_similar_inprocess_p50": _ratio(get("similar_sklearn_tfidf", "p50"), get("similar_inprocess", "p50")),
            "more_like_vs_similar_inprocess_p50": _ratio(get("similar_whoosh_more_like", "p50"),
                                                          get("similar_inprocess", "p50")),
            "incremental_share_of_full": _ratio(get("podsearch_incremental", "total_s"), get("podsearch_build", "total_s")),
            "single_writer_vs_build_index": _ratio(get("whoosh_single_writer", "index_s"),
                                                   get("podsearch_build", "seconds", "index")),
            "build_vs_fts5": _ratio(get("podsearch_build", "total_s"), get("fts5_build", "total_s")),
            "build_vs_tantivy": _ratio(get("podsearch_build", "total_s"), get("tantivy_build", "total_s")),
            "server_rss_mb": max(filter(None, [get("server_memory_mb", "rss"),
                                               get("server_memory_mb", "after_similar", "rss")]), default=None),
            "build_peak_rss_mb": get("podsearch_build", "memory_mb", "peak"),
        }
        o["figures"] = figures
        o["targets"] = {name: {"value": figures[name], "limit": limit, "op": op,
                               "met": None if figures[name] is None else
                               (figures[name] <= limit if op == "<=" else figures[name] >= limit)}
                        for name, (op, limit) in TARGETS.items()}


def _dig(obj: Any, path: tuple[str, ...]) -> Any:
    for key in path:
        if not isinstance(obj, dict) or key not in obj:
            return None
        obj = obj[key]
    return obj


def _ratio(a: float | None, b: float | None) -> float | None:
    return round(a / b, 3) if a is not None and b else None


def prepare(name: str, work: Path, site: Path, shows: list[str] | None, count: int | None,
            max_segments: int | None) -> tuple[Path, Path, dict[str, Any]]:
    """(corpus JSON-lines, the base new episodes are drawn from, facts about the corpus)."""
    base, base_meta = corpora.site_jsonl(work, site, shows)
    if count is None:
        return base, base, {"name": name, "episodes": base_meta["episodes"], "bytes": base_meta["bytes"],
                            "how": "the shared site corpus, ingested from its 25 feeds by podsearch and exported",
                            "feed_ingest_s": base_meta["feed_ingest_s"]}
    path, meta = corpora.synthetic_jsonl(base, work / f"{name}.jsonl", count, max_segments=max_segments)
    return path, base, {"name": name, "episodes": count, "bytes": meta["bytes"], "generate_s": meta["generate_s"],
                        "how": "resampled per show from the site corpus (bench/corpus.py)", "recipe": meta["recipe"]}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.run", description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", default="site", help="site, 10k, 100k, or a number of synthetic episodes")
    ap.add_argument("--steps", default=",".join(STEPS), help=f"comma-separated subset of {','.join(STEPS)}")
    ap.add_argument("--work", type=Path, default=Path("/tmp/podsearch-bench"))
    ap.add_argument("--site", type=Path, default=corpora.SITE, help="the site corpus folder (feeds/, transcripts/)")
    ap.add_argument("--shows", default="", help="only these feeds of the site corpus (comma-separated file stems)")
    ap.add_argument("--max-segments", type=int, default=None, help="cap synthetic transcripts (smoke runs)")
    ap.add_argument("--rounds", type=int, default=5, help="measured passes over the query mix")
    ap.add_argument("--similar-samples", type=int, default=100)
    ap.add_argument("--more-like-samples", type=int, default=20)
    ap.add_argument("--results", type=Path, default=None, help="results file (default bench/results/<corpus>.json)")
    ap.add_argument("--reuse-build", action="store_true", help="take the build step's figures from a finished child run")
    args = ap.parse_args(argv)
    steps = [s for s in args.steps.split(",") if s]
    unknown = set(steps) - set(STEPS)
    if unknown:
        ap.error(f"unknown steps: {', '.join(sorted(unknown))}")
    name = args.corpus
    count = SIZES[name] if name in SIZES else int(name)
    shows = [s for s in args.shows.split(",") if s] or None
    work = args.work
    work.mkdir(parents=True, exist_ok=True)
    jsonl, base, facts = prepare(name, work, args.site, shows, count, args.max_segments)
    bench = Bench(name, jsonl, work / name, args.rounds, args.similar_samples, args.more_like_samples, base,
                  args.results or RESULTS / f"{name}.json")
    bench.work.mkdir(parents=True, exist_ok=True)
    bench.reuse_build = args.reuse_build
    bench.out["corpus"] = facts
    bench.out.setdefault("machine", {})
    for step in steps:
        started = time.perf_counter()
        before = machine()
        bench.out["machine"][f"{step}_load_before"] = before["load_1_5_15"]
        bench.out["machine"][f"{step}_commit"] = before["commit"]  # steps not run keep the commit they ran at
        getattr(bench, step)()
        bench.out["machine"][f"{step}_s"] = round(time.perf_counter() - started, 1)
        bench.figures()
        bench.save()
        print(f"bench {name}: {step} done in {time.perf_counter() - started:.1f} s", flush=True)
    bench.out["machine"].update({k: v for k, v in machine().items() if k != "load_1_5_15"})
    bench.figures()
    bench.save()
    print(json.dumps(bench.out["figures"], indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
