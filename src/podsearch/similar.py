"""The "nearby episodes" model: weighted TF-IDF over title, show notes and transcript.

Fitted at reindex from the catalog; neighbours of every episode are precomputed blockwise on sparse
matrices (never a dense N x N matrix), so that ``/similar/<id>`` is a lookup. Saved in
``<data>/model/<generation>/`` with its parameters and versions; refitted when they change. A few added
episodes are *folded in* (:meth:`SimilarModel.fold_in`) instead: weighed with the saved vocabulary and
weights, their neighbours computed against all the rows, until :data:`FOLD_IN_SHARE` calls for a refit.
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
from typing import Any, NamedTuple

import numpy as np
import scipy.sparse as sp
import sklearn
from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS, CountVectorizer, TfidfTransformer, strip_accents_unicode
from sklearn.preprocessing import normalize

from . import __version__
from .catalog import Catalog
from .errors import IndexMissing, NotFound, QueryError
from .generations import Generations
from .languages import fold, stop_words
from .similar_signals import TOKEN_PATTERN, episode_mentions, link_tokens, phrases

log = logging.getLogger(__name__)

MODEL_VERSION = 5  # 4: per-language stop words; 5: per-field sublinear tf, title phrases
EXACT_LIMIT = 5_000  # up to this many episodes, neighbours score every pair; above, pruned candidates + rescoring
CANDIDATES = 200  # candidates per episode rescored with the full vectors (above EXACT_LIMIT)
PRUNE_TERMS = 64  # terms per episode kept for finding candidates (above EXACT_LIMIT)
RESCORE_TERMS = 0  # > 0: rescore against only a candidate's strongest terms (0: all; 128 lost too much, see docs)
# Added episodes are folded into the saved model (no refit) while the episodes folded in since the last full
# fit, these included, are at most this share of the episodes that fit saw; past it (or on any removal or
# change of an episode, or of the parameters) the model is refitted. See docs/similar.md, "Incremental updates".
FOLD_IN_SHARE = 0.05
GENERIC_SPEAKERS = {"speaker", "host", "guest", "audience", "unknown", "interviewer", "interviewee", "moderator", "jingle",
                    "participant", "question", "answer", "q", "a", "man", "woman", "voice", "narrator", "announcer"}


@dataclass(frozen=True)
class ModelParams:
    """Everything that changes the model. Saved beside it; a mismatch means refit."""

    title_weight: float = 3.0
    notes_weight: float = 2.0
    transcript_weight: float = 1.0
    people_weight: float = 2.0  # persons of the feed and transcript speakers, one token per name
    links_weight: float = 0.0  # sites and projects linked from the show notes, one token each (0: off; see docs)
    mention_weight: float = 0.2  # "episode 159" in i's text: score = cos + w * (1 - cos) for the pair (0: off)
    min_df: int = 2
    max_df: float = 0.5
    field_sublinear: bool = True  # each field's counts become 1 + log(tf) before the weights (a transcript's
    #                               hundreds of mentions do not drown the title and notes); see docs
    title_phrases: bool = True  # a title's word pairs are terms too ("lightning_network"), at the title's weight
    sublinear_tf: bool = False  # 1 + log of the weighted sum (the round-2 model; off when field_sublinear)
    bm25_k1: float = 0.0  # > 0: BM25 saturation tf * (k1 + 1) / (tf + k1 * (1 - b + b * len / avg)) instead
    bm25_b: float = 0.75
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


class EpisodeFields(NamedTuple):
    """What the model reads of every episode (position k is episode k)."""

    ids: list[str]
    shows: list[str]
    titles: list[str]
    notes: list[str]
    transcripts: list[str]
    languages: list[str]
    people: list[str]
    links: list[str] | None = None  # link tokens of the notes' hrefs (similar_signals.link_tokens)
    numbers: list[int | None] | None = None  # episode numbers, for "episode 159" mentions
    show_titles: dict[str, str] | None = None  # show id -> title, for "Go Time #145" in another show


def episode_texts(catalog: Catalog, only: list[str] | None = None) -> EpisodeFields:
    """The fields the model reads, from the catalog (every episode, or the episodes ``only`` in its order)."""
    fields = EpisodeFields([], [], [], [], [], [], [], [], [], {s.id: s.title for s in catalog.shows()})
    ids, shows, titles, notes, transcripts, languages, people, links, numbers, _ = fields
    episodes = catalog.episodes(with_segments=False) if only is None else (
        ep for ep in (catalog.episode(i, with_segments=False) for i in only) if ep is not None)
    for ep in episodes:
        segments = catalog.segments(ep.id)
        links.append(link_tokens(ep.description_html))
        numbers.append(ep.number)
        ids.append(ep.id)
        shows.append(ep.show_id)
        titles.append(ep.title)
        notes.append(ep.description_text)
        transcripts.append(" ".join(seg.text for seg in segments))
        languages.append((ep.language or "").lower().split("-")[0])
        names = dict.fromkeys([p.name for p in ep.persons] + [seg.speaker for seg in segments if seg.speaker])
        people.append(" ".join(t for t in (person_token(n) for n in names) if t and t not in GENERIC_SPEAKERS
                               and not any(c.isdigit() for c in t)))
    return fields


def catalog_digest(catalog: Catalog) -> str:
    return hashes_digest(catalog.hashes())


def hashes_digest(hashes: dict[str, str]) -> str:
    """One digest of {episode id: content hash}: what the saved model was fitted on."""
    h = hashlib.sha256()
    for episode_id, digest in sorted(hashes.items()):
        h.update(episode_id.encode() + b"\0" + digest.encode() + b"\n")
    return h.hexdigest()


class SimilarModel:
    def __init__(self, params: ModelParams, ids: list[str], shows: list[str], vectorizer: CountVectorizer,
                 transformer: TfidfTransformer, matrix: sp.csr_matrix, noise: dict[str, np.ndarray],
                 neigh_idx: np.ndarray, neigh_score: np.ndarray, digest: str = "", svd: Any = None,
                 dense: np.ndarray | None = None, mentions: sp.csr_matrix | None = None,
                 numbers: list[int | None] | None = None, weighting: Weighting | None = None,
                 folded: int = 0, path: Path | None = None) -> None:
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
        self.mentions = mentions  # N x N, (i, j) = 1 when episode i names episode j by its number; or None
        self.numbers = numbers or [None] * len(ids)
        self.position = {episode_id: i for i, episode_id in enumerate(ids)}
        self.terms = vectorizer.get_feature_names_out()
        # What weighs an episode's counts (for fold-in; the per-show document frequencies are read from
        # ``path`` on demand, a server never needs them), and how many episodes were folded in since the fit.
        self.weighting = weighting or Weighting(params, vectorizer.vocabulary_, transformer, noise)
        self.folded = folded
        self.path = path

    # -- fitting --------------------------------------------------------------------------------
    @classmethod
    def fit(cls, catalog: Catalog, params: ModelParams | None = None,
            progress: Callable[[str], None] | None = None, hashes: dict[str, str] | None = None) -> SimilarModel:
        """Fit on every episode of ``catalog`` (``hashes``: its :meth:`~Catalog.hashes`, when already read)."""
        digest = catalog_digest(catalog) if hashes is None else hashes_digest(hashes)
        return cls.fit_fields(episode_texts(catalog), params, digest, progress)

    @classmethod
    def fit_fields(cls, fields: tuple[Any, ...], params: ModelParams | None = None, digest: str = "",
                   progress: Callable[[str], None] | None = None) -> SimilarModel:
        """Fit on :class:`EpisodeFields` (or a plain tuple in its order: ids, shows, titles, notes, transcripts, ...)."""
        params = params or ModelParams()
        started = time.perf_counter()
        fields = EpisodeFields(*fields) if not isinstance(fields, EpisodeFields) else fields
        ids, shows = list(fields.ids), list(fields.shows)
        if not ids:
            raise IndexMissing("The catalog has no episodes; add feeds and run 'podsearch reindex'.")
        vectorizer, counts = weighted_counts(_weighted_fields(fields, params), params)
        if progress:
            progress("vectorized")
        weighting = Weighting(params, vectorizer.vocabulary_)
        matrix = weighting.rows(counts, shows, list(fields.languages or []))
        transformer, noise = weighting.transformer, weighting.noise
        svd, dense = fit_lsa(matrix, params)
        mentions = None
        if params.mention_weight > 0 and fields.numbers is not None:
            named = episode_mentions([f"{a} {b}" for a, b in zip(fields.notes, fields.transcripts)], shows,
                                     fields.numbers, fields.show_titles)
            mentions = named if named.nnz else None
        if progress:
            progress("weighted")
        links = ((mentions + mentions.T) > 0).astype(np.float32).tocsr() if mentions is not None else None
        neigh_idx, neigh_score = top_neighbours(matrix, params.neighbours, params.block_rows, dense, params.lsa_weight,
                                                links, params.mention_weight)
        log.info("fitted similar model on %d episodes, %d terms in %.1fs", len(ids), len(vectorizer.vocabulary_),
                 time.perf_counter() - started)
        return cls(params, ids, shows, vectorizer, transformer, matrix, noise, neigh_idx, neigh_score, digest,
                   svd, dense, mentions, list(fields.numbers) if fields.numbers is not None else None, weighting)

    # -- persistence ----------------------------------------------------------------------------
    def save(self, generations: Generations) -> Path:
        path = generations.new()
        sp.save_npz(path / "matrix.npz", self.matrix, compressed=False)
        np.save(path / "neigh_idx.npy", self.neigh_idx)
        np.save(path / "neigh_score.npy", self.neigh_score)
        if self.dense is not None:
            np.save(path / "dense.npy", self.dense)
        if self.mentions is not None:
            sp.save_npz(path / "mentions.npz", self.mentions, compressed=False)
        with open(path / "vectorizer.pkl", "wb") as fh:
            pickle.dump({"vectorizer": self.vectorizer, "transformer": self.transformer, "noise": self.noise,
                         "svd": self.svd, "mean_length": self.weighting.mean_length}, fh,
                        protocol=pickle.HIGHEST_PROTOCOL)
        freqs = self.weighting.show_freqs if self.weighting.show_freqs is not None else _load_show_freqs(self.path)
        if freqs is not None:
            sp.save_npz(path / "show_df.npz", freqs.df, compressed=False)
            (path / "show_df.json").write_text(json.dumps({"shows": freqs.shows, "sizes": freqs.sizes}), encoding="utf-8")
        (path / "ids.json").write_text(json.dumps({"ids": self.ids, "shows": self.shows, "numbers": self.numbers}),
                                       encoding="utf-8")
        (path / "params.json").write_text(json.dumps({**self.params.to_dict(), "digest": self.digest,
                                                      "folded": self.folded}, indent=1))
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
        weighting = Weighting(params, parts["vectorizer"].vocabulary_, parts["transformer"], parts["noise"],
                              mean_length=parts.get("mean_length"))
        return cls(params, ids["ids"], ids["shows"], parts["vectorizer"], parts["transformer"],
                   sp.load_npz(path / "matrix.npz").tocsr(), parts["noise"], np.load(path / "neigh_idx.npy"),
                   np.load(path / "neigh_score.npy"), meta.get("digest", ""), parts.get("svd"),
                   np.load(path / "dense.npy") if (path / "dense.npy").exists() else None,
                   sp.load_npz(path / "mentions.npz").tocsr() if (path / "mentions.npz").exists() else None,
                   ids.get("numbers"), weighting, int(meta.get("folded", 0)), path)

    # -- fold-in ----------------------------------------------------------------------------------
    def can_fold_in(self) -> bool:
        """Whether this model holds all it needs to weigh new episodes as its fit did (older saves do not)."""
        w = self.weighting
        if self.params.show_idf and w.show_freqs is None:
            w.show_freqs = _load_show_freqs(self.path)
        return (w.noise is not None and (not self.params.show_idf or w.show_freqs is not None)
                and (self.params.bm25_k1 <= 0 or w.mean_length is not None))

    def fold_in(self, fields: EpisodeFields, digest: str) -> SimilarModel:
        """A new model: this one with the episodes of ``fields`` appended, without refitting.

        The new episodes are vectorized by the fit's own steps with this model's vocabulary, stop words,
        show noise, per-show IDF, IDF and term cap (:class:`Weighting`); words the vocabulary lacks are ignored,
        and an episode of a show the fit did not weigh gets no per-show IDF (as a show too small for it).
        Their neighbours are scored against every row, and each old episode's list takes a new episode
        that beats its k-th. Mentions made in the new episodes' text count; old episodes naming a new one
        are only found by the next fit.
        """
        params, old = self.params, len(self.ids)
        if not fields.ids:
            return self
        if not self.can_fold_in():
            raise IndexMissing("The saved similarity model cannot take new episodes; refit it.")
        new_ids, new_shows = list(fields.ids), list(fields.shows)
        m = len(new_ids)
        weighted = _weighted_fields(fields, params)
        stacked = self.vectorizer.transform(chain.from_iterable(texts for texts, _ in weighted)).tocsr()
        counts = _weigh_fields(stacked, [w for _, w in weighted], m, params.field_sublinear)
        rows = self.weighting.rows(counts, new_shows, list(fields.languages or []))
        matrix = sp.vstack([self.matrix, rows], format="csr", dtype=np.float32)
        dense = self.dense
        if self.svd is not None and dense is not None:
            dense = np.vstack([dense, normalize(self.svd.transform(rows)).astype(np.float32)])
        ids, shows = self.ids + new_ids, self.shows + new_shows
        numbers = list(self.numbers) + (list(fields.numbers) if fields.numbers is not None else [None] * m)
        n = old + m
        mentions = self.mentions.copy() if self.mentions is not None else sp.csr_matrix((old, old), dtype=np.float32)
        mentions.resize((n, n))
        if params.mention_weight > 0:
            texts = [""] * old + [f"{a} {b}" for a, b in zip(fields.notes, fields.transcripts)]
            mentions = (mentions + episode_mentions(texts, shows, numbers, fields.show_titles)).tocsr()
        mentions = mentions if mentions.nnz else None
        links = ((mentions + mentions.T) > 0).astype(np.float32).tocsr() if mentions is not None else None
        neigh_idx, neigh_score = fold_neighbours(matrix, old, self.neigh_idx, self.neigh_score, params.block_rows,
                                                 dense, params.lsa_weight, links, params.mention_weight)
        return SimilarModel(params, ids, shows, self.vectorizer, self.transformer, matrix, self.noise, neigh_idx,
                            neigh_score, digest, self.svd, dense, mentions, numbers, self.weighting,
                            self.folded + m, self.path)

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

    def scores(self, vec: sp.csr_matrix | int, *, mentions: bool = True) -> np.ndarray:
        """Similarity of every episode to a vectorized text or to the episode at position ``vec``.

        For an episode, the episodes it names by number or that name it ("episode 159") get
        ``score + mention_weight * (1 - score)``, unless ``mentions=False`` (the text-only score).
        """
        if isinstance(vec, (int, np.integer)):
            i = int(vec)
            sims = (self.matrix @ self.matrix[i].T).toarray().ravel()
            lsa = self.dense[i] if self.dense is not None else None
        else:
            i = None
            sims = (self.matrix @ vec.T).toarray().ravel()
            lsa = normalize(self.svd.transform(vec)).astype(np.float32)[0] if self.svd is not None else None
        if lsa is not None:
            w = self.params.lsa_weight
            sims = (1 - w) * sims + w * (self.dense @ lsa)
        if mentions and i is not None and self.mentions is not None:
            linked = np.union1d(self.mentions[i].indices, self._named_by[i].indices)
            sims[linked] += self.params.mention_weight * (1 - sims[linked])
        return sims

    @property
    def _named_by(self) -> sp.csr_matrix:
        if getattr(self, "_named_by_cache", None) is None:
            self._named_by_cache = self.mentions.T.tocsr()
        return self._named_by_cache

    def text_score(self, i: int, j: int) -> float:
        """The score of the pair from their text alone (no mention bonus): what decides near-duplicates."""
        score = float(self.matrix[i].multiply(self.matrix[j]).sum())
        if self.dense is not None:
            w = self.params.lsa_weight
            score = (1 - w) * score + w * float(self.dense[i] @ self.dense[j])
        return score

    def mention_reason(self, i: int, j: int) -> str | None:
        if self.mentions is None:
            return None
        if self.mentions[i, j] and self.numbers[j] is not None:
            return f"mentions episode {self.numbers[j]}"
        if self.mentions[j, i] and self.numbers[j] is not None:
            return f"mentioned in episode {self.numbers[j]}"
        return None

    def vectorize(self, text: str) -> sp.csr_matrix:
        counts = self.vectorizer.transform([text])
        if self.params.field_sublinear:
            counts.data = 1 + np.log(counts.data)
        vec = self.transformer.transform(counts).astype(np.float32)
        return normalize(vec).tocsr()

    def _select(self, origin: int | None, idx: np.ndarray, scores: np.ndarray, k: int, same_show: bool,
                shows: list[str] | None, exclude_shows: list[str] | None, min_score: float, n_reasons: int,
                query_vec: sp.csr_matrix | None = None,
                flag_duplicates: bool = True) -> tuple[list[Neighbour], list[Neighbour]]:
        picked: list[Neighbour] = []
        duplicates: list[Neighbour] = []
        origin_show = self.shows[origin] if origin is not None else None
        base = query_vec if query_vec is not None else (self.matrix[origin] if origin is not None else None)
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
            reasons = self.reasons(base, j, n_reasons) if base is not None else []
            mention = self.mention_reason(origin, j) if origin is not None and query_vec is None else None
            if mention:
                reasons = [mention, *reasons][:n_reasons]
            item = Neighbour(self.ids[j], round(float(score), 4), reasons)
            if (flag_duplicates and score >= self.params.duplicate_threshold
                    and self.text_score(origin, j) >= self.params.duplicate_threshold):
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
        """The terms that weigh most in the match: the largest products of the two vectors.

        Works on the CSR arrays directly: slicing a scipy row costs more than the whole product.
        """
        m = self.matrix
        cols, vals = m.indices[m.indptr[j]:m.indptr[j + 1]], m.data[m.indptr[j]:m.indptr[j + 1]]
        common, at_base, at_row = np.intersect1d(base.indices, cols, assume_unique=True, return_indices=True)
        if len(common) == 0:
            return []
        prod = base.data[at_base] * vals[at_row]
        order = np.argsort(-prod, kind="stable")[:n]
        return [str(self.terms[common[o]]) for o in order]


def weighted_counts(fields: list[tuple[list[str], float]], params: ModelParams) -> tuple[CountVectorizer, sp.csr_matrix]:
    """Term counts of each episode, every field weighted, from one tokenising pass over all the text.

    The vocabulary keeps terms in at least ``min_df`` and at most ``max_df`` of the episodes (any field),
    the ``max_features`` most frequent of them; the returned vectorizer maps new text onto it. With
    ``field_sublinear``, each field's count is ``1 + log(tf)`` before it is weighted.
    """
    options: dict[str, Any] = dict(stop_words="english", preprocessor=fold_lower, token_pattern=TOKEN_PATTERN,
                                   dtype=np.float32)
    n = len(fields[0][0])
    raw = CountVectorizer(**options)
    stacked = raw.fit_transform(chain.from_iterable(texts for texts, _ in fields)).tocsr()
    counts = _weigh_fields(stacked, [weight for _, weight in fields], n, params.field_sublinear)
    del stacked
    df = np.bincount(counts.indices, minlength=counts.shape[1])
    min_df = params.min_df if n >= 20 else 1
    max_df = params.max_df * n if n >= 20 else n
    keep = np.flatnonzero((df >= min_df) & (df <= max_df))
    if len(keep) == 0:  # every word in (nearly) every episode, e.g. templated titles and no transcripts
        keep = np.flatnonzero(df > 0)
    if len(keep) > params.max_features:
        totals = np.asarray(counts[:, keep].sum(axis=0)).ravel()
        keep = np.sort(keep[np.argsort(-totals, kind="stable")[: params.max_features]])
    terms = raw.get_feature_names_out()[keep]
    vectorizer = CountVectorizer(**options, vocabulary={str(t): i for i, t in enumerate(terms)}).fit([""])
    return vectorizer, counts[:, keep].tocsr()


def fold_lower(text: str) -> str:
    """Lower case, accents stripped, lower case again: compatibility forms can decompose to capitals
    ("llm™" -> "llmTM"), which scikit-learn's own order (lower, then strip) would keep as terms."""
    return strip_accents_unicode(text.lower()).lower()


