"""Term counts: every field of every episode tokenised in one pass, each field weighted (and saturated)."""

from __future__ import annotations

import multiprocessing
import re
from collections import deque
from collections.abc import Callable
from itertools import chain
from typing import Any
from urllib.parse import unquote

import numpy as np
import scipy.sparse as sp
from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS, CountVectorizer

from ..languages import stop_words, strip_accents
from ..procs import bind_children_to_me
from ..progress import no_step, stepped
from .fields import EpisodeFields
from .params import ModelParams
from .signals import phrases, terms


def weighted_counts(fields: list[tuple[list[str], float]], params: ModelParams) -> tuple[CountVectorizer, sp.csr_matrix]:
    """Term counts of each episode, every field weighted, from one tokenising pass over all the text.

    The vocabulary keeps terms in at least ``min_df`` and at most ``max_df`` of the episodes (any field),
    the ``max_features`` most frequent of them; the returned vectorizer maps new text onto it. With
    ``field_sublinear``, each field's count is ``1 + log(tf)`` before it is weighted.
    """
    counter = TermCounter(params)
    counter.add(fields)
    return counter.finish()


class TermCounter:
    """:func:`weighted_counts` over episodes given a chunk at a time (``add``), so that a fit never holds every
    transcript: each chunk's texts are tokenised, counted against the vocabulary seen so far (new terms get
    the next column) and weighted; ``finish`` puts the columns in the vocabulary's alphabetical order and
    selects the terms. The result is the same matrix and vocabulary as one ``CountVectorizer`` over all the
    text (its counts, then the same per-field weighting, which works row by row)."""

    def __init__(self, params: ModelParams) -> None:
        self.params = params
        # (a tokenizer, not scikit-learn's token_pattern: a term keeps its combining marks, signals.terms, and a text
        # without any is read by the pattern alone, as fast as before)
        self.options: dict[str, Any] = dict(stop_words="english", preprocessor=model_text, tokenizer=terms,
                                            token_pattern=None, dtype=np.float32)
        self.analyze = CountVectorizer(**self.options).build_analyzer()
        self.vocabulary: dict[str, int] = {}
        self.chunks: list[sp.csr_matrix] = []

    def add(self, fields: list[tuple[list[str], float]], step: Callable[[], None] = no_step) -> None:
        """Count the episodes of one chunk: ``fields`` as :func:`weighted_fields` gives them (``step()`` before each
        text)."""
        n = len(fields[0][0])
        vocabulary, analyze = self.vocabulary, self.analyze
        columns: list[int] = []
        values: list[int] = []
        indptr = [0]
        for text in stepped(chain.from_iterable(texts for texts, _ in fields), step):
            counts: dict[int, int] = {}
            for term in analyze(text):
                j = vocabulary.get(term)
                if j is None:
                    j = vocabulary[term] = len(vocabulary)
                counts[j] = counts.get(j, 0) + 1
            columns.extend(counts)
            values.extend(counts.values())
            indptr.append(len(columns))
        stacked = sp.csr_matrix((np.asarray(values, dtype=np.float32), np.asarray(columns, dtype=np.int64),
                                 np.asarray(indptr, dtype=np.int64)), shape=(len(indptr) - 1, len(vocabulary)))
        stacked.sort_indices()
        self.chunks.append(weigh_fields(stacked, [weight for _, weight in fields], n, self.params.field_sublinear))

    def add_counted(self, terms: list[str], chunk: sp.csr_matrix) -> None:
        """A chunk counted apart (:func:`count_chunk`): its columns are ``terms``, renumbered here to this
        counter's, new terms getting the next columns, as :meth:`add` numbers them."""
        vocabulary = self.vocabulary
        columns = np.fromiter((vocabulary.setdefault(t, len(vocabulary)) for t in terms), dtype=np.int64,
                              count=len(terms))
        self.chunks.append(sp.csr_matrix((chunk.data, columns[chunk.indices], chunk.indptr),
                                         shape=(chunk.shape[0], len(vocabulary))))

    def finish(self, step: Callable[[], None] = no_step) -> tuple[CountVectorizer, sp.csr_matrix]:
        """The vectorizer of the selected terms and every episode's weighted counts over them.

        The terms are chosen from the chunks' document frequencies and totals, then each chunk's kept entries are
        copied into the one matrix and the chunk dropped: the matrix of every term is never built (at 100,000
        episodes it and its copies were gigabytes, the fit's peak)."""
        params, width = self.params, len(self.vocabulary)
        names = np.array(sorted(self.vocabulary), dtype=object)
        order = np.empty(width, dtype=np.int64)  # old column -> its place in alphabetical order
        step()
        order[np.fromiter((self.vocabulary[t] for t in names), dtype=np.int64, count=width)] = np.arange(width)
        self.vocabulary = {}
        n = sum(chunk.shape[0] for chunk in self.chunks)
        df = np.zeros(width, dtype=np.int64)
        for chunk in stepped(self.chunks, step):  # a chunk's columns are the terms seen up to it: the first of ``order``
            df[order[:chunk.shape[1]]] += np.bincount(chunk.indices, minlength=chunk.shape[1])
        min_df = params.min_df if n >= 20 else 1
        max_df = params.max_df * n if n >= 20 else n
        keep = np.flatnonzero((df >= min_df) & (df <= max_df))
        if len(keep) == 0:  # every word in (nearly) every episode, e.g. templated titles and no transcripts
            keep = np.flatnonzero(df > 0)
        if len(keep) > params.max_features:
            totals = np.zeros(width, dtype=np.float32)  # summed as scipy sums a column: float32, row after row
            for chunk in stepped(self.chunks, step):
                np.add.at(totals, order[chunk.indices], chunk.data)
            keep = np.sort(keep[np.argsort(-totals[keep], kind="stable")[: params.max_features]])
        terms = names[keep]
        step()
        vectorizer = CountVectorizer(**self.options, vocabulary={str(t): i for i, t in enumerate(terms)}).fit([""])
        step()
        column = np.full(width, -1, dtype=np.int64)  # alphabetical column -> kept column
        column[keep] = np.arange(len(keep))
        column = column[order]  # old column -> kept column
        return vectorizer, self._kept(column, n, len(keep), step)

    def _kept(self, column: np.ndarray, n: int, width: int, step: Callable[[], None] = no_step) -> sp.csr_matrix:
        """The chunks one after the other with their columns renumbered by ``column`` (-1: dropped), each chunk
        freed once copied."""
        nnz = sum(int(np.count_nonzero(column[chunk.indices] >= 0)) for chunk in self.chunks)
        index = np.int32 if max(nnz, width) < np.iinfo(np.int32).max else np.int64
        data, indices = np.empty(nnz, dtype=np.float32), np.empty(nnz, dtype=index)
        indptr = np.zeros(n + 1, dtype=index)
        row = at = 0
        while self.chunks:
            step()
            chunk = self.chunks.pop(0)
            cols = column[chunk.indices]
            kept = cols >= 0
            before = np.concatenate(([0], np.cumsum(kept)))  # kept entries before each entry
            size = int(before[-1])
            data[at:at + size] = chunk.data[kept]
            indices[at:at + size] = cols[kept]
            rows = chunk.shape[0]
            indptr[row + 1:row + rows + 1] = at + before[chunk.indptr[1:]]
            row, at = row + rows, at + size
            del chunk, cols, kept, before
        counts = sp.csr_matrix((data, indices, indptr), shape=(n, width), copy=False)
        counts.sort_indices()
        return counts


