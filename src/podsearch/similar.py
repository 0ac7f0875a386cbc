"""The "nearby episodes" model: weighted TF-IDF over title, show notes and transcript.

Fitted at reindex from the catalog; neighbours of every episode are precomputed blockwise on sparse
matrices (never a dense N x N matrix), so that ``/similar/<id>`` is a lookup. Saved in
``<data>/model/<generation>/`` with its parameters and versions; refitted when they change.
"""

from __future__ import annotations

import hashlib
import json
import logging
import pickle
import re
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from itertools import chain
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp
import sklearn
from sklearn.feature_extraction.text import CountVectorizer, TfidfTransformer
from sklearn.preprocessing import normalize

from . import __version__
from .catalog import Catalog
from .errors import IndexMissing, NotFound, QueryError
from .generations import Generations

log = logging.getLogger(__name__)

MODEL_VERSION = 2
TOKEN_PATTERN = r"(?u)\b[^\W\d_][\w'’-]*[^\W_]\b"
GENERIC_SPEAKERS = {"speaker", "host", "guest", "audience", "unknown", "interviewer", "interviewee", "moderator", "jingle",
                    "participant", "question", "answer", "q", "a", "man", "woman", "voice", "narrator", "announcer"}


@dataclass(frozen=True)
class ModelParams:
    """Everything that changes the model. Saved beside it; a mismatch means refit."""

    title_weight: float = 3.0
    notes_weight: float = 2.0
    transcript_weight: float = 1.0
    people_weight: float = 2.0  # persons of the feed and transcript speakers, one token per name
    min_df: int = 2
    max_df: float = 0.5
    sublinear_tf: bool = True
    max_features: int = 200_000
    max_terms_per_doc: int = 400  # keep each episode's strongest terms: less noise, faster products
    show_noise_df: float = 0.4  # a term in >= this share of one show's episodes ...
    show_noise_share: float = 0.8  # ... with >= this share of its documents in that show is show noise
    show_noise_min_episodes: int = 5
    show_idf: bool = True  # also weigh terms by their rarity inside the episode's own show
    lsa_components: int = 0  # 0: off; else blend an LSA (TruncatedSVD) cosine with the TF-IDF one
    lsa_weight: float = 0.0
    neighbours: int = 50
    duplicate_threshold: float = 0.9
    block_rows: int = 512

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "model_version": MODEL_VERSION, "sklearn": sklearn.__version__,
                "podsearch": __version__}


@dataclass
class Neighbour:
    id: str
    score: float
    reasons: list[str] = field(default_factory=list)
    duplicate: bool = False


def person_token(name: str) -> str:
    """One token per person ("Katie Hockman" -> "katie_hockman"): a shared guest is a strong topic link."""
    return re.sub(r"[\W_]+", "_", name.lower()).strip("_")


def episode_texts(catalog: Catalog) -> tuple[list[str], ...]:
    """(ids, shows, titles, notes, transcripts, languages, people): the fields the model reads."""
    ids, shows, titles, notes, transcripts, languages, people = [], [], [], [], [], [], []
    for ep in catalog.episodes(with_segments=False):
        segments = catalog.segments(ep.id)
        ids.append(ep.id)
        shows.append(ep.show_id)
        titles.append(ep.title)
        notes.append(ep.description_text)
        transcripts.append(" ".join(seg.text for seg in segments))
        languages.append((ep.language or "").lower().split("-")[0])
        names = dict.fromkeys([p.name for p in ep.persons] + [seg.speaker for seg in segments if seg.speaker])
        people.append(" ".join(t for t in (person_token(n) for n in names) if t and t not in GENERIC_SPEAKERS
                               and not any(c.isdigit() for c in t)))
    return ids, shows, titles, notes, transcripts, languages, people


def catalog_digest(catalog: Catalog) -> str:
    h = hashlib.sha256()
    for episode_id, digest in sorted(catalog.hashes().items()):
        h.update(episode_id.encode() + b"\0" + digest.encode() + b"\n")
    return h.hexdigest()