def with_title_phrases(titles: list[str], languages: list[str] | None = None) -> list[str]:
    """Each title followed by its word pairs as tokens (``similar_signals.phrases``; no pair with a stop word of
    English or of the episode's language)."""
    langs = list(languages or []) if languages is not None and len(languages) == len(titles) else [""] * len(titles)
    return [f"{title} {phrases(title, ENGLISH_STOP_WORDS | stop_words(lang) if lang else ENGLISH_STOP_WORDS)}"
            for title, lang in zip(titles, langs)]


def _weighted_fields(fields: EpisodeFields, params: ModelParams) -> list[tuple[list[str], float]]:
    empty = [""] * len(fields.ids)
    titles = with_title_phrases(list(fields.titles), fields.languages) if params.title_phrases else list(fields.titles)
    return [(titles, params.title_weight), (list(fields.notes), params.notes_weight),
            (list(fields.transcripts), params.transcript_weight), (list(fields.people or empty), params.people_weight),
            (list(fields.links or empty), params.links_weight)]


def _weigh_fields(stacked: sp.csr_matrix, weights: list[float], n: int, sublinear: bool = False) -> sp.csr_matrix:
    """The weighted sum of the fields' counts, stacked field after field (n rows each); with ``sublinear``
    (``field_sublinear``), each field's count is ``1 + log(tf)`` first (``stacked`` is changed in place)."""
    if sublinear:
        stacked.data = 1 + np.log(stacked.data)
    counts = sp.csr_matrix((n, stacked.shape[1]), dtype=np.float32)
    for k, weight in enumerate(weights):
        if weight:
            counts = counts + weight * stacked[k * n:(k + 1) * n]
    return counts.tocsr()


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

    def rows(self, counts: sp.csr_matrix, shows: list[str], languages: list[str]) -> sp.csr_matrix:
        """The L2-normalised rows of the episodes of ``counts``, as the fit weighs them."""
        params = self.params
        counts = _drop_stop_words(counts, self.vocabulary, languages)
        if self.noise is None:
            self.noise = show_noise(counts, shows, params)
        counts = _drop_noise(counts, shows, self.noise)
        if params.show_idf:
            if self.show_freqs is None:
                self.show_freqs = show_doc_freqs(counts, shows, params)
            counts = _show_idf(counts, shows, self.show_freqs)
        if params.bm25_k1 > 0:
            if self.mean_length is None:
                self.mean_length = float(np.asarray(counts.sum(axis=1)).mean())
            counts = _bm25_tf(counts, params.bm25_k1, params.bm25_b, self.mean_length)
        if self.transformer is None:
            self.transformer = TfidfTransformer(sublinear_tf=params.sublinear_tf and params.bm25_k1 <= 0).fit(counts)
        matrix = self.transformer.transform(counts).astype(np.float32).tocsr()
        return normalize(_keep_top_terms(matrix, params.max_terms_per_doc)).astype(np.float32).tocsr()


