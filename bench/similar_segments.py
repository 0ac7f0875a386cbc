"""Segment-level similarity, transcript collocations and pseudo-relevance feedback for "nearby episodes",
measured on the dev labels with cross-validation (docs/similar.md, fifth round).

Each variant is a family of score matrices: the current model's text score ``t`` (title cosine and LSA
blended as shipped) changed by one signal at a few weights, the weight 0 (the model as it is) always among
them. :meth:`DevLabels.cross_validate` picks the weight on four folds of the labels and ranks the fifth with
it, so a signal only counts when a weight chosen without a query's label helps that query.

Signals:

- ``seg_ep``: transcripts cut into stretches of ``--words`` words, each weighted as an episode row (the model's
  vocabulary, show noise, per-show IDF, IDF, L2); the pair's signal is the best cosine of a stretch of either
  episode with the whole other episode.
- ``seg_seg``: the best stretch-to-stretch cosine of the pair.
- ``prf``: each episode's row plus ``alpha`` times the terms its first ``k`` neighbours share (terms in at least
  two of them, their mean weight), renormalised; the expanded rows' cosine.

Blends: ``mix`` ``(1 - b) * t + b * signal``; ``lift`` ``t + b * max(0, signal - t)``. ``--candidates 50``
computes a segment signal only for each episode's current top 50 (what a fit would bound its cost by).

    python -m bench.similar_segments --data DATA --pairs ../shared/corpus/eval/related_pairs.dev.tsv \\
        --tags ../shared/corpus/eval/btc_tags.dev.tsv
"""

from __future__ import annotations

import argparse
import json
import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp
from sklearn.preprocessing import normalize

from bench.similar_blend import DevLabels

WEIGHTS = (0.0, 0.05, 0.1, 0.2, 0.3, 0.5)


def top_candidates(current: np.ndarray, k: int) -> np.ndarray:
    """Each row's current top ``k`` (what a fit would bound a signal's cost by), as a mask."""
    candidates = np.zeros_like(current, dtype=bool)
    candidates[np.arange(len(current))[:, None], np.argsort(-current, axis=1)[:, :k]] = True
    return candidates


def blend_grid(labels: DevLabels, text: np.ndarray, signal: np.ndarray, form: str,
               candidates: np.ndarray | None = None) -> dict[float, np.ndarray]:
    """The text score changed by ``signal`` at each of :data:`WEIGHTS`, ``mix`` or ``lift``, on the ``candidates``
    only when given, ranked as the model ranks."""
    grid = {}
    for b in WEIGHTS:
        mixed = (1 - b) * text + b * signal if form == "mix" else text + b * np.maximum(0, signal - text)
        if candidates is not None:
            mixed = np.where(candidates, mixed, (1 - b) * text if form == "mix" else text)
        grid[b] = labels.ranked(mixed, duplicate_text=text)
    return grid


def signal_setup(doc: str, extra: Callable[[argparse.ArgumentParser], Any] | None = None
                 ) -> tuple[argparse.Namespace, Any, DevLabels, np.ndarray]:
    """What a one-signal bench (``similar_entities``, ``similar_embeddings``) starts from: its arguments (``--data``,
    ``--pairs``, ``--tags``, ``--candidates``, and what ``extra(parser)`` adds), the catalog's fields, the dev labels
    on round four's model (the rerank off) and that model's text score."""
    from podsearch.catalog import Catalog
    from podsearch.similar import ModelParams, SimilarModel, episode_texts

    ap = argparse.ArgumentParser(description=doc.split("\n")[0])
    ap.add_argument("--data", type=Path, required=True)
    ap.add_argument("--pairs", type=Path, required=True)
    ap.add_argument("--tags", type=Path, required=True)
    ap.add_argument("--candidates", type=int, default=50)
    if extra is not None:
        extra(ap)
    args = ap.parse_args()
    with Catalog.in_dir(args.data) as catalog:
        fields = episode_texts(catalog)
    model = SimilarModel.fit_fields(fields, ModelParams(prf_weight=0.0, cue_weight=0.0, guest_weight=0.0))
    labels = DevLabels(model, args.pairs, args.tags)
    return args, fields, labels, labels.text_score()