class SimilarModel:
    def __init__(self, params: ModelParams, ids: list[str], shows: list[str], vectorizer: CountVectorizer,
                 transformer: TfidfTransformer, matrix: sp.csr_matrix, noise: dict[str, np.ndarray],
                 neigh_idx: np.ndarray, neigh_score: np.ndarray, digest: str = "", svd: Any = None,
                 dense: np.ndarray | None = None) -> None:
        self.params = params
        self.ids = ids
        self.shows = shows
        self.vectorizer = vectorizer
        self.transformer = transformer
        self.matrix = matrix
        self.noise = noise
        self.neigh_idx = neigh_idx
        self.neigh_score = neigh_score
        self.digest = digest
        self.svd = svd  # the LSA projection (TruncatedSVD) or None
        self.dense = dense  # L2-normalised LSA rows (N x components, float32) or None
        self.position = {episode_id: i for i, episode_id in enumerate(ids)}
        self.terms = vectorizer.get_feature_names_out()

    # -- fitting --------------------------------------------------------------------------------
    @classmethod
    def fit(cls, catalog: Catalog, params: ModelParams | None = None,
            progress: Callable[[str], None] | None = None) -> SimilarModel:
        return cls.fit_fields(episode_texts(catalog), params, catalog_digest(catalog), progress)

    @classmethod
    def fit_fields(cls, fields: tuple[list[str], ...], params: ModelParams | None = None, digest: str = "",
                   progress: Callable[[str], None] | None = None) -> SimilarModel:
        """Fit on ``(ids, shows, titles, notes, transcripts, languages[, people])`` as :func:`episode_texts` gives."""
        params = params or ModelParams()
        started = time.perf_counter()
        ids, shows = list(fields[0]), list(fields[1])
        if not ids:
            raise IndexMissing("The catalog has no episodes; add feeds and run 'podsearch reindex'.")
        people = fields[6] if len(fields) > 6 else [""] * len(ids)
        vectorizer, counts = weighted_counts(
            [(fields[2], params.title_weight), (fields[3], params.notes_weight), (fields[4], params.transcript_weight),
             (people, params.people_weight)], params)
        if progress:
            progress("vectorized")
        noise = show_noise(counts, shows, params)
        counts = _drop_noise(counts, shows, noise)
        if params.show_idf:
            counts = _show_idf(counts, shows, params)
        transformer = TfidfTransformer(sublinear_tf=params.sublinear_tf)
        matrix = transformer.fit_transform(counts).astype(np.float32).tocsr()
        matrix = normalize(_keep_top_terms(matrix, params.max_terms_per_doc)).astype(np.float32).tocsr()
        svd, dense = fit_lsa(matrix, params)
        if progress:
            progress("weighted")
        neigh_idx, neigh_score = top_neighbours(matrix, params.neighbours, params.block_rows, dense, params.lsa_weight)
        log.info("fitted similar model on %d episodes, %d terms in %.1fs", len(ids), len(vectorizer.vocabulary_),
                 time.perf_counter() - started)
        return cls(params, ids, shows, vectorizer, transformer, matrix, noise, neigh_idx, neigh_score, digest,
                   svd, dense)

    # -- persistence ----------------------------------------------------------------------------
    def save(self, generations: Generations) -> Path:
        path = generations.new()
        sp.save_npz(path / "matrix.npz", self.matrix, compressed=False)
        np.save(path / "neigh_idx.npy", self.neigh_idx)
        np.save(path / "neigh_score.npy", self.neigh_score)
        if self.dense is not None:
            np.save(path / "dense.npy", self.dense)
        with open(path / "vectorizer.pkl", "wb") as fh:
            pickle.dump({"vectorizer": self.vectorizer, "transformer": self.transformer, "noise": self.noise,
                         "svd": self.svd}, fh, protocol=pickle.HIGHEST_PROTOCOL)
        (path / "ids.json").write_text(json.dumps({"ids": self.ids, "shows": self.shows}), encoding="utf-8")
        (path / "params.json").write_text(json.dumps({**self.params.to_dict(), "digest": self.digest}, indent=1))
        return generations.publish(path)

    @classmethod
    def load(cls, generations: Generations) -> SimilarModel:
        path = generations.current()
        if path is None:
            raise IndexMissing(f"No similarity model in {generations.root.parent}. Run 'podsearch reindex' first.")
        meta = json.loads((path / "params.json").read_text())
        if meta.get("model_version") != MODEL_VERSION or meta.get("sklearn") != sklearn.__version__:
            raise IndexMissing("The similarity model was built by another version; run 'podsearch reindex'.")
        known = ModelParams.__dataclass_fields__
        params = ModelParams(**{k: v for k, v in meta.items() if k in known})
        with open(path / "vectorizer.pkl", "rb") as fh:
            parts = pickle.load(fh)  # our own file, written by save() above
        ids = json.loads((path / "ids.json").read_text(encoding="utf-8"))
        return cls(params, ids["ids"], ids["shows"], parts["vectorizer"], parts["transformer"],
                   sp.load_npz(path / "matrix.npz").tocsr(), parts["noise"], np.load(path / "neigh_idx.npy"),
                   np.load(path / "neigh_score.npy"), meta.get("digest", ""), parts.get("svd"),
                   np.load(path / "dense.npy") if (path / "dense.npy").exists() else None)

    @staticmethod
    def saved_params(generations: Generations) -> dict[str, Any] | None:
        path = generations.current()
        if path is None:
            return None
        try:
            return json.loads((path / "params.json").read_text())
        except (OSError, ValueError):
            return None

    # -- answering ------------------------------------------------------------------------------
    def similar(self, episode_id: str, k: int = 10, *, same_show: bool = True, shows: list[str] | None = None,
                exclude_shows: list[str] | None = None, min_score: float = 0.0,
                n_reasons: int = 5) -> tuple[list[Neighbour], list[Neighbour]]:
        """The k nearest episodes (and the near-duplicates, flagged apart)."""
        i = self.position.get(episode_id)
        if i is None:
            raise NotFound(f"No episode with id {episode_id!r}.")
        return self._select(i, self.neigh_idx[i], self.neigh_score[i], k, same_show, shows, exclude_shows,
                            min_score, n_reasons)

    def similar_to_text(self, text: str, k: int = 10, exclude: str | None = None, *, same_show: bool = True,
                        shows: list[str] | None = None, exclude_shows: list[str] | None = None,
                        min_score: float = 0.0, n_reasons: int = 5) -> list[Neighbour]:
        vec = self.vectorize(text)
        if vec.nnz == 0:
            raise QueryError("The text has no words the model knows.")
        scores = self.scores(vec)
        order = np.argsort(-scores)[: self.params.neighbours + 1]
        origin = self.position.get(exclude) if exclude else None
        picked, _ = self._select(origin, order, scores[order], k, same_show, shows, exclude_shows, min_score,
                                 n_reasons, query_vec=vec, flag_duplicates=False)
        return picked

    def scores(self, vec: sp.csr_matrix | int) -> np.ndarray:
        """Similarity of every episode to a vectorized text or to the episode at position ``vec``."""
        if isinstance(vec, (int, np.integer)):
            sims = (self.matrix @ self.matrix[int(vec)].T).toarray().ravel()
            lsa = self.dense[int(vec)] if self.dense is not None else None
        else:
            sims = (self.matrix @ vec.T).toarray().ravel()
            lsa = normalize(self.svd.transform(vec)).astype(np.float32)[0] if self.svd is not None else None
        if lsa is None:
            return sims
        w = self.params.lsa_weight
        return (1 - w) * sims + w * (self.dense @ lsa)

    def vectorize(self, text: str) -> sp.csr_matrix:
        counts = self.vectorizer.transform([text])
        vec = self.transformer.transform(counts).astype(np.float32)
        return normalize(vec).tocsr()

    def _select(self, origin: int | None, idx: np.ndarray, scores: np.ndarray, k: int, same_show: bool,
                shows: list[str] | None, exclude_shows: list[str] | None, min_score: float, n_reasons: int,
                query_vec: sp.csr_matrix | None = None,
                flag_duplicates: bool = True) -> tuple[list[Neighbour], list[Neighbour]]:
        picked: list[Neighbour] = []
        duplicates: list[Neighbour] = []
        origin_show = self.shows[origin] if origin is not None else None
        for j, score in zip(idx.tolist(), scores.tolist()):
            if j < 0 or j == origin or score <= 0:
                continue
            show = self.shows[j]
            if not same_show and show == origin_show:
                continue
            if shows and show not in shows:
                continue
            if exclude_shows and show in exclude_shows:
                continue
            base = query_vec if query_vec is not None else self.matrix[origin]
            reasons = self.reasons(base, j, n_reasons)
            item = Neighbour(self.ids[j], round(float(score), 4), reasons)
            if flag_duplicates and score >= self.params.duplicate_threshold:
                item.duplicate = True
                duplicates.append(item)
                continue
            if item.score < min_score:  # the score as shown, so that min_score=<a shown score> keeps it
                break
            picked.append(item)
            if len(picked) >= k:
                break
        return picked, duplicates

    def reasons(self, base: sp.csr_matrix, j: int, n: int = 5) -> list[str]:
        """The terms that weigh most in the match: the largest products of the two vectors."""
        prod = base.multiply(self.matrix[j]).tocsr()
        if prod.nnz == 0:
            return []
        order = np.argsort(-prod.data)[:n]
        return [str(self.terms[prod.indices[o]]) for o in order]


