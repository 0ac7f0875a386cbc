"""Shared nearest neighbours as a "nearby episodes" signal, cross-validated on the dev labels like
``bench/similar_topics.py`` (docs/similar.md, sixteenth round).

Two episodes whose lists hold the same episodes are near even where their own words differ: the signal is the share
of their first ``--k`` neighbours (by round four's text score, every episode against every other) the two have in
common, blended with that text score as the earlier rounds' signals were.

    python -m bench.similar_shared --data DATA --pairs ../shared/corpus/eval/related_pairs.dev.tsv \\
        --tags ../shared/corpus/eval/btc_tags.dev.tsv --k 5
"""

from __future__ import annotations

import argparse
import json

import numpy as np

import bench.similar_segments as segments
from bench.similar_segments import report_bounded_and_all, signal_setup


def main() -> None:
    def options(ap: argparse.ArgumentParser) -> None:
        ap.add_argument("--k", type=int, default=5, help="how many first neighbours are compared")

    args, _, labels, text = signal_setup(__doc__, options)
    segments.WEIGHTS = (0.0, 0.02, 0.03, 0.05, 0.07, 0.1, 0.15)  # (the signal moves lists at small weights)
    m = labels.model
    a, w = m.params.title_cosine_weight, m.params.lsa_weight
    every = ((1 - w) * ((m.matrix @ m.matrix.T).toarray() + a * (m.titles.matrix @ m.titles.matrix.T).toarray())
             / (1 + a) + w * (m.dense @ m.dense.T))
    np.fill_diagonal(every, -np.inf)
    first = np.zeros(every.shape, dtype=np.float32)
    np.put_along_axis(first, np.argpartition(-every, args.k, axis=1)[:, :args.k], 1.0, axis=1)
    signal = (first[labels.rows] @ first.T) / args.k
    print(json.dumps({"k": args.k, "alone": labels.in_sample({0: labels.ranked(signal)})["0"]}))
    report_bounded_and_all(args, labels, text, signal)


if __name__ == "__main__":
    main()
