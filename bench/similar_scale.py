"""Fit + neighbours of the similarity model at scale: time and peak memory.

Sizes: ``real`` (the catalog as it is, e.g. the 1,869-episode site corpus) and synthetic corpora of N episodes
made deterministically from that catalog (seed 0): every synthetic episode copies a random real episode's
show, title (+ " #k"), people and shuffled show-note sentences, and its transcript is ``--sentences``
sentences drawn 80% from that base episode's transcript and 20% from the pool of its show's sentences. So
synthetic episodes of one base are near each other, shows keep their noise (intros, hosts, sponsors), and
the vocabulary is the real one. Each keeps its base's notes links and is numbered inside its show, so the
"episode N" mentions copied from real transcripts name synthetic episodes. Each size runs in its own
subprocess, so its peak RSS is its own. ``top10_agreement_with_exact``: over 200 random episodes, the share
of the exact top 10 (every pair scored) that the precomputed neighbours hold.

    python bench/similar_scale.py --catalog /tmp/site-data/catalog.sqlite --sizes real,20000,100000 \\
        --out bench/results/similar_scale.json [--params '{"reciprocal_weight": 0.2}']
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import resource
import subprocess
import sys
import time
from pathlib import Path


def rss_mib() -> float:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def peak_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def synthetic(fields, n: int, sentences: int, seed: int = 0):
    import numpy as np

    from podsearch.similar import EpisodeFields

    rng = np.random.default_rng(seed)
    split = re.compile(r"(?<=[.!?])\s+")
    own = [split.split(t) or [""] for t in fields.transcripts]
    pool: dict[str, list[str]] = {}
    for show, sents in zip(fields.shows, own):
        pool.setdefault(show, []).extend(sents)
    note_sents = [split.split(t) for t in fields.notes]
    out = EpisodeFields(*([] for _ in range(9)), show_titles=fields.show_titles)
    per_show: dict[str, int] = {}
    bases = rng.integers(0, len(fields.ids), n)
    for k, b in enumerate(bases.tolist()):
        show = fields.shows[b]
        mine, theirs = own[b], pool[show]
        picks_own = rng.integers(0, len(mine), int(sentences * 0.8))
        picks_pool = rng.integers(0, len(theirs), sentences - len(picks_own))
        text = " ".join([mine[i] for i in picks_own] + [theirs[i] for i in picks_pool])
        ns = note_sents[b]
        per_show[show] = per_show.get(show, 0) + 1
        out.ids.append(f"synthetic:{k}")
        out.shows.append(show)
        out.titles.append(f"{fields.titles[b]} #{k}")
        out.notes.append(" ".join(ns[i] for i in rng.permutation(len(ns))))
        out.transcripts.append(text)
        out.languages.append("en")
        out.people.append(fields.people[b])
        out.links.append(fields.links[b])
        out.numbers.append(per_show[show])  # numbered in each show, so "episode 159" in a transcript names one
    return out


def one(size: str, catalog_path: str, sentences: int, params: str = "{}") -> dict:
    from podsearch.catalog import Catalog
    from podsearch.similar import CANDIDATES, EXACT_LIMIT, PRUNE_TERMS, ModelParams, SimilarModel, episode_texts

    started = time.perf_counter()
    with Catalog(catalog_path) as cat:
        fields = episode_texts(cat)
    read_s = time.perf_counter() - started
    if size != "real":
        t0 = time.perf_counter()
        fields = synthetic(fields, int(size), sentences)
        read_s = time.perf_counter() - t0
    chars = sum(len(t) for f in (2, 3, 4) for t in fields[f])
    base_rss = rss_mib()
    marks: dict[str, float] = {}
    t0 = time.perf_counter()
    model = SimilarModel.fit_fields(fields, ModelParams(**json.loads(params)),
                                    progress=lambda name: marks.setdefault(name, time.perf_counter() - t0))
    total = time.perf_counter() - t0
    agreement = exact_agreement(model)
    return {
        "size": size, "episodes": len(fields[0]), "text_mb": round(chars / 1e6, 1),
        "prepare_seconds": round(read_s, 1), "fit_seconds_total": round(total, 1),
        "vectorize_seconds": round(marks.get("vectorized", 0), 1),
        "weighting_seconds": round(marks.get("weighted", 0) - marks.get("vectorized", 0), 1),
        "neighbours_seconds": round(total - marks.get("weighted", 0), 1),
        "terms": int(model.matrix.shape[1]), "matrix_nnz": int(model.matrix.nnz),
        "rss_before_fit_mib": round(base_rss, 0), "peak_rss_mib": round(peak_mib(), 0),
        "synthetic_sentences_per_episode": None if size == "real" else sentences,
        "neighbours_method": "exact (every pair, blockwise)" if len(fields[0]) <= EXACT_LIMIT else
        f"pruned: candidates from the {PRUNE_TERMS} strongest terms, {CANDIDATES} per episode rescored in full",
        "top10_agreement_with_exact": agreement, "params": json.loads(params),
    }


def exact_agreement(model, sample: int = 200) -> float:
    """Share of the exact top 10 (every pair scored) that the precomputed neighbours hold, over a sample of episodes."""
    import numpy as np

    n = len(model.ids)
    rows = np.random.default_rng(1).choice(n, min(n, sample), replace=False)
    shared = []
    for i in rows.tolist():
        sims = model.scores(i)
        sims[i] = -np.inf
        exact = set(np.argsort(-sims, kind="stable")[:10].tolist())
        shared.append(len(exact & set(model.neigh_idx[i][:10].tolist())) / 10)
    return round(float(np.mean(shared)), 4)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--catalog", required=True, help="catalog.sqlite of a data folder (the site corpus ingested)")
    ap.add_argument("--sizes", default="real,20000,100000")
    ap.add_argument("--sentences", type=int, default=150, help="transcript sentences per synthetic episode")
    ap.add_argument("--out", default="bench/results/similar_scale.json")
    ap.add_argument("--params", default="{}", help="model parameters other than the defaults, as JSON")
    ap.add_argument("--one", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        print(json.dumps(one(args.one, args.catalog, args.sentences, args.params)))
        return
    out_path = Path(args.out)
    results = json.loads(out_path.read_text()) if out_path.exists() else {"runs": []}
    for size in args.sizes.split(","):
        t0 = time.perf_counter()
        proc = subprocess.run([sys.executable, __file__, "--catalog", args.catalog, "--sentences", str(args.sentences),
                               "--params", args.params, "--one", size], capture_output=True, text=True)
        if proc.returncode != 0:
            run = {"size": size, "error": proc.stderr.strip().splitlines()[-1:] or ["failed"],
                   "wall_seconds": round(time.perf_counter() - t0, 1)}
        else:
            run = json.loads(proc.stdout.strip().splitlines()[-1])
        run["machine"] = f"{platform.machine()}, {os.cpu_count()} cores, {platform.python_version()}"
        run["date"] = time.strftime("%Y-%m-%d")
        results["runs"] = [r for r in results["runs"] if r.get("size") != size] + [run]
        out_path.parent.mkdir(parents=True, exist_ok=True)
        out_path.write_text(json.dumps(results, indent=1) + "\n")
        print(json.dumps(run), flush=True)


if __name__ == "__main__":
    main()