def weighted_counts(fields: list[tuple[list[str], float]], params: ModelParams) -> tuple[CountVectorizer, sp.csr_matrix]:
    """Term counts of each episode, every field weighted, from one tokenising pass over all the text.

    The vocabulary keeps terms in at least ``min_df`` and at most ``max_df`` of the episodes (any field),
    the ``max_features`` most frequent of them; the returned vectorizer maps new text onto it.
    """
    options: dict[str, Any] = dict(stop_words="english", strip_accents="unicode", lowercase=True,
                                   token_pattern=TOKEN_PATTERN, dtype=np.float32)
    n = len(fields[0][0])
    raw = CountVectorizer(**options)
    stacked = raw.fit_transform(chain.from_iterable(texts for texts, _ in fields)).tocsr()
    counts = sp.csr_matrix((n, stacked.shape[1]), dtype=np.float32)
    for k, (_, weight) in enumerate(fields):
        if weight:
            counts = counts + weight * stacked[k * n:(k + 1) * n]
    counts = counts.tocsr()
    del stacked
    df = np.bincount(counts.indices, minlength=counts.shape[1])
    min_df = params.min_df if n >= 20 else 1
    max_df = params.max_df * n if n >= 20 else n
    keep = np.flatnonzero((df >= min_df) & (df <= max_df))
    if len(keep) > params.max_features:
        totals = np.asarray(counts[:, keep].sum(axis=0)).ravel()
        keep = np.sort(keep[np.argsort(-totals, kind="stable")[: params.max_features]])
    terms = raw.get_feature_names_out()[keep]
    vectorizer = CountVectorizer(**options, vocabulary={str(t): i for i, t in enumerate(terms)}).fit([""])
    return vectorizer, counts[:, keep].tocsr()


