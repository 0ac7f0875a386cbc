"""A pretrained static embedding as a "nearby episodes" signal, cross-validated on the dev labels like
``bench/similar_entities.py`` (docs/similar.md, seventh round: measured, not kept).

WordLlama (``pip install wordllama``; not a podsearch dependency) ships its 256-dimension ``l2_supercat`` token
embeddings in its wheel, so it runs offline. Each field of an episode (title, notes, transcript) is cut in
stretches of ``--words`` words; a field's vector is the mean of its stretches' unit vectors. The signal is the
cosine of the fields' vectors, raw or centred (the corpus mean taken off, which static embeddings need: every
technical talk points the same way), and it changes the model's text score ``t`` (round four's form, the rerank
off) as the earlier rounds' signals did: ``mix`` ``(1 - b) * t + b * signal``, ``lift``
``t + b * max(0, signal - t)``, the weight picked on four folds and the fifth ranked with it.

    python -m bench.similar_embeddings --data DATA --pairs ../shared/corpus/eval/related_pairs.dev.tsv \\
        --tags ../shared/corpus/eval/btc_tags.dev.tsv
"""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path

import numpy as np

from bench.similar_segments import report_signal, signal_setup, top_candidates


def load_wordllama():
    """WordLlama from its own wheel: 0.4.0 looks for its tokenizer in the package's ``tokenizer/`` but ships it in
    ``tokenizers/``, so the file is put where a cache folder holds it, and downloading is off."""
    import wordllama
    from wordllama import WordLlama

    cache = Path(tempfile.mkdtemp(prefix="wordllama-"))
    shipped = Path(wordllama.__file__).parent / "tokenizers"
    shutil.copytree(shipped, cache / "tokenizers", dirs_exist_ok=True)
    return WordLlama.load(cache_dir=cache, disable_download=True)


def unit(v: np.ndarray) -> np.ndarray:
    n = np.linalg.norm(v, axis=-1, keepdims=True)
    return np.divide(v, n, out=np.zeros_like(v), where=n > 0)


def field_vectors(model, texts: list[str], words: int) -> np.ndarray:
    out = np.zeros((len(texts), 256), dtype=np.float32)
    for i, text in enumerate(texts):
        tokens = (text or "").split()
        if tokens:
            stretches = [" ".join(tokens[k:k + words]) for k in range(0, len(tokens), words)]
            out[i] = unit(np.nan_to_num(unit(model.embed(stretches))).mean(axis=0))
    return out


def main() -> None:
    args, fields, labels, text = signal_setup(__doc__, lambda ap: ap.add_argument(
        "--words", type=int, default=300, help="words per stretch"))
    wl = load_wordllama()
    title, notes, transcript = (field_vectors(wl, texts, args.words)
                                for texts in (fields.titles, fields.notes, fields.transcripts))

    def centred(v: np.ndarray) -> np.ndarray:
        return unit(v - v.mean(axis=0))

    variants = {"transcript": unit(transcript), "transcript, centred": centred(transcript),
                "title + notes, centred": centred(centred(title) + centred(notes)),
                "all three, centred": centred(centred(title) + centred(notes) + 2 * centred(transcript))}
    candidates = top_candidates(labels.ranked(text), args.candidates)
    for name, vectors in variants.items():
        signal = vectors[labels.rows] @ vectors.T
        print(json.dumps({"signal": name, "alone": labels.in_sample({0: labels.ranked(signal)})["0"]}))
        report_signal(labels, text, signal, candidates, signal=name)


if __name__ == "__main__":
    main()
