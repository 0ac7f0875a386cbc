"""Matching and BM25F scoring in numpy, for the queries most searches are: words (each a ``FieldsTerm``)
combined with AND, OR, NOT and the language and filter requirements the engine adds.

Whoosh scores one match at a time in Python. Here each word's postings are read once per index generation into
arrays (kept in an LRU by size), and a query is evaluated over all documents at once: a word's BM25F score is a
few array operations over its postings, AND/OR/NOT are masks. The scores are the ones Whoosh's matchers give
(the same formula, in float64). Any other part of a query (a phrase, a single-field term, a range) is
evaluated by its own Whoosh matcher over every segment, and the result combined with the rest: the same
answer, at Whoosh's speed for that part alone.
"""

from __future__ import annotations

import math
import threading
from pickle import loads
from time import monotonic
from typing import Any

import numpy as np
from whoosh.query import And, AndMaybe, AndNot, ConstantScoreQuery, NullQuery, Or, Phrase, Require, Term

from ...lru import LRU
from .bm25f import FieldsTerm
from .exclusions import Excluding
from .scoring import field_lengths

POSTINGS_BYTES = 256 << 20  # decoded postings kept per process


class _Sized(LRU):
    """An LRU of arrays bounded by their total size in bytes."""

    def __init__(self, limit: int) -> None:
        super().__init__(entries=1 << 30)
        self.limit, self.size = limit, 0
        self._size_lock = threading.Lock()

    def put(self, key: Any, value: Any) -> None:  # type: ignore[override]
        nbytes = sum(a.nbytes for a in value)
        with self._size_lock:
            super().put(key, value)
            self.size += nbytes
            while self.size > self.limit and len(self._items) > 1:
                _, old = self._items.popitem(last=False)
                self.size -= sum(a.nbytes for a in old)


_POSTINGS = _Sized(POSTINGS_BYTES)
_LENGTHS: LRU[tuple[Any, ...], np.ndarray] = LRU(256)
_LIVE: LRU[tuple[Any, ...], np.ndarray] = LRU(64)


def _segment_key(reader: Any) -> Any:
    segment = reader.segment()
    return segment.segment_id() if segment is not None else id(reader)


def postings(reader: Any, fieldname: str, btext: bytes) -> tuple[np.ndarray, np.ndarray]:
    """(document numbers, weights) of a term in one segment, decoded block by block and kept."""
    key = (_segment_key(reader), reader.doc_count_all(), fieldname, btext)
    found = _POSTINGS.get(key)
    if found is not None:
        return found
    if (fieldname, btext) not in reader:
        found = (np.empty(0, np.int32), np.empty(0, np.float32))
    else:
        m = reader.postings(fieldname, btext)
        leaf = getattr(m, "child", m)  # a deletion filter wraps the leaf
        ids: list[Any] = []
        weights: list[Any] = []
        while not leaf._atend:
            if leaf._ids is None:
                leaf._read_ids()
            if leaf._weights is None:
                leaf._read_weights()
            ids.append(np.asarray(leaf._ids, dtype=np.int32))
            weights.append(np.asarray(leaf._weights, dtype=np.float32))
            leaf._next_block()
        found = (np.concatenate(ids) if ids else np.empty(0, np.int32),
                 np.concatenate(weights) if weights else np.empty(0, np.float32))
    _POSTINGS.put(key, found)
    return found


def positions(reader: Any, fieldname: str, btext: bytes) -> tuple[np.ndarray, np.ndarray]:
    """(document number of each position, position) of a term in one segment (a field with positions), kept."""
    key = (_segment_key(reader), reader.doc_count_all(), fieldname, btext, "positions")
    found = _POSTINGS.get(key)
    if found is not None:
        return found
    docs: list[np.ndarray] = []
    where: list[np.ndarray] = []
    if (fieldname, btext) in reader:
        m = reader.postings(fieldname, btext)
        leaf = getattr(m, "child", m)
        while not leaf._atend:
            if leaf._ids is None:
                leaf._read_ids()
            if leaf._values is None:
                leaf._read_values()
            for doc, value in zip(leaf._ids, leaf._values):
                # Whoosh's Positions format: a frequency, then the pickled gaps between positions
                gaps = loads(value[4:] if value.endswith(b".") else value[4:] + b".")
                where.append(np.cumsum(np.asarray(gaps, dtype=np.int64)))
                docs.append(np.full(len(gaps), doc, dtype=np.int64))
            leaf._next_block()
    found = (np.concatenate(docs) if docs else np.empty(0, np.int64),
             np.concatenate(where) if where else np.empty(0, np.int64))
    _POSTINGS.put(key, found)
    return found


