"""Nearby episodes fitted without boilerplate: the words of every run of ``--n`` words said in ``--episodes`` or more
episodes (intros, outros, sponsor reads: "Bandwidth for Changelog is provided by Fastly") left out of the
transcripts and/or the notes before the fit, scored on the dev labels with ``podsearch eval similar``'s code
(docs/similar.md, eighteenth round).

    python -m bench.similar_boilerplate --data DATA --pairs ../shared/corpus/eval/related_pairs.dev.tsv \\
        --tags ../shared/corpus/eval/btc_tags.dev.tsv --fields transcripts,notes
"""

from __future__ import annotations

import argparse
import json
import re
from collections import defaultdict
from pathlib import Path

import numpy as np

from podsearch.catalog import Catalog
from podsearch.evaluation.similar import evaluate, read_pairs, read_tags
from podsearch.similar import ModelParams, SimilarModel, episode_texts

WORD = re.compile(r"\S+")


def without_boilerplate(texts: list[str], n: int, episodes: int) -> tuple[list[str], float]:
    """``texts`` with every word of a run of ``n`` words found in ``episodes`` or more of them replaced by a full
    stop (so no phrase is made across the gap), and the share of words left out."""
    words = [[(m.start(), m.end(), re.sub(r"\W", "", m.group().lower())) for m in WORD.finditer(t)] for t in texts]
    holders: dict[int, set[int]] = defaultdict(set)
    for i, ws in enumerate(words):
        norm = [w for _, _, w in ws]
        for k in range(len(norm) - n + 1):
            found = holders[hash(tuple(norm[k:k + n]))]
            if len(found) < episodes:
                found.add(i)
    out, left_out, total = [], 0, 0
    for text, ws in zip(texts, words):
        norm = [w for _, _, w in ws]
        cover = np.zeros(len(ws), dtype=bool)
        for k in range(len(norm) - n + 1):
            if len(holders[hash(tuple(norm[k:k + n]))]) >= episodes:
                cover[k:k + n] = True
        left_out, total = left_out + int(cover.sum()), total + len(ws)
        parts, last = [], 0
        for (start, end, _), gone in zip(ws, cover):
            if gone:
                parts += [text[last:start], " . "]
                last = end
        out.append("".join(parts) + text[last:])
    return out, left_out / max(total, 1)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", required=True, type=Path)
    ap.add_argument("--pairs", required=True)
    ap.add_argument("--tags", required=True)
    ap.add_argument("--fields", default="transcripts", help="comma-separated: transcripts, notes, or none")
    ap.add_argument("--n", type=int, default=8, help="words in a run")
    ap.add_argument("--episodes", type=int, default=3, help="a run said in this many episodes is boilerplate")
    args = ap.parse_args()
    catalog = Catalog.in_dir(args.data)
    try:
        fields = episode_texts(catalog)
    finally:
        catalog.close()
    shares = {}
    for name in filter(None, args.fields.split(",")):
        if name != "none":
            texts, shares[name] = without_boilerplate(list(getattr(fields, name)), args.n, args.episodes)
            fields = fields._replace(**{name: texts})
    model = SimilarModel.fit_fields(fields, ModelParams())
    result = evaluate(args.data, read_pairs(args.pairs), read_tags(args.tags), baselines=[], model=model)
    print(json.dumps({"fields": args.fields, "n": args.n, "said_in": args.episodes,
                      "left_out": {k: round(v, 4) for k, v in shares.items()}, **result.systems["ours"]}))


if __name__ == "__main__":
    main()