def _load_show_freqs(path: Path | None) -> ShowFreqs | None:
    if path is None or not (path / "show_df.npz").exists():
        return None
    meta = json.loads((path / "show_df.json").read_text(encoding="utf-8"))
    return ShowFreqs(meta["shows"], meta["sizes"], sp.load_npz(path / "show_df.npz").tocsr())


def _drop_stop_words(counts: sp.csr_matrix, vocabulary: dict[str, int], langs: list[str]) -> sp.csr_matrix:
    """Each episode loses the stop words of its own language, so that one language's function words do not
    pass for a topic ("und", "der", "și"). English ones are already gone (the vectorizer's list); a shared
    list would be wrong: Dutch "door" is an English topic word."""
    if len(langs) != counts.shape[0]:
        return counts
    groups: dict[str, np.ndarray] = {}
    for lang in sorted(set(langs) - {"", "en"}):
        # The vocabulary is lower case with accents stripped, as the vectorizer saw the text.
        cols = sorted({vocabulary[w] for word in stop_words(lang) for w in (word, fold(word)) if w in vocabulary})
        if cols:
            groups[lang] = np.array(cols)
    return _drop_noise(counts, langs, groups) if groups else counts


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


def show_doc_freqs(counts: sp.csr_matrix, shows: list[str], params: ModelParams) -> ShowFreqs:
    """Per show of at least ``show_noise_min_episodes`` episodes, in how many of them each term is (for _show_idf)."""
    present = counts.copy().tocsr()
    present.data[:] = 1
    shows_arr = np.array(shows)
    names, sizes, dfs = [], [], []
    for show in np.unique(shows_arr):
        rows = np.flatnonzero(shows_arr == show)
        if len(rows) < params.show_noise_min_episodes:
            continue
        names.append(str(show))
        sizes.append(len(rows))
        dfs.append(sp.csr_matrix(present[rows].sum(axis=0), dtype=np.float32))
    df = sp.vstack(dfs, format="csr") if dfs else sp.csr_matrix((0, counts.shape[1]), dtype=np.float32)
    return ShowFreqs(names, sizes, df)


