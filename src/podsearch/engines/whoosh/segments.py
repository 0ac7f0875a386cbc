"""Where a query's terms are in a transcript, segment by segment, from the index alone.

The transcript field holds each term's positions; the stored ``segments`` table (``schema.segment_table``)
says where each segment's tokens start. Together they give, for the ten episodes of a page, which segments
hold which terms and how often: the moments are chosen from that, and only the chosen segments are read
from the catalog (reading and scanning every segment of every hit was a third of a search's time).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from ..base import SegmentCounts
from ..segments import Reading, counted_any
from .fast import doc_ids, doc_positions
from .schema import read_segment_table

FIELD = "transcript"


def segment_counts(searcher: Any, ids: list[str], terms: set[str], deadline: float | None = None,
                   cjk: dict[str, tuple[frozenset[str], ...]] | None = None,
                   always: int | None = None) -> dict[str, SegmentCounts]:
    """:meth:`WhooshEngine.segment_counts` over an open searcher (the positions by ``fast.doc_positions``, which
    keeps what the search's passages read). Past ``deadline``, once ``ALWAYS_READ`` terms are read, the rest are
    not (a pattern's words: a thousand of them took a second cold at 10k episodes); a list longer than that is
    read most common first, the words a page's moments most likely show. ``always``: read that many instead of
    ``ALWAYS_READ`` whatever the deadline (a page's hits after its first: none), within ``GRACE`` seconds of the
    deadline or of the count's start, whichever is later: until 6 December 2026 the ``ALWAYS_READ`` were read
    whatever the time, and twelve two-letter prefixes' 64 first words (767 in all) took 0.12 s for a page's first
    ten hits on a quiet machine, past a deadline the search had reached already, 0.1-0.3 s under load."""
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
    reading = Reading(terms, deadline, always, lambda term: searcher.doc_frequency(FIELD, term))
    found: dict[int, list[tuple[str, np.ndarray]]] = {d: [] for d in tables}
    for term in reading:
        btext = term.encode("utf-8")
        for reader, offset, mine in leaves:
            if (FIELD, btext) not in reader:
                continue
            for d, where in doc_positions(reader, FIELD, btext, [d - offset for d in mine]):
                found[d + offset].append((term, where))
    out: dict[str, SegmentCounts] = {}
    for d, (episode_id, (starts, words)) in tables.items():
        counts = counted_any(starts, found[d], cjk, reading.complete)
        out[episode_id] = replace(counts, words=words[counts.indexes].astype(np.int64))
    return out

