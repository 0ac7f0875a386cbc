"""The episode's neighbourhood as the corpus: each labelled episode's top candidates compared again with the terms
weighted by their IDF *among those candidates*, cross-validated on the dev labels like ``bench/similar_guests.py``
(docs/similar.md, eleventh round).

The tagged episodes are ranked against each other (P@5), and they are all bitcoin talks: the words that make them
bitcoin talks ("transaction", "node", "signature") are rare in the whole site, so the corpus IDF weighs them
high, while among an episode's 50 nearest they say nothing. Here the signal is the cosine of the main TF-IDF rows
re-weighted by ``idf_local(t)^alpha`` (``idf_local = log((1 + k) / (1 + df_k(t))) + 1`` over the episode and its
``--candidates`` nearest), blended with round four's text score on those candidates.

    python -m bench.similar_local_idf --data DATA --pairs ../shared/corpus/eval/related_pairs.dev.tsv \\
        --tags ../shared/corpus/eval/btc_tags.dev.tsv --alpha 1
"""

from __future__ import annotations

import argparse
import json

import numpy as np
import scipy.sparse as sp

from bench.similar_segments import report_bounded_and_all, signal_setup, top_candidates


def local_cosines(rows: sp.csr_matrix, query: int, candidates: np.ndarray, alpha: float) -> np.ndarray:
    """The cosine of ``query`` with each of ``candidates`` over rows re-weighted by the candidates' own IDF."""
    group = rows[np.concatenate(([query], candidates))]
    df = np.asarray((group > 0).sum(axis=0)).ravel()
    idf = (np.log((1 + group.shape[0]) / (1 + df)) + 1) ** alpha
    weighted = group @ sp.diags(idf)
    norms = np.sqrt(np.asarray(weighted.multiply(weighted).sum(axis=1)).ravel())
    norms[norms == 0] = 1
    weighted = sp.diags(1 / norms) @ weighted
    return (weighted[1:] @ weighted[0].T).toarray().ravel()


def main() -> None:
    def options(ap: argparse.ArgumentParser) -> None:
        ap.add_argument("--alpha", type=float, default=1.0, help="power of the local IDF")

    args, fields, labels, text = signal_setup(__doc__, options)
    model = labels.model
    candidates = top_candidates(labels.ranked(text), args.candidates)
    signal = np.zeros_like(text)
    for k, row in enumerate(labels.rows):
        near = np.flatnonzero(candidates[k])
        signal[k, near] = local_cosines(model.matrix, int(row), near, args.alpha)
    print(json.dumps({"alpha": args.alpha, "candidates": args.candidates}))
    report_bounded_and_all(args, labels, text, signal)


if __name__ == "__main__":
    main()
