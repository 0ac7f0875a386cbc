"""The fitted model: its rows, precomputed neighbours and what weighs new episodes; fitting, folding in
and answering "which episodes are near this one"."""

from __future__ import annotations

import logging
import os
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from itertools import chain
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp
from sklearn.feature_extraction.text import CountVectorizer, TfidfTransformer
from sklearn.preprocessing import normalize

from ..catalog import Catalog
from ..errors import IndexMissing, NotFound, QueryError
from ..generations import Generations
from ..progress import Steps, no_step, stepped
from . import persist
from .features import PooledCounter, TermCounter, fold_lower, weigh_fields, weighted_fields
from .fields import EpisodeFields, episode_chunks, hashes_digest, text_print
from .guests import Guests, names_near_cues
from .neighbours import fold_neighbours, top_neighbours
from .params import ModelParams
from .reasons import Explainer, Row, bracketed_words, given_names, mention_reason, repeated_share, says_a_day, transcriber_notes
from .rerank import cue_windows, rerank, reranking
from .runs import RunCounter, Runs
from .signals import Mentions, episode_mentions, mentions_in, resolve_mentions
from .titles import TitleModel, joined
from .walk import list_graph, reciprocal_overlap, reciprocal_vectors, walk_at_members, window_links
from .weighting import Weighting, fit_lsa

log = logging.getLogger(__name__)
FIT_PROCS = 2  # processes that count the terms of a large fit's chunks (PooledCounter), at most one per CPU
FIT_PROCS_FROM = 5_000  # episodes from which a fit counts in those processes (below, starting them costs more)
WINDOWS_AT_ONCE = 5_000  # cue windows counted at once by a fit (_window_rows: a step of it)


@dataclass
class Neighbour:
    id: str
    score: float
    reasons: list[str] = field(default_factory=list)
    duplicate: bool = False



