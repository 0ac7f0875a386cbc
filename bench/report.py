"""Plots (PNG) and Markdown tables from bench/results/*.json, for docs/benchmarks.md.

    python -m bench.report [--results bench/results] [--out docs/benchmarks]

Writes build.png, search.png, similar.png and per_query.png into ``--out`` and prints the tables.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from .profile import BUCKETS

ORDER = ("site", "10k", "100k")
PHASES = ("parse", "catalog", "index", "model", "neighbours")
SEARCH = (("search_http", "podsearch (HTTP)"), ("search_inprocess", "podsearch (in-process)"),
          ("search_fts5", "SQLite FTS5"), ("search_tantivy", "tantivy"))
SIMILAR = (("similar_http_first", "podsearch /similar (HTTP), first asking"),
           ("similar_http", "podsearch /similar (HTTP), asked again"), ("similar_inprocess", "podsearch similar (in-process)"),
           ("similar_sklearn_tfidf", "scikit-learn TF-IDF"), ("similar_whoosh_more_like", "Whoosh more_like"))


def load(folder: Path) -> dict[str, dict[str, Any]]:
    found = {p.stem: json.loads(p.read_text()) for p in sorted(folder.glob("*.json"))}
    found = {k: v for k, v in found.items() if isinstance(v, dict) and "figures" in v and "corpus" in v}  # not others' files
    return {k: found[k] for k in sorted(found, key=lambda k: (ORDER.index(k) if k in ORDER else 99, k))}


def _plt() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def plot_build(runs: dict[str, dict[str, Any]], path: Path) -> None:
    plt = _plt()
    names = [n for n in runs if "podsearch_build" in runs[n]]
    fig, axes = plt.subplots(1, max(1, len(names)), figsize=(4.2 * max(1, len(names)), 3.6), squeeze=False)
    for ax, name in zip(axes[0], names):
        r = runs[name]
        left = 0.0
        for phase in PHASES:
            v = r["podsearch_build"]["seconds"].get(phase, 0.0)
            ax.barh("podsearch", v, left=left, label=phase)
            left += v
        rows = [("Whoosh, 1 writer\n(index only)", r.get("whoosh_single_writer", {}).get("index_s")),
                ("SQLite FTS5", r.get("fts5_build", {}).get("total_s")),
                ("tantivy", r.get("tantivy_build", {}).get("total_s"))]
        for label, v in rows:
            if v is not None:
                ax.barh(label, v, color="grey")
        ax.invert_yaxis()
        ax.set_title(f"{name}: {r['corpus']['episodes']:,} episodes")
        ax.set_xlabel("seconds (full build)")
    axes[0][0].legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _grouped(runs: dict[str, dict[str, Any]], series: tuple[tuple[str, str], ...], path: Path, title: str) -> None:
    plt = _plt()
    names = list(runs)
    fig, ax = plt.subplots(figsize=(8, 3.8))
    width = 0.8 / len(series)
    if not any((runs[n].get(key) or {}).get("n") for n in names for key, _ in series):
        plt.close(fig)
        return
    for k, (key, label) in enumerate(series):
        xs, p50, p99 = [], [], []
        for i, name in enumerate(names):
            s = runs[name].get(key)
            if s and s.get("n"):
                xs.append(i + k * width)
                p50.append(s["p50"])
                p99.append(s["p99"])
        bars = ax.bar(xs, p50, width, label=label)
        ax.scatter(xs, p99, marker="_", s=200, color=bars.patches[0].get_facecolor() if bars.patches else None)
    ax.set_xticks([i + 0.4 - width / 2 for i in range(len(names))], names)
    ax.set_yscale("log")
    ax.set_ylabel("ms (bar: p50, tick: p99)")
    ax.set_title(title)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def plot_per_query(run: dict[str, Any], path: Path) -> None:
    plt = _plt()
    rows = [(k, v.get("podsearch_inprocess_ms")) for k, v in run.get("per_query_totals", {}).items()]
    rows = sorted((r for r in rows if r[1] is not None), key=lambda r: r[1])
    if not rows:
        return
    fig, ax = plt.subplots(figsize=(7, 0.22 * len(rows) + 1))
    ax.barh([r[0] for r in rows], [r[1] for r in rows], color="tab:blue")
    ax.set_xscale("log")
    ax.set_xlabel("ms, podsearch in-process (p50)")
    ax.tick_params(axis="y", labelsize=7)
    ax.set_title(f"{run['corpus']['name']}: query by query")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _num(v: float) -> str:
    return f"{v:,.0f}" if abs(v) >= 100 else f"{v:.3g}"


def tables(runs: dict[str, dict[str, Any]]) -> str:
    out = []
    cols = list(runs)
    out.append("| figure | " + " | ".join(cols) + " |")
    out.append("|---|" + "---|" * len(cols))

    def row(label: str, fn: Any) -> None:
        cells = []
        for name in cols:
            try:
                v = fn(runs[name])
            except (KeyError, TypeError):
                v = None
            if v is None:
                cells.append("–")
            elif isinstance(v, str):
                cells.append(v)
            else:
                cells.append(_num(v))
        out.append(f"| {label} | " + " | ".join(cells) + " |")

    row("episodes", lambda r: r["corpus"]["episodes"])
    row("corpus JSON-lines, MB", lambda r: r["corpus"]["bytes"] / 1e6)
    for phase in PHASES:
        row(f"build: {phase}, s", lambda r, p=phase: r["podsearch_build"]["seconds"][p])
    row("build: total, s", lambda r: r["podsearch_build"]["total_s"])
    row("build: peak RSS, MB", lambda r: r["podsearch_build"]["memory_mb"]["peak"])
    row("Whoosh single writer (index only), s", lambda r: r["whoosh_single_writer"]["index_s"])
    row("single writer ÷ podsearch index phase", lambda r: r["figures"]["single_writer_vs_build_index"])
    row("FTS5 build, s", lambda r: r["fts5_build"]["total_s"])
    row("tantivy build (2 threads), s", lambda r: r["tantivy_build"]["total_s"])
    row("incremental +10 episodes, s", lambda r: r["podsearch_incremental"]["total_s"])
    row("incremental ÷ full build", lambda r: r["figures"]["incremental_share_of_full"])
    row("index MB (Whoosh)", lambda r: r["podsearch_build"]["index_bytes"] / 1e6)
    row("model MB", lambda r: r["podsearch_build"]["model_bytes"] / 1e6)
    row("catalog MB (SQLite, with segments)", lambda r: r["podsearch_build"]["catalog_bytes"] / 1e6)
    row("FTS5 MB", lambda r: r["fts5_build"]["bytes"] / 1e6)
    row("tantivy MB (text stored)", lambda r: r["tantivy_build"]["bytes"] / 1e6)
    for key, label in SEARCH + SIMILAR:
        row(f"{label} p50 / p99, ms", lambda r, k=key: f"{_num(r[k]['p50'])} / {_num(r[k]['p99'])}")
        row(f"{label} CPU p50, ms", lambda r, k=key: r[k]["cpu"]["p50"])
    row("HTTP floor (/healthz, same client) p50, ms", lambda r: r["http_floor"]["p50"])
    row("search: podsearch HTTP ÷ FTS5 (p50)", lambda r: r["figures"]["search_http_vs_fts5_p50"])
    row("search: podsearch in-process ÷ FTS5 (p50)", lambda r: r["figures"]["search_inprocess_vs_fts5_p50"])
    row("search: podsearch in-process ÷ tantivy (p50)", lambda r: r["figures"]["search_inprocess_vs_tantivy_p50"])
    row("server RSS, MB", lambda r: r["figures"]["server_rss_mb"])
    return "\n".join(out)


def profile_table(runs: dict[str, dict[str, Any]]) -> str:
    """Share of the server's samples per bucket (the ``profile`` step), one column per corpus."""
    cols = [n for n in runs if "buckets" in runs[n].get("search_profile", {})]
    if not cols:
        return ""
    totals: dict[str, float] = {bucket: 0.0 for bucket, _ in BUCKETS}  # every bucket has its row
    for name in cols:
        for bucket, v in runs[name]["search_profile"]["buckets"].items():
            totals[bucket] = totals.get(bucket, 0.0) + v["share"]
    out = ["| where the server's time goes | " + " | ".join(cols) + " |", "|---|" + "---|" * len(cols)]
    for bucket in sorted(totals, key=lambda b: -totals[b]):
        cells = [runs[n]["search_profile"]["buckets"].get(bucket, {}).get("share") for n in cols]
        out.append(f"| {bucket} | " + " | ".join("–" if c is None else f"{c * 100:.1f}%" for c in cells) + " |")
    out.append("| samples (200 Hz) | " + " | ".join(f"{runs[n]['search_profile']['samples']:,}" for n in cols) + " |")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.report")
    ap.add_argument("--results", type=Path, default=Path(__file__).parent / "results")
    ap.add_argument("--out", type=Path, default=Path(__file__).resolve().parent.parent / "docs" / "benchmarks")
    args = ap.parse_args(argv)
    runs = load(args.results)
    if not runs:
        print(f"no results in {args.results}", file=sys.stderr)
        return 1
    args.out.mkdir(parents=True, exist_ok=True)
    plot_build(runs, args.out / "build.png")
    _grouped(runs, SEARCH, args.out / "search.png", "Search latency, fixed query mix")
    _grouped(runs, SIMILAR, args.out / "similar.png", "Similar episodes latency (k=10)")
    biggest = [r for r in runs.values() if any("podsearch_inprocess_ms" in v for v in r.get("per_query_totals", {}).values())]
    if biggest:
        plot_per_query(biggest[-1], args.out / "per_query.png")
    print(tables(runs))
    print()
    print(profile_table(runs))
    return 0


if __name__ == "__main__":
    sys.exit(main())
