"""Misspelled known-item queries, made from the dev set's correct ones, through the search box and FTS5
(docs/search.md, "Did you mean").

    python -m bench.typos --into /tmp/eval-data --seeds 1,2,3,4,5

The dev set has eight misspelled queries; a held-out set's may be misspelled otherwise. Here each topic and
person query of ``known_items.dev.tsv`` gets four misspellings, one of each kind (a letter left out, two
neighbours swapped, a letter changed, a letter added; never the first letter), in one of its words of five
letters or more, chosen at random by the seed. Each is scored as its query is (MRR@10 of the right episode), by
``Library.ranked`` (what ``/api/search`` ranks) and by FTS5 ``bm25()`` over the same text, on the data folder
``podsearch eval search --into`` built (``<into>/site``).
"""

from __future__ import annotations

import argparse
import random
import statistics
from pathlib import Path

from podsearch.evaluation.podcast import fts5_for, mrr_at, read_known_items, site_data
from podsearch.evaluation.search import SearchBox

CORPUS = Path(__file__).resolve().parents[1].parent / "shared" / "corpus"
KINDS = ("left out", "swapped", "changed", "added")


def misspelt(word: str, kind: str, rng: random.Random) -> str:
    """``word`` with one edit of ``kind`` past its first letter."""
    i = rng.randrange(1, len(word) - 1)
    if kind == "left out":
        return word[:i] + word[i + 1:]
    if kind == "swapped":
        return word[:i] + word[i + 1] + word[i] + word[i + 2:]
    if kind == "changed":
        return word[:i] + rng.choice("aeioustrnl".replace(word[i], "")) + word[i + 1:]
    return word[:i] + rng.choice("aeioustrnl") + word[i:]


def queries(corpus: Path, seed: int) -> list[tuple[str, str, str]]:
    """(kind, misspelt query, the right episode) for one seed."""
    rng = random.Random(seed)
    out = []
    for item in read_known_items(corpus / "eval" / "known_items.dev.tsv"):
        if item.kind not in ("topic", "person"):
            continue
        words = item.query.split()
        long_enough = [n for n, w in enumerate(words) if len(w) >= 5 and w.isalpha()]
        if not long_enough:
            continue
        for kind in KINDS:
            n = rng.choice(long_enough)
            wrong = misspelt(words[n], kind, rng)
            if wrong != words[n]:
                out.append((kind, " ".join(words[:n] + [wrong] + words[n + 1:]), item.target))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.typos", description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", type=Path, default=CORPUS)
    ap.add_argument("--into", type=Path, required=True, help="the evaluation's data folder (built on first use)")
    ap.add_argument("--seeds", default="1,2,3,4,5")
    args = ap.parse_args(argv)
    site = site_data(args.corpus / "site", args.into / "site", lambda _m: None)
    box, fts = SearchBox(site), fts5_for(site)
    ours_all, fts_all = [], []
    try:
        for seed in (int(s) for s in args.seeds.split(",")):
            rows = queries(args.corpus, seed)
            ours = [mrr_at(box.rank(q, 10), target) for _, q, target in rows]
            theirs = [mrr_at(fts.rank(q, 10), target) for _, q, target in rows]
            ours_all.append(statistics.fmean(ours))
            fts_all.append(statistics.fmean(theirs))
            missed = [q for (_, q, _), r in zip(rows, ours) if r < 1]
            print(f"seed {seed}: {len(rows)} queries, MRR@10 podsearch {ours_all[-1]:.3f}, FTS5 {fts_all[-1]:.3f}; "
                  f"not first: {missed}")
    finally:
        box.close()
        fts.close()
    print(f"mean over the seeds: podsearch {statistics.fmean(ours_all):.3f}, FTS5 {statistics.fmean(fts_all):.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