def _show_idf(counts: sp.csr_matrix, shows: list[str], freqs: ShowFreqs) -> sp.csr_matrix:
    """Scale each count by the term's IDF inside the episode's show, ``log((1 + n) / (1 + df)) + 1`` over its max.

    A softer form of show noise: a host's first name or a recurring segment in a third of a show's episodes
    weighs less in that show, while a topic word rare in the show keeps its weight. A show not in ``freqs``
    (too small, or new since the fit) is left as it is.
    """
    counts = counts.tocsr(copy=True)
    shows_arr = np.array(shows)
    for s, show in enumerate(freqs.shows):
        rows = np.flatnonzero(shows_arr == show)
        if len(rows) == 0:
            continue
        df = freqs.df[s].toarray().ravel()
        n = freqs.sizes[s]
        factor = (np.log((1 + n) / (1 + df)) + 1) / (np.log(1 + n) + 1)
        for r in rows:
            a, b = counts.indptr[r], counts.indptr[r + 1]
            counts.data[a:b] *= factor[counts.indices[a:b]]
    return counts


def _bm25_tf(counts: sp.csr_matrix, k1: float, b: float, mean_length: float) -> sp.csr_matrix:
    """BM25 term-frequency saturation, ``tf * (k1 + 1) / (tf + k1 * (1 - b + b * length / mean length))``."""
    counts = counts.tocsr(copy=True)
    lengths = np.asarray(counts.sum(axis=1)).ravel()
    norm = k1 * (1 - b + b * lengths / max(mean_length, 1e-9))
    row_norm = np.repeat(norm, np.diff(counts.indptr)).astype(np.float32)
    counts.data = counts.data * (k1 + 1) / (counts.data + row_norm)
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
                   dense_weight: float = 0.0, links: sp.csr_matrix | None = None, link_weight: float = 0.0,
                   exact_limit: int = EXACT_LIMIT, candidates: int = CANDIDATES,
                   prune_terms: int = PRUNE_TERMS, rescore_terms: int = RESCORE_TERMS) -> tuple[np.ndarray, np.ndarray]:
    """The k most similar rows of every row (cosine; rows are L2-normalised), computed block by block.

    With ``dense`` (LSA rows), the score is ``(1 - dense_weight) * sparse cosine + dense_weight * dense cosine``;
    with ``links`` (symmetric N x N), a linked pair scores ``s + link_weight * (1 - s)``.

    Up to ``exact_limit`` rows every pair is scored, one block of ``block_rows x N`` float32 at a time (never
    N x N). Above it, two stages, so that time and memory stay near linear: *candidates* from vectors pruned
    to their ``prune_terms`` strongest terms (a sparse product that only meets rare, strong terms), the best
    ``candidates`` of each row plus its linked rows; then each candidate is *rescored* with the full vectors.
    """
    n = matrix.shape[0]
    k_eff = min(k, max(n - 1, 0))
    idx = np.full((n, k), -1, dtype=np.int32)
    score = np.zeros((n, k), dtype=np.float32)
    if k_eff == 0:
        return idx, score
    if n <= exact_limit:
        _exact_neighbours(matrix, k_eff, block_rows, dense, dense_weight, links, link_weight, idx, score)
    else:
        _pruned_neighbours(matrix, k_eff, block_rows, dense, dense_weight, links, link_weight, idx, score,
                           max(candidates, k_eff), prune_terms, rescore_terms)
    return idx, score


