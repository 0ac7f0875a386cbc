"""From weighted counts to model rows: stop words of each language, show noise, per-show IDF, TF-IDF, the
term cap, L2 (and the optional LSA projection)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np
import scipy.sparse as sp
from sklearn.feature_extraction.text import TfidfTransformer
from sklearn.preprocessing import normalize

from ..languages import fold, stop_words
from ..progress import no_step, stepped
from .params import ModelParams

LSA_EPISODES_PER_COMPONENT = 10  # fewer episodes than this per LSA component: no LSA (see fit_lsa)


class ShowFreqs(NamedTuple):
    """Per show (of at least ``show_noise_min_episodes`` episodes): its size and its document frequencies."""

    shows: list[str]
    sizes: list[int]
    df: sp.csr_matrix  # shows x terms


@dataclass
class Weighting:
    """Turns an episode's weighted counts into its model row. What it learns from all the episodes (show noise,
    per-show document frequencies, mean length, IDF) is fitted on the first call, at fit; fold-in reuses it."""

    params: ModelParams
    vocabulary: dict[str, int]
    transformer: TfidfTransformer | None = None
    noise: dict[str, np.ndarray] | None = None
    show_freqs: ShowFreqs | None = None
    mean_length: float | None = None

    def rows(self, counts: sp.csr_matrix, shows: list[str], languages: list[str], *,
             in_place: bool = False, step: Callable[[], None] = no_step) -> sp.csr_matrix:
        """The L2-normalised rows of the episodes of ``counts``, as the fit weighs them (``step()`` between the
        steps of each stage: a show, a row).

        Every step works on one matrix: ``counts`` itself with ``in_place`` (the caller's counts are then
        used up), else a copy of it. At 100,000 episodes each copy of the counts was a gigabyte."""
        params = self.params
        counts = counts.tocsr(copy=not in_place)
        if counts.dtype != np.float32:
            counts = counts.astype(np.float32)
        _drop_stop_words(counts, self.vocabulary, languages, step)
        if self.noise is None:
            self.noise = show_noise(counts, shows, params, step)
        _drop_noise(counts, shows, self.noise, step)
        if params.show_idf:
            if self.show_freqs is None:
                self.show_freqs = show_doc_freqs(counts, shows, params, step)
            _show_idf(counts, shows, self.show_freqs, step)
        step()
        if params.bm25_k1 > 0:
            if self.mean_length is None:
                self.mean_length = float(np.asarray(counts.sum(axis=1)).mean())
            _bm25_tf(counts, params.bm25_k1, params.bm25_b, self.mean_length)
        if self.transformer is None:
            self.transformer = TfidfTransformer(sublinear_tf=params.sublinear_tf and params.bm25_k1 <= 0).fit(counts)
        matrix = sp.csr_matrix(self.transformer.transform(counts, copy=False), copy=False)
        if matrix.dtype != np.float32:
            matrix = matrix.astype(np.float32)
        keep_top_terms(matrix, params.max_terms_per_doc, copy=False, step=step)
        return normalize(matrix, copy=False)


def _drop_stop_words(counts: sp.csr_matrix, vocabulary: dict[str, int], langs: list[str],
                     step: Callable[[], None] = no_step) -> None:
    """Each episode loses the stop words of its own language, so that one language's function words do not
    pass for a topic ("und", "der", "și"). English ones are already gone (the vectorizer's list); a shared
    list would be wrong: Dutch "door" is an English topic word. ``counts`` is changed in place."""
    if len(langs) != counts.shape[0]:
        return
    groups: dict[str, np.ndarray] = {}
    for lang in sorted(set(langs) - {"", "en"}):
        # The vocabulary is lower case with accents stripped, as the vectorizer saw the text.
        cols = sorted({vocabulary[w] for word in stop_words(lang) for w in (word, fold(word)) if w in vocabulary})
        if cols:
            groups[lang] = np.array(cols)
    if groups:
        _drop_noise(counts, langs, groups, step)


def show_noise(counts: sp.csr_matrix, shows: list[str], params: ModelParams,
               step: Callable[[], None] = no_step) -> dict[str, np.ndarray]:
    """Per show, the term ids that mark the show rather than a topic: host names, intros, sponsor reads.

    A term is noise for a show when it is in at least ``show_noise_df`` of the show's episodes and at
    least ``show_noise_share`` of all episodes containing it belong to that show.
    """
    global_df = _doc_freqs(counts)
    shows_arr = np.array(shows)
    noise: dict[str, np.ndarray] = {}
    for show in stepped(np.unique(shows_arr), step):
        rows = np.flatnonzero(shows_arr == show)
        if len(rows) < params.show_noise_min_episodes:
            continue
        df = _doc_freqs(counts[rows])
        share = np.divide(df, global_df, out=np.zeros_like(df), where=global_df > 0)
        mask = (df >= params.show_noise_df * len(rows)) & (share >= params.show_noise_share)
        noise[str(show)] = np.flatnonzero(mask)
    return noise


def _doc_freqs(counts: sp.csr_matrix) -> np.ndarray:
    """In how many rows each term has a positive count (float32, as a column sum of the 0/1 matrix)."""
    return np.bincount(counts.indices[counts.data > 0], minlength=counts.shape[1]).astype(np.float32)


def _drop_noise(counts: sp.csr_matrix, shows: list[str], noise: dict[str, np.ndarray],
                step: Callable[[], None] = no_step) -> None:
    """Each show's ``noise`` terms dropped from that show's rows of ``counts``, in place.

    The entries are zeroed in the data (one pass over each show's rows), never through whole-matrix products:
    at 100,000 episodes those held three copies of the counts at once, near the fit's peak."""
    shows_arr = np.array(shows)
    for show, terms in noise.items():
        if len(terms) == 0:
            continue
        dropped = np.zeros(counts.shape[1], dtype=bool)
        dropped[terms] = True
        for r in stepped(np.flatnonzero(shows_arr == show), step):
            a, b = counts.indptr[r], counts.indptr[r + 1]
            row = counts.data[a:b]
            row[dropped[counts.indices[a:b]]] = 0
    counts.eliminate_zeros()


def show_doc_freqs(counts: sp.csr_matrix, shows: list[str], params: ModelParams,
                   step: Callable[[], None] = no_step) -> ShowFreqs:
    """Per show of at least ``show_noise_min_episodes`` episodes, in how many of them each term is (for _show_idf)."""
    shows_arr = np.array(shows)
    names, sizes, dfs = [], [], []
    for show in stepped(np.unique(shows_arr), step):
        rows = np.flatnonzero(shows_arr == show)
        if len(rows) < params.show_noise_min_episodes:
            continue
        names.append(str(show))
        sizes.append(len(rows))
        dfs.append(sp.csr_matrix(_doc_freqs(counts[rows])[np.newaxis, :]))
    df = sp.vstack(dfs, format="csr") if dfs else sp.csr_matrix((0, counts.shape[1]), dtype=np.float32)
    return ShowFreqs(names, sizes, df)


def _show_idf(counts: sp.csr_matrix, shows: list[str], freqs: ShowFreqs, step: Callable[[], None] = no_step) -> None:
    """Scale each count by the term's IDF inside the episode's show, ``log((1 + n) / (1 + df)) + 1`` over its max.

    A softer form of show noise: a host's first name or a recurring segment in a third of a show's episodes
    weighs less in that show, while a topic word rare in the show keeps its weight. A show not in ``freqs``
    (too small, or new since the fit) is left as it is. ``counts`` is changed in place.
    """
    shows_arr = np.array(shows)
    for s, show in enumerate(freqs.shows):
        rows = np.flatnonzero(shows_arr == show)
        if len(rows) == 0:
            continue
        df = freqs.df[s].toarray().ravel()
        n = freqs.sizes[s]
        factor = (np.log((1 + n) / (1 + df)) + 1) / (np.log(1 + n) + 1)
        for r in stepped(rows, step):
            a, b = counts.indptr[r], counts.indptr[r + 1]
            counts.data[a:b] *= factor[counts.indices[a:b]]


def _bm25_tf(counts: sp.csr_matrix, k1: float, b: float, mean_length: float) -> None:
    """BM25 term-frequency saturation, ``tf * (k1 + 1) / (tf + k1 * (1 - b + b * length / mean length))``, in place."""
    lengths = np.asarray(counts.sum(axis=1)).ravel()
    norm = k1 * (1 - b + b * lengths / max(mean_length, 1e-9))
    denominator = np.repeat(norm.astype(np.float32), np.diff(counts.indptr))
    denominator += counts.data
    counts.data *= np.float32(k1 + 1)
    counts.data /= denominator


def keep_top_terms(matrix: sp.csr_matrix, n: int, copy: bool = True,
                   step: Callable[[], None] = no_step) -> sp.csr_matrix:
    """Zero all but the n largest weights of each row (of a copy unless ``copy`` is false)."""
    matrix = matrix.tocsr(copy=copy)
    for r in stepped(range(matrix.shape[0]), step):
        start, end = matrix.indptr[r], matrix.indptr[r + 1]
        if end - start > n:
            row = matrix.data[start:end]
            cut = np.partition(row, -n)[-n]
            row[row < cut] = 0
    matrix.eliminate_zeros()
    return matrix


def fit_lsa(matrix: sp.csr_matrix, params: ModelParams,
            step: Callable[[], None] = no_step) -> tuple[Any, np.ndarray | None]:
    """LSA (TruncatedSVD) of the TF-IDF rows, L2-normalised; (None, None) when off or the corpus is too small.

    Too small is under :data:`LSA_EPISODES_PER_COMPONENT` episodes per component: on a few hundred episodes the
    components follow single episodes, and episodes folded in later (projected on them) drift far from a refit
    (docs/similar.md, fourth round).
    """
    components = params.lsa_components
    if (not components or params.lsa_weight <= 0 or matrix.shape[0] < LSA_EPISODES_PER_COMPONENT * components
            or matrix.shape[1] <= 2 * components):
        return None, None
    from threadpoolctl import threadpool_limits

    # One BLAS thread: its factorisations are each one call that nothing interrupts (a stop, SIGTERM), and with two
    # threads on a busy machine the QR of the site corpus took 1.3-8 s, the whole LSA 6.6-17 s; with one 0.5 s and
    # 2.6 s (load 8-11). (The rows differ from two threads' by at most 1e-4, as a machine's core count made them.)
    with threadpool_limits(1, user_api="blas"):
        svd, transformed = randomized_svd(matrix, components, step)
    return svd, normalize(transformed).astype(np.float32)


LSA_ITERATIONS = 5  # power iterations of the LSA's randomized SVD
LSA_OVERSAMPLES = 10  # random vectors beyond its components


def randomized_svd(matrix: sp.csr_matrix, components: int,
                   step: Callable[[], None] = no_step) -> tuple[Any, np.ndarray]:
    """``TruncatedSVD(components, algorithm="randomized", n_iter=5, random_state=0)`` fitted on ``matrix`` (sparse,
    float32) and its ``fit_transform``, computed as scikit-learn computes them (Halko et al.'s range finder with LU
    normalisation, then the small SVD; the same numbers: tests/test_similar_model.py) but here, with ``step()``
    between its products and factorisations (each well under a second on 10,000 episodes), where a stopped fit ends:
    ``fit_transform`` is one call of 10 s on the site corpus, and a stopped fit waited for it (SIGTERM too)."""
    from scipy import linalg
    from sklearn.decomposition import TruncatedSVD
    from sklearn.utils.extmath import svd_flip
    from sklearn.utils.sparsefuncs import mean_variance_axis

    transpose = matrix.shape[0] < matrix.shape[1]  # (as scikit-learn's "auto": a bit faster with fewer columns)
    m = matrix.T if transpose else matrix
    q = np.random.RandomState(0).normal(size=(m.shape[1], components + LSA_OVERSAMPLES))
    if m.dtype == np.float32:
        q = q.astype(np.float32, copy=False)
    for _ in range(LSA_ITERATIONS):
        step()
        q, _ = linalg.lu(m @ q, permute_l=True, check_finite=False)
        step()
        q, _ = linalg.lu(m.T @ q, permute_l=True, check_finite=False)
    step()
    q, _ = linalg.qr(m @ q, mode="economic", check_finite=False)
    step()
    b = q.T @ m
    step()
    u_hat, s, vt = linalg.svd(b, full_matrices=False, lapack_driver="gesdd")
    del b
    step()
    u = q @ u_hat
    if transpose:
        u, s, vt = vt[:components].T, s[:components], u[:, :components].T
    else:
        u, s, vt = u[:, :components], s[:components], vt[:components]
    u, vt = svd_flip(u, vt, u_based_decision=False)
    svd = TruncatedSVD(components, algorithm="randomized", n_iter=LSA_ITERATIONS, random_state=0)
    svd.components_ = vt
    transformed = matrix @ vt.T
    step()
    # (what TruncatedSVD.fit_transform sets besides: the explained variance, the singular values, the input's width)
    svd.explained_variance_ = variance = np.var(transformed, axis=0)
    svd.explained_variance_ratio_ = variance / mean_variance_axis(matrix, axis=0)[1].sum()
    svd.singular_values_ = s
    svd.n_features_in_ = matrix.shape[1]
    return svd, transformed

