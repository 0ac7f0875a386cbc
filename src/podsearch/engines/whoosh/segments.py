"""Where a query's terms are in a transcript, segment by segment, from the index alone.

The transcript field holds each term's positions; the stored ``segments`` table (``schema.segment_table``)
says where each segment's tokens start. Together they give, for the ten episodes of a page, which segments
hold which terms and how often: the moments are chosen from that, and only the chosen segments are read
from the catalog (reading and scanning every segment of every hit was a third of a search's time).
"""

from __future__ import annotations

from bisect import bisect_left
from typing import Any

import numpy as np

from ...lru import LRU
from ..base import SegmentCounts
from .fast import decode_positions, doc_ids, segment_key
from .schema import read_segment_table

FIELD = "transcript"


_BLOCKS: LRU[tuple[Any, ...], tuple[list[int], list[int]]] = LRU(4096)


def _positions(reader: Any, btext: bytes, docs: list[int]) -> list[tuple[int, np.ndarray]]:
    """(document, positions) of the term in those of ``docs`` (sorted, numbers in this segment) that hold it.

    Whoosh's matcher finds a document by reading the first block whole, then every block header up to it, then
    each id of the block in turn; instead the blocks' last ids and places are read once per term and segment
    (kept), and only the block that can hold a document is read."""
    matcher = reader.postings(FIELD, btext)
    leaf = getattr(matcher, "child", matcher)  # a deletion filter wraps the leaf
    key = (segment_key(reader), reader.doc_count_all(), btext)
    blocks = _BLOCKS.get(key)
    if blocks is None:
        last_ids, places = [], []
        place = leaf._baseoffset
        while True:
            leaf._goto(place)
            last_ids.append(leaf._maxid)
            places.append(place)
            if leaf._lastblock:
                break
            place = leaf._nextoffset
        blocks = (last_ids, places)
        _BLOCKS.put(key, blocks)
    last_ids, places = blocks
    out = []
    current = -1
    for doc in docs:
        k = bisect_left(last_ids, doc)
        if k == len(last_ids):
            break
        if k != current:
            leaf._goto(places[k])
            leaf._read_ids()
            current = k
        ids = leaf._ids
        i = bisect_left(ids, doc)
        if i < len(ids) and ids[i] == doc:
            if leaf._values is None:
                leaf._read_values()
            out.append((doc, decode_positions(leaf._values[i])))
    return out


def segment_counts(searcher: Any, ids: list[str], terms: set[str]) -> dict[str, SegmentCounts]:
    """:meth:`WhooshEngine.segment_counts` over an open searcher."""
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
    found: dict[int, list[np.ndarray]] = {d: [] for d in tables}
    for reader, offset in searcher.reader().leaf_readers():
        end = offset + reader.doc_count_all()
        mine = sorted(d for d in tables if offset <= d < end)
        if not mine:
            continue
        for term in sorted(terms):
            btext = term.encode("utf-8")
            if (FIELD, btext) not in reader:
                continue
            for d, where in _positions(reader, btext, [d - offset for d in mine]):
                found[d + offset].append(where)
    out: dict[str, SegmentCounts] = {}
    for d, (episode_id, (starts, words)) in tables.items():
        n = len(starts)
        distinct = np.zeros(n, dtype=np.int64)
        tokens = np.zeros(n, dtype=np.int64)
        for where in found[d]:
            per_segment = np.bincount(np.searchsorted(starts, where, side="right") - 1, minlength=n)[:n]
            tokens += per_segment
            distinct += per_segment > 0
        held = np.flatnonzero(tokens)
        out[episode_id] = SegmentCounts(indexes=held, distinct=distinct[held], tokens=tokens[held],
                                        words=words[held].astype(np.int64))
    return out
