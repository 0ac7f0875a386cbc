"""The episodes a cue window names by topic, beyond each list, on the ranking of the model as it served before,
cross-validated on the dev labels (docs/similar.md, nineteenth round; both ship since, in ``similar/walk.py``).

The fifth round's cue windows (the words around "episode" in an episode's notes and transcript: "we have another
episode that covered deepfakes in some detail") lift only the list's 50 members; a target whose whole-episode score
is lower never meets them (Practical AI #80 -> #49: first of all episodes by that window's cosine, 198th in the
list). Here every window of a labelled episode is matched against every episode (cosine with its row, as the rerank
reads it); the best ``m`` of each window (``scope``: any show or the episode's own show), when that cosine is at
least ``floor``, are *named by the window*, and lifted in the episode's ranking as a mention is: ``s + g (1 - s)``
(``form`` ``bonus``), or by the window's cosine ``s + g c`` (``cosine``). Every (m, floor, scope, form, g) is one
grid point, the model (g 0) among them; :meth:`DevLabels.cross_validate` picks one on four folds and ranks the fifth
with it (5 folds x 3 cuts; two halves x 3 cuts). ``--analyse`` prints, for every dev pair, the target's rank by the
source's best window and in the list.

    python -m bench.similar_window_links --data DATA --pairs ../shared/corpus/eval/related_pairs.dev.tsv \\
        --tags ../shared/corpus/eval/btc_tags.dev.tsv --cache /tmp/model.pkl [--analyse]
"""

from __future__ import annotations

import argparse
import itertools
import json
from typing import Any

import numpy as np

from bench.similar_blend import DevLabels
from bench.similar_diffusion import dev_arguments, dev_setup, hide

TOP = (1, 2, 3)
FLOORS = (0.0, 0.1, 0.15, 0.2)
SCOPES = ("any", "show")
FORMS = ("bonus", "cosine")
WEIGHTS = (0.05, 0.1, 0.2, 0.3)


def window_matches(model: Any, rows: np.ndarray) -> list[np.ndarray]:
    """For each of ``rows``, its cue windows' cosines with every episode's row (windows x N; itself at -1)."""
    windows, owner = model.cues
    starts = np.searchsorted(owner, np.arange(len(model.ids) + 1))
    out = []
    for r in rows:
        part = windows[starts[r]:starts[r + 1]]
        c = (part @ model.matrix.T).toarray() if part.shape[0] else np.zeros((0, len(model.ids)))
        c[:, r] = -1
        out.append(c)
    return out


def named(cos: np.ndarray, m: int, floor: float, allowed: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The episodes among each window's best ``m`` (within ``allowed``) at a cosine of at least ``floor``, and the
    best cosine a window gives each of them."""
    if cos.shape[0] == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0)
    c = np.where(allowed[None, :], cos, -1)
    top = np.argsort(-c, axis=1, kind="stable")[:, :m]
    vals = np.take_along_axis(c, top, axis=1)
    keep = vals >= max(floor, 1e-9)
    best: dict[int, float] = {}
    for j, v in zip(top[keep].tolist(), vals[keep].tolist()):
        best[j] = max(best.get(j, 0.0), v)
    return np.array(sorted(best), dtype=np.int64), np.array([best[j] for j in sorted(best)])


def main() -> None:
    ap = dev_arguments(__doc__)
    ap.add_argument("--analyse", action="store_true")
    ap.add_argument("--with-walk", action="store_true",
                    help="a joint grid with bench.similar_diffusion's walk (mixed first, then the windows' lift)")
    args = ap.parse_args()
    model, labels, s, text = dev_setup(args)
    threshold = model.params.duplicate_threshold
    base = hide(labels, s, text, threshold)
    print(json.dumps({"shipped": labels.in_sample({0: base})["0"]}), flush=True)
    matches = window_matches(model, labels.rows)
    shows = np.array(model.shows)
    if args.analyse:
        for a, b in labels.pairs:
            k = labels.at[a]
            best = matches[k].max(axis=0) if matches[k].shape[0] else np.zeros(len(model.ids))
            order = np.argsort(-base[k], kind="stable")
            print(json.dumps({"source": model.ids[a], "target": model.ids[b],
                              "list_rank": int(np.flatnonzero(order == b)[0]) + 1,
                              "window_rank": int((best > best[b]).sum()) + 1, "window_cosine": round(float(best[b]), 3),
                              "windows": int(matches[k].shape[0])}))
        return
    if args.with_walk:
        joint(args, model, labels, s, text, matches)
        return
    grid: dict[tuple[Any, ...], np.ndarray] = {("model",): base}
    links = 0
    for m, floor, scope in itertools.product(TOP, FLOORS, SCOPES):
        found = []
        for k, r in enumerate(labels.rows):
            allowed = shows == shows[r] if scope == "show" else np.ones(len(shows), dtype=bool)
            found.append(named(matches[k], m, floor, allowed))
        links = sum(len(j) for j, _ in found)
        hits = sum(1 for a, b in labels.pairs if b in set(found[labels.at[a]][0].tolist()))
        print(json.dumps({"m": m, "floor": floor, "scope": scope, "links_from_label_rows": links,
                          "pairs_named": hits}), flush=True)
        for form in FORMS:
            family = {}
            for g in WEIGHTS:
                lifted = s.copy()
                for k, (js, cs) in enumerate(found):
                    if len(js):
                        lifted[k, js] += g * (1 - lifted[k, js]) if form == "bonus" else g * cs
                family[g] = grid[(m, floor, scope, form, g)] = hide(labels, lifted, text, threshold)
            print(json.dumps({"m": m, "floor": floor, "scope": scope, "form": form,
                              "in_sample": labels.in_sample(family)}), flush=True)
    labels.print_cross_validated(grid, args.seeds)


def joint(args: argparse.Namespace, model: Any, labels: DevLabels, s: np.ndarray, text: np.ndarray,
          matches: list[np.ndarray]) -> None:
    """The windows' links (best 1 or 3 of each window in the episode's show, cosine at least 0.15, bonus g) and the
    walk of ``bench.similar_diffusion`` (the lists' first K, not symmetric, alpha 0.5, 3 steps, mixed at b into the
    list's members only, as ``similar/walk.py`` does; the rest at (1 - b) times their score) together: every
    (K, b, m, g) one grid point, cross-validated as the rest."""
    from bench.similar_diffusion import graph, walk

    threshold = model.params.duplicate_threshold
    shows = np.array(model.shows)
    found = {m: [named(matches[k], m, 0.15, shows == shows[r]) for k, r in enumerate(labels.rows)] for m in (1, 3)}
    grid: dict[tuple[Any, ...], np.ndarray] = {}
    member = np.zeros(s.shape, dtype=bool)
    for row, r in enumerate(labels.rows):
        listed = model.neigh_idx[r]
        member[row, listed[listed >= 0]] = True
    for k in (10, 20):
        r = np.where(member, walk(graph(model, k, False), labels.rows, 0.5, 3), 0)
        for b, m, g in itertools.product((0.0, 0.1, 0.2, 0.3), (1, 3), (0.0, 0.1, 0.2)):
            mixed = (1 - b) * s + b * r
            for row, (js, _) in enumerate(found[m]):
                if len(js):
                    mixed[row, js] += g * (1 - mixed[row, js])
            grid[(k, b, m, g)] = hide(labels, mixed, text, threshold)
    for point, figures in labels.in_sample(grid).items():
        print(json.dumps({"point": point, **figures}), flush=True)
    labels.print_cross_validated(grid, args.seeds)


if __name__ == "__main__":
    main()