def report_signal(labels: DevLabels, text: np.ndarray, signal: np.ndarray, candidates: np.ndarray | None,
                  **tags: Any) -> None:
    """Print, as JSON lines, the signal blended both ways (``mix``, ``lift``) at every weight in-sample and
    cross-validated (5 folds x 3 cuts), bounded to ``candidates`` when given."""
    for form in ("mix", "lift"):
        grid = blend_grid(labels, text, signal, form, candidates)
        cv = [r["cross_validated"] for r in labels.cross_validate(grid, 5, 3)]
        print(json.dumps({**tags, "form": form, "in_sample": labels.in_sample(grid), "cross_validated": cv}))


def report_bounded_and_all(args: argparse.Namespace, labels: DevLabels, text: np.ndarray, signal: np.ndarray) -> None:
    """:func:`report_signal` over each labelled episode's top ``--candidates`` by the text score, then every pair."""
    candidates = top_candidates(labels.ranked(text), args.candidates)
    for bounded in (True, False):
        report_signal(labels, text, signal, candidates if bounded else None,
                      pairs=f"top{args.candidates}" if bounded else "all")


def stretches(transcripts: list[str], words: int) -> tuple[list[str], np.ndarray]:
    """Every transcript cut in stretches of ``words`` words (a short last one joins the one before); the
    stretches' texts and their episodes' positions."""
    texts: list[str] = []
    owner: list[int] = []
    for i, text in enumerate(transcripts):
        tokens = text.split()
        if not tokens:
            continue
        starts = list(range(0, len(tokens), words))
        if len(starts) > 1 and len(tokens) - starts[-1] < words // 2:
            starts.pop()
        for k, start in enumerate(starts):
            end = starts[k + 1] if k + 1 < len(starts) else len(tokens)
            texts.append(" ".join(tokens[start:end]))
            owner.append(i)
    return texts, np.array(owner)


CUES = "episodes?|eps?|one"  # "in that episode", "we did one on ...", "there's one where ..."


def cue_windows(texts_in: list[str], width: int, cues: str = CUES) -> tuple[list[str], np.ndarray]:
    """Around every word that refers to an episode ("episode", "episodes", "ep", "one"), the ``width`` words
    either side (overlapping windows of one episode merged); their texts and episodes' positions."""
    texts: list[str] = []
    owner: list[int] = []
    cue = re.compile(f"^({cues})$")
    for i, text in enumerate(texts_in):
        tokens = text.split()
        spans: list[list[int]] = []
        for k, token in enumerate(tokens):
            if cue.match(token.lower().strip(".,;:!?()\"'")):
                lo, hi = max(0, k - width), k + width + 1
                if spans and lo <= spans[-1][1]:
                    spans[-1][1] = hi
                else:
                    spans.append([lo, hi])
        for lo, hi in spans:
            texts.append(" ".join(tokens[lo:hi]))
            owner.append(i)
    return texts, np.array(owner)


def stretch_rows(model: Any, texts: list[str], owner: np.ndarray, languages: list[str]) -> sp.csr_matrix:
    counts = model.vectorizer.transform(texts).tocsr().astype(np.float32)
    if model.params.field_sublinear:
        counts.data = 1 + np.log(counts.data)
    shows = [model.shows[i] for i in owner]
    return model.weighting.rows(counts, shows, [languages[i] for i in owner] if languages else [])


def group_max(values: np.ndarray, owner: np.ndarray, n: int) -> np.ndarray:
    """values: (rows, stretches), stretches sorted by owner; the max over each episode's stretches (rows, n)."""
    out = np.zeros((values.shape[0], n), dtype=np.float32)
    if values.shape[1] == 0:
        return out
    starts = np.flatnonzero(np.r_[True, owner[1:] != owner[:-1]])
    out[:, owner[starts]] = np.maximum.reduceat(values, starts, axis=1)
    return out