def show_noise(counts: sp.csr_matrix, shows: list[str], params: ModelParams) -> dict[str, np.ndarray]:
    """Per show, the term ids that mark the show rather than a topic: host names, intros, sponsor reads.

    A term is noise for a show when it is in at least ``show_noise_df`` of the show's episodes and at
    least ``show_noise_share`` of all episodes containing it belong to that show.
    """
    present = (counts > 0).astype(np.float32).tocsr()
    global_df = np.asarray(present.sum(axis=0)).ravel()
    shows_arr = np.array(shows)
    noise: dict[str, np.ndarray] = {}
    for show in np.unique(shows_arr):
        rows = np.flatnonzero(shows_arr == show)
        if len(rows) < params.show_noise_min_episodes:
            continue
        df = np.asarray(present[rows].sum(axis=0)).ravel()
        share = np.divide(df, global_df, out=np.zeros_like(df), where=global_df > 0)
        mask = (df >= params.show_noise_df * len(rows)) & (share >= params.show_noise_share)
        noise[str(show)] = np.flatnonzero(mask)
    return noise


def _drop_noise(counts: sp.csr_matrix, shows: list[str], noise: dict[str, np.ndarray]) -> sp.csr_matrix:
    counts = counts.copy().tocsr()
    shows_arr = np.array(shows)
    for show, terms in noise.items():
        if len(terms) == 0:
            continue
        rows = np.flatnonzero(shows_arr == show)
        mask = np.ones(counts.shape[1], dtype=np.float32)
        mask[terms] = 0
        block = counts[rows].multiply(mask).tocsr()
        counts = _replace_rows(counts, rows, block)
    counts.eliminate_zeros()
    return counts