def _lengths(reader: Any, fieldname: str) -> np.ndarray:
    key = (_segment_key(reader), reader.doc_count_all(), fieldname)
    found = _LENGTHS.get(key)
    if found is None:
        found = np.asarray(field_lengths(reader, fieldname), dtype=np.float64)
        _LENGTHS.put(key, found)
    return found


class Evaluator:
    """Evaluates one query over every document of a searcher's index (all its segments). A part evaluated by
    Whoosh stops at ``deadline`` (``time.monotonic()``) with the matches it has (``timed_out``)."""

    def __init__(self, searcher: Any, deadline: float | None = None) -> None:
        self.searcher = searcher
        self.deadline = deadline
        self.timed_out = False
        self.reader = searcher.reader()
        self.n = self.reader.doc_count_all()
        self.leaves = list(self.reader.leaf_readers()) if not self.reader.is_atomic() else [(self.reader, 0)]
        self.schema = searcher.schema

    def live(self) -> np.ndarray:
        """Documents not deleted."""
        key = tuple((_segment_key(r), r.doc_count_all(), r.doc_count()) for r, _ in self.leaves)
        found = _LIVE.get(key)
        if found is None:
            found = np.ones(self.n, dtype=bool)
            for r, offset in self.leaves:
                if r.has_deletions():
                    deleted = np.fromiter(r.deleted_docs_set, dtype=np.int64)
                    found[deleted + offset] = False
            _LIVE.put(key, found)
        return found

    def run(self, query: Any) -> tuple[np.ndarray, np.ndarray]:
        """(scores, matched) over all documents."""
        scores, matched = self._eval(query, False)
        return scores, matched & self.live()

    # -- nodes -------------------------------------------------------------------------------------
    def _eval(self, q: Any, boolean: bool) -> tuple[np.ndarray, np.ndarray]:
        """The node's scores and matches; with ``boolean`` only the matches count (the scores may be zero)."""
        if q is NullQuery or type(q).__name__ == "_NullQuery":
            return self._zeros(), np.zeros(self.n, dtype=bool)
        if isinstance(q, FieldsTerm):
            return self._fields_term(q)
        if type(q) is Term and (boolean or not self._scorable(q)):
            return self._zeros(), self._term_mask(q)
        if isinstance(q, Excluding | AndNot):
            scores, matched = self._eval(q.a, boolean)
            return scores, matched & ~self._eval(q.b, True)[1]
        if isinstance(q, Require):
            scores, matched = self._eval(q.a, boolean)
            return scores, matched & self._eval(q.b, True)[1]
        if isinstance(q, AndMaybe):
            scores, matched = self._eval(q.a, boolean)
            if boolean:
                return scores, matched
            extra, maybe = self._eval(q.b, False)
            return scores + np.where(matched & maybe, extra, 0.0), matched
        if type(q) is Phrase and q.slop == 1 and self._has_positions(q.fieldname):
            return self._phrase(q, boolean)
        if type(q) is Term and self._scorable(q):
            return self._term(q), self._term_mask(q)
        if isinstance(q, ConstantScoreQuery):
            _, matched = self._eval(q.child, True)
            return np.where(matched, float(q.score), 0.0), matched
        if type(q) is And:
            return self._combine(q, True, boolean)
        if type(q) is Or and not q.minmatch and not q.scale:
            return self._combine(q, False, boolean)
        return self._whoosh(q, boolean)

    def _zeros(self) -> np.ndarray:
        return np.zeros(self.n)

    def _scorable(self, q: Term) -> bool:
        return q.fieldname in self.schema and self.schema[q.fieldname].scorable

    def _has_positions(self, fieldname: str) -> bool:
        field = self.schema[fieldname] if fieldname in self.schema else None
        return bool(field is not None and field.format and field.format.supports("positions"))

    def _bm25(self, fieldname: str, btext: bytes) -> np.ndarray:
        """The single-field BM25 of a term for every document (Whoosh's scorer: ``scoring.SpokenBM25F``)."""
        parent = self.searcher.get_parent()
        weighting = self.searcher.weighting
        b = weighting._field_B.get(fieldname, weighting.B)
        k1 = weighting.K1
        n = parent.doc_frequency(fieldname, btext)
        total = parent.doc_count_all()
        idf = math.log(1.0 + (total - n + 0.5) / (n + 0.5))
        avg = parent.avg_field_length(fieldname) or 1
        scores = self._zeros()
        for r, offset in self.leaves:
            ids, freqs = postings(r, fieldname, btext)
            if len(ids):
                tf = freqs.astype(np.float64)
                lengths = _lengths(r, fieldname)[ids]
                scores[ids + offset] = idf * tf * (k1 + 1) / (tf + k1 * ((1 - b) + b * lengths / avg))
        return scores

    def _term(self, q: Term) -> np.ndarray:
        btext = self.schema[q.fieldname].to_bytes(q.text)
        return self._bm25(q.fieldname, btext) * q.boost

    def _phrase(self, q: Phrase, boolean: bool) -> tuple[np.ndarray, np.ndarray]:
        """Words next to each other, in order: the documents where the positions line up; scored as Whoosh scores
        a phrase (the sum of its words' BM25 in the field, times the phrase's boost)."""
        field = self.schema[q.fieldname]
        matched = np.zeros(self.n, dtype=bool)
        try:
            words = [field.to_bytes(w) for w in q.words]
        except ValueError:
            return self._zeros(), matched
        if not words:
            return self._zeros(), matched
        shift = np.int64(1) << np.int64(32)
        for r, offset in self.leaves:
            # Candidates first: the documents that hold every word (postings only); positions are read only when
            # there are some.
            candidates = None
            for word in words:
                ids, _ = postings(r, q.fieldname, word)
                candidates = ids if candidates is None else np.intersect1d(candidates, ids, assume_unique=True)
                if not len(candidates):
                    break
            if candidates is None or not len(candidates):
                continue
            keys = None
            for i, word in enumerate(words):
                docs, where = positions(r, q.fieldname, word)
                keep = np.isin(docs, candidates, assume_unique=False)
                these = docs[keep] * shift + (where[keep] - i)  # word i at p: the phrase would start at p - i
                keys = np.unique(these) if keys is None else np.intersect1d(keys, these)
                if not len(keys):
                    break
            if keys is not None and len(keys):
                matched[np.unique(keys // shift) + offset] = True
        if boolean:
            return self._zeros(), matched
        scores = self._zeros()
        for word in words:
            scores += self._bm25(q.fieldname, word)
        return np.where(matched, scores * q.boost, 0.0), matched

    def _whoosh(self, q: Any, boolean: bool) -> tuple[np.ndarray, np.ndarray]:
        """Any other part (a phrase, a single-field term, a range), by its own Whoosh matcher."""
        scores, matched = self._zeros(), np.zeros(self.n, dtype=bool)
        deadline = self.deadline
        for sub, offset in self.searcher.leaf_searchers():
            m = q.matcher(sub, sub.boolean_context() if boolean else sub.context())
            n = 0
            while m.is_active():
                doc = offset + m.id()
                matched[doc] = True
                if not boolean:
                    scores[doc] = m.score()
                m.next()
                n += 1
                if deadline is not None and not n & 127 and monotonic() > deadline:
                    self.timed_out = True
                    return scores, matched
        return scores, matched

    def _combine(self, q: Any, all_of: bool, boolean: bool) -> tuple[np.ndarray, np.ndarray]:
        subs = [self._eval(s, boolean) for s in q.subqueries]
        if not subs:
            return np.zeros(self.n), np.zeros(self.n, dtype=bool)
        matched = subs[0][1].copy()
        for _, m in subs[1:]:
            matched = matched & m if all_of else matched | m
        scores = self._zeros()
        for s, m in subs:
            if not boolean:
                scores += np.where(m, s, 0.0)
        if q.boost != 1:
            scores *= q.boost
        return scores, matched

    def _term_mask(self, q: Term) -> np.ndarray:
        """The documents that hold a term (a requirement such as the analysis profile, an excluded word, one
        word of a wildcard's expansion)."""
        matched = np.zeros(self.n, dtype=bool)
        if q.fieldname not in self.schema:
            return matched
        try:
            btext = self.schema[q.fieldname].to_bytes(q.text)
        except ValueError:
            return matched
        for r, offset in self.leaves:
            ids, _ = postings(r, q.fieldname, btext)
            matched[ids + offset] = True
        return matched

    def _fields_term(self, q: FieldsTerm) -> tuple[np.ndarray, np.ndarray]:
        parent = self.searcher.get_parent()
        df = 0
        btexts: dict[str, bytes] = {}
        for fieldname in set(q.df_fields) | set(q.weights):
            btext = q._bytes(self.schema, fieldname)
            if btext is not None:
                btexts[fieldname] = btext
        for fieldname in q.df_fields:
            if fieldname in btexts:
                df = max(df, parent.doc_frequency(fieldname, btexts[fieldname]))
        tf = np.zeros(self.n)
        matched = np.zeros(self.n, dtype=bool)
        for fieldname, weight in q.weights.items():
            if fieldname not in btexts or weight <= 0:
                continue
            avg = parent.avg_field_length(fieldname) or 1.0
            b = q.b.get(fieldname, 0.75)
            for r, offset in self.leaves:
                ids, freqs = postings(r, fieldname, btexts[fieldname])
                if not len(ids):
                    continue
                lengths = _lengths(r, fieldname)[ids]
                norm = 1.0 - b + b * lengths / avg
                glob = ids + offset
                tf[glob] += weight * freqs.astype(np.float64) / norm
                matched[glob] = True
        total = parent.doc_count_all()
        idf = math.log(1.0 + (total - df + 0.5) / (df + 0.5))
        scores = q.boost * idf * tf * (q.k1 + 1.0) / (tf + q.k1)
        return scores, matched


def evaluate(query: Any, searcher: Any, deadline: float | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(scores, matched) of ``query`` over every document."""
    return Evaluator(searcher, deadline).run(query)


class Page:
    """One page of a ranked search, as the engine reads Whoosh's ``ResultsPage``: ``total``, the matching
    documents (``results.docs()``, for the facets) and the page's hits (``hit["id"]``, ``hit.score``)."""

    def __init__(self, searcher: Any, query: Any, pagenum: int, pagelen: int, allow: Any,
                 deadline: float | None) -> None:
        ev = Evaluator(searcher, deadline)
        scores, matched = ev.run(query)
        self.timed_out = ev.timed_out
        if allow is not None:
            allowed = np.zeros(len(matched), dtype=bool)
            allowed[np.fromiter(allow, dtype=np.int64)] = True
            matched &= allowed
        self._docs = np.flatnonzero(matched)
        self.total = len(self._docs)
        best = top(scores, matched, pagenum * pagelen)[(pagenum - 1) * pagelen:]
        self.hits = [_Hit(searcher, doc, score) for score, doc in best]
        self.results = self

    def docs(self) -> np.ndarray:
        return self._docs

    def __iter__(self) -> Any:
        return iter(self.hits)


class _Hit:
    __slots__ = ("searcher", "docnum", "score")

    def __init__(self, searcher: Any, docnum: int, score: float) -> None:
        self.searcher, self.docnum, self.score = searcher, docnum, score

    def __getitem__(self, name: str) -> Any:
        return self.searcher.stored_fields(self.docnum)[name]


def top(scores: np.ndarray, matched: np.ndarray, limit: int) -> list[tuple[float, int]]:
    """The ``limit`` best (score, document number), best first, ties by document number (as Whoosh)."""
    docs = np.flatnonzero(matched)
    if not len(docs):
        return []
    s = scores[docs]
    if len(docs) > limit:
        part = np.argpartition(-s, limit - 1)[:limit]
        cut = s[part].min()
        keep = s >= cut  # every tie with the last place, so that the order by docnum is right
        docs, s = docs[keep], s[keep]
    order = np.lexsort((docs, -s))[:limit]
    return [(float(s[i]), int(docs[i])) for i in order]
