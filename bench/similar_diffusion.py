"""Diffusion over the neighbour graph, on the shipped model's ranking, cross-validated on the dev labels
(docs/similar.md, nineteenth round); and where the dev pairs the model misses rank.

The base is the model as it served before this round (``SimilarModel.scores`` of the eighteenth round's model: the
reranked lists, the mention and guest lifts; :func:`_before`), not round four's text score as the earlier one-signal
benches: a signal counts only when it adds to what ships. (The walk measured here ships since, in ``similar/walk.py``.)

Signal: a personalised PageRank (random walk with restart) from each episode over the graph of the precomputed
lists, every episode's first ``K`` neighbours, edges weighted by the list scores (row-normalised; ``sym``: the graph
made symmetric first, ``A + A^T``), ``T`` steps of ``r <- (1 - alpha) e_i + alpha r P``; the walk's mass on each
other episode, over its largest, is blended with the shipped score (``mix`` ``(1 - b) s + b r``, ``lift`` ``s + b
max(0, r - s)``). Every (K, alpha, graph, form, b) is one grid point; the weight 0 (the model) is among them;
:meth:`DevLabels.cross_validate` picks a point on four folds of the labels and ranks the fifth with it (5 folds x
3 cuts; and two halves x 3 cuts).

    python -m bench.similar_diffusion --data DATA --pairs ../shared/corpus/eval/related_pairs.dev.tsv \\
        --tags ../shared/corpus/eval/btc_tags.dev.tsv [--misses] [--cache /tmp/model.pkl]
"""

from __future__ import annotations

import argparse
import json
import pickle
from pathlib import Path
from typing import Any

import numpy as np

from bench.similar_blend import DevLabels

WEIGHTS = (0.0, 0.02, 0.05, 0.1, 0.2, 0.3)
NEIGHBOURS = (5, 10, 20)
ALPHAS = (0.5, 0.85)
STEPS = 3


def _before() -> Any:
    from podsearch.similar import ModelParams

    return ModelParams(walk_weight=0.0, window_weight=0.0)


def fitted(args: argparse.Namespace, params: Any = None) -> Any:
    """The model as the eighteenth round shipped it (:func:`_before`: the last stage that the nineteenth round added
    after these benches, off; or ``params``), fitted on the data folder's catalog as ``eval similar`` fits it; pickled
    to ``--cache`` when given, so that a second run scores only (delete the file after changing the code)."""
    if args.cache and args.cache.exists():
        with args.cache.open("rb") as f:
            return pickle.load(f)
    from podsearch.catalog import Catalog
    from podsearch.similar import SimilarModel, episode_texts

    with Catalog.in_dir(args.data) as catalog:
        fields = episode_texts(catalog)
    model = SimilarModel.fit_fields(fields, _before() if params is None else params)
    if args.cache:
        with args.cache.open("wb") as f:
            pickle.dump(model, f)
    return model


def shipped_scores(model: Any, labels: DevLabels) -> tuple[np.ndarray, np.ndarray]:
    """The label rows' scores as ``/similar`` ranks them (``scores``), and their text scores (near-duplicates)."""
    s = np.vstack([model.scores(int(r)) for r in labels.rows]).astype(np.float64)
    text = np.vstack([model.scores(int(r), mentions=False) for r in labels.rows]).astype(np.float64)
    return s, text


def hide(labels: DevLabels, s: np.ndarray, text: np.ndarray, threshold: float) -> np.ndarray:
    return np.where(labels.hidden | (text >= threshold), -np.inf, s)


def graph(model: Any, k: int, symmetric: bool) -> np.ndarray:
    """The row-normalised transition matrix of the lists' first ``k`` members (dense N x N: the site corpus)."""
    n = len(model.ids)
    a = np.zeros((n, n))
    idx, score = model.neigh_idx[:, :k], model.neigh_score[:, :k]
    rows = np.repeat(np.arange(n), k)
    ok = idx.ravel() >= 0
    a[rows[ok], idx.ravel()[ok]] = np.maximum(score.ravel()[ok], 0)
    if symmetric:
        a = np.maximum(a, a.T)
    sums = a.sum(axis=1, keepdims=True)
    return np.divide(a, sums, out=np.zeros_like(a), where=sums > 0)


