"""Hubs and reciprocal neighbours on the shipped model's lists, cross-validated on the dev labels (docs/similar.md,
twentieth round).

The base is the model as it serves (``SimilarModel.scores`` with every stage on, the nineteenth round's walk and
window links included). Each signal is read from the precomputed lists alone (every episode's 50, after the last
stage), for the members of a labelled episode's list, and mixed into their scores, ``(1 - b) s + b x`` (the others
at ``(1 - b) s``, below them as the model ranks them):

- ``recip K``: ``x`` 1 when ``i`` is among the first ``K`` of ``j``'s own list (a reciprocal neighbour), else 0;
- ``recip_rank``: ``x = 1 - (rank of i in j's list - 1) / 50``, 0 when ``i`` is not in it;
- ``mp_list`` / ``mp_all``: mutual proximity (Schnitzer et al. 2012, its Gaussian form): ``x = F_i(s) F_j(s)``,
  ``F_e`` the normal distribution function fitted to episode ``e``'s scores (the 50 of its list; or its text scores
  against every episode), so a pair counts as near when each is unusually near for the other; a hub, near to
  everyone, is less so;
- ``kreciprocal k1``: the Jaccard overlap of the two episodes' expanded k-reciprocal sets weighed by ``exp(-d)``
  (Zhong et al. 2017, re-identification's k-reciprocal reranking; ``d = 1 - s``, the local query expansion over
  the first 6).

Every (signal, setting, b) is a grid point, the model (b 0) among them; :meth:`DevLabels.print_cross_validated`
picks one on four folds and ranks the fifth with it (5 folds x 3 cuts; two halves x 3 cuts), per family and over
them all.

    python -m bench.similar_hubness --data DATA --pairs ../shared/corpus/eval/related_pairs.dev.tsv \\
        --tags ../shared/corpus/eval/btc_tags.dev.tsv --cache /tmp/model.pkl
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
from scipy.special import ndtr

from bench.similar_blend import DevLabels
from bench.similar_diffusion import dev_arguments, dev_setup, hide

WEIGHTS = (0.02, 0.05, 0.1, 0.2, 0.3)
RECIPROCAL = (5, 10, 20, 50)
K1 = (10, 20, 30)


def list_ranks(model: Any) -> np.ndarray:
    """N x N, (j, i): the 1-based place of i in j's list, 0 when it is not there."""
    n, k = model.neigh_idx.shape
    ranks = np.zeros((n, n), dtype=np.int16)
    rows = np.repeat(np.arange(n), k)
    idx = model.neigh_idx.ravel()
    ok = idx >= 0
    ranks[rows[ok], idx[ok]] = np.tile(np.arange(1, k + 1), n)[ok]
    return ranks


