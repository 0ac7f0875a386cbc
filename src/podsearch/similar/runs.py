"""Words an episode says only inside runs that other episodes say word for word: its intros, outros and sponsor reads
("Temporal is the durable execution platform ...", "go to nordvpn.com/changelog"). Such a word is no topic of the
episode, so it is never a reason of it (reasons.py), though it stays one of its terms: the fit reads the runs as
before (leaving them out of it cost pairs: docs/similar.md, eighteenth round).

A run is :data:`RUN` words in a row (case and punctuation aside) said in :data:`SAID_IN` or more recordings (two
episodes with one transcript, :func:`~.fields.text_print`, count once). The fit keeps each episode's words as hashes
(:class:`RunCounter`, 4 bytes a word) while it reads the chunks, then counts the runs and finds, per episode, the
words said only inside repeated ones. The repeated runs are kept with the model (:class:`Runs`), so that an episode
folded in later is read against them. Words are matched to the model's terms as written in lower case: a word
written with accents is not (it stays a reason).
"""

from __future__ import annotations

import functools
import string
import zlib
from collections.abc import Iterable, Sequence

import numpy as np
import scipy.sparse as sp

RUN = 8  # words in a run
SAID_IN = 3  # recordings that say a run for it to be boilerplate
PART = 4_000_000  # runs counted at once (memory: 8 bytes each, twice)
_MIX = np.uint64(0x100000001B3)  # (FNV's 64-bit prime) a run's hash: its words' hashes mixed in their order
_BITS = (1 << 22) - 1  # Runs.bits
_SPACES = bytes.maketrans(string.punctuation.encode(), b" " * len(string.punctuation))


def word_hashes(text: str) -> np.ndarray:
    """Each word's CRC-32, the words read lower-cased with ASCII punctuation as a space (the same in every process
    and every run, unlike Python's ``hash``: runs are saved with the model)."""
    words = text.lower().encode("utf-8", "replace").translate(_SPACES).split()
    return np.fromiter(map(zlib.crc32, words), dtype=np.uint32, count=len(words))


def _run_hashes(words: np.ndarray) -> np.ndarray:
    """The hash of the run starting at each word, 64 bits (none when the text is shorter than a run). (With 32 bits
    the site corpus's 15 million runs made 400 of its 19,000 repeated ones by chance.)"""
    n = len(words) - RUN + 1
    if n <= 0:
        return np.zeros(0, dtype=np.uint64)
    words = words.astype(np.uint64)
    out = words[:n].copy()
    for k in range(1, RUN):
        out *= _MIX
        out ^= words[k:k + n]
    return out


def _distinct(values: np.ndarray) -> np.ndarray:
    """``values`` sorted, each once (``np.unique`` of numpy 2 hashes, several times slower on these arrays)."""
    values = np.sort(values)
    return values[np.r_[True, values[1:] != values[:-1]]] if len(values) else values


def _among(values: np.ndarray, sorted_set: np.ndarray) -> np.ndarray:
    """Per value, whether it is in ``sorted_set`` (a sorted array, not empty)."""
    at = np.minimum(np.searchsorted(sorted_set, values), len(sorted_set) - 1)
    return sorted_set[at] == values


