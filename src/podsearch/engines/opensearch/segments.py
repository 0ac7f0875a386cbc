"""Each episode's table of segment terms: where a query's terms are in its transcript, segment by segment, for
:meth:`OpenSearchEngine.segment_counts`, so that a page's moments are chosen as on Whoosh and only the chosen
segments are read and marked.

The node indexes the transcript as one text and says nothing of its segments, so the table is made at indexing,
by the analysis's Python twin (the one the answer marks with: ``analysis.PythonAnalyzer``), and kept in the
episode's document (``segment_terms``, a stored binary field): it is written in the same bulk item as the
episode's fields, swapped in with its index and deleted with it, so it is always that of the text the index
holds. Until 6 December 2026 every segment of every hit was read from the catalog, bounded and partly analysed
(0.46 s of CPU for a page of 100 hits of a twelve-word query, against Whoosh's 0.13 s).

The table, zlib-compressed (then base64, as OpenSearch takes a binary value), little-endian: ``MAGIC``; the
segments, terms and places, and the bytes of a place (uint32 each); each segment's length in words (uint32 each,
as ``str.split`` counts them); each term's first place (uint32, one more than the terms: where the last ends);
the places, each term's segments in order, a segment once per token of the term it holds (uint16, or uint32 for a
transcript of more than 65,536 segments: the places are two thirds of the table, and its reading is mostly their
decompression); the terms, sorted, UTF-8, joined by newlines (a term holding one: no table, the episode's
segments are read). About 13 kB a site corpus episode as stored, 24 kB for the long ones a long query finds.
"""

from __future__ import annotations

import base64
import binascii
import struct
import zlib
from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from ..base import SegmentCounts, TextAnalyzer
from ..segments import Reading, counted_any

SEGMENT_TERMS = "segment_terms"
MAGIC = b"pst1"  # a table of another layout (another MAGIC) is not read: its episodes' segments are read
_HEAD = struct.Struct("<4sIIII")


def segment_table(analyzer: TextAnalyzer, segments: Sequence[str]) -> str | None:
    """The table of ``segments`` (an episode's transcript segments, in order) as ``analyzer`` reads them, as the
    document's ``segment_terms`` value; None when there is nothing to keep."""
    if not segments:
        return None
    places: dict[str, list[int]] = {}
    for i, text in enumerate(segments):
        for term in analyzer.texts(text):
            found = places.get(term)
            if found is None:
                places[term] = [i]
            else:
                found.append(i)
    terms = sorted(places)
    if any("\n" in t for t in terms):
        return None
    words = np.fromiter(map(len, map(str.split, segments)), dtype="<u4", count=len(segments))
    counts = np.fromiter((len(places[t]) for t in terms), dtype=np.int64, count=len(terms))
    starts = np.zeros(len(terms) + 1, dtype="<u4")
    np.cumsum(counts, out=starts[1:])
    width = 2 if len(segments) <= 1 << 16 else 4
    flat = np.fromiter((i for t in terms for i in places[t]), dtype=f"<u{width}", count=int(starts[-1]))
    raw = b"".join((_HEAD.pack(MAGIC, len(segments), len(terms), len(flat), width), words.tobytes(), starts.tobytes(),
                    flat.tobytes(), "\n".join(terms).encode("utf-8")))
    return base64.b64encode(zlib.compress(raw, 6)).decode("ascii")


class Table:
    """One episode's table read: its segments' lengths in words, and each term's segments."""

    __slots__ = ("words", "terms", "starts", "places")

    def __init__(self, words: np.ndarray, terms: list[str], starts: np.ndarray, places: np.ndarray) -> None:
        self.words, self.terms, self.starts, self.places = words, terms, starts, places

    def segments_of(self, term: str) -> np.ndarray | None:
        """The segments holding ``term``, one for each of its tokens, in order; None when none does."""
        k = bisect_left(self.terms, term)
        if k == len(self.terms) or self.terms[k] != term:
            return None
        return self.places[self.starts[k]:self.starts[k + 1]]


def read_table(value: Any) -> Table | None:
    """The :class:`Table` of a document's ``segment_terms`` value (as the node gives it: a list of one base64
    text), or None when it has none or one this code does not read."""
    if isinstance(value, list):
        value = value[0] if len(value) == 1 else None
    if not isinstance(value, str) or not value:
        return None
    try:
        raw = zlib.decompress(base64.b64decode(value))
        magic, n, k, total, width = _HEAD.unpack_from(raw)
        if magic != MAGIC or width not in (2, 4):
            return None
        at = _HEAD.size
        words = np.frombuffer(raw, dtype="<u4", count=n, offset=at)
        at += 4 * n
        starts = np.frombuffer(raw, dtype="<u4", count=k + 1, offset=at).astype(np.intp)
        at += 4 * (k + 1)
        places = np.frombuffer(raw, dtype=f"<u{width}", count=total, offset=at)
        at += width * total
        terms = raw[at:].decode("utf-8").split("\n") if k else []
    except (ValueError, binascii.Error, zlib.error, struct.error):
        return None
    if len(terms) != k or int(starts[-1]) != total:
        return None
    return Table(words, terms, starts, places)


def table_counts(tables: dict[str, Table], terms: set[str], deadline: float | None = None,
                 cjk: dict[str, tuple[frozenset[str], ...]] | None = None,
                 always: int | None = None) -> dict[str, SegmentCounts]:
    """:meth:`OpenSearchEngine.segment_counts` from the episodes' tables, with Whoosh's bounds
    (``engines.whoosh.segments``): past ``deadline``, once ``always`` terms (default ``ALWAYS_READ``) are read, or
    ``GRACE`` seconds after it, the rest are not (``complete`` False); a list longer than ``always`` is read most
    common first, the words held by the most of these episodes (Whoosh's: by the most episodes of its index)."""
    if not tables:
        return {}
    reading = Reading(terms, deadline, always,
                      lambda term: sum(table.segments_of(term) is not None for table in tables.values()))
    found: dict[str, list[tuple[str, np.ndarray]]] = {i: [] for i in tables}
    for term in reading:
        for episode_id, table in tables.items():
            where = table.segments_of(term)
            if where is not None:
                found[episode_id].append((term, where))
    out: dict[str, SegmentCounts] = {}
    for episode_id, table in tables.items():
        counts = counted_any(np.arange(len(table.words)), found[episode_id], cjk, reading.complete)
        out[episode_id] = replace(counts, words=table.words[counts.indexes].astype(np.int64))
    return out