def segment_signals(model: Any, labels: DevLabels, rows_s: sp.csr_matrix, owner: np.ndarray) -> dict[str, np.ndarray]:
    n = len(model.ids)
    rows = labels.rows
    mine = [np.flatnonzero(owner == r) for r in rows]
    a = np.zeros((len(rows), n), dtype=np.float32)  # a stretch of the row's episode against whole episodes
    b = np.zeros_like(a)  # the row's whole episode against stretches of every episode
    c = np.zeros_like(a)  # stretch against stretch
    whole = model.matrix
    b[:] = group_max((whole[rows] @ rows_s.T).toarray(), owner, n)
    for k, idx in enumerate(mine):
        if len(idx) == 0:
            continue
        block = rows_s[idx]
        a[k] = (block @ whole.T).toarray().max(axis=0)
        c[k] = group_max((block @ rows_s.T).toarray().max(axis=0, keepdims=True), owner, n)[0]
    return {"seg_ep": np.maximum(a, b), "seg_seg": c}


def prf_rows(model: Any, text_rows: sp.csr_matrix, k: int, alpha: float) -> sp.csr_matrix:
    """Each row plus ``alpha`` times the mean of its ``k`` first neighbours' rows, on the terms at least two of
    them hold, renormalised."""
    idx = model.neigh_idx[:, :k]
    n = text_rows.shape[0]
    pick = sp.csr_matrix((np.ones(idx.size, dtype=np.float32), idx.ravel(), np.arange(0, idx.size + 1, k)),
                         shape=(n, n))
    mean = (pick @ text_rows) / k
    support = pick @ (text_rows > 0).astype(np.float32)
    shared = mean.multiply(support >= 2)
    return normalize((text_rows + alpha * shared).tocsr()).astype(np.float32)


def collocation_rows(model: Any, fields: Any, common: int) -> tuple[sp.csr_matrix, int]:
    """The transcripts' collocations as rows of their own TF-IDF model: adjacent word pairs (not across
    punctuation) with neither word among English's ``common`` most frequent words (wordfreq) nor a stop word,
    in at least 3 episodes and at most 5 % of them; weighed as the model weighs its terms (show noise, per-show
    IDF, IDF, term cap, L2)."""
    import wordfreq
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS, CountVectorizer

    from podsearch.similar.signals import phrases
    from podsearch.similar.weighting import Weighting

    stop = ENGLISH_STOP_WORDS | set(wordfreq.top_n_list("en", common))
    vectorizer = CountVectorizer(token_pattern=r"\S+", lowercase=False, min_df=3, max_df=0.05, dtype=np.float32)
    counts = vectorizer.fit_transform(phrases(t, stop) for t in fields.transcripts).tocsr()
    counts.data = 1 + np.log(counts.data)
    weighting = Weighting(model.params, vectorizer.vocabulary_)
    return weighting.rows(counts, list(fields.shows), list(fields.languages)), len(vectorizer.vocabulary_)


