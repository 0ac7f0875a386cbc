"""Cross-validated choice of the blend of "nearby episodes" signals (docs/similar.md, fourth round).

The score of a pair is ``(1 - w) * (main cosine + a * title cosine) / (1 + a) + w * LSA cosine``, then the
mention bonus. ``a`` (``title_cosine_weight``) and ``w`` (``lsa_weight``) are chosen on part of the dev labels
and measured on the rest: the related pairs (by source episode) and the tagged episodes are cut into ``--folds``
folds at random; for each fold, the grid point that scores best on the other folds (recall@10 + MRR@10 / 2 +
P@5) ranks the fold's own queries. The figures over all folds are the cross-validated ones; repeated with
``--seeds`` different cuts.

    python -m bench.similar_blend --data DATA --pairs ../shared/corpus/eval/related_pairs.dev.tsv \\
        --tags ../shared/corpus/eval/btc_tags.dev.tsv
"""

from __future__ import annotations

import argparse
import itertools
import json
from pathlib import Path

import numpy as np

TITLE = (0.0, 0.1, 0.2, 0.3, 0.5)
LSA = (0.0, 0.05, 0.1, 0.15, 0.2, 0.3)


def main() -> None:
    from podsearch.catalog import Catalog
    from podsearch.evaluation.similar import read_pairs, read_tags
    from podsearch.similar import ModelParams, SimilarModel, episode_texts

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", type=Path, required=True)
    ap.add_argument("--pairs", type=Path, required=True)
    ap.add_argument("--tags", type=Path, required=True)
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("--seeds", type=int, default=3)
    args = ap.parse_args()
    with Catalog.in_dir(args.data) as catalog:
        model = SimilarModel.fit_fields(episode_texts(catalog), ModelParams(title_cosine_weight=1.0, lsa_weight=0.5))
    pos = model.position
    pairs = [(pos[a], pos[b]) for a, b in read_pairs(args.pairs) if a in pos and b in pos and a != b]
    tags = {pos[g]: t for g, t in read_tags(args.tags).items() if g in pos and t}
    rows = np.array(sorted({s for s, _ in pairs} | set(tags)))
    at = {r: k for k, r in enumerate(rows)}
    main_cos = (model.matrix[rows] @ model.matrix.T).toarray()
    title_cos = (model.titles.matrix[rows] @ model.titles.matrix.T).toarray()
    lsa_cos = model.dense[rows] @ model.dense.T
    linked = np.zeros_like(main_cos, dtype=bool)
    if model.mentions is not None:
        links = (model.mentions + model.mentions.T).tocsr()
        for k, r in enumerate(rows):
            linked[k, links[r].indices] = True
    hidden = np.zeros_like(linked)
    hidden[np.arange(len(rows)), rows] = True
    labelled = np.array(sorted(tags))

    def scores(a: float, w: float) -> np.ndarray:
        s = (1 - w) * (main_cos + a * title_cos) / (1 + a) + w * lsa_cos
        near_duplicate = s >= model.params.duplicate_threshold
        s[linked] += model.params.mention_weight * (1 - s[linked])
        return np.where(hidden | near_duplicate, -np.inf, s)

    def counts(s: np.ndarray, sources: set[int], tagged: set[int]) -> np.ndarray:
        """hits, reciprocal ranks, pairs, P@5 sum, tagged episodes (summable over folds)."""
        out = np.zeros(5)
        for source, target in pairs:
            if source in sources:
                row = s[at[source]]
                top = np.argsort(-row, kind="stable")[:10].tolist()
                out[2] += 1
                if target in top:
                    out[0] += 1
                    out[1] += 1 / (top.index(target) + 1)
        for g in tagged:
            row = s[at[g], labelled]
            top = labelled[np.argsort(-row, kind="stable")[:5]]
            out[3] += sum(1 for o in top if tags[o] & tags[g]) / 5
            out[4] += 1
        return out

    def figures(c: np.ndarray) -> dict[str, float]:
        return {"recall@10": round(c[0] / c[2], 4), "mrr@10": round(c[1] / c[2], 4), "p@5": round(c[3] / c[4], 4)}

    def objective(c: np.ndarray) -> float:
        return c[0] / c[2] + 0.5 * c[1] / c[2] + c[3] / c[4]

    grid = {(a, w): scores(a, w) for a, w in itertools.product(TITLE, LSA)}
    sources, tagged = sorted({s for s, _ in pairs}), sorted(tags)
    report: dict[str, object] = {"in_sample": {f"{a},{w}": figures(counts(s, set(sources), set(tagged)))
                                               for (a, w), s in grid.items()}}
    runs = []
    for seed in range(args.seeds):
        rng = np.random.default_rng(seed)
        src, tg = list(sources), list(tagged)
        rng.shuffle(src)
        rng.shuffle(tg)
        total, picked = np.zeros(5), []
        for f in range(args.folds):
            test_s, test_t = set(src[f::args.folds]), set(tg[f::args.folds])
            train_s, train_t = set(sources) - test_s, set(tagged) - test_t
            best = max(grid, key=lambda p: objective(counts(grid[p], train_s, train_t)))
            picked.append(best)
            total += counts(grid[best], test_s, test_t)
        runs.append({"seed": seed, "cross_validated": figures(total), "picked": picked})
    report["runs"] = runs
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
