"""BM25 saturation and length normalisation of the term weights, on the model as the eighteenth round shipped it
(the nineteenth round's last stage off), cross-validated on the dev labels (docs/similar.md, nineteenth round).

Each variant refits the whole shipped model (reranking, guests and all) with other ``ModelParams``: the weighted
counts saturated by BM25, ``tf (k1 + 1) / (tf + k1 (1 - b + b len / mean len))`` (``Weighting``'s ``bm25_k1``,
``bm25_b``), either instead of the per-field ``1 + log tf`` (``field_sublinear`` off: BM25 over the weighted sum of
the raw counts, as the second round tried at k1 1.2, b 0.75 on a model without most of today's parts) or after it
(each field's counts logged, then their weighted sum normalised by length as BM25 does). The label rows are ranked as
``/similar`` ranks (``SimilarModel.scores``); the variant is picked on four folds and the fifth ranked with it.

    python -m bench.similar_bm25 --data DATA --pairs ../shared/corpus/eval/related_pairs.dev.tsv \\
        --tags ../shared/corpus/eval/btc_tags.dev.tsv
"""

from __future__ import annotations

import argparse
import json
from dataclasses import replace
from pathlib import Path

from bench.similar_blend import DevLabels
from bench.similar_diffusion import hide, shipped_scores

VARIANTS = {
    "model": {},
    "bm25 k1 1.2 b 0.75, no log": {"field_sublinear": False, "bm25_k1": 1.2, "bm25_b": 0.75},
    "bm25 k1 1.2 b 0.3, no log": {"field_sublinear": False, "bm25_k1": 1.2, "bm25_b": 0.3},
    "bm25 k1 2.0 b 0.5, no log": {"field_sublinear": False, "bm25_k1": 2.0, "bm25_b": 0.5},
    "bm25 k1 1.2 b 0.75 after the log": {"bm25_k1": 1.2, "bm25_b": 0.75},
    "bm25 k1 1.2 b 0.3 after the log": {"bm25_k1": 1.2, "bm25_b": 0.3},
}


def main() -> None:
    from podsearch.catalog import Catalog
    from podsearch.similar import ModelParams, SimilarModel, episode_texts

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", type=Path, required=True)
    ap.add_argument("--pairs", type=Path, required=True)
    ap.add_argument("--tags", type=Path, required=True)
    ap.add_argument("--seeds", type=int, default=3)
    args = ap.parse_args()
    with Catalog.in_dir(args.data) as catalog:
        fields = episode_texts(catalog)
    grid, labels = {}, None
    for name, change in VARIANTS.items():
        model = SimilarModel.fit_fields(fields, replace(ModelParams(), walk_weight=0.0, window_weight=0.0, **change))
        labels = labels or DevLabels(model, args.pairs, args.tags)
        assert labels.model.ids == model.ids
        s, text = shipped_scores(model, labels)
        grid[name] = hide(labels, s, text, model.params.duplicate_threshold)
        print(json.dumps({name: labels.in_sample({0: grid[name]})["0"]}), flush=True)
    labels.print_cross_validated(grid, args.seeds)


if __name__ == "__main__":
    main()
