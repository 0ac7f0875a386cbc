"""Where a query's terms are in a transcript, segment by segment, from the index alone.

The transcript field holds each term's positions; the stored ``segments`` table (``schema.segment_table``)
says where each segment's tokens start. Together they give, for the ten episodes of a page, which segments
hold which terms and how often: the moments are chosen from that, and only the chosen segments are read
from the catalog (reading and scanning every segment of every hit was a third of a search's time).
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from ..base import SegmentCounts
from .fast import doc_ids, doc_positions
from .schema import read_segment_table

FIELD = "transcript"
ALWAYS_READ = 64  # terms read whatever the deadline (a query's own words; a pattern's most common)


def segment_counts(searcher: Any, ids: list[str], terms: set[str], deadline: float | None = None,
                   cjk: dict[str, tuple[frozenset[str], ...]] | None = None,
                   always: int | None = None) -> dict[str, SegmentCounts]:
    """:meth:`WhooshEngine.segment_counts` over an open searcher (the positions by ``fast.doc_positions``, which
    keeps what the search's passages read). Past ``deadline``, once ``ALWAYS_READ`` terms are read, the rest are
    not (a pattern's words: a thousand of them took a second cold at 10k episodes); a list longer than that is
    read most common first, the words a page's moments most likely show. ``always``: read that many instead of
    ``ALWAYS_READ`` whatever the deadline (a page's hits after its first: none)."""
    always = ALWAYS_READ if always is None else always
    tables: dict[int, tuple[str, tuple[np.ndarray, np.ndarray]]] = {}
    numbers = doc_ids(searcher.reader())[1]
    for episode_id in dict.fromkeys(ids):
        docnum = numbers.get(episode_id)
        if docnum is None:
            continue
        table = read_segment_table(searcher.stored_fields(docnum).get("segments"))
        if table is not None:
            tables[docnum] = (episode_id, table)
    if not tables:
        return {}
    leaves = []
    for reader, offset in searcher.reader().leaf_readers():
        end = offset + reader.doc_count_all()
        mine = sorted(d for d in tables if offset <= d < end)
        if mine:
            leaves.append((reader, offset, mine))
    ordered = sorted(terms)
    if len(ordered) > always and deadline is not None:
        # most common first, as far as the deadline lets them be counted (the rest after them): counting the 1,152
        # words of 26 two-letter prefixes took 0.3-0.8 s past the deadline of a search already cut short by it
        # (site corpus, 5 December 2026)
        counted: dict[str, int] = {}
        for k, term in enumerate(ordered):
            if not k & 63 and time.monotonic() > deadline:
                break
            counted[term] = searcher.doc_frequency(FIELD, term)
        ordered.sort(key=lambda t: -counted.get(t, -1))
    found: dict[int, list[tuple[str, np.ndarray]]] = {d: [] for d in tables}
    complete = True
    for k, term in enumerate(ordered):
        if k >= always and deadline is not None and time.monotonic() > deadline:
            complete = False
            break
        btext = term.encode("utf-8")
        for reader, offset, mine in leaves:
            if (FIELD, btext) not in reader:
                continue
            for d, where in doc_positions(reader, FIELD, btext, [d - offset for d in mine]):
                found[d + offset].append((term, where))
    out: dict[str, SegmentCounts] = {}
    for d, (episode_id, (starts, words)) in tables.items():
        n = len(starts)
        distinct = np.zeros(n, dtype=np.int64)
        tokens = np.zeros(n, dtype=np.int64)
        counted = {term: np.bincount(np.searchsorted(starts, where, side="right") - 1, minlength=n)[:n]
                   for term, where in found[d]}
        for term, per_segment in counted.items():
            if cjk and term in cjk:  # a Japanese or Chinese word's bigrams count in a segment that holds them all
                whole = np.zeros(n, dtype=bool)
                for word in cjk[term]:
                    whole |= np.logical_and.reduce([counted[b] > 0 if b in counted else np.zeros(n, dtype=bool)
                                                    for b in word])
                per_segment = per_segment * whole
            tokens += per_segment
            distinct += per_segment > 0
        held = np.flatnonzero(tokens)
        out[episode_id] = SegmentCounts(indexes=held, distinct=distinct[held], tokens=tokens[held],
                                        words=words[held].astype(np.int64), complete=complete)
    return out
