"""One episode's title against another's notes and transcript, both ways, as a "nearby episodes" signal, cross-validated
on the dev labels like ``bench/similar_topics.py`` (docs/similar.md, sixteenth round).

The model compares titles with titles (round four) and whole texts with whole texts; a talk titled "Instantiating
(Scriptless) 2P-ECDSA" names its subject in words the multisignature talks say in their transcripts, not in their
titles. The signal is the mean of the two cosines (the title of each against the other's notes and transcript, both
weighted by the bodies' TF-IDF, sublinear), blended with round four's text score as the earlier rounds' signals were.

    python -m bench.similar_crossfield --data DATA --pairs ../shared/corpus/eval/related_pairs.dev.tsv \\
        --tags ../shared/corpus/eval/btc_tags.dev.tsv
"""

from __future__ import annotations

import argparse
import json
import time

from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.preprocessing import normalize

from bench.similar_segments import report_bounded_and_all, signal_setup


def main() -> None:
    def options(ap: argparse.ArgumentParser) -> None:
        ap.add_argument("--min-df", type=int, default=2, help="a word in fewer bodies is left out")

    args, fields, labels, text = signal_setup(__doc__, options)
    started = time.perf_counter()
    vectorizer = TfidfVectorizer(sublinear_tf=True, stop_words="english", min_df=args.min_df, max_df=0.5,
                                 token_pattern=r"(?u)\b[a-zA-Z][a-zA-Z0-9]+\b")
    bodies = vectorizer.fit_transform([f"{n} {t}" for n, t in zip(fields.notes, fields.transcripts)])
    titles = normalize(vectorizer.transform(fields.titles))
    rows = [labels.model.position[i] for i in fields.ids]
    assert rows == list(range(len(rows))), "the model's positions are the catalog's order"
    signal = ((titles[labels.rows] @ bodies.T).toarray() + (bodies[labels.rows] @ titles.T).toarray()) / 2
    print(json.dumps({"seconds": round(time.perf_counter() - started, 1),
                      "alone": labels.in_sample({0: labels.ranked(signal)})["0"],
                      "base": labels.in_sample({0: labels.ranked(text)})["0"]}))
    report_bounded_and_all(args, labels, text, signal)


if __name__ == "__main__":
    main()