def count_chunk(params: ModelParams, fields: list[tuple[list[str], float]]) -> tuple[list[str], sp.csr_matrix]:
    """One chunk counted on its own: its terms in column order and its weighted counts (for ``add_counted``)."""
    counter = TermCounter(params)
    counter.add(fields)
    return list(counter.vocabulary), counter.chunks[0]


TAKE_POLL = 0.2  # seconds between two steps while a chunk is counted in another process (PooledCounter)


class PooledCounter:
    """:class:`TermCounter` whose chunks are tokenised and counted in ``procs`` other processes while this one reads
    the next, and merged in their order: the same counts and vocabulary (tokenising is most of a large fit's
    time). The processes are forked (only by a process running no other thread: see the caller), die with it,
    and end with the counter; a chunk's result is waited for once ``2 * procs`` are in flight, so memory holds
    a few chunks' texts, not the corpus."""

    def __init__(self, counter: TermCounter, procs: int) -> None:
        self.counter = counter
        self.limit = 2 * procs
        self.pending: deque[Any] = deque()
        bind_children_to_me()  # the counting processes must not outlive a killed fit (procs.py)
        self.pool = multiprocessing.get_context("fork").Pool(procs)
        self.closed = False

    def add(self, fields: list[tuple[list[str], float]], step: Callable[[], None] = no_step) -> None:
        self.pending.append(self.pool.apply_async(count_chunk, (self.counter.params, fields)))
        while len(self.pending) >= self.limit:
            self._take(step)

    def _take(self, step: Callable[[], None]) -> None:
        """The first chunk's counts, merged; ``step()`` every :data:`TAKE_POLL` s while they are counted."""
        while True:
            try:
                counted = self.pending[0].get(TAKE_POLL)
                break
            except multiprocessing.TimeoutError:
                step()
        self.pending.popleft()
        self.counter.add_counted(*counted)

    def finish(self, step: Callable[[], None] = no_step) -> tuple[CountVectorizer, sp.csr_matrix]:
        while self.pending:
            self._take(step)
        self.close()
        return self.counter.finish(step)

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            self.pool.terminate()
            self.pool.join()