def _exact_neighbours(matrix: sp.csr_matrix, k: int, block_rows: int, dense: np.ndarray | None, dense_weight: float,
                      links: sp.csr_matrix | None, link_weight: float, idx: np.ndarray, score: np.ndarray) -> None:
    n = matrix.shape[0]
    transposed = matrix.T.tocsc()
    for start in range(0, n, block_rows):
        stop = min(start + block_rows, n)
        sims = _block_scores(matrix, transposed, start, stop, dense, dense_weight, links, link_weight)
        _store_top(start, sims, k, idx, score)


def _block_scores(matrix: sp.csr_matrix, transposed: sp.csc_matrix, start: int, stop: int, dense: np.ndarray | None,
                  dense_weight: float, links: sp.csr_matrix | None, link_weight: float) -> np.ndarray:
    """The scores of rows ``start:stop`` against every row (dense, block x N); -1 for a row against itself."""
    sims = (matrix[start:stop] @ transposed).toarray()
    if dense is not None:
        sims *= 1 - dense_weight
        sims += dense_weight * (dense[start:stop] @ dense.T)
    if links is not None and link_weight:
        r, c = links[start:stop].nonzero()
        sims[r, c] += link_weight * (1 - sims[r, c])
    sims[np.arange(stop - start), np.arange(start, stop)] = -1.0  # never the episode itself
    return sims


