"""A learned reranker of each labelled episode's top candidates, cross-validated on the dev labels (docs/similar.md,
twelfth round: measured, not built).

Round four learned a *linear blend of cosines* by grid; this learns a logistic regression over the signals of a
pair, each episode's top ``--candidates`` by round four's text score (the rerank and the lifts off, as
``bench/similar_guests.py``): the main, title and LSA cosines, the text score and its gap to the list's best,
the candidate's rank in the episode's list and the episode's rank in the candidate's (mutual neighbours), how
many lists the candidate is in (a hub), same show, a mention either way, a person in common. Trained on four
folds' labels (a pair's target is positive and the rest of its source's candidates negative; for a tagged episode,
the tagged candidates sharing a tag positive, the other tagged negative), the fifth ranked by
``text + weight * probability`` on its candidates; 5 folds x 3 cuts, as ``DevLabels.cross_validate`` splits them
(``--train pairs`` or ``tags``: one kind of label only).

    python -m bench.similar_learned --data DATA --pairs ../shared/corpus/eval/related_pairs.dev.tsv \\
        --tags ../shared/corpus/eval/btc_tags.dev.tsv
"""

from __future__ import annotations

import json

import numpy as np

from bench.similar_segments import signal_setup, top_candidates

WEIGHTS = (0.05, 0.1, 0.2, 0.5, 1.0)


def features(labels, fields, text: np.ndarray, candidates: np.ndarray) -> np.ndarray:  # noqa: ANN001
    """(rows, episodes, features) for the candidates (zeros elsewhere)."""
    model = labels.model
    main_cos, title_cos, lsa_cos = labels.text_parts()
    n = len(model.ids)
    every = labels.model.matrix
    a, w = model.params.title_cosine_weight, model.params.lsa_weight
    full = (1 - w) * ((every @ every.T).toarray() + a * (model.titles.matrix @ model.titles.matrix.T).toarray()) / (1 + a)
    full += w * (model.dense @ model.dense.T)
    np.fill_diagonal(full, -np.inf)
    order = np.argsort(-full, axis=1)
    rank_of = np.empty_like(order)
    rank_of[np.arange(n)[:, None], order] = np.arange(n)[None, :]
    in_lists = np.bincount(order[:, :10].ravel(), minlength=n)
    people = [set(p.split()) for p in fields.people]
    shows = np.array(model.shows)
    ranked = labels.ranked(text)
    best = ranked.max(axis=1, keepdims=True)
    out = np.zeros((len(labels.rows), n, 11), dtype=np.float32)
    for k, r in enumerate(labels.rows):
        near = np.flatnonzero(candidates[k])
        out[k, near, 0] = main_cos[k, near]
        out[k, near, 1] = title_cos[k, near]
        out[k, near, 2] = lsa_cos[k, near]
        out[k, near, 3] = text[k, near]
        out[k, near, 4] = best[k, 0] - ranked[k, near]
        out[k, near, 5] = np.log1p(rank_of[r, near])
        out[k, near, 6] = np.log1p(rank_of[near, r])
        out[k, near, 7] = np.log1p(in_lists[near])
        out[k, near, 8] = shows[near] == shows[r]
        out[k, near, 9] = labels.linked[k, near]
        out[k, near, 10] = [bool(people[r] & people[j]) for j in near]
    return out


def training(labels, feats: np.ndarray, candidates: np.ndarray, sources: set[int],  # noqa: ANN001
             tagged: set[int]) -> tuple[np.ndarray, np.ndarray]:
    xs, ys = [], []
    targets: dict[int, set[int]] = {}
    for s, t in labels.pairs:
        targets.setdefault(s, set()).add(t)
    for s in sources:
        k = labels.at[s]
        near = np.flatnonzero(candidates[k])
        xs.append(feats[k, near])
        ys.append(np.isin(near, sorted(targets.get(s, ()))))
    for g in tagged:
        k = labels.at[g]
        near = [j for j in np.flatnonzero(candidates[k]) if j in labels.tags]
        if near:
            xs.append(feats[k, near])
            ys.append(np.array([bool(labels.tags[j] & labels.tags[g]) for j in near]))
    return np.concatenate(xs), np.concatenate(ys)


def main() -> None:
    from sklearn.linear_model import LogisticRegression
    from sklearn.preprocessing import StandardScaler

    def options(ap) -> None:  # noqa: ANN001
        ap.add_argument("--train", choices=("both", "pairs", "tags"), default="both", help="which labels it learns")

    args, fields, labels, text = signal_setup(__doc__, options)
    candidates = top_candidates(labels.ranked(text), args.candidates)
    feats = features(labels, fields, text, candidates)
    base = labels.counts(labels.ranked(text), set(labels.sources), set(labels.tagged))
    print(json.dumps({"base": labels.figures(base)}))
    for weight in WEIGHTS:
        runs = []
        for seed in range(3):
            rng = np.random.default_rng(seed)
            src, tg = list(labels.sources), list(labels.tagged)
            rng.shuffle(src)
            rng.shuffle(tg)
            total = np.zeros(5)
            for f in range(5):
                test_s, test_t = set(src[f::5]), set(tg[f::5])
                x, y = training(labels, feats, candidates,
                                set(labels.sources) - test_s if args.train != "tags" else set(),
                                set(labels.tagged) - test_t if args.train != "pairs" else set())
                scale = StandardScaler().fit(x)
                clf = LogisticRegression(max_iter=2000, class_weight="balanced").fit(scale.transform(x), y)
                prob = clf.predict_proba(scale.transform(feats.reshape(-1, feats.shape[2])))[:, 1].reshape(text.shape)
                mixed = np.where(candidates, text + weight * prob, text)
                total += labels.counts(labels.ranked(mixed, duplicate_text=text), test_s, test_t)
            runs.append(labels.figures(total))
        print(json.dumps({"train": args.train, "weight": weight, "cross_validated": runs}))


if __name__ == "__main__":
    main()
