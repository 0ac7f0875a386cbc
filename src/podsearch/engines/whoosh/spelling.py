""""Did you mean" on a Whoosh index: the questions the engine-neutral rules (``engines/spelling.py``) ask of
the index, answered by a searcher (the ``words`` field holds every word of an episode once)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import numpy as np
from whoosh.support.levenshtein import distance

from ...lru import LRU
from .. import spelling
from . import fast
from .analysis import plain_analyzer, profile_analyzer

_WORDS = plain_analyzer()


class WhooshVocabulary:
    """:class:`spelling.Vocabulary` over one searcher, for the query's languages (analysis profiles)."""

    def __init__(self, searcher: Any, profiles: list[str]) -> None:
        self.searcher, self.profiles = searcher, profiles

    def held(self, words: list[str]) -> dict[str, int]:
        return {w: int(self.searcher.doc_frequency("words", self.form(w))) for w in words}

    def candidates(self, words: list[str]) -> dict[str, list[str]]:
        # only words with the same first letter are compared (a typo in the first letter is rare)
        known = lexicon(self.searcher.reader())
        return {w: known.near(self.form(w), spelling.MAX_DISTANCE, spelling.CANDIDATES) for w in words}

    def form(self, word: str) -> str:
        if word.isascii():
            return word
        tokens = [t.text for t in _WORDS(word)]  # (the words field's analyzer: accents folded)
        return tokens[0] if len(tokens) == 1 else word

    def languages_of(self, words: list[str]) -> dict[str, list[str] | None]:
        return {w: self._languages_of(w) for w in words}

    def _languages_of(self, word: str) -> list[str]:
        """The query's profiles (languages) of the episodes whose word list holds ``word``."""
        key, found = self.form(word).encode("utf-8"), set()
        for leaf, _ in self.searcher.reader().leaf_readers():
            holding = fast.postings(leaf, "words", key)[0]
            holding = holding[[not leaf.is_deleted(int(d)) for d in holding]] if len(holding) else holding
            if not len(holding):
                continue
            for profile in self.profiles:
                of_language = fast.postings(leaf, "analysis", profile.encode("utf-8"))[0]
                if len(of_language) and fast.in_sorted(holding, of_language).any():
                    found.add(profile)
        return [p for p in self.profiles if p in found]

    def in_language(self, asked: list[spelling.Asked]) -> set[spelling.Asked]:
        return {(w, p) for w, p in asked if self._in_language(w, p)}

    def _in_language(self, word: str, profiles: tuple[str, ...] | None) -> bool:
        reader = self.searcher.reader()
        for key in self.profiles if profiles is None else profiles:
            terms = profile_analyzer(key).texts(word)
            if not terms:  # a stop word of this language
                continue
            term = terms[0].encode("utf-8")
            for leaf, _ in reader.leaf_readers():  # an episode of this language holding it (postings, kept)
                of_language = fast.postings(leaf, "analysis", key.encode("utf-8"))[0]
                if not len(of_language):
                    continue
                for field in ("title", "notes", "transcript"):
                    holding = fast.postings(leaf, field, term)[0]
                    if len(holding) and len(of_language) < leaf.doc_count_all():
                        holding = holding[fast.in_sorted(holding, of_language)]
                    if any(not leaf.is_deleted(int(d)) for d in holding):  # (postings keep deleted documents)
                        return True
        return False


class Lexicon:
    """The ``words`` field's words and frequencies of one index generation, grouped by first letter, for
    :meth:`near`. Whoosh's own corrector reads every word with the first letter from the term files and
    computes its edit distance in Python (a quarter of a second for a word on the site corpus); here the
    words are in memory and an edit distance is only computed for those whose letters allow it."""

    def __init__(self, reader: Any) -> None:
        counts: dict[str, int] = {}
        for leaf, _ in reader.leaf_readers():
            if "words" not in leaf.indexed_field_names():
                continue
            for btext, info in leaf.iter_field("words"):
                word = btext.decode("utf-8")
                counts[word] = counts.get(word, 0) + int(info.weight())
        by_letter: dict[str, list[str]] = {}
        for word in counts:
            by_letter.setdefault(word[:1], []).append(word)
        self.groups: dict[str, tuple[list[str], np.ndarray, np.ndarray, np.ndarray]] = {}
        for letter, words in by_letter.items():
            self.groups[letter] = (words, np.array([counts[w] for w in words], dtype=np.int64),
                                   np.array([len(w) for w in words], dtype=np.int64), _letters(words))

    def near(self, word: str, maxdist: int, limit: int) -> list[str]:
        """The ``limit`` nearest words within ``maxdist`` edits (Damerau-Levenshtein) of ``word`` that start with
        its first letter, ``word`` itself left out: nearest first, then the more frequent, then alphabetically.
        (Whoosh's ``corrector.suggest`` keeps the most frequent whatever their distance: ``txic`` was offered
        ``topic``, two edits away, and never ``toxic``, one away but rarer than five words two away.)"""
        group = self.groups.get(word[:1])
        if group is None:
            return []
        words, freqs, lengths, letters = group
        near = np.abs(lengths - len(word)) <= maxdist
        # the letters two words do not share bound their edit distance from below (a swap shares them all)
        diff = letters[near].astype(np.int16) - _letters([word])[0]
        bag = np.maximum(np.clip(diff, 0, None).sum(axis=1), np.clip(-diff, 0, None).sum(axis=1))
        places = np.flatnonzero(near)[bag <= maxdist]
        found = []
        for i in places.tolist():
            if words[i] != word:
                d = distance(words[i], word, limit=maxdist)
                if d <= maxdist:
                    found.append((d, -int(freqs[i]), words[i]))
        return [w for _, _, w in sorted(found)[:limit]]


_ALPHABET = 27  # a-z, and every other character counted together


def _letters(words: list[str]) -> np.ndarray:
    """Per word, how many times it holds each letter a-z (and other characters, counted together), at most 255
    (a count capped alike in two words still bounds their edit distance from below)."""
    out = np.zeros((len(words), _ALPHABET), dtype=np.uint8)
    for row, word in enumerate(words):
        counts = [0] * _ALPHABET
        for c in word:
            k = ord(c) - 97
            counts[k if 0 <= k < 26 else 26] += 1
        out[row] = np.minimum(counts, 255)
    return out


_LEXICONS: LRU[tuple[Any, ...], Lexicon] = LRU(2)
_LEXICON_LOCK = threading.Lock()


def _generation(reader: Any) -> tuple[Any, ...]:
    """What tells the generation ``reader`` reads: its segments and their sizes."""
    return tuple((leaf.segment().segment_id() if leaf.segment() is not None else id(leaf), leaf.doc_count_all())
                 for leaf, _ in reader.leaf_readers())


def loaded(reader: Any) -> Lexicon | None:
    """The :class:`Lexicon` of the generation ``reader`` reads if this process has made it, else None."""
    return _LEXICONS.get(_generation(reader))


def lexicon(reader: Any) -> Lexicon:
    """The :class:`Lexicon` of the generation ``reader`` reads, made once per process."""
    key = _generation(reader)
    found = _LEXICONS.get(key)
    if found is None:
        with _LEXICON_LOCK:
            found = _LEXICONS.get(key)
            if found is None:
                found = Lexicon(reader)
                _LEXICONS.put(key, found)
    return found


def suggestion(searcher: Any, text: str, profiles: list[str], count: Callable[[str], int],
               before: int | None) -> str:
    """``text`` with its unknown words corrected, or "" (``spelling.suggestion`` over this searcher)."""
    return spelling.suggestion(text, WhooshVocabulary(searcher, profiles), count, before)