class SimilarModel:
    def __init__(self, params: ModelParams, ids: list[str], shows: list[str], vectorizer: CountVectorizer,
                 transformer: TfidfTransformer, matrix: sp.csr_matrix, noise: dict[str, np.ndarray],
                 neigh_idx: np.ndarray, neigh_score: np.ndarray, digest: str = "", svd: Any = None,
                 dense: np.ndarray | None = None, mentions: sp.csr_matrix | None = None,
                 numbers: list[int | None] | None = None, weighting: Weighting | None = None,
                 folded: int = 0, path: Path | None = None, titles: TitleModel | None = None,
                 person_names: dict[str, str] | None = None, cues: tuple[sp.csr_matrix, np.ndarray] | None = None,
                 show_titles: dict[str, str] | None = None, guests: Guests | None = None,
                 prints: list[str] | None = None, repeats: np.ndarray | None = None,
                 given_names: list[str] | None = None, notes: list[str] | None = None, runs: Runs | None = None,
                 in_runs: sp.csr_matrix | None = None, window_links: sp.csr_matrix | None = None) -> None:
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
        self.titles = titles  # the titles' own model (titles.py), or None when title_cosine_weight is 0
        self.person_names = person_names or {}  # person token of the vocabulary -> the name as written
        self.show_titles = show_titles or {}  # show id -> title, for "mentions Founders Talk episode 93"
        # The weighed cue windows and their episodes (rerank.py): kept by a fit for saving, read by fold-in only.
        self._cues = cues
        self.guests = guests  # who names another episode's guest near "episode" (guests.py), or None
        self.prints = prints or [""] * len(ids)  # each transcript's print (fields.text_print; "" short or unknown)
        # What tells the reasons a topic from a word in passing and a first name (reasons.repeated_share,
        # reasons.given_names); None from a model saved before them.
        self.repeats = repeats
        self.given_names = given_names
        self.notes = notes or []  # the transcribers' notes among the terms (reasons.transcriber_notes): no reasons
        # The runs said word for word in 3 or more recordings (intros, sponsor reads: runs.py) and, per row, the terms
        # it says only inside them (no reasons of it); None from a model saved before them.
        self.runs = runs
        self.in_runs = in_runs
        # N x N, (i, j): a cue window of i names j by topic (walk.py), with the window's cosine; or None.
        self.window_links = window_links
        # Each row's language (its primary code, "" unknown), for the reasons (a language's most common words are no
        # reason): known to a fit; a loaded model is told them by the catalog (service.Library.model), not saved.
        self.languages: list[str] | None = None
        self._explainer: Explainer | None = None

    # -- fitting --------------------------------------------------------------------------------
    @classmethod
    def fit(cls, catalog: Catalog, params: ModelParams | None = None,
            progress: Callable[[str], None] | None = None, hashes: dict[str, str] | None = None) -> SimilarModel:
        """Fit on every episode of ``catalog`` (``hashes``: its :meth:`~Catalog.hashes`, when already read), reading
        the texts a chunk of episodes at a time (:func:`episode_chunks`): the fit never holds every transcript."""
        hashes = catalog.hashes() if hashes is None else hashes
        # Forking a process that runs other threads (the server's) can deadlock the child: then one process.
        alone = threading.active_count() == 1
        procs = min(FIT_PROCS, os.cpu_count() or 1) if len(hashes) >= FIT_PROCS_FROM and alone else 1
        if procs > 1:
            log.info("similar model: the terms of %d episodes counted in %d processes", len(hashes), procs)
        chunks = episode_chunks(catalog, step=Steps(progress))
        return cls.fit_chunks(chunks, params, hashes_digest(hashes), progress, procs)

    @classmethod
    def fit_fields(cls, fields: tuple[Any, ...], params: ModelParams | None = None, digest: str = "",
                   progress: Callable[[str], None] | None = None) -> SimilarModel:
        """Fit on :class:`EpisodeFields` (or a plain tuple in its order: ids, shows, titles, notes, transcripts, ...)."""
        return cls.fit_chunks([fields], params, digest, progress)

    @classmethod
    def fit_chunks(cls, chunks: Iterable[tuple[Any, ...]], params: ModelParams | None = None, digest: str = "",
                   progress: Callable[[str], None] | None = None, procs: int = 1) -> SimilarModel:
        """Fit on episodes given as :class:`EpisodeFields` a chunk at a time: the same model as one chunk of them
        all. Of each chunk's notes, transcripts, people and links only their term counts and the episode numbers
        they name are kept. With ``procs`` > 1 the chunks are counted in that many other processes
        (:class:`PooledCounter`): the same model.

        ``progress`` is told each stage of the fit done ("vectorized", "weighted") and called with "step" at least
        about every second in between (:class:`~podsearch.progress.Steps`): where a stopped run ends."""
        params = params or ModelParams()
        counter: TermCounter | PooledCounter = TermCounter(params)
        if procs > 1:
            counter = PooledCounter(counter, procs)
        try:
            return cls._fit_counted(counter, chunks, params, digest, progress)
        finally:
            if isinstance(counter, PooledCounter):
                counter.close()

    @classmethod
    def _fit_counted(cls, counter: TermCounter | PooledCounter, chunks: Iterable[tuple[Any, ...]], params: ModelParams,
                     digest: str, progress: Callable[[str], None] | None) -> SimilarModel:
        started = time.perf_counter()
        step = Steps(progress)
        fields = EpisodeFields([], [], [], [], [], [], [], [], [], {}, {})  # what is kept: no long texts
        found: list[Mentions] = []
        near: list[set[str]] = []  # the names each episode's cue windows say (guests.py)
        windows: list[str] = []
        owners: list[int] = []
        numbered = languages = True
        prints: list[str] = []
        bracketed: Counter[str] = Counter()  # per word, the episodes writing it between square brackets
        said = RunCounter()  # each episode's words, for the runs it shares word for word with others (runs.py)
        for chunk in chunks:
            chunk = EpisodeFields(*chunk) if not isinstance(chunk, EpisodeFields) else chunk
            if not chunk.ids:
                continue
            counter.add(weighted_fields(chunk, params), step)
            fields.ids.extend(chunk.ids)
            fields.shows.extend(chunk.shows)
            fields.titles.extend(chunk.titles)
            marks = [text_print(t) for t in stepped(chunk.transcripts, step)]
            prints.extend(marks)
            said.add(chunk.titles, chunk.transcripts, chunk.notes, marks, step)
            for text in stepped(chunk.transcripts, step):
                bracketed.update(bracketed_words(text))
            languages = languages and bool(chunk.languages)
            fields.languages.extend(chunk.languages or [])
            numbered = numbered and chunk.numbers is not None
            fields.numbers.extend(chunk.numbers or [])  # type: ignore[union-attr]
            fields.show_titles.update(chunk.show_titles or {})  # type: ignore[union-attr]
            for token, name in (chunk.person_names or {}).items():
                fields.person_names.setdefault(token, name)  # type: ignore[union-attr]
            if params.mention_weight > 0 and chunk.numbers is not None:
                found.extend(mentions_in(f"{a} {b}") for a, b in stepped(zip(chunk.notes, chunk.transcripts), step))
            _add_windows(windows, owners, len(fields.ids) - len(chunk.ids), chunk, params, step)
            near.extend(_near_names(chunk, params, step))
            fields.people.extend(chunk.people if params.guest_weight > 0 else [])
        ids, shows = list(fields.ids), list(fields.shows)
        if not ids:
            raise IndexMissing("The catalog has no episodes; add feeds and run 'podsearch reindex'.")
        if not languages:
            fields.languages.clear()
        runs, only = said.finish(step)  # (before the counts are merged: its memory is let go first)
        vectorizer, counts = counter.finish(step)
        in_runs = runs.terms_of(only, vectorizer.vocabulary_, step)
        del only
        repeats = repeated_share(counts, params.transcript_weight or 1.0)
        notes = transcriber_notes(bracketed, vectorizer.vocabulary_, counts)
        if progress:
            progress("vectorized")
        weighting = Weighting(params, vectorizer.vocabulary_)
        matrix = weighting.rows(counts, shows, list(fields.languages), in_place=True, step=step)
        del counts
        transformer, noise = weighting.transformer, weighting.noise
        svd, dense = fit_lsa(matrix, params, step)
        titles = (TitleModel.fit(list(fields.titles), shows, list(fields.languages or []), params)
                  if params.title_cosine_weight > 0 else None)
        mentions = None
        if params.mention_weight > 0 and numbered:
            named = resolve_mentions(found, shows, fields.numbers or [], fields.show_titles)
            mentions = named if named.nnz else None
        if progress:
            progress("weighted")
        links = ((mentions + mentions.T) > 0).astype(np.float32).tocsr() if mentions is not None else None
        text_rows = _joined(matrix, titles, params)
        neigh_idx, neigh_score = top_neighbours(text_rows, params.neighbours, params.block_rows,
                                                dense, params.lsa_weight, links, params.mention_weight, step=step)
        cues = None
        if reranking(params):
            owner = np.array(owners, dtype=np.int64)
            cues = (_window_rows(vectorizer, weighting, windows, owner, shows, list(fields.languages), params,
                                 step=step), owner)
            del windows
            neigh_idx, neigh_score = rerank(neigh_idx, text_rows, dense, params, matrix, *cues, links, step=step)
        guests = None
        if params.guest_weight > 0:
            guests = Guests(params.guest_share)
            guests.add(0, shows, [p.split() for p in fields.people], near, fields.person_names or {},
                       fields.numbers if numbered else [None] * len(ids), step)
        model = cls(params, ids, shows, vectorizer, transformer, matrix, noise, neigh_idx, neigh_score, digest,
                    svd, dense, mentions, list(fields.numbers) if numbered else None, weighting,
                    titles=titles, person_names=_names(fields, vectorizer.vocabulary_), cues=cues,
                    show_titles=_show_titles(fields, shows), guests=guests, prints=prints, repeats=repeats,
                    given_names=sorted(given_names((fields.person_names or {}).values())), notes=notes,
                    runs=runs, in_runs=in_runs, window_links=_window_links(cues, matrix, shows, params, step=step))
        if fields.languages and len(fields.languages) == len(ids):
            model.languages = list(fields.languages)
        model._lift_guests(stepped(range(len(ids)), step))
        model._last_stage(range(len(ids)), step)
        log.info("fitted similar model on %d episodes, %d terms in %.1fs", len(ids), len(vectorizer.vocabulary_),
                 time.perf_counter() - started)
        return model

    # -- persistence (persist.py) ---------------------------------------------------------------
    def save(self, generations: Generations) -> Path:
        return persist.save(self, generations)

    @classmethod
    def load(cls, generations: Generations) -> SimilarModel:
        return cls(**persist.load_parts(generations))

    # -- fold-in ----------------------------------------------------------------------------------
    def can_fold_in(self) -> bool:
        """Whether this model holds all it needs to weigh new episodes as its fit did (older saves do not)."""
        w = self.weighting
        if self.params.show_idf and w.show_freqs is None:
            w.show_freqs = persist.load_show_freqs(self.path)
        if reranking(self.params) and self._cues is None:
            self._cues = persist.load_cues(self.path)
        return (w.noise is not None and (not self.params.show_idf or w.show_freqs is not None)
                and (self.params.bm25_k1 <= 0 or w.mean_length is not None)
                and (not reranking(self.params) or self._cues is not None))

    @property
    def cues(self) -> tuple[sp.csr_matrix, np.ndarray] | None:
        """The weighed cue windows and their episodes (rerank.py), when the fit made them (for saving)."""
        if self._cues is None and reranking(self.params) and self.path is not None:
            self._cues = persist.load_cues(self.path)
        return self._cues

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
        weighted = weighted_fields(fields, params)
        stacked = self.vectorizer.transform(chain.from_iterable(texts for texts, _ in weighted)).tocsr()
        counts = weigh_fields(stacked, [w for _, w in weighted], m, params.field_sublinear)
        rows = self.weighting.rows(counts, new_shows, list(fields.languages or []), in_place=True)
        matrix = sp.vstack([self.matrix, rows], format="csr", dtype=np.float32)
        dense = self.dense
        if self.svd is not None and dense is not None:
            dense = np.vstack([dense, normalize(self.svd.transform(rows)).astype(np.float32)])
        titles = self.titles
        if titles is not None:
            new_titles = titles.rows(list(fields.titles), new_shows, list(fields.languages or []))
            titles = TitleModel(titles.vectorizer, titles.weighting,
                                sp.vstack([titles.matrix, new_titles], format="csr", dtype=np.float32))
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
        text_rows = _joined(matrix, titles, params)
        neigh_idx, neigh_score = fold_neighbours(text_rows, old, self.neigh_idx, self.neigh_score, params.block_rows,
                                                 dense, params.lsa_weight, links, params.mention_weight)
        cues = None
        lift: Iterable[int] = range(old, n)  # the lists a guest may lift: the new ones, and those reranked
        if reranking(params):
            texts: list[str] = []
            owners: list[int] = []
            _add_windows(texts, owners, old, fields, params)
            owner = np.array(owners, dtype=np.int64)
            new_windows = _window_rows(self.vectorizer, self.weighting, texts, owner, new_shows,
                                       list(fields.languages or []), params, offset=old)
            old_windows, old_owner = self._cues  # type: ignore[misc]  # loaded by can_fold_in
            cues = (sp.vstack([old_windows, new_windows], format="csr", dtype=np.float32), np.r_[old_owner, owner])
            changed = np.r_[np.flatnonzero((neigh_idx[:old] != self.neigh_idx).any(axis=1)), np.arange(old, n)]
            reranked_idx, reranked_score = rerank(neigh_idx, text_rows, dense, params, matrix, *cues, links, changed)
            neigh_idx[changed], neigh_score[changed] = reranked_idx[changed], reranked_score[changed]
            lift = changed.tolist()
        guests = self.guests.copy() if self.guests is not None else None
        if guests is not None:
            guests.add(old, new_shows, [p.split() for p in fields.people], _near_names(fields, params),
                       fields.person_names or {}, numbers[old:])
        model = SimilarModel(params, ids, shows, self.vectorizer, self.transformer, matrix, self.noise, neigh_idx,
                             neigh_score, digest, self.svd, dense, mentions, numbers, self.weighting,
                             self.folded + m, self.path, titles,
                             {**_names(fields, self.vectorizer.vocabulary_), **self.person_names}, cues,
                             {**self.show_titles, **_show_titles(fields, new_shows)}, guests,
                             self.prints + [text_print(t) for t in fields.transcripts], self.repeats,
                             self.given_names, self.notes, self.runs)
        if self.runs is not None and self.in_runs is not None:  # the new episodes read against the fit's runs
            new = self.runs.of_texts(fields.titles, fields.transcripts, fields.notes, self.vectorizer.vocabulary_)
            model.in_runs = sp.vstack([self.in_runs, new], format="csr")
        if self.languages is not None and fields.languages and len(fields.languages) == m:
            model.languages = self.languages + list(fields.languages)
        if self.window_links is not None:  # the new episodes' windows; an old window naming a new one waits for a refit
            links = self.window_links.copy()
            links.resize((n, n))
            model.window_links = (links + _window_links(cues, matrix, shows, params, range(old, n))).tocsr()
        model._lift_guests(lift)
        model._last_stage(lift)
        return model

    @staticmethod
    def saved_params(generations: Generations) -> dict[str, Any] | None:
        return persist.saved_params(generations)

    # -- answering ------------------------------------------------------------------------------
    def similar(self, episode_id: str, k: int = 10, *, same_show: bool = True, shows: list[str] | None = None,
                exclude_shows: list[str] | None = None, min_score: float = 0.0,
                n_reasons: int = 5) -> tuple[list[Neighbour], list[Neighbour]]:
        """The k nearest episodes (and the near-duplicates, flagged apart)."""
        i = self.position.get(episode_id)
        if i is None:
            raise NotFound.unknown("episode", episode_id)
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

        For an episode, the scores it is ranked by: the episodes it names by number or that name it ("episode
        159") get ``score + mention_weight * (1 - score)``, and with the lists reranked (rerank.py), the members
        of its list score as the list says, the others ``(1 - prf_weight) * score`` (below every member).
        ``mentions=False``: the text-only score (what decides near-duplicates).
        """
        if isinstance(vec, (int, np.integer)):
            i = int(vec)
            sims = self._text_sims(i)
            lsa = self.dense[i] if self.dense is not None else None
        else:
            i = None
            sims = (self.matrix @ vec.T).toarray().ravel()
            lsa = normalize(self.svd.transform(vec)).astype(np.float32)[0] if self.svd is not None else None
        if lsa is not None:
            w = self.params.lsa_weight
            sims = (1 - w) * sims + w * (self.dense @ lsa)
        if mentions and i is not None:
            sims = self._as_listed(i, sims)
        return sims

    def _as_listed(self, i: int, sims: np.ndarray, cols: np.ndarray | None = None, guests: bool = True,
                   last: bool = True, windows: bool = True) -> np.ndarray:
        """Episode ``i``'s blended text scores of every episode (or of ``cols``) as its list ranks them: with the
        lists reranked, times ``1 - prf_weight``; the episodes it names by number or that name it lifted by the
        mention weight, those whose guests it names (``guests``) by the guest weight; with the lists' last stage
        (``last``, walk.py), times ``1 - walk_weight``, and those a cue window of it names (``windows``) lifted by the
        window weight, then times ``1 - reciprocal_weight`` (``windows`` too: the stage's last step); its list's
        members at their list scores."""
        p = self.params
        if reranking(p):
            sims *= 1 - p.prf_weight
        if self.mentions is not None:
            at = _positions(np.union1d(self.mentions[i].indices, self._named_by[i].indices), cols)
            sims[at] += p.mention_weight * (1 - sims[at])
        if guests and self.guests is not None and p.guest_weight > 0:
            at = _positions(self.guests.named(i), cols)
            sims[at] += p.guest_weight * (1 - sims[at])
        if last and p.walk_weight > 0:
            sims *= 1 - p.walk_weight
        if last and windows and self.window_links is not None and p.window_weight > 0:
            at = _positions(self.window_links[i].indices, cols)
            sims[at] += p.window_weight * (1 - sims[at])
        if last and windows and p.reciprocal_weight > 0:
            sims *= 1 - p.reciprocal_weight
        if reranking(p):
            members = self.neigh_idx[i] >= 0
            listed, scores = self.neigh_idx[i][members], self.neigh_score[i][members]
            if cols is None:
                sims[listed] = scores
            else:
                where = {int(j): k for k, j in enumerate(listed)}
                for k, j in enumerate(cols.tolist()):
                    if j in where:
                        sims[k] = scores[where[j]]
        return sims

    def _lift_guests(self, rows: Iterable[int]) -> None:
        """Lift, in the lists of ``rows``, the episodes whose guests each names (guests.py): each scored as its
        list ranks it otherwise (:meth:`_as_listed`: a member at its list score), then ``s + guest_weight *
        (1 - s)``; a lifted episode that beats a list's last takes its place."""
        if self.guests is None or self.params.guest_weight <= 0:
            return
        w = self.params.guest_weight
        for i in rows:
            named = self.guests.named(i)
            if len(named) == 0:
                continue
            sims = self._text_sims(i, named)
            if self.dense is not None:
                lw = self.params.lsa_weight
                sims = (1 - lw) * sims + lw * (self.dense[named] @ self.dense[i])
            lifted = self._as_listed(i, sims.astype(np.float32), named, guests=False, last=False)
            lifted += w * (1 - lifted)
            self._merge(i, named, lifted)

    def _merge(self, i: int, named: np.ndarray, lifted: np.ndarray) -> None:
        """Episode ``i``'s list with ``named`` at the scores ``lifted`` (members or not), the best ``neighbours`` kept."""
        k = self.neigh_idx.shape[1]
        members = self.neigh_idx[i] >= 0
        keep = members & ~np.isin(self.neigh_idx[i], named)
        idx = np.r_[self.neigh_idx[i][keep], named].astype(np.int32)
        score = np.r_[self.neigh_score[i][keep], lifted].astype(np.float32)
        order = np.argsort(-score, kind="stable")[:k]
        self.neigh_idx[i] = -1
        self.neigh_score[i] = 0
        self.neigh_idx[i, :len(order)], self.neigh_score[i, :len(order)] = idx[order], np.maximum(score[order], 0)

    def _last_stage(self, rows: Iterable[int], step: Callable[[], None] = no_step) -> None:
        """The lists of ``rows`` after the walk over the lists and with the episodes their cue windows name (walk.py):
        each member's score mixed with the walk's mass on it, then each named episode scored as :meth:`_as_listed`
        ranks it otherwise and lifted to ``s + window_weight * (1 - s)``, then, when on, each member's score mixed with
        the overlap of the two episodes' reciprocal sets (``step()`` before each block of the walk, each episode named
        and each block of overlaps: a fit's stop)."""
        p = self.params
        at = np.asarray(list(rows), dtype=np.int64)
        if len(at) == 0:
            return
        if p.walk_weight > 0:
            graph = list_graph(self.neigh_idx, self.neigh_score, p.walk_neighbours)
            self._mix(at, walk_at_members(graph, self.neigh_idx, at, p.walk_alpha, p.walk_steps, step), p.walk_weight)
        if self.window_links is not None and p.window_weight > 0:
            self._lift_windows(at, step)
        if p.reciprocal_weight > 0:
            vectors = reciprocal_vectors(self.neigh_idx, self.neigh_score, p.reciprocal_neighbours, p.reciprocal_expand)
            overlap = reciprocal_overlap(vectors, self.neigh_idx, at, step)
            for a, i in enumerate(at.tolist()):  # an episode it names, or that names it, counts as reciprocal
                overlap[a, np.isin(self.neigh_idx[i], self._named(i))] = 1
            self._mix(at, overlap, p.reciprocal_weight)

    def _mix(self, at: np.ndarray, signal: np.ndarray, weight: float) -> None:
        """The lists of ``at`` with each member's score mixed with ``signal`` (rows of ``at`` x list places),
        ``(1 - weight) s + weight x``, and reordered."""
        members = self.neigh_idx[at] >= 0
        mixed = np.where(members, (1 - weight) * self.neigh_score[at] + weight * signal, -np.inf)
        order = np.argsort(-mixed, axis=1, kind="stable")
        self.neigh_idx[at] = np.where(np.take_along_axis(members, order, axis=1),
                                      np.take_along_axis(self.neigh_idx[at], order, axis=1), -1)
        self.neigh_score[at] = np.maximum(np.take_along_axis(mixed, order, axis=1), 0)

    def _named(self, i: int) -> np.ndarray:
        """The episodes ``i`` names by number, that name it, whose guest it names or that a cue window of it names."""
        parts = [self.guests.named(i) if self.guests is not None else np.zeros(0, dtype=np.int64)]
        if self.mentions is not None:
            parts += [self.mentions[i].indices, self._named_by[i].indices]
        if self.window_links is not None:
            parts.append(self.window_links[i].indices)
        return np.unique(np.concatenate(parts).astype(np.int64))

    def _lift_windows(self, at: np.ndarray, step: Callable[[], None] = no_step) -> None:
        """Each episode a cue window of ``at`` names, scored as :meth:`_as_listed` ranks it otherwise and lifted to
        ``s + window_weight * (1 - s)``, merged into the list."""
        p = self.params
        for i in stepped(at.tolist(), step):
            named = self.window_links[i].indices
            if len(named) == 0:
                continue
            named = np.sort(named)
            sims = self._text_sims(i, named)
            if self.dense is not None:
                lw = p.lsa_weight
                sims = (1 - lw) * sims + lw * (self.dense[named] @ self.dense[i])
            lifted = self._as_listed(i, sims.astype(np.float32), named, windows=False)
            lifted += p.window_weight * (1 - lifted)
            self._merge(i, named, lifted)

    @property
    def _named_by(self) -> sp.csr_matrix:
        if getattr(self, "_named_by_cache", None) is None:
            self._named_by_cache = self.mentions.T.tocsr()
        return self._named_by_cache

    def _text_sims(self, i: int, rows: np.ndarray | None = None) -> np.ndarray:
        """The TF-IDF part of the scores of episode ``i`` against every episode (or ``rows``): the main cosine,
        and with a title model, ``(main + w * title cosine) / (1 + w)``; rescaling the matrices once would
        double their memory in a server."""
        main = self.matrix if rows is None else self.matrix[rows]
        sims = (main @ self.matrix[i].T).toarray().ravel()
        w = self.params.title_cosine_weight
        if self.titles is not None and w > 0:
            titles = self.titles.matrix if rows is None else self.titles.matrix[rows]
            sims = (sims + w * (titles @ self.titles.matrix[i].T).toarray().ravel()) / (1 + w)
        return sims

    def text_score(self, i: int, j: int) -> float:
        """The score of the pair from their text alone (no mention bonus): what decides near-duplicates."""
        score = float(self._text_sims(i, np.array([j]))[0])
        if self.dense is not None:
            w = self.params.lsa_weight
            score = (1 - w) * score + w * float(self.dense[i] @ self.dense[j])
        return score

    def mention_reason(self, i: int, j: int) -> str | None:
        return mention_reason(self.mentions, self.numbers, i, j, self.shows, self.show_titles)

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
        base = query_vec if query_vec is not None else (Row.of(self.matrix, origin) if origin is not None else None)
        explain = self.explainer.about(self.matrix, base, idx.tolist(), origin) if base is not None else None
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
            reasons = explain(j, n_reasons) if explain is not None else []
            mention = self.mention_reason(origin, j) if origin is not None and query_vec is None else None
            guest = self.guests.name(origin, j) if self.guests is not None and origin is not None else None
            guest = None if guest and says_a_day(guest) else guest  # ("On Wednesday: ...", read as a speaker's label)
            if mention or guest:
                first = [r for r in (mention, guest) if r]
                reasons = [*first, *(r for r in reasons if r not in first)][:n_reasons]
            item = Neighbour(self.ids[j], round(float(score), 4), reasons)
            if flag_duplicates and (self._same_recording(origin, j) or (
                    score >= self._duplicate_floor and self.text_score(origin, j) >= self.params.duplicate_threshold)):
                item.duplicate = True
                duplicates.append(item)
                continue
            if item.score < min_score:  # the score as shown, so that min_score=<a shown score> keeps it
                break
            picked.append(item)
            if len(picked) >= k:
                break
        return picked, duplicates

    def _same_recording(self, i: int | None, j: int) -> bool:
        """Whether two episodes hold the same transcript (``fields.text_print``): a near-duplicate whatever their
        scores. A "best of" feed's byte-for-byte copy of an episode scored 0.797 against it, below the text
        threshold, since each show weighs its words by its own frequencies; it was the episode's first neighbour."""
        return i is not None and bool(self.prints[i]) and self.prints[i] == self.prints[j]

    @property
    def _duplicate_floor(self) -> float:
        """No list score under this has a text score at the duplicate threshold: reranking mixes in feedback at
        ``prf_weight`` and the last stage a walk at ``walk_weight`` (``s >= (1 - prf_weight) (1 - walk_weight) text``),
        and each only ever lifts the rest."""
        p = self.params
        return (p.duplicate_threshold * (1 - p.prf_weight if reranking(p) else 1) * (1 - max(p.walk_weight, 0))
                * (1 - max(p.reciprocal_weight, 0)))

    @property
    def explainer(self) -> Explainer:
        """The reasons' reading of the terms (reasons.py), made once per model."""
        if self._explainer is None:
            self._explainer = Explainer(self.terms, self.person_names, self.shows, self.show_titles,
                                        self.vectorizer.vocabulary_, self.repeats,
                                        frozenset(self.given_names) if self.given_names is not None else None,
                                        frozenset(self.notes), self.languages, self.in_runs)
        return self._explainer

    def warm(self) -> None:
        """Make what the first answer's reasons would otherwise make (about a second at 10,000 episodes)."""
        self.explainer.warm(self.matrix)

    def reasons(self, base: Row | sp.csr_matrix, j: int, n: int = 5) -> list[str]:
        """What ``base`` (a row or a vectorized text) and episode ``j`` are both about (reasons.py)."""
        return self.explainer.reasons(self.matrix, base, j, n)


def _joined(matrix: sp.csr_matrix, titles: TitleModel | None, params: ModelParams) -> sp.csr_matrix:
    return joined(matrix, titles.matrix if titles is not None else None, params.title_cosine_weight)


def _window_links(cues: tuple[sp.csr_matrix, np.ndarray] | None, matrix: sp.csr_matrix, shows: list[str],
                  params: ModelParams, rows: Iterable[int] | None = None,
                  step: Callable[[], None] = no_step) -> sp.csr_matrix | None:
    """The episodes of their shows the cue windows (of ``rows``) name by topic (walk.py), or None when off."""
    if cues is None or params.window_weight <= 0 or params.window_top <= 0:
        return None
    return window_links(cues[0], cues[1], matrix, shows, params.window_top, params.window_floor,
                        None if rows is None else list(rows), step)


def _names(fields: EpisodeFields, vocabulary: dict[str, int]) -> dict[str, str]:
    """The names of the people of ``fields`` whose tokens are terms of the model."""
    folded = ((fold_lower(t), name) for t, name in (fields.person_names or {}).items())  # as the vocabulary is
    return {t: name for t, name in folded if t in vocabulary}


def _show_titles(fields: EpisodeFields, shows: list[str]) -> dict[str, str]:
    """The titles of the shows of ``shows`` that ``fields`` knows."""
    titles = fields.show_titles or {}
    return {show: titles[show] for show in set(shows) if titles.get(show)}


def _near_names(fields: EpisodeFields, params: ModelParams, step: Callable[[], None] = no_step) -> list[set[str]]:
    """What the cue windows of each episode of ``fields`` name (guests.py); [] when guests are off."""
    if params.guest_weight <= 0:
        return []
    return [names_near_cues(f"{notes}\n{transcript}", params.guest_window)
            for notes, transcript in stepped(zip(fields.notes, fields.transcripts), step)]


def _positions(wanted: np.ndarray, cols: np.ndarray | None) -> np.ndarray:
    """Where the episodes ``wanted`` are in a score array of every episode (``cols`` None) or of ``cols``."""
    return wanted if cols is None else np.flatnonzero(np.isin(cols, wanted))


def _add_windows(texts: list[str], owners: list[int], offset: int, fields: EpisodeFields, params: ModelParams,
                 step: Callable[[], None] = no_step) -> None:
    """The cue windows (rerank.py) of the notes and transcripts of ``fields``, whose first episode is at ``offset``."""
    if not reranking(params) or params.cue_weight <= 0 or params.cue_width <= 0:
        return
    for k, (notes, transcript) in enumerate(stepped(zip(fields.notes, fields.transcripts), step)):
        found = cue_windows(f"{notes} {transcript}", params.cue_width)
        texts.extend(found)
        owners.extend([offset + k] * len(found))


def _window_rows(vectorizer: CountVectorizer, weighting: Weighting, texts: list[str], owner: np.ndarray,
                 shows: list[str], languages: list[str],
                 params: ModelParams, offset: int = 0, step: Callable[[], None] = no_step) -> sp.csr_matrix:
    """The cue windows weighed as episode rows by the fit's weighting (``shows``/``languages`` from ``offset``)."""
    if not texts:
        return sp.csr_matrix((0, len(weighting.vocabulary)), dtype=np.float32)
    # (a slice of the windows at a time, each a step: the same rows as one transform of them all)
    counted = [vectorizer.transform(texts[a:a + WINDOWS_AT_ONCE]).tocsr()
               for a in stepped(range(0, len(texts), WINDOWS_AT_ONCE), step)]
    counts = weigh_fields(sp.vstack(counted, format="csr"), [1.0], len(texts), params.field_sublinear)
    del counted
    local = (owner - offset).tolist()
    return weighting.rows(counts, [shows[o] for o in local], [languages[o] for o in local] if languages else [],
                         in_place=True, step=step)
