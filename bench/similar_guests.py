"""Another episode's guest named near the word "episode" as a "nearby episodes" signal, cross-validated on the dev
labels like ``bench/similar_entities.py`` (docs/similar.md, tenth round: measured, then built as
``podsearch/similar/guests.py``).

The links are the model's own (:class:`podsearch.similar.guests.Guests`: a guest of an earlier episode of the show,
said as a capitalised name within ``--width`` words of "episode"); here they are a signal of 1 on such pairs, in
the naming episode's list only, blended with round four's text score (the rerank and the guests' own lift off), its
weight picked on four folds and the fifth ranked with it.

    python -m bench.similar_guests --data DATA --pairs ../shared/corpus/eval/related_pairs.dev.tsv \\
        --tags ../shared/corpus/eval/btc_tags.dev.tsv --width 15
"""

from __future__ import annotations

import argparse
import json
from typing import Any

import numpy as np

from bench.similar_segments import report_bounded_and_all, signal_setup


def guests_named(fields: Any, width: int, share: float) -> dict[int, dict[int, str]]:
    """{episode: {episode whose guest it names: the guest's token}}, as the model finds them."""
    from podsearch.similar.guests import Guests, names_near_cues

    guests = Guests(share)
    near = [names_near_cues(f"{notes}\n{transcript}", width) for notes, transcript in zip(fields.notes, fields.transcripts)]
    numbers = fields.numbers or [None] * len(fields.ids)
    guests.add(0, fields.shows, [line.split() for line in fields.people], near, fields.person_names or {}, numbers)
    return guests.links


def main() -> None:
    def options(ap: argparse.ArgumentParser) -> None:
        ap.add_argument("--width", type=int, default=15, help="words either side of a cue word")
        ap.add_argument("--share", type=float, default=0.2, help="a guest is in at most this share of the show")

    args, fields, labels, text = signal_setup(__doc__, options)
    named = guests_named(fields, args.width, args.share)
    signal = np.zeros_like(text)
    for k, row in enumerate(labels.rows):
        signal[k, sorted(named.get(int(row), ()))] = 1.0
    print(json.dumps({"width": args.width, "share": args.share, "linked": sum(map(len, named.values())),
                      "linked_from_label_rows": int(signal.sum())}))
    report_bounded_and_all(args, labels, text, signal)


if __name__ == "__main__":
    main()