def shipped(args: argparse.Namespace, fields: Any, report: dict[str, Any]) -> None:
    """The reranking as the model does it (similar/rerank.py): the first-stage lists of a fit without it, the cue
    windows of a fit with it, and every (prf_weight, cue_weight) of a grid applied to the lists; each label row
    ranked as ``SimilarModel.scores`` ranks (list members as the list says, the others at ``(1 - prf_weight)``
    times the text score). Cross-validated as the other families."""
    from dataclasses import replace

    from podsearch.similar import ModelParams, SimilarModel
    from podsearch.similar.rerank import rerank
    from podsearch.similar.titles import joined

    params = ModelParams()
    plain = SimilarModel.fit_fields(fields, replace(params, prf_weight=0.0, cue_weight=0.0))
    cues = SimilarModel.fit_fields(fields, params).cues
    labels = DevLabels(plain, args.pairs, args.tags)
    text = labels.text_score()
    text_rows = joined(plain.matrix, plain.titles.matrix, params.title_cosine_weight)
    links = ((plain.mentions + plain.mentions.T) > 0).astype(np.float32).tocsr() if plain.mentions is not None else None
    grid = {}
    for b in (0.0, 0.05, 0.1, 0.2):
        for beta in (0.0, 0.1, 0.2, 0.3, 0.5):
            p = replace(params, prf_weight=b, cue_weight=beta)
            idx, score = rerank(plain.neigh_idx, text_rows, plain.dense, p, plain.matrix, *cues, links)
            s = (1 - b) * text
            s[labels.linked] += p.mention_weight * (1 - s[labels.linked])
            for k, r in enumerate(labels.rows):
                members = idx[r] >= 0
                s[k, idx[r][members]] = score[r][members]
            grid[(b, beta)] = np.where(labels.hidden | (text >= p.duplicate_threshold), -np.inf, s)
    key = "shipped: rerank(prf_weight, cue_weight)"
    report[key] = {"in_sample": labels.in_sample(grid), "cv": labels.cross_validate(grid, args.folds, args.seeds),
                   "halves": labels.cross_validate(grid, 2, args.seeds)}
    print(key, json.dumps([r["cross_validated"] for r in report[key]["cv"]]),
          json.dumps([r["cross_validated"] for r in report[key]["halves"]]), flush=True)


