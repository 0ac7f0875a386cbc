"""Proper nouns said in an episode as a "nearby episodes" signal, cross-validated on the dev labels like
``bench/similar_segments.py`` (docs/similar.md, sixth round: measured, not kept).

A proper noun is a capitalised word (or a run of them, "Filippo Valsorda", "Stratum V2") not at the start of a
sentence, in the notes or the transcript, with the words among English's ``--common`` most frequent (wordfreq) and
words of two letters left out. The episodes' proper nouns are weighed by TF-IDF (sublinear, in 2 episodes to 5 %),
and their cosine changes the model's text score ``t`` (round four's form, the rerank off) as the fifth round's
signals did: ``mix`` ``(1 - b) * t + b * signal``, ``lift`` ``t + b * max(0, signal - t)``, on each episode's top 50
or on every pair, the weight picked on four folds and the fifth ranked with it.

    python -m bench.similar_entities --data DATA --pairs ../shared/corpus/eval/related_pairs.dev.tsv \\
        --tags ../shared/corpus/eval/btc_tags.dev.tsv
"""

from __future__ import annotations

import json
import re

from bench.similar_segments import report_bounded_and_all, signal_setup

CAPITALISED = re.compile(r"(?<![.!?:]\s)(?<!^)\b([A-Z][A-Za-z0-9]+(?:[ -][A-Z][A-Za-z0-9]+)*)")


def proper_nouns(text: str, common: frozenset[str]) -> list[str]:
    """The proper nouns of a text as terms ("filippo_valsorda"), in order, repeats kept."""
    out = []
    for match in CAPITALISED.finditer(text):
        words = [w for w in re.split(r"[ -]", match.group(1).lower()) if w not in common and len(w) > 2]
        if words:
            out.append("_".join(words))
    return out


def main() -> None:
    from sklearn.feature_extraction.text import TfidfVectorizer

    from podsearch.similar.reasons import general_words

    args, fields, labels, text = signal_setup(__doc__, lambda ap: ap.add_argument(
        "--common", type=int, default=5000, help="English's most frequent words left out"))
    common = general_words(n=args.common)
    docs = [" ".join(proper_nouns(f"{notes}\n{transcript}", common))
            for notes, transcript in zip(fields.notes, fields.transcripts)]
    rows = TfidfVectorizer(sublinear_tf=True, token_pattern=r"\S+", min_df=2, max_df=0.05).fit_transform(docs).tocsr()
    print(json.dumps({"terms": rows.shape[1], "nonzeros": rows.nnz}))
    signal = (rows[labels.rows] @ rows.T).toarray()
    report_bounded_and_all(args, labels, text, signal)


if __name__ == "__main__":
    main()