def _show_idf(counts: sp.csr_matrix, shows: list[str], params: ModelParams) -> sp.csr_matrix:
    """Scale each count by the term's IDF inside the episode's show, ``log((1 + n) / (1 + df)) + 1`` over its max.

    A softer form of show noise: a host's first name or a recurring segment in a third of a show's episodes
    weighs less in that show, while a topic word rare in the show keeps its weight.
    """
    counts = counts.tocsr(copy=True)
    present = counts.copy()
    present.data[:] = 1
    shows_arr = np.array(shows)
    for show in np.unique(shows_arr):
        rows = np.flatnonzero(shows_arr == show)
        if len(rows) < params.show_noise_min_episodes:
            continue
        df = np.asarray(present[rows].sum(axis=0)).ravel()
        n = len(rows)
        factor = (np.log((1 + n) / (1 + df)) + 1) / (np.log(1 + n) + 1)
        for r in rows:
            a, b = counts.indptr[r], counts.indptr[r + 1]
            counts.data[a:b] *= factor[counts.indices[a:b]]
    return counts


def _replace_rows(matrix: sp.csr_matrix, rows: np.ndarray, block: sp.csr_matrix) -> sp.csr_matrix:
    keep = np.ones(matrix.shape[0], dtype=bool)
    keep[rows] = False
    selector_keep = sp.diags(keep.astype(np.float32))
    scatter = sp.csr_matrix((np.ones(len(rows), dtype=np.float32), (rows, np.arange(len(rows)))),
                            shape=(matrix.shape[0], len(rows)))
    return (selector_keep @ matrix + scatter @ block).tocsr()


def _keep_top_terms(matrix: sp.csr_matrix, n: int) -> sp.csr_matrix:
    """Zero all but the n largest weights of each row."""
    matrix = matrix.tocsr(copy=True)
    for r in range(matrix.shape[0]):
        start, end = matrix.indptr[r], matrix.indptr[r + 1]
        if end - start > n:
            row = matrix.data[start:end]
            cut = np.partition(row, -n)[-n]
            row[row < cut] = 0
    matrix.eliminate_zeros()
    return matrix


def fit_lsa(matrix: sp.csr_matrix, params: ModelParams) -> tuple[Any, np.ndarray | None]:
    """LSA (TruncatedSVD) of the TF-IDF rows, L2-normalised; (None, None) when off or the corpus is too small."""
    components = params.lsa_components
    if not components or params.lsa_weight <= 0 or min(matrix.shape) <= 2 * components:
        return None, None
    from sklearn.decomposition import TruncatedSVD

    svd = TruncatedSVD(components, algorithm="randomized", n_iter=5, random_state=0)
    dense = normalize(svd.fit_transform(matrix)).astype(np.float32)
    return svd, dense


def top_neighbours(matrix: sp.csr_matrix, k: int, block_rows: int = 512, dense: np.ndarray | None = None,
                   dense_weight: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    """The k most similar rows of every row (cosine; rows are L2-normalised), computed block by block.

    With ``dense`` (LSA rows), the score is ``(1 - dense_weight) * sparse cosine + dense_weight * dense cosine``.
    Memory: one block of ``block_rows x N`` float32 scores at a time, never N x N.
    """
    n = matrix.shape[0]
    k_eff = min(k, max(n - 1, 0))
    idx = np.full((n, k), -1, dtype=np.int32)
    score = np.zeros((n, k), dtype=np.float32)
    if k_eff == 0:
        return idx, score
    transposed = matrix.T.tocsc()
    for start in range(0, n, block_rows):
        stop = min(start + block_rows, n)
        sims = (matrix[start:stop] @ transposed).toarray()
        if dense is not None:
            sims *= 1 - dense_weight
            sims += dense_weight * (dense[start:stop] @ dense.T)
        sims[np.arange(stop - start), np.arange(start, stop)] = -1.0  # never the episode itself
        part = np.argpartition(-sims, k_eff, axis=1)[:, :k_eff] if k_eff < n else np.argsort(-sims, axis=1)[:, :k_eff]
        part_scores = np.take_along_axis(sims, part, axis=1)
        order = np.argsort(-part_scores, axis=1)
        idx[start:stop, :k_eff] = np.take_along_axis(part, order, axis=1)
        score[start:stop, :k_eff] = np.take_along_axis(part_scores, order, axis=1)
    return idx, score
