"""The titles on their own: a second, small TF-IDF model over the titles (and their word pairs) alone.

In the main model a title's few terms share one vector with the ~400 terms of a transcript, so two episodes
named alike ("Schnorr Signatures and Taproot", "Taproot and Schnorr") match only as much as their
transcripts let them. The title model weighs the titles against each other (its own vocabulary, IDF, show
noise and per-show IDF, fitted by :class:`~podsearch.similar.weighting.Weighting` on the titles alone); its
cosine is added to the main one with ``title_cosine_weight`` (a weight learned on half of the dev labels and
checked on the other half, docs/similar.md, fourth round).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from sklearn.feature_extraction.text import CountVectorizer

from .features import weigh_fields, weighted_counts, with_title_phrases
from .params import ModelParams
from .weighting import Weighting

log = logging.getLogger(__name__)


@dataclass
class TitleModel:
    vectorizer: CountVectorizer
    weighting: Weighting
    matrix: sp.csr_matrix  # N x title terms, L2-normalised rows

    @classmethod
    def fit(cls, titles: list[str], shows: list[str], languages: list[str], params: ModelParams) -> TitleModel | None:
        """The titles' model, or None when no title has a word (only numbers and stop words: "Show #12")."""
        try:
            vectorizer, counts = weighted_counts([(_texts(titles, languages, params), 1.0)], params)
        except ValueError:  # scikit-learn's "empty vocabulary"
            log.info("similar model: the titles have no words, no title model")
            return None
        weighting = Weighting(params, vectorizer.vocabulary_)
        return cls(vectorizer, weighting, weighting.rows(counts, shows, languages, in_place=True))

    def rows(self, titles: list[str], shows: list[str], languages: list[str]) -> sp.csr_matrix:
        """New episodes' title rows, weighed as the fit weighed its own (for fold-in)."""
        params = self.weighting.params
        counts = self.vectorizer.transform(_texts(titles, languages, params)).tocsr()
        counts = weigh_fields(counts, [1.0], len(titles), params.field_sublinear)
        return self.weighting.rows(counts, shows, languages, in_place=True)


def joined(matrix: sp.csr_matrix, titles: sp.csr_matrix | None, weight: float) -> sp.csr_matrix:
    """Rows whose dot products are ``(main cosine + weight * title cosine) / (1 + weight)``: the main rows and
    the title rows side by side, scaled. The neighbour lists are computed on these."""
    if titles is None or weight <= 0:
        return matrix
    scale = 1 / np.sqrt(1 + weight)
    return sp.hstack([matrix * scale, titles * (np.sqrt(weight) * scale)], format="csr", dtype=np.float32)


def _texts(titles: list[str], languages: list[str], params: ModelParams) -> list[str]:
    return with_title_phrases(titles, languages) if params.title_phrases else list(titles)
