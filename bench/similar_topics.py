"""Topics learned from the episodes (non-negative matrix factorisation) as a "nearby episodes" signal,
cross-validated on the dev labels like ``bench/similar_local_idf.py`` (docs/similar.md, thirteenth round).

LSA (round four) is a signed factorisation: a component mixes words for and against, and two episodes can be near
on what neither is about. NMF's components are sums of words (a topic: "channel, lightning, payment, route"), an
episode is a mix of a few of them, and two episodes are near when they are made of the same topics. The signal is
the cosine of the episodes' topic weights (the model's main rows factorised into ``--topics`` topics), blended with
round four's text score as the earlier rounds' signals were, on each labelled episode's top ``--candidates`` and on
every pair.

    python -m bench.similar_topics --data DATA --pairs ../shared/corpus/eval/related_pairs.dev.tsv \\
        --tags ../shared/corpus/eval/btc_tags.dev.tsv --topics 100
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np
from sklearn.decomposition import NMF

from bench.similar_segments import report_bounded_and_all, signal_setup


def topic_rows(matrix, topics: int, seed: int = 0) -> np.ndarray:
    """Each episode's topic weights, unit length (an episode with none stays zero)."""
    w = NMF(n_components=topics, init="nndsvda", max_iter=300, random_state=seed).fit_transform(matrix)
    norms = np.linalg.norm(w, axis=1, keepdims=True)
    return np.divide(w, norms, out=np.zeros_like(w), where=norms > 0)


def main() -> None:
    def options(ap: argparse.ArgumentParser) -> None:
        ap.add_argument("--topics", type=int, default=100, help="how many topics")

    args, fields, labels, text = signal_setup(__doc__, options)
    started = time.perf_counter()
    rows = topic_rows(labels.model.matrix, args.topics)
    signal = rows[labels.rows] @ rows.T
    print(json.dumps({"topics": args.topics, "seconds": round(time.perf_counter() - started, 1),
                      "alone": labels.in_sample({0: labels.ranked(signal)})["0"]}))
    report_bounded_and_all(args, labels, text, signal)


if __name__ == "__main__":
    main()