# Link text: a web address (with its scheme or "www.", or a host and a path: "tinyurl.com/heizlast") and an e-mail
# address.
LINK_TEXT = re.compile(r"(?P<url>(?:https?://|www\.)[^\s<>\"'()\[\]]+)"
                       r"|(?P<mail>[\w.+-]+@[\w-]+(?:\.[\w-]+)+)"
                       r"|(?P<path>\b[\w-]+(?:\.[\w-]+)*\.[a-z]{2,6}/[^\s<>\"'()\[\]]*)", re.IGNORECASE)


def model_text(text: str) -> str:
    """What the model reads of a text: :func:`fold_lower` of it with its links read as their words (:func:`plain_links`).
    Until 5 December 2026 the pieces of a link's query string, of its percent-encoded letters and of e-mail addresses
    were terms, and reasons: "c3", "e3", "a1" (Portuguese and Japanese letters in links), "si" (YouTube's "?si="),
    "gmail"."""
    return fold_lower(plain_links(text))


def _plain_link(m: re.Match[str]) -> str:
    if m.group("mail"):
        return " "
    link = m.group(0).split("?", 1)[0].split("#", 1)[0]
    return f" {unquote(link)} " if "%" in link else f" {link} "


_MARKS = re.compile(r"[/@]")  # what a link holds (or "www."): only the words around one are read again
_SPACE = re.compile(r"\s")


def plain_links(text: str) -> str:
    """``text`` with each link (:data:`LINK_TEXT`) cut at its query string or fragment and its percent-encoded letters
    decoded (``Informa%C3%A7%C3%A3o`` is ``Informação``), and each e-mail address left out: the host and path of a link
    are words of the text as before (a project's or a sponsor's name is a topic: leaving whole links out made the dev
    set's recall@10 0.687 instead of 0.704). Only the whitespace-separated words that hold a "/", an "@" or a "www." are
    read again (one pattern over a whole transcript took 18 times as long as folding it)."""
    marks = [m.start() for m in _MARKS.finditer(text)]
    for www in ("www.", "WWW.", "Www."):
        at = text.find(www)
        while at >= 0:
            marks.append(at)
            at = text.find(www, at + 4)
    if not marks:
        return text
    out: list[str] = []
    done = 0
    for at in sorted(marks):
        if at < done:
            continue
        left = max(done, *(text.rfind(c, done, at) + 1 for c in " \n\t"))
        right = _SPACE.search(text, at)
        end = right.start() if right else len(text)
        word = text[left:end]
        cleaned = LINK_TEXT.sub(_plain_link, word)
        if cleaned != word:
            out += [text[done:left], cleaned]
        else:
            out.append(text[done:end])
        done = end
    return "".join(out) + text[done:]


def fold_lower(text: str) -> str:
    """Lower case, accents stripped, lower case again: compatibility forms can decompose to capitals
    ("llm™" -> "llmTM"), which scikit-learn's own order (lower, then strip) would keep as terms.

    The accents are those of the Latin, Greek and Cyrillic alphabets (and the vowel points of Hebrew and Arabic);
    the marks that are letters of other scripts stay, composed again: Japanese voicing marks (``ラジオ`` is not
    ``ラシオ``, ``が`` not ``か``), the Devanagari virama. Until 5 December 2026 every combining mark was stripped
    (scikit-learn's ``strip_accents_unicode``), and the Japanese reasons read "ラシオ", "エヒソート", "くたさい"."""
    return strip_accents(text.lower()).lower()


def with_title_phrases(titles: list[str], languages: list[str] | None = None) -> list[str]:
    """Each title followed by its word pairs as tokens (``similar_signals.phrases``; no pair with a stop word of
    English or of the episode's language)."""
    langs = list(languages or []) if languages is not None and len(languages) == len(titles) else [""] * len(titles)
    return [f"{title} {phrases(title, ENGLISH_STOP_WORDS | stop_words(lang) if lang else ENGLISH_STOP_WORDS)}"
            for title, lang in zip(titles, langs)]


def weighted_fields(fields: EpisodeFields, params: ModelParams) -> list[tuple[list[str], float]]:
    empty = [""] * len(fields.ids)
    titles = with_title_phrases(list(fields.titles), fields.languages) if params.title_phrases else list(fields.titles)
    return [(titles, params.title_weight), (list(fields.notes), params.notes_weight),
            (list(fields.transcripts), params.transcript_weight), (list(fields.people or empty), params.people_weight),
            (list(fields.links or empty), params.links_weight)]


def weigh_fields(stacked: sp.csr_matrix, weights: list[float], n: int, sublinear: bool = False) -> sp.csr_matrix:
    """The weighted sum of the fields' counts, stacked field after field (n rows each); with ``sublinear``
    (``field_sublinear``), each field's count is ``1 + log(tf)`` first (``stacked`` is changed in place)."""
    if sublinear:
        stacked.data = 1 + np.log(stacked.data)
    counts = sp.csr_matrix((n, stacked.shape[1]), dtype=np.float32)
    for k, weight in enumerate(weights):
        if weight:
            counts = counts + weight * stacked[k * n:(k + 1) * n]
    return counts.tocsr()
