"""Cross-validated choice of the blend of "nearby episodes" signals (docs/similar.md, fourth round).

The score of a pair is ``(1 - w) * (main cosine + a * title cosine) / (1 + a) + w * LSA cosine``, then the
mention bonus. ``a`` (``title_cosine_weight``) and ``w`` (``lsa_weight``) are chosen on part of the dev labels
and measured on the rest: the related pairs (by source episode) and the tagged episodes are cut into ``--folds``
folds at random; for each fold, the grid point that scores best on the other folds (recall@10 + MRR@10 / 2 +
P@5) ranks the fold's own queries. The figures over all folds are the cross-validated ones; repeated with
``--seeds`` different cuts. :class:`DevLabels` (the metrics and the cross-validation over any grid of score
matrices) is shared with ``bench/similar_segments.py``.

    python -m bench.similar_blend --data DATA --pairs ../shared/corpus/eval/related_pairs.dev.tsv \\
        --tags ../shared/corpus/eval/btc_tags.dev.tsv
"""

from __future__ import annotations

import argparse
import itertools
import json
from collections.abc import Hashable
from pathlib import Path
from typing import Any

import numpy as np

TITLE = (0.0, 0.1, 0.2, 0.3, 0.5)
LSA = (0.0, 0.05, 0.1, 0.15, 0.2, 0.3)


class DevLabels:
    """The dev labels on a fitted model's positions: the score matrices this ranks have one row per query
    episode (``rows``: the pairs' sources and the tagged episodes) and one column per episode."""

    def __init__(self, model: Any, pairs_path: Path, tags_path: Path) -> None:
        from podsearch.evaluation.similar import read_pairs, read_tags

        self.model = model
        pos = model.position
        self.pairs = [(pos[a], pos[b]) for a, b in read_pairs(pairs_path) if a in pos and b in pos and a != b]
        self.tags = {pos[g]: t for g, t in read_tags(tags_path).items() if g in pos and t}
        self.rows = np.array(sorted({s for s, _ in self.pairs} | set(self.tags)))
        self.at = {r: k for k, r in enumerate(self.rows)}
        self.labelled = np.array(sorted(self.tags))
        self.sources, self.tagged = sorted({s for s, _ in self.pairs}), sorted(self.tags)
        n = len(model.ids)
        self.linked = np.zeros((len(self.rows), n), dtype=bool)
        if model.mentions is not None:
            links = (model.mentions + model.mentions.T).tocsr()
            for k, r in enumerate(self.rows):
                self.linked[k, links[r].indices] = True
        self.hidden = np.zeros_like(self.linked)
        self.hidden[np.arange(len(self.rows)), self.rows] = True

    def text_parts(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The rows' main, title and LSA cosines against every episode (dense)."""
        m, rows = self.model, self.rows
        main_cos = (m.matrix[rows] @ m.matrix.T).toarray()
        title_cos = (m.titles.matrix[rows] @ m.titles.matrix.T).toarray()
        return main_cos, title_cos, m.dense[rows] @ m.dense.T

    def text_score(self) -> np.ndarray:
        """The rows' text score as the model blends it (round four's form: main and title cosines, then LSA)."""
        main_cos, title_cos, lsa_cos = self.text_parts()
        a, w = self.model.params.title_cosine_weight, self.model.params.lsa_weight
        return (1 - w) * (main_cos + a * title_cos) / (1 + a) + w * lsa_cos

    def ranked(self, text: np.ndarray, duplicate_text: np.ndarray | None = None) -> np.ndarray:
        """A text score matrix as the model ranks it: near-duplicates (decided on ``duplicate_text``, by default
        the same scores) and the episode itself out, the mention bonus added."""
        params = self.model.params
        s = text.copy()
        near_duplicate = (text if duplicate_text is None else duplicate_text) >= params.duplicate_threshold
        s[self.linked] += params.mention_weight * (1 - s[self.linked])
        return np.where(self.hidden | near_duplicate, -np.inf, s)

    def counts(self, s: np.ndarray, sources: set[int], tagged: set[int]) -> np.ndarray:
        """hits, reciprocal ranks, pairs, P@5 sum, tagged episodes (summable over folds)."""
        out = np.zeros(5)
        for source, target in self.pairs:
            if source in sources:
                row = s[self.at[source]]
                top = np.argsort(-row, kind="stable")[:10].tolist()
                out[2] += 1
                if target in top:
                    out[0] += 1
                    out[1] += 1 / (top.index(target) + 1)
        for g in tagged:
            row = s[self.at[g], self.labelled]
            top = self.labelled[np.argsort(-row, kind="stable")[:5]]
            out[3] += sum(1 for o in top if self.tags[o] & self.tags[g]) / 5
            out[4] += 1
        return out

    @staticmethod
    def figures(c: np.ndarray) -> dict[str, float]:
        return {"recall@10": round(c[0] / c[2], 4), "mrr@10": round(c[1] / c[2], 4), "p@5": round(c[3] / c[4], 4)}

    @staticmethod
    def objective(c: np.ndarray) -> float:
        return c[0] / c[2] + 0.5 * c[1] / c[2] + c[3] / c[4]

    def in_sample(self, grid: dict[Hashable, np.ndarray]) -> dict[str, dict[str, float]]:
        everything = set(self.sources), set(self.tagged)
        return {_key(p): self.figures(self.counts(s, *everything)) for p, s in grid.items()}

    def cross_validate(self, grid: dict[Hashable, np.ndarray], folds: int = 5, seeds: int = 3) -> list[dict[str, Any]]:
        """For each seed, the figures of every fold's queries ranked by the grid point best on the other folds."""
        runs = []
        for seed in range(seeds):
            rng = np.random.default_rng(seed)
            src, tg = list(self.sources), list(self.tagged)
            rng.shuffle(src)
            rng.shuffle(tg)
            total, picked = np.zeros(5), []
            for f in range(folds):
                test_s, test_t = set(src[f::folds]), set(tg[f::folds])
                train_s, train_t = set(self.sources) - test_s, set(self.tagged) - test_t
                best = max(grid, key=lambda p: self.objective(self.counts(grid[p], train_s, train_t)))
                picked.append(best)
                total += self.counts(grid[best], test_s, test_t)
            runs.append({"seed": seed, "cross_validated": self.figures(total), "picked": picked})
        return runs

    def print_cross_validated(self, grid: dict[Hashable, np.ndarray], seeds: int = 3) -> None:
        """:meth:`cross_validate` in 5 folds and in halves, a JSON line each (the points picked as lists)."""
        for folds in (5, 2):
            runs = self.cross_validate(grid, folds, seeds)
            print(json.dumps({"folds": folds, "cv": [r["cross_validated"] for r in runs],
                              "picked": [r["picked"] for r in runs]}), flush=True)


def _key(point: Hashable) -> str:
    return ",".join(map(str, point)) if isinstance(point, tuple) else str(point)


def main() -> None:
    from podsearch.catalog import Catalog
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
    labels = DevLabels(model, args.pairs, args.tags)
    main_cos, title_cos, lsa_cos = labels.text_parts()
    grid = {(a, w): labels.ranked((1 - w) * (main_cos + a * title_cos) / (1 + a) + w * lsa_cos)
            for a, w in itertools.product(TITLE, LSA)}
    report = {"in_sample": labels.in_sample(grid), "runs": labels.cross_validate(grid, args.folds, args.seeds)}
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