def gaussian_fit(values: np.ndarray, valid: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    count = np.maximum(valid.sum(axis=1), 1)
    mean = np.where(valid, values, 0).sum(axis=1) / count
    var = np.where(valid, (values - mean[:, None]) ** 2, 0).sum(axis=1) / count
    return mean, np.sqrt(np.maximum(var, 1e-12))


def kreciprocal_sets(model: Any, k1: int) -> list[np.ndarray]:
    """Each episode's expanded k-reciprocal set (itself included), Zhong et al.'s rule: a member's own k1/2-reciprocal
    set joins when two thirds of it are in the first set."""
    n = len(model.ids)
    first = [np.r_[i, model.neigh_idx[i, :k1][model.neigh_idx[i, :k1] >= 0]].tolist() for i in range(n)]

    def reciprocal(i: int, k: int) -> set[int]:
        return {j for j in first[i][:k + 1] if i in first[j][:k + 1]}

    out = []
    for i in range(n):
        r = reciprocal(i, k1)
        expanded = set(r)
        for q in r:
            rq = reciprocal(q, max(1, k1 // 2))
            if len(rq & r) >= 2 / 3 * len(rq):
                expanded |= rq
        out.append(np.array(sorted(expanded), dtype=np.int64))
    return out


def kreciprocal_vectors(model: Any, k1: int, k2: int = 6) -> np.ndarray:
    """N x N dense: each episode's weights exp(-(1 - s)) on its expanded k-reciprocal set, averaged over its first
    ``k2`` (itself among them: local query expansion)."""
    n = len(model.ids)
    sets = kreciprocal_sets(model, k1)
    score = np.zeros((n, n), dtype=np.float32)
    rows = np.repeat(np.arange(n), model.neigh_idx.shape[1])
    idx = model.neigh_idx.ravel()
    ok = idx >= 0
    score[rows[ok], idx[ok]] = model.neigh_score.ravel()[ok]
    np.fill_diagonal(score, 1.0)
    v = np.zeros((n, n), dtype=np.float32)
    for i, members in enumerate(sets):
        v[i, members] = np.exp(-(1 - score[i, members]))
    expanded = np.zeros_like(v)
    for i in range(n):
        near = np.r_[i, model.neigh_idx[i, :k2 - 1][model.neigh_idx[i, :k2 - 1] >= 0]]
        expanded[i] = v[near].mean(axis=0)
    return expanded


def jaccard(v: np.ndarray, rows: np.ndarray) -> np.ndarray:
    out = np.zeros((len(rows), v.shape[0]))
    for a, r in enumerate(rows):
        out[a] = np.minimum(v[r], v).sum(axis=1) / np.maximum(np.maximum(v[r], v).sum(axis=1), 1e-12)
    return out


def at_members(model: Any, rows: np.ndarray, pair: np.ndarray) -> np.ndarray:
    """``pair`` (rows x N) kept on each row's list members, 0 elsewhere."""
    keep = np.zeros(pair.shape, dtype=bool)
    for a, r in enumerate(rows):
        m = model.neigh_idx[r]
        keep[a, m[m >= 0]] = True
    return np.where(keep, pair, 0.0)


def named(model: Any, rows: np.ndarray) -> np.ndarray:
    """rows x N: the episodes each row names or is named by (a number, a guest, a cue window's topic)."""
    out = np.zeros((len(rows), len(model.ids)), dtype=bool)
    by = model.mentions.T.tocsr() if model.mentions is not None else None
    for a, r in enumerate(rows):
        if by is not None:
            out[a, model.mentions[r].indices] = out[a, by[r].indices] = True
        if model.guests is not None:
            out[a, model.guests.named(int(r))] = True
        if model.window_links is not None:
            out[a, model.window_links[r].indices] = True
    return out


def signals(model: Any, labels: DevLabels, s: np.ndarray) -> dict[tuple[Any, ...], np.ndarray]:
    rows = labels.rows
    ranks = list_ranks(model)
    back = ranks[:, rows].T.astype(np.float64)  # (row, j): place of the row in j's list
    out: dict[tuple[Any, ...], np.ndarray] = {}
    for k in RECIPROCAL:
        out[("recip", k)] = at_members(model, rows, ((back > 0) & (back <= k)).astype(np.float64))
    out[("recip_rank",)] = at_members(model, rows, np.where(back > 0, 1 - (back - 1) / ranks.max(), 0))
    valid = model.neigh_idx >= 0
    mean, sd = gaussian_fit(model.neigh_score.astype(np.float64), valid)
    mp = ndtr((s - mean[rows][:, None]) / sd[rows][:, None]) * ndtr((s - mean[None, :]) / sd[None, :])
    out[("mp_list",)] = at_members(model, rows, np.nan_to_num(mp))
    text_all = np.vstack([model.scores(i, mentions=False) for i in range(len(model.ids))]).astype(np.float64)
    np.fill_diagonal(text_all, np.nan)
    mean_a, sd_a = np.nanmean(text_all, axis=1), np.nanstd(text_all, axis=1)
    del text_all
    mp = ndtr((s - mean_a[rows][:, None]) / sd_a[rows][:, None]) * ndtr((s - mean_a[None, :]) / sd_a[None, :])
    out[("mp_all",)] = at_members(model, rows, np.nan_to_num(mp))
    for k1 in K1:
        out[("kreciprocal", k1)] = at_members(model, rows, jaccard(kreciprocal_vectors(model, k1), rows))
    names = named(model, rows)
    for key in [k for k in out if k[0] in ("kreciprocal", "mp_list")]:
        out[(key[0] + "_named", *key[1:])] = at_members(model, rows, np.where(names, 1.0, out[key]))
    return out


def main() -> None:
    from podsearch.similar import ModelParams

    args = dev_arguments(__doc__).parse_args()
    model, labels, s, text = dev_setup(args, ModelParams())
    threshold = model.params.duplicate_threshold
    base = hide(labels, s, text, threshold)
    print(json.dumps({"shipped": labels.in_sample({0: base})["0"]}), flush=True)
    grid: dict[tuple[Any, ...], np.ndarray] = {("model",): base}
    families: dict[str, dict[tuple[Any, ...], np.ndarray]] = {}
    for name, x in signals(model, labels, s).items():
        family = {}
        for b in WEIGHTS:
            family[b] = grid[(*name, b)] = hide(labels, (1 - b) * s + b * x, text, threshold)
        print(json.dumps({"signal": name, "in_sample": labels.in_sample(family)}), flush=True)
        for key in {name[0], " ".join(map(str, name))}:  # the family, and each of its settings alone
            families.setdefault(key, {("model",): base}).update({(*name, b): m for b, m in family.items()})
    for name, family in families.items():
        print(json.dumps({"family": name}), flush=True)
        labels.print_cross_validated(family, args.seeds)
    print(json.dumps({"family": "all"}), flush=True)
    labels.print_cross_validated(grid, args.seeds)


if __name__ == "__main__":
    main()
