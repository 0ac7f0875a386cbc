"""Where a query's terms are in one episode's transcript, segment by segment, from the places an engine keeps:
each term's places (token positions on Whoosh, segment numbers in OpenSearch's table of segment terms) and where
each segment begins among them. What both engines' ``segment_counts`` count with (``base.SegmentCounts``)."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator

import numpy as np

from .base import SegmentCounts

MASK_TERMS = 63  # terms whose holding each segment's mask tells (``SegmentCounts.masks``)
ALWAYS_READ = 64  # terms read whatever the deadline (a query's own words; a pattern's most common) ...
GRACE = 0.1  # ... for at most this many seconds after the deadline, or after the count began if that is later


class Reading:
    """Which terms of a page's ``segment_counts`` are read, and in what order, within the bounds both engines keep:
    past ``deadline``, once ``always`` terms (default ``ALWAYS_READ``) are read, or ``GRACE`` seconds after the
    deadline or the count's start (whichever is later), the rest are not (``complete`` False then); a list longer
    than ``always`` is read most common first (``held(term)``: how common, by the engine's own measure), as far as
    the deadline lets them be counted, the rest after them. Counting the 1,152 words of 26 two-letter prefixes took
    0.3-0.8 s past the deadline of a search already cut short by it (site corpus, 5 December 2026)."""

    def __init__(self, terms: Iterable[str], deadline: float | None, always: int | None,
                 held: Callable[[str], int]) -> None:
        self.deadline, self.always = deadline, ALWAYS_READ if always is None else always
        self.last = None if deadline is None else max(deadline, time.monotonic()) + GRACE
        self.complete = True
        ordered = sorted(terms)
        if len(ordered) > self.always and deadline is not None:
            counts: dict[str, int] = {}
            for k, term in enumerate(ordered):
                if not k & 63 and time.monotonic() > deadline:
                    break
                counts[term] = held(term)
            ordered.sort(key=lambda t: -counts.get(t, -1))
        self.ordered = ordered

    def __iter__(self) -> Iterator[str]:
        """The terms to read, in order, until the bounds stop them."""
        for k, term in enumerate(self.ordered):
            if self.deadline is not None and self.last is not None and (now := time.monotonic()) > self.deadline and (
                    k >= self.always or now > self.last):
                self.complete = False
                return
            yield term


def counted(starts: np.ndarray, found: list[tuple[str, np.ndarray]]
            ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``(segments holding a term, distinct terms in each, term tokens in each, which terms each holds)`` of one
    episode whose segments begin at the places ``starts``, from each term's places (ascending, as the index holds
    them): a few array operations over all the terms' places together, where each term had its own, as long as the
    segment table (a page of 100 hits of twelve prefixes' words, 15,500 terms of a hit, spent 0.2-0.35 s on them
    after the deadline under load, until 6 December 2026). Which terms: bit k for the term ``found[k]``, for the
    first ``MASK_TERMS`` of them."""
    n = len(starts)
    if not found or not n:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty, empty, empty
    segment = np.searchsorted(starts, np.concatenate([where for _, where in found]), side="right") - 1
    term = np.repeat(np.arange(len(found)), [len(where) for _, where in found])
    first = np.ones(len(segment), dtype=bool)  # a term's first place in a segment
    first[1:] = (segment[1:] != segment[:-1]) | (term[1:] != term[:-1])
    tokens = np.bincount(segment, minlength=n)[:n]
    distinct = np.bincount(segment[first], minlength=n)[:n]
    held = np.flatnonzero(tokens)
    masks = np.zeros(n, dtype=np.int64)
    bit = first & (term < MASK_TERMS)
    np.bitwise_or.at(masks, segment[bit], np.left_shift(1, term[bit]).astype(np.int64))
    return held, distinct[held].astype(np.int64), tokens[held].astype(np.int64), masks[held]


def counted_cjk(starts: np.ndarray, found: list[tuple[str, np.ndarray]],
                cjk: dict[str, tuple[frozenset[str], ...]]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`counted` where a Japanese or Chinese word's bigrams count only in a segment that holds them all."""
    n = len(starts)
    distinct = np.zeros(n, dtype=np.int64)
    tokens = np.zeros(n, dtype=np.int64)
    per_term = {term: np.bincount(np.searchsorted(starts, where, side="right") - 1, minlength=n)[:n]
                for term, where in found}
    for term, per_segment in per_term.items():
        if term in cjk:
            whole = np.zeros(n, dtype=bool)
            for word in cjk[term]:
                whole |= np.logical_and.reduce([per_term[b] > 0 if b in per_term else np.zeros(n, dtype=bool)
                                                for b in word])
            per_segment = per_segment * whole
        tokens += per_segment
        distinct += per_segment > 0
    held = np.flatnonzero(tokens)
    return held, distinct[held], tokens[held]


def counted_any(starts: np.ndarray, found: list[tuple[str, np.ndarray]],
                cjk: dict[str, tuple[frozenset[str], ...]] | None, complete: bool = True) -> SegmentCounts:
    """The :class:`SegmentCounts` of :func:`counted_cjk` when one of the terms found is a Japanese or Chinese word's
    bigram (no masks), else of :func:`counted`; ``words``: the held segments' lengths are the caller's."""
    if cjk and any(term in cjk for term, _ in found):
        held, distinct, tokens = counted_cjk(starts, found, cjk)
        return SegmentCounts(indexes=held, distinct=distinct, tokens=tokens, words=None, complete=complete)
    held, distinct, tokens, masks = counted(starts, found)
    return SegmentCounts(indexes=held, distinct=distinct, tokens=tokens, words=None, complete=complete, masks=masks,
                         terms=tuple(term for term, _ in found[:MASK_TERMS]))