def main() -> None:
    from sklearn.feature_extraction.text import TfidfVectorizer

    from podsearch.catalog import Catalog
    from podsearch.similar import ModelParams, SimilarModel, episode_texts

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", type=Path, required=True)
    ap.add_argument("--pairs", type=Path, required=True)
    ap.add_argument("--tags", type=Path, required=True)
    ap.add_argument("--words", type=int, nargs="*", default=[400])
    ap.add_argument("--candidates", type=int, default=50)
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--prf", action="store_true")
    ap.add_argument("--shipped", action="store_true", help="only the reranking as the model does it, on a grid")
    ap.add_argument("--combo", action="store_true", help="with --cues: PRF mixed in and the cue signal lifted, 2-D grid")
    ap.add_argument("--out", type=Path, help="write the whole report (JSON) here")
    ap.add_argument("--cues", type=int, nargs="*", default=[], help="windows of N words either side of a cue")
    ap.add_argument("--cue-words", default=CUES, help="the cue words (a regular expression)")
    ap.add_argument("--colloc", type=int, nargs="*", default=[], help="collocations without the N most common words")
    args = ap.parse_args()
    report: dict[str, Any] = {}
    t0 = time.perf_counter()
    with Catalog.in_dir(args.data) as catalog:
        fields = episode_texts(catalog)
    if args.shipped:
        shipped(args, fields, report)
        if args.out:
            args.out.write_text(json.dumps(report, indent=1, default=str))
        return
    model = SimilarModel.fit_fields(fields, ModelParams(prf_weight=0.0, cue_weight=0.0, guest_weight=0.0))
    report["fit_seconds"] = round(time.perf_counter() - t0, 1)
    labels = DevLabels(model, args.pairs, args.tags)
    text = labels.text_score()
    current = labels.ranked(text)
    candidates = top_candidates(current, args.candidates)

    plain = TfidfVectorizer(sublinear_tf=True).fit_transform(
        [f"{t} {d} {x}" for t, d, x in zip(fields.titles, fields.notes, fields.transcripts)]).tocsr()
    plain_s = np.where(labels.hidden, -np.inf, (plain[labels.rows] @ plain.T).toarray())
    report["baselines"] = labels.in_sample({"tfidf_sublinear": plain_s, "current": current})

    def family(name: str, signal: np.ndarray, bounded: bool) -> None:
        for form in ("mix", "lift"):
            grid = blend_grid(labels, text, signal, form, candidates if bounded else None)
            key = f"{name}/{form}" + (f"/top{args.candidates}" if bounded else "/all")
            report[key] = {"in_sample": labels.in_sample(grid),
                           "cv": labels.cross_validate(grid, args.folds, args.seeds)}
            print(key, json.dumps([r["cross_validated"] for r in report[key]["cv"]]), flush=True)

    for words in args.words:
        t1 = time.perf_counter()
        texts, owner = stretches(fields.transcripts, words)
        rows_s = stretch_rows(model, texts, owner, list(fields.languages))
        signals = segment_signals(model, labels, rows_s, owner)
        report[f"stretches_{words}"] = {"count": len(texts), "nnz": int(rows_s.nnz),
                                        "seconds": round(time.perf_counter() - t1, 1)}
        for name, signal in signals.items():
            for bounded in (True, False):
                family(f"{name}_{words}", signal, bounded)
    for width in args.cues:
        t1 = time.perf_counter()
        texts, owner = cue_windows([f"{d} {x}" for d, x in zip(fields.notes, fields.transcripts)], width,
                                    args.cue_words)
        rows_s = stretch_rows(model, texts, owner, list(fields.languages))
        signals = segment_signals(model, labels, rows_s, owner)
        report[f"cues_{width}"] = {"count": len(texts), "nnz": int(rows_s.nnz),
                                   "seconds": round(time.perf_counter() - t1, 1)}
        for bounded in (True, False):
            family(f"cue_{width}", signals["seg_ep"], bounded)
        if args.combo:
            e = prf_rows(model, model.matrix, 10, 0.5)
            prf = (e[labels.rows] @ e.T).toarray()
            for prf_bounded in (False, True):
                grid = {}
                for b in (0.0, 0.1, 0.2, 0.3):
                    mixed = (1 - b) * text + b * prf
                    if prf_bounded:
                        mixed = np.where(candidates, mixed, (1 - b) * text)
                    for beta in (0.0, 0.2, 0.3, 0.5):
                        lifted = np.where(candidates, mixed + beta * np.maximum(0, signals["seg_ep"] - mixed), mixed)
                        grid[(b, beta)] = labels.ranked(lifted, duplicate_text=text)
                key = f"prf_k10_a0.5_mix{'/top' if prf_bounded else '/all'}+cue_{width}_lift/top{args.candidates}"
                report[key] = {"in_sample": labels.in_sample(grid),
                               "cv": labels.cross_validate(grid, args.folds, args.seeds),
                               "halves": labels.cross_validate(grid, 2, args.seeds)}
                print(key, json.dumps([r["cross_validated"] for r in report[key]["cv"]]),
                      json.dumps([r["cross_validated"] for r in report[key]["halves"]]), flush=True)
                best = grid[(0.1, 0.3)]
                gained = [(labels.model.ids[s_], labels.model.ids[t_]) for s_, t_ in labels.pairs
                          if t_ in np.argsort(-best[labels.at[s_]])[:10] and t_ not in np.argsort(-current[labels.at[s_]])[:10]]
                lost = [(labels.model.ids[s_], labels.model.ids[t_]) for s_, t_ in labels.pairs
                        if t_ not in np.argsort(-best[labels.at[s_]])[:10] and t_ in np.argsort(-current[labels.at[s_]])[:10]]
                report[key]["pairs_at_0.1_0.3"] = {"gained": gained, "lost": lost}
                print("gained", gained, "lost", lost, flush=True)
    for common in args.colloc:
        t1 = time.perf_counter()
        rows_c, terms = collocation_rows(model, fields, common)
        report[f"collocations_{common}"] = {"terms": terms, "seconds": round(time.perf_counter() - t1, 1)}
        family(f"colloc_{common}", (rows_c[labels.rows] @ rows_c.T).toarray(), False)
    if args.prf:
        base = model.matrix
        for k in (3, 5, 10):
            for alpha in (0.2, 0.5):
                e = prf_rows(model, base, k, alpha)
                signal = (e[labels.rows] @ e.T).toarray()
                family(f"prf_k{k}_a{alpha}", signal, False)
    if args.out:
        args.out.write_text(json.dumps(report, indent=1, default=str))


if __name__ == "__main__":
    main()
