"""Ranking variants on the relevance sets, by parameter, with SQLite FTS5 from the same run (docs/search.md).

    python -m bench.ranking --into /tmp/eval-data                       every variant below, the podcast sets
    python -m bench.ranking --into /tmp/eval-data --sets site,cranfield,vaswani --only "before|chosen"
    python -m bench.ranking --into /tmp/eval-data --set k1=1.2 --set "b=transcript:0.75" --set feedback.weight=0
    python -m bench.ranking --into /tmp/eval-data --sets site,ours --only chosen      with our own graded queries
    python -m bench.ranking --into /tmp/eval-data --sets ours-known --only chosen     our own known items

A variant is a :class:`podsearch.engines.whoosh.ranking.Ranking` (field weights, per-field length
normalisation, k1, BM25F or per-field BM25 added up, the any-word fallback, the long-query rule) and a
:class:`podsearch.feedback.Feedback` (the similarity model's vote on the top episodes) applied to the
same built data (``podsearch eval search --into``'s folders: built once, then only searched). Each set is
scored on all its queries and on its two halves (alternate queries, per kind for the known items): a setting
chosen on one half should hold on the other. FTS5 runs once per set. Results go to ``--out`` as JSON and are
printed as a Markdown table. ``ours`` is our own graded topical set over the site corpus (40 queries,
``bench/labels/README.md``): a guard beside the dev labels, not a target; ``ours-known`` our own known-item
queries (62, MRR@10 by kind, the same README).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

from podsearch.engines.whoosh.ranking import BEFORE, RANKING, Ranking
from podsearch.evaluation.podcast import (
    IR_FIELDS,
    SetScores,
    collection_sets,
    fts5_for,
    podcast_sets,
    read_known_items,
    score_graded,
    score_known_items,
    site_data,
)
from podsearch.evaluation.search import SearchBox, read_qrels, read_queries, run_queries
from podsearch.feedback import FEEDBACK, OFF, Feedback

CORPUS = Path(__file__).resolve().parents[1].parent / "shared" / "corpus"
LABELS = Path(__file__).resolve().parent / "labels"


def _weights(**w: float) -> tuple[tuple[str, float], ...]:
    order = ("title", "persons", "show", "notes", "transcript")
    return tuple((f, w[f]) for f in order if w.get(f, 0) > 0)


BM25F = replace(BEFORE, bm25f=True)
K2 = replace(BM25F, k1=2.0, b=(("transcript", 0.5),))
BEFORE_READS = replace(FEEDBACK, reads=False)  # the feedback before reads counted as not said (6 December 2026)
VOTES = replace(BEFORE_READS, passage=0.0)  # the feedback before its passage step (second round of issue 15)
# Every variant measured for issue 15, in the order they were tried (docs/search.md shows their figures):
# (engine ranking, relevance feedback from the similarity model).
VARIANTS: dict[str, tuple[Ranking, Feedback]] = {
    "before": (BEFORE, OFF),
    "per-field, transcript only": (replace(BEFORE, weights=_weights(transcript=1)), OFF),
    "per-field, no show": (replace(BEFORE, weights=_weights(title=1.5, persons=1.3, notes=1.15, transcript=1)), OFF),
    "per-field, title 0.3 notes 0.3": (replace(BEFORE, weights=_weights(title=0.3, persons=1.3, notes=0.3, transcript=1)),
                                       OFF),
    "per-field, any word always": (replace(BEFORE, long_query_words=0), OFF),
    "bm25f": (BM25F, OFF),
    "bm25f k1 2": (replace(BM25F, k1=2.0), OFF),
    "bm25f k1 2, b transcript 0.5": (K2, OFF),
    "+ title 2 notes 1": (replace(K2, weights=_weights(title=2, persons=1.3, show=1.3, notes=1, transcript=1)), OFF),
    "+ title 4 notes 3": (replace(K2, weights=_weights(title=4, persons=1.3, show=1.3, notes=3, transcript=1)), OFF),
    "+ no show": (replace(K2, weights=_weights(title=1.5, persons=1.3, notes=1.15, transcript=1)), OFF),
    "bm25f k1 5, b transcript 0.8": (replace(BM25F, k1=5.0, b=(("transcript", 0.8),)), OFF),
    "+ relax below 1": (replace(K2, relax_below=1), OFF),
    "+ relax below 10": (replace(K2, relax_below=10), OFF),
    "+ long query 3": (replace(K2, long_query_words=3), OFF),
    "+ long query 6": (replace(K2, long_query_words=6), OFF),
    "+ any word always": (replace(K2, long_query_words=0), OFF),
    "+ feedback 3 seeds, weight 0.4": (K2, replace(VOTES, weight=0.4)),
    "+ feedback 3 seeds, weight 0.8": (K2, replace(VOTES, weight=0.8)),
    "+ feedback 3 seeds, weight 1.2": (K2, replace(VOTES, weight=1.2)),
    "+ feedback 1 seed, weight 0.8": (K2, replace(VOTES, seeds=1)),
    "+ feedback 5 seeds, weight 0.8": (K2, replace(VOTES, seeds=5)),
    "+ feedback depth 50": (K2, replace(VOTES, depth=50)),
    "+ feedback, b 0.5 in every field": (replace(K2, b=(), b_default=0.5), VOTES),
    # second round (bench/rerank.py has the other families): the best transcript window before the vote, read for
    # the top 30 as then
    "+ passages 800 words, 0.05": (RANKING, replace(BEFORE_READS, window=800, passage=0.05, passage_depth=30)),
    "+ passages 800 words, 0.1": (RANKING, replace(BEFORE_READS, window=800, passage=0.1, passage_depth=30)),
    "+ passages 800 words, 0.2": (RANKING, replace(BEFORE_READS, window=800, passage=0.2, passage_depth=30)),
    "+ passages 400 words, 0.1": (RANKING, replace(BEFORE_READS, window=400, passage=0.1, passage_depth=30)),
    "+ passages 1200 words, 0.1": (RANKING, replace(BEFORE_READS, window=1200, passage=0.1, passage_depth=30)),
    # third round: the passages of the top 10 or 20 only (the top 20 is the default since 2 December 2026)
    "+ passages of the top 10": (RANKING, replace(BEFORE_READS, passage_depth=10)),
    "+ passages of the top 20": (RANKING, replace(BEFORE_READS, passage_depth=20)),
    "chosen before passages": (RANKING, VOTES),
    # fourth round (6 December 2026): a word said only in an episode's reads counts as not said (feedback.said_in_reads)
    "chosen before reads": (RANKING, BEFORE_READS),
    "chosen": (RANKING, FEEDBACK),
}


def parse_setting(spec: str, base: Ranking) -> Ranking:
    """``name=value``: k1=2.0, b_default=0.75, bm25f=true, relax_below=3, long_query_words=4,
    weights=title:2,notes:1,transcript:1, b=transcript:0.5 (the engine's ranking)."""
    name, _, value = spec.partition("=")
    if name in ("weights", "b"):
        pairs = tuple((f, float(v)) for f, _, v in (p.partition(":") for p in value.split(",") if p))
        return replace(base, **{name: pairs})
    if name == "bm25f":
        return replace(base, bm25f=value.lower() in ("1", "true", "yes"))
    if name in ("relax_below", "long_query_words"):
        return replace(base, **{name: int(value)})
    if name in ("k1", "b_default"):
        return replace(base, **{name: float(value)})
    raise SystemExit(f"unknown setting {name!r}")


def parse_feedback(spec: str, base: Feedback) -> Feedback:
    """``feedback.name=value``: feedback.depth=30, feedback.seeds=3, feedback.weight=0.8, feedback.window=800,
    feedback.passage=0.1, feedback.passage_depth=20, feedback.reads=false."""
    name, _, value = spec.removeprefix("feedback.").partition("=")
    if name == "reads":
        return replace(base, reads=value.lower() in ("1", "true", "yes"))
    if name not in ("depth", "seeds", "weight", "window", "passage", "passage_depth"):
        raise SystemExit(f"unknown feedback setting {name!r}")
    return replace(base, **{name: float(value) if name in ("weight", "passage") else int(value)})


def measure(name: str, variant: tuple[Ranking, Feedback], corpus: Path, data: Path, sets: list[str],
            baseline: dict[str, Any]) -> dict:
    """Every chosen set for one variant; FTS5's figures are taken from the first run of each set."""
    ranking, feedback = variant
    out: dict[str, Any] = {"ranking": asdict(ranking), "feedback": asdict(feedback), "sets": {}}
    started = time.perf_counter()
    results = []
    first = not baseline
    if "site" in sets:
        results += podcast_sets(corpus, data, baseline=first, ranking=ranking, feedback=feedback)
    if "ours" in sets:
        results.append(our_topical(corpus, data, first, ranking, feedback))
    if "ours-known" in sets:
        results.append(our_known(corpus, data, first, ranking, feedback))
    for coll in ("cranfield", "vaswani"):
        if coll in sets:
            results += collection_sets(corpus / "ir" / coll, data, IR_FIELDS, baseline=first,
                                       lowercased=coll == "vaswani", ranking=ranking, feedback=feedback)
    for r in results:
        row = r.to_dict()
        if first:
            baseline[r.name] = {"fts5": row.get("fts5"), "halves": row.get("halves", {}), "by_kind": row.get("by_kind", {}),
                                "map@100": (row.get("map@100") or {}).get("fts5")}
        base = baseline.get(r.name, {})
        row["fts5"] = base.get("fts5")
        for half, figures in row.get("halves", {}).items():
            figures["fts5"] = base.get("halves", {}).get(half, {}).get("fts5")
        for kind, figures in row.get("by_kind", {}).items():
            figures["fts5"] = base.get("by_kind", {}).get(kind, {}).get("fts5")
        out["sets"][r.name] = row
    out["seconds"] = round(time.perf_counter() - started, 1)
    print(f"{name}: {out['seconds']} s", file=sys.stderr, flush=True)
    return out


def _our_runs(corpus: Path, data: Path, baseline: bool, ranking: Ranking, feedback: Feedback,
              queries: dict[str, str]) -> dict[str, dict[str, list[str]]]:
    """Our queries' top 10s through the search box over the site corpus, and FTS5's when ``baseline``."""
    site = site_data(corpus / "site", data / "site", lambda _m: None)
    box = SearchBox(site, ranking, feedback)
    systems = {"podsearch": box.rank}
    fts = fts5_for(site) if baseline else None
    if fts is not None:
        systems["fts5"] = fts.rank
    try:
        return {name: run_queries(rank, queries, 10)[0] for name, rank in systems.items()}
    finally:
        box.close()
        if fts is not None:
            fts.close()


def our_topical(corpus: Path, data: Path, baseline: bool, ranking: Ranking, feedback: Feedback) -> SetScores:
    """Our own graded topical queries (bench/labels/README.md) through the search box, FTS5 when ``baseline``;
    ``extra`` says how many of podsearch's top 10 are unjudged (scored 0: look at them before trusting a drop)."""
    queries = read_queries(LABELS / "topical_ours.queries.tsv")
    qrels = read_qrels(LABELS / "topical_ours.qrels.tsv")
    runs = _our_runs(corpus, data, baseline, ranking, feedback, queries)
    scores = score_graded("our topical", qrels, runs)
    scores.extra = {"unjudged in the top 10": sum(1 for q, ids in runs["podsearch"].items()
                                                  for d in ids if d not in qrels.get(q, {}))}
    return scores


def our_known(corpus: Path, data: Path, baseline: bool, ranking: Ranking, feedback: Feedback) -> SetScores:
    """Our own known-item queries (bench/labels/README.md), MRR@10 by kind, FTS5 when ``baseline``."""
    items = read_known_items(LABELS / "known_ours.tsv")
    runs = _our_runs(corpus, data, baseline, ranking, feedback, {i.qid: i.query for i in items})
    return score_known_items(items, runs, "our known items")


def table(results: dict[str, dict]) -> str:
    """Markdown: one row per variant, podsearch / FTS5 per set (halves A | B for the podcast sets)."""
    names = list(next(iter(results.values()))["sets"])
    head = "| variant | " + " | ".join(names) + " |"
    lines = [head, "|" + "---|" * (len(names) + 1)]
    for variant, res in results.items():
        cells = []
        for name in names:
            row = res["sets"].get(name)
            if row is None:
                cells.append("")
                continue
            cell = f"{row['podsearch']:.3f}"
            if row.get("halves"):
                cell += " (" + " / ".join(f"{h['podsearch']:.3f}" for h in row["halves"].values()) + ")"
            cells.append(cell)
        lines.append(f"| {variant} | " + " | ".join(cells) + " |")
    fts = []
    for name in names:
        row = next(iter(results.values()))["sets"][name]
        cell = f"{row['fts5']:.3f}" if row.get("fts5") is not None else ""
        if row.get("halves"):
            cell += " (" + " / ".join(f"{h['fts5']:.3f}" for h in row["halves"].values()) + ")"
        fts.append(cell)
    lines.append("| FTS5 bm25() | " + " | ".join(fts) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.ranking", description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", type=Path, default=CORPUS)
    ap.add_argument("--into", type=Path, required=True, help="the evaluation's data folder (built on first use)")
    ap.add_argument("--sets", default="site", help="comma-separated: site, ours, ours-known, cranfield, vaswani")
    ap.add_argument("--only", default="", help="variant names separated by | (default: all)")
    ap.add_argument("--set", dest="settings", action="append", default=[],
                    help="one variant from the chosen ranking with these settings (name=value, repeatable)")
    ap.add_argument("--out", type=Path, default=None, help="write every figure here as JSON")
    args = ap.parse_args(argv)
    sets = [s for s in args.sets.split(",") if s]
    if args.settings:
        ranking, feedback = RANKING, FEEDBACK
        for spec in args.settings:
            if spec.startswith("feedback."):
                feedback = parse_feedback(spec, feedback)
            else:
                ranking = parse_setting(spec, ranking)
        variants = {" ".join(args.settings): (ranking, feedback)}
    else:
        wanted = [n.strip() for n in args.only.split("|") if n.strip()]
        unknown = set(wanted) - set(VARIANTS)
        if unknown:
            ap.error(f"unknown variants: {', '.join(sorted(unknown))}")
        variants = {n: r for n, r in VARIANTS.items() if not wanted or n in wanted}
    baseline: dict[str, Any] = {}
    results = {name: measure(name, r, args.corpus, args.into, sets, baseline) for name, r in variants.items()}
    if args.out:
        args.out.write_text(json.dumps(results, indent=1) + "\n")
    print(table(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