class RunCounter:
    """Every episode's words as hashes, in the fit's order, until :meth:`finish` counts their runs."""

    def __init__(self) -> None:
        self.words: list[np.ndarray] = []
        self.titles: list[str] = []
        self.recording: list[bool] = []  # False: the same transcript as an earlier episode's (its runs count once)
        self.seen: set[str] = set()

    def add(self, titles: Sequence[str], transcripts: Sequence[str], notes: Sequence[str],
            prints: Sequence[str]) -> None:
        chunk = [word_hashes(f"{transcript}\n{note}") for transcript, note in zip(transcripts, notes)]
        # (one array per chunk, cut into views: small arrays would stay in the heap once let go)
        joined = np.concatenate(chunk) if chunk else np.zeros(0, dtype=np.uint32)
        ends = np.cumsum([len(w) for w in chunk]).tolist()
        del chunk
        self.words.extend(joined[a:b] for a, b in zip([0, *ends], ends))
        for title, mark in zip(titles, prints):
            self.titles.append(title)
            self.recording.append(not mark or mark not in self.seen)
            self.seen.add(mark)

    def finish(self) -> tuple[Runs, list[np.ndarray]]:
        """The runs said in :data:`SAID_IN` or more recordings, and per episode the words it says only inside them
        (:meth:`Runs.only_inside`); the episodes' words are let go. The runs are counted a part of their hash range at
        a time (at most :data:`PART` at once)."""
        total = sum(max(len(w) - RUN + 1, 0) for w in self.words)
        parts = max(1, -(-total // PART))
        found: list[np.ndarray] = []
        for part in range(parts):
            runs = (_run_hashes(w) for w, counted in zip(self.words, self.recording) if counted)
            every = np.concatenate([_distinct(r[r % np.uint64(parts) == part] if parts > 1 else r) for r in runs]
                                   or [np.zeros(0, dtype=np.uint64)])
            every.sort()
            n = len(every) - SAID_IN + 1
            found.append(every[:n][every[SAID_IN - 1:] == every[:n]] if n > 0 else every[:0])
            del every
        repeated = Runs(_distinct(np.concatenate(found)))
        only = [repeated.only_inside(w, title) for w, title in zip(self.words, self.titles)]
        self.words.clear()
        return repeated, only


class Runs:
    """The runs said in :data:`SAID_IN` or more recordings (sorted hashes)."""

    def __init__(self, hashes: np.ndarray) -> None:
        self.hashes = np.asarray(hashes, dtype=np.uint64)

    @functools.cached_property
    def bits(self) -> np.ndarray:
        """A first look by the low bits (4 MB, read at random far faster than a search of the runs; made when an
        episode is first read against them: a server that folds none in never makes it)."""
        bits = np.zeros(_BITS + 1, dtype=bool)
        bits[self.hashes & np.uint64(_BITS)] = True
        return bits

    def among(self, runs: np.ndarray) -> np.ndarray:
        """The places of ``runs`` that are among these."""
        maybe = np.flatnonzero(self.bits[runs & np.uint64(_BITS)])
        return maybe[_among(runs[maybe], self.hashes)] if len(maybe) and len(self.hashes) else maybe[:0]

    @staticmethod
    def term_hashes(vocabulary: dict[str, int]) -> dict[int, list[tuple[int, list[int]]]]:
        """The terms of ``vocabulary`` by the hash of their first word (:func:`word_hashes`): each term's id and its
        other words' hashes (a term written with a hyphen or an apostrophe, "multi-factor", is read as two words;
        phrases of titles, "_"-joined, are a title's own)."""
        terms: dict[int, list[tuple[int, list[int]]]] = {}
        for term, i in vocabulary.items():
            if "_" not in term:
                first, *rest = word_hashes(term).tolist() or [0]
                terms.setdefault(first, []).append((i, rest))
        return terms

    def of_texts(self, titles: Sequence[str], transcripts: Sequence[str], notes: Sequence[str],
                 vocabulary: dict[str, int]) -> sp.csr_matrix:
        """Per episode (new ones, folded in), the terms of ``vocabulary`` it says only inside these runs."""
        return self.terms_of([self.only_inside(word_hashes(f"{transcript}\n{note}"), title)
                              for title, transcript, note in zip(titles, transcripts, notes)], vocabulary)

    def terms_of(self, only: list[np.ndarray], vocabulary: dict[str, int]) -> sp.csr_matrix:
        """Episodes x terms: 1 where the episode says the term only inside these runs (``only``: each episode's
        :meth:`only_inside`; a term of several words: each of them)."""
        terms = self.term_hashes(vocabulary)
        rows = []
        for words in only:
            hashes = set(words.tolist())
            found = {i for h in hashes for i, rest in terms.get(h, ()) if all(w in hashes for w in rest)}
            rows.append(np.array(sorted(found), dtype=np.int32))
        return as_matrix(rows, len(vocabulary))

    def only_inside(self, words: np.ndarray, title: str) -> np.ndarray:
        """The ``words`` (:func:`word_hashes`) said only inside these runs, the title's words left out (a title is the
        episode's own)."""
        none = np.zeros(0, dtype=np.uint32)
        if not len(self.hashes):
            return none
        starts = self.among(_run_hashes(words))
        if not len(starts):
            return none
        size = len(words) + RUN
        inside = np.cumsum(np.bincount(starts, minlength=size) - np.bincount(starts + RUN, minlength=size))[:len(words)] > 0
        said = _distinct(words[inside])
        outside = np.r_[words[~inside], word_hashes(title)]
        also = np.zeros(len(said) + 1, dtype=bool)  # the words said inside that are said outside too
        also[np.searchsorted(said, outside[_among(outside, said)])] = True
        return said[~also[:-1]]


def as_matrix(rows: Iterable[np.ndarray], terms: int) -> sp.csr_matrix:
    """Per-episode term ids as a rows x terms matrix of ones (how the model keeps and saves them)."""
    rows = list(rows)
    indptr = np.r_[0, np.cumsum([len(r) for r in rows])].astype(np.int64)
    indices = np.concatenate(rows).astype(np.int32) if rows else np.zeros(0, dtype=np.int32)
    return sp.csr_matrix((np.ones(len(indices), dtype=np.int8), indices, indptr), shape=(len(rows), terms))