def fold_neighbours(matrix: sp.csr_matrix, old: int, neigh_idx: np.ndarray, neigh_score: np.ndarray,
                    block_rows: int = 512, dense: np.ndarray | None = None, dense_weight: float = 0.0,
                    links: sp.csr_matrix | None = None, link_weight: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    """The neighbour lists of ``matrix`` whose first ``old`` rows have theirs in ``neigh_idx``/``neigh_score``.

    Each new row (``old:``) is scored against every row, exactly (as :func:`top_neighbours` up to its exact
    limit), a block of new rows at a time; the scores are symmetric, so the same block also says which
    earlier rows a new one enters: those whose k-th score it beats (or whose list has room) take it in.
    """
    n, k = matrix.shape[0], neigh_idx.shape[1]
    k_eff = min(k, max(n - 1, 0))
    idx = np.vstack([neigh_idx, np.full((n - old, k), -1, dtype=np.int32)])
    score = np.vstack([neigh_score, np.zeros((n - old, k), dtype=np.float32)])
    if k_eff == 0:
        return idx, score
    transposed = matrix.T.tocsc()
    for start in range(old, n, block_rows):
        stop = min(start + block_rows, n)
        sims = _block_scores(matrix, transposed, start, stop, dense, dense_weight, links, link_weight)
        _store_top(start, sims, k_eff, idx, score)
        # Rows before the block take in the block's rows that beat their k-th (later new rows get theirs above).
        kth = np.where(idx[:start, k_eff - 1] >= 0, score[:start, k_eff - 1], -np.inf)
        better = np.maximum(sims[:, :start], 0)
        rows = np.flatnonzero((better > kth).any(axis=0))
        if len(rows) == 0:
            continue
        cand_idx = np.hstack([idx[rows, :k_eff], np.broadcast_to(np.arange(start, stop, dtype=np.int32),
                                                                 (len(rows), stop - start))])
        cand_score = np.hstack([np.where(idx[rows, :k_eff] >= 0, score[rows, :k_eff], -np.inf), better[:, rows].T])
        order = np.argsort(-cand_score, axis=1, kind="stable")[:, :k_eff]  # an old neighbour wins a tie
        idx[rows, :k_eff] = np.take_along_axis(cand_idx, order, axis=1)
        score[rows, :k_eff] = np.maximum(np.take_along_axis(cand_score, order, axis=1), 0)
    return idx, score


def _pruned_neighbours(matrix: sp.csr_matrix, k: int, block_rows: int, dense: np.ndarray | None, dense_weight: float,
                       links: sp.csr_matrix | None, link_weight: float, idx: np.ndarray, score: np.ndarray,
                       candidates: int, prune_terms: int, rescore_terms: int = 0) -> None:
    n = matrix.shape[0]
    pruned = _keep_top_terms(matrix, prune_terms)
    pruned_t = pruned.T.tocsc()
    rescore = _keep_top_terms(matrix, rescore_terms) if rescore_terms else matrix
    block_rows = min(block_rows, 256)  # the block is made dense (rows x terms) for rescoring
    for start in range(0, n, block_rows):
        stop = min(start + block_rows, n)
        approx = (pruned[start:stop] @ pruned_t).tocsr()
        rows: list[np.ndarray] = []
        cols: list[np.ndarray] = []
        for r in range(stop - start):
            a, b = approx.indptr[r], approx.indptr[r + 1]
            cand = approx.indices[a:b]
            if b - a > candidates:
                cand = cand[np.argpartition(-approx.data[a:b], candidates)[:candidates]]
            if links is not None:
                cand = np.union1d(cand, links.indices[links.indptr[start + r]:links.indptr[start + r + 1]])
            cand = cand[cand != start + r]
            rows.append(np.full(len(cand), start + r, dtype=np.int64))
            cols.append(cand.astype(np.int64))
        pair_rows, pair_cols = np.concatenate(rows), np.concatenate(cols)
        exact = _pair_scores(rescore, start, stop, pair_rows, pair_cols, matrix[start:stop].toarray().ravel())
        if dense is not None:
            exact = (1 - dense_weight) * exact + dense_weight * np.einsum("ij,ij->i", dense[pair_rows], dense[pair_cols])
        if links is not None and link_weight:
            linked = np.asarray(links[pair_rows, pair_cols]).ravel() > 0
            exact[linked] += link_weight * (1 - exact[linked])
        width = max(len(c) for c in cols) if cols else 0
        sims = np.full((stop - start, max(width, k)), -1.0, dtype=np.float32)
        who = np.zeros_like(sims, dtype=np.int64)
        offset = 0
        for r, c in enumerate(cols):
            sims[r, :len(c)] = exact[offset:offset + len(c)]
            who[r, :len(c)] = c
            offset += len(c)
        part = np.argpartition(-sims, k - 1, axis=1)[:, :k]
        part_idx = np.take_along_axis(who, part, axis=1)
        part_scores = np.take_along_axis(sims, part, axis=1)
        part_idx[part_scores < 0] = -1
        _store(start, part_idx, part_scores, idx, score)


def _pair_scores(matrix: sp.csr_matrix, start: int, stop: int, rows: np.ndarray, cols: np.ndarray,
                 block: np.ndarray | None = None, chunk: int = 4_000_000) -> np.ndarray:
    """Dot products of the row pairs (rows[p], cols[p]) of ``matrix``, every rows[p] in ``start:stop``.

    The block's rows are made dense (block x terms; or given as ``block``, flattened), then each pair reads
    the candidate's nonzeros from it: one gather per nonzero, a chunk of about ``chunk`` nonzeros at a time.
    """
    block = matrix[start:stop].toarray().ravel() if block is None else block
    width = matrix.shape[1]
    lengths = (matrix.indptr[cols + 1] - matrix.indptr[cols]).astype(np.int64)
    out = np.zeros(len(rows), dtype=np.float32)
    ends = np.cumsum(lengths)
    a = 0
    while a < len(rows):
        b = int(np.searchsorted(ends, (ends[a - 1] if a else 0) + chunk, side="right"))
        b = max(b, a + 1)
        lens = lengths[a:b]
        total = int(lens.sum())
        if total:
            first = np.cumsum(lens) - lens  # each pair's offset in the gathered run
            pos = np.repeat(matrix.indptr[cols[a:b]].astype(np.int64) - first, lens) + np.arange(total)
            flat = np.repeat((rows[a:b] - start).astype(np.int64) * width, lens) + matrix.indices[pos]
            prod = block[flat] * matrix.data[pos]
            nonempty = lens > 0
            out[a:b][nonempty] = np.add.reduceat(prod, first[nonempty])
        a = b
    return out


def _store_top(start: int, sims: np.ndarray, k: int, idx: np.ndarray, score: np.ndarray) -> None:
    """Store the best ``k`` columns of each row of the dense block ``sims`` (rows ``start:``)."""
    part = np.argpartition(-sims, k, axis=1)[:, :k] if k < sims.shape[1] else np.argsort(-sims, axis=1)[:, :k]
    _store(start, part, np.take_along_axis(sims, part, axis=1), idx, score)


def _store(start: int, part: np.ndarray, part_scores: np.ndarray, idx: np.ndarray, score: np.ndarray) -> None:
    order = np.argsort(-part_scores, axis=1, kind="stable")
    k = part.shape[1]
    idx[start:start + len(part), :k] = np.take_along_axis(part, order, axis=1)
    score[start:start + len(part), :k] = np.maximum(np.take_along_axis(part_scores, order, axis=1), 0)


def same_params(saved: dict[str, Any], params: ModelParams) -> bool:
    """Whether a saved model's parameters (:meth:`SimilarModel.saved_params`) are ``params``, whatever it was
    fitted on (``digest``) and however many episodes were folded in since."""
    return {k: v for k, v in saved.items() if k not in ("digest", "folded")} == params.to_dict()


def fold_in_catalog(generations: Generations, catalog: Catalog, params: ModelParams,
                    share: float = FOLD_IN_SHARE, hashes: dict[str, str] | None = None) -> SimilarModel | None:
    """The saved model with the catalog's added episodes folded in (:meth:`SimilarModel.fold_in`), not saved;
    or None when the model must be refitted: other parameters or versions, an episode removed or changed,
    nothing added, too many folded in since the last fit (``share``), or a save without what fold-in needs.
    ``hashes`` is the catalog's :meth:`~podsearch.catalog.Catalog.hashes` when the caller has read them."""
    saved = SimilarModel.saved_params(generations)
    if not saved or not same_params(saved, params):
        return None
    hashes = catalog.hashes() if hashes is None else hashes
    try:
        model = SimilarModel.load(generations)
    except (IndexMissing, OSError, ValueError, KeyError, pickle.UnpicklingError) as exc:
        log.info("similar model: refit (the saved model does not load: %s)", exc)
        return None
    known = set(model.ids)
    if not known <= hashes.keys() or hashes_digest({i: hashes[i] for i in model.ids}) != model.digest:
        log.info("similar model: refit (episodes were removed or changed)")
        return None
    added = sorted(hashes.keys() - known)
    folded = model.folded + len(added)
    if not added or folded > share * (len(model.ids) - model.folded):
        log.info("similar model: refit (%d episodes to fold in, %d since the fit, limit %.0f%% of %d)", len(added),
                 folded, share * 100, len(model.ids) - model.folded)
        return None
    if not model.can_fold_in():
        log.info("similar model: refit (the saved model predates fold-in)")
        return None
    log.info("reindex: folding %d new episodes into the similarity model", len(added))
    started = time.perf_counter()
    folded_model = model.fold_in(episode_texts(catalog, added), hashes_digest(hashes))
    log.info("folded %d episodes into the similar model (%d since the fit) in %.1fs", len(added), folded,
             time.perf_counter() - started)
    return folded_model