def walk(p: np.ndarray, rows: np.ndarray, alpha: float, steps: int) -> np.ndarray:
    """Personalised PageRank from each of ``rows`` after ``steps`` steps, the start left out, over its max."""
    start = np.zeros((len(rows), p.shape[0]))
    start[np.arange(len(rows)), rows] = 1.0
    r = start.copy()
    for _ in range(steps):
        r = (1 - alpha) * start + alpha * (r @ p)
    r[np.arange(len(rows)), rows] = 0
    top = r.max(axis=1, keepdims=True)
    return np.divide(r, top, out=np.zeros_like(r), where=top > 0)


def dev_arguments(doc: str | None) -> argparse.ArgumentParser:
    """The options the benches on the served model share: the data folder, the dev labels, the cache, the cuts."""
    ap = argparse.ArgumentParser(description=(doc or "").split("\n")[0])
    ap.add_argument("--data", type=Path, required=True)
    ap.add_argument("--pairs", type=Path, required=True)
    ap.add_argument("--tags", type=Path, required=True)
    ap.add_argument("--cache", type=Path)
    ap.add_argument("--seeds", type=int, default=3)
    return ap


def dev_setup(args: argparse.Namespace, params: Any = None) -> tuple[Any, DevLabels, np.ndarray, np.ndarray]:
    """The model (:func:`fitted`), the dev labels on it and their rows' served and text scores."""
    model = fitted(args, params)
    labels = DevLabels(model, args.pairs, args.tags)
    return (model, labels, *shipped_scores(model, labels))


def misses(model: Any, labels: DevLabels, ranked: np.ndarray) -> list[dict[str, Any]]:
    """Every dev pair whose target is not in the source's top 10: the target's rank, both titles and shows."""
    out = []
    for source, target in labels.pairs:
        row = ranked[labels.at[source]]
        order = np.argsort(-row, kind="stable")
        rank = int(np.flatnonzero(order == target)[0]) + 1
        if rank > 10:
            out.append({"source": model.ids[source], "target": model.ids[target], "rank": rank,
                        "score": round(float(row[target]), 4), "tenth": round(float(row[order[9]]), 4),
                        "same_show": model.shows[source] == model.shows[target]})
    return out


def main() -> None:
    ap = dev_arguments(__doc__)
    ap.add_argument("--misses", action="store_true", help="list the missed pairs and stop")
    args = ap.parse_args()
    model, labels, s, text = dev_setup(args)
    threshold = model.params.duplicate_threshold
    base = hide(labels, s, text, threshold)
    print(json.dumps({"shipped": labels.in_sample({0: base})["0"]}), flush=True)
    if args.misses:
        print(json.dumps(misses(model, labels, base), indent=1))
        return
    grid: dict[tuple[Any, ...], np.ndarray] = {("model",): base}
    for k in NEIGHBOURS:
        for symmetric in (False, True):
            p = graph(model, k, symmetric)
            for alpha in ALPHAS:
                r = walk(p, labels.rows, alpha, STEPS)
                alone = labels.in_sample({0: hide(labels, r, text, threshold)})["0"]
                print(json.dumps({"k": k, "sym": symmetric, "alpha": alpha, "alone": alone}), flush=True)
                for form in ("mix", "lift"):
                    family = {}
                    for b in WEIGHTS[1:]:
                        blended = (1 - b) * s + b * r if form == "mix" else s + b * np.maximum(0, r - s)
                        family[b] = grid[(k, symmetric, alpha, form, b)] = hide(labels, blended, text, threshold)
                    print(json.dumps({"k": k, "sym": symmetric, "alpha": alpha, "form": form,
                                      "in_sample": labels.in_sample(family)}), flush=True)
    labels.print_cross_validated(grid, args.seeds)


if __name__ == "__main__":
    main()
