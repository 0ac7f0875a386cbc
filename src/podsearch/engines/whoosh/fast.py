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
from bisect import bisect_left
from collections.abc import Callable, Sequence
from pickle import loads
from time import monotonic
from typing import Any

import numpy as np
from whoosh.query import And, AndMaybe, AndNot, ConstantScoreQuery, Every, Not, NullQuery, Or, Phrase, Require, Term

from ...lru import LRU
from .bm25f import FieldsTerm
from .exclusions import Excluding
from .query import SpacedPhrase
from .scoring import field_lengths

POSTINGS_BYTES = 256 << 20  # decoded postings kept per process


class _Sized(LRU):
    """An LRU of arrays bounded by their total size in bytes (each entry counted with its key's and tuple's
    overhead too, so that many empty arrays, "this document does not hold the word", are bounded as well)."""

    ENTRY_BYTES = 200

    def __init__(self, limit: int) -> None:
        super().__init__(entries=1 << 30)
        self.limit, self.size = limit, 0

    def _bytes(self, value: Any) -> int:
        return self.ENTRY_BYTES + sum(a.nbytes for a in value)

    def put(self, key: Any, value: Any) -> None:  # type: ignore[override]
        nbytes = self._bytes(value)
        with self._lock:  # the lock ``get`` takes: one order of the entries, one size
            old = self._items.pop(key, None)
            if old is not None:  # the same key read twice at once: counted once
                self.size -= self._bytes(old)
            self._items[key] = value
            self.size += nbytes
            while self.size > self.limit and len(self._items) > 1:
                _, old = self._items.popitem(last=False)
                self.size -= self._bytes(old)


_POSTINGS = _Sized(POSTINGS_BYTES)
_LENGTHS: LRU[tuple[Any, ...], np.ndarray] = LRU(256)
_LIVE: LRU[tuple[Any, ...], np.ndarray] = LRU(64)
_DFS: LRU[tuple[Any, ...], int] = LRU(65536)  # a term's document frequency in one segment, as the term file says it


def segment_key(reader: Any) -> Any:
    segment = reader.segment()
    return segment.segment_id() if segment is not None else id(reader)


def postings(reader: Any, fieldname: str, btext: bytes) -> tuple[np.ndarray, np.ndarray]:
    """(document numbers, weights) of a term in one segment, decoded block by block and kept."""
    key = (segment_key(reader), reader.doc_count_all(), fieldname, btext)
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
    key = (segment_key(reader), reader.doc_count_all(), fieldname, btext, "positions")
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
                where.append(decode_positions(value))
                docs.append(np.full(len(where[-1]), doc, dtype=np.int64))
            leaf._next_block()
    found = (np.concatenate(docs) if docs else np.empty(0, np.int64),
             np.concatenate(where) if where else np.empty(0, np.int64))
    _POSTINGS.put(key, found)
    return found


def largest_df(leaves: list[tuple[Any, int]], btexts: dict[str, bytes]) -> int:
    """A term's largest document frequency over its fields (``btexts``: field -> the term's bytes there), counted
    as the term files count it: from the postings when a search has decoded them (a sum), else from the term file
    (not decoding them: a pattern's 1,280 words in five fields, most of them never read by a search cut short at
    its deadline, took 2.2 s of CPU to rate cold at 10k)."""
    return max((sum(_df(r, f, b) for r, _ in leaves) for f, b in btexts.items()), default=0)


def _df(reader: Any, fieldname: str, btext: bytes) -> int:
    key = (segment_key(reader), reader.doc_count_all(), fieldname, btext)
    found = _POSTINGS.get(key)
    if found is not None:
        return len(found[0])
    # kept: the passage step rates every word of a query's patterns (1,152 words of 26 two-letter prefixes, in five
    # fields and each segment: 0.6 s of term-file reads, each time the query was asked)
    df = _DFS.get(key)
    if df is None:
        df = int(reader.doc_frequency(fieldname, btext)) if (fieldname, btext) in reader else 0
        _DFS.put(key, df)
    return df


def in_sorted(values: np.ndarray, sorted_: np.ndarray) -> np.ndarray:
    """Whether each of ``values`` is in the ascending array ``sorted_`` (a binary search each, no sort)."""
    if not len(sorted_):
        return np.zeros(len(values), dtype=bool)
    at = np.searchsorted(sorted_, values)
    return sorted_[np.minimum(at, len(sorted_) - 1)] == values


_SHIFT = 1 << 32  # a key: document << 32 | the phrase's start as one word's position puts it (+ _PLACE_BIAS)
_PLACE_BIAS = 1 << 20  # keeps a start (a position less a word's place and the slop) within its document's keys


def near(keys: list[np.ndarray], slop: int, past_due: Callable[[], bool] = lambda: False,
         places: Sequence[int] = (), again: Sequence[Sequence[int]] = ()) -> tuple[np.ndarray, bool]:
    """The documents where the phrase's words fit within ``slop`` moves, Lucene's sloppy phrase: ``keys[i]`` are word
    i's (document << 32) + (position - its place in the phrase + a bias), ascending; a document matches when one key
    of each word lies in a window ``slop`` wide (a word left out moves the rest one, two words swapped move each
    other two). ``again`` groups the words that are one word said more than once (their indexes, in the order of
    their ``places``): as in Lucene, each of them needs a position of its own (``"go go"~2`` is not one "go"). The
    windows tried are those holding a key of the rarest word at each of their places, or, when that is more (a wide
    slop), those starting at any word's key; the work is bounded by the keys, not the slop. Returns the documents
    and whether every window was tried (``past_due`` stops it between two rounds)."""
    slop = min(slop, _PLACE_BIAS)  # (wider than any transcript; a window never reaches the next document's keys)
    rarest = min(keys, key=len)
    if not len(rarest):
        return np.empty(0, np.int64), True
    if (slop + 1) * len(rarest) <= sum(len(k) for k in keys):
        starts = [rarest - back for back in range(slop + 1)]
    else:
        starts = keys
    repeated = {i for group in again for i in group}
    found, complete = [np.empty(0, np.int64)], True
    for start in starts:
        if len(found) > 1 and past_due():  # (the first round always)
            complete = False
            break
        fits = np.ones(len(start), dtype=bool)
        for i, other in enumerate(keys):
            if i not in repeated:
                at = np.minimum(np.searchsorted(other, start[fits]), len(other) - 1)
                fits[fits] = (other[at] >= start[fits]) & (other[at] <= start[fits] + slop)
        for group in again:  # each its own position: the earliest free one, place by place (the windows are alike)
            said = keys[group[0]] + places[group[0]]  # (document << 32) + position + bias
            taken = np.full(len(start), -1, dtype=np.int64)
            for i in group:
                still = np.flatnonzero(fits)
                lowest = np.maximum(start[still] + places[i], taken[still] + 1)
                at = said[np.minimum(np.searchsorted(said, lowest), len(said) - 1)]
                taken[still] = at
                fits[still] = (at >= lowest) & (at <= start[still] + places[i] + slop)
        found.append(start[fits])
    return np.unique(np.concatenate(found) // _SHIFT), complete


def _said_again(words: list[bytes], places: Sequence[int]) -> list[list[int]]:
    """The phrase's words grouped by what they say: each group's indexes in the order of their places."""
    groups: dict[bytes, list[int]] = {}
    for i in sorted(range(len(words)), key=lambda i: places[i]):
        groups.setdefault(words[i], []).append(i)
    return list(groups.values())


def _said_enough(candidates: np.ndarray, keys: list[np.ndarray], again: Sequence[Sequence[int]]) -> np.ndarray:
    """The ``candidates`` (documents holding every word) that hold each word said more than once in the phrase
    (``again``) at least as many times: where any positions fit the window, distinct ones are all a phrase needs."""
    for group in again:
        docs, counts = np.unique(keys[group[0]] // _SHIFT, return_counts=True)
        candidates = np.intersect1d(candidates, docs[counts >= len(group)], assume_unique=True)
    return candidates


FEW_CANDIDATES = 256  # a phrase's candidates in a segment up to which their positions are read one by one


def _starts(reader: Any, fieldname: str, btext: bytes, candidates: np.ndarray, place: int,
            few: bool = False) -> tuple[np.ndarray, int]:
    """(keys, furthest position) of a phrase's word in the ``candidates`` of one segment: for each of its positions
    p, where the phrase would start were the word at its ``place`` there, as ``document << 32 | p - place + bias``
    (ascending: documents, then positions); the furthest p, 0 when none. ``few``: the candidates are a filter's
    few (at most ``FEW_CANDIDATES``), whose positions are read one by one (a search without a filter reads the
    word's every position once and keeps them: one by one, its phrases took 4-12% longer at 10k)."""
    if few:  # (their postings read alone: a common word's every position, searched
        found = doc_positions(reader, fieldname, btext, candidates.tolist())  # for a few, cost more than reading)
        if not found:
            return _NONE, 0
        docs = np.concatenate([np.full(len(where), d, dtype=np.int64) for d, where in found])
        kept = np.concatenate([where for _, where in found])
    else:
        docs, where = positions(reader, fieldname, btext)
        keep = in_sorted(docs, candidates)
        docs, kept = docs[keep], where[keep]
    return docs * _SHIFT + (kept - place + _PLACE_BIAS), int(kept.max()) if len(kept) else 0


def decode_positions(value: bytes) -> np.ndarray:
    """The positions of one posting of a field with positions (Whoosh's Positions format: a frequency, then the
    pickled gaps between positions)."""
    gaps = loads(value[4:] if value.endswith(b".") else value[4:] + b".")
    return np.cumsum(np.asarray(gaps, dtype=np.int64))


_BLOCKS: LRU[tuple[Any, ...], tuple[list[int], list[int]]] = LRU(4096)


POSITIONS_BYTES = 64 << 20  # one document's positions of one term, kept per process (passages, moments)
_DOC_POSITIONS = _Sized(POSITIONS_BYTES)
_NONE = np.empty(0, np.int64)


def doc_positions(reader: Any, fieldname: str, btext: bytes, docs: list[int]) -> list[tuple[int, np.ndarray]]:
    """(document, positions) of a term in those of ``docs`` (sorted, numbers in this segment ``reader``) that hold
    it: the reads for a page's or the top's few documents, without decoding the term's whole postings.

    Whoosh's matcher finds a document by reading the first block whole, then every block header up to it, then
    each id of the block in turn; instead the blocks' last ids and places are read once per term and segment
    (kept), and only the block that can hold a document is read. What is read is kept (an LRU by size, as the
    postings are: a segment never changes): a search's passages and then its page's moments read a hit once, and
    a common word's top episodes are read once for the searches that share it."""
    if (fieldname, btext) not in reader:
        return []
    key = (segment_key(reader), reader.doc_count_all(), fieldname, btext)
    out: list[tuple[int, np.ndarray]] = []
    rest: list[int] = []
    for d in docs:
        kept = _DOC_POSITIONS.get(key + (d,))
        if kept is None:
            rest.append(d)
        elif len(kept[0]):
            out.append((d, kept[0]))
    if rest:
        found = dict(_read_positions(reader, fieldname, btext, rest))
        for d in rest:
            where = found.get(d, _NONE)
            _DOC_POSITIONS.put(key + (d,), (where,))
            if len(where):
                out.append((d, where))
        out.sort(key=lambda item: item[0])
    return out


def _read_positions(reader: Any, fieldname: str, btext: bytes, docs: list[int]) -> list[tuple[int, np.ndarray]]:
    """:func:`doc_positions` read from the index: one posting block per document (the term is in ``reader``)."""
    matcher = reader.postings(fieldname, btext)
    leaf = getattr(matcher, "child", matcher)  # a deletion filter wraps the leaf
    key = (segment_key(reader), reader.doc_count_all(), fieldname, btext)
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


PASSAGE_WORDS = 4  # the rarest words of a query that its passages are read for (topical queries have 2-4)


def best_windows(searcher: Any, fieldname: str, docnums: list[int | None], words: list[str], width: int,
                 df_fields: list[str], k1: float = 1.2, most: int = PASSAGE_WORDS) -> np.ndarray:
    """Each document's best window of ``width`` positions in ``fieldname``: over the windows that start at one of
    the words, the largest sum over the words of idf x saturated count in the window (idf as BM25F's, from the
    largest document frequency over ``df_fields``). 0 for a document (or None) holding none of the words.

    Only the given documents' positions are read (the postings skipped to each, a few dozen reads for the top 30),
    so the cost does not grow with how common a word is; a document's windows are a few ``searchsorted`` s. Of
    many words (a pasted sentence, a wildcard's expansions) the ``most`` rarest count, which bounds the reads."""
    out = np.zeros(len(docnums))
    if not any(d is not None for d in docnums) or not words or fieldname not in searcher.schema:
        return out
    leaves = _leaves(searcher.reader())
    parent = searcher.get_parent()
    total = parent.doc_count_all()
    field = searcher.schema[fieldname]
    rated: list[tuple[int, str, bytes]] = []
    for word in sorted(set(words)):
        try:
            btext = field.to_bytes(word)
        except ValueError:
            continue
        df = largest_df(leaves, {f: searcher.schema[f].to_bytes(word) for f in df_fields if f in searcher.schema})
        if df:
            rated.append((df, word, btext))
    found: list[tuple[float, dict[int, np.ndarray]]] = []
    for df, _word, btext in sorted(rated)[:most]:
        at: dict[int, np.ndarray] = {}
        for i, (r, offset) in enumerate(leaves):
            end = leaves[i + 1][1] if i + 1 < len(leaves) else total
            local = [d - offset for d in docnums if d is not None and offset <= d < end]
            if local:  # those that hold the word (the postings the search has decoded already)
                held = np.sort(np.asarray(local))
                local = held[in_sorted(held, postings(r, fieldname, btext)[0])].tolist()
            for d, where in doc_positions(r, fieldname, btext, local):
                at[d + offset] = where
        if at:
            found.append((math.log(1.0 + (total - df + 0.5) / (df + 0.5)), at))
    for i, d in enumerate(docnums):
        starts = [at[d] for _, at in found if d in at]
        if not starts:
            continue
        start = np.concatenate(starts)
        score = np.zeros(len(start))
        for idf, at in found:
            if d in at:
                count = (np.searchsorted(at[d], start + width) - np.searchsorted(at[d], start)).astype(np.float64)
                score += idf * count * (k1 + 1.0) / (count + k1)
        out[i] = score.max()
    return out


def _lengths(reader: Any, fieldname: str) -> np.ndarray:
    key = (segment_key(reader), reader.doc_count_all(), fieldname)
    found = _LENGTHS.get(key)
    if found is None:
        found = np.asarray(field_lengths(reader, fieldname), dtype=np.float64)
        _LENGTHS.put(key, found)
    return found


class Evaluator:
    """Evaluates one query over every document of a searcher's index (all its segments). A part evaluated by
    Whoosh stops at ``deadline`` (``time.monotonic()``) with the matches it has (``timed_out``)."""

    def __init__(self, searcher: Any, deadline: float | None = None, allowed: np.ndarray | None = None) -> None:
        self.searcher = searcher
        self.deadline = deadline
        self.allowed = allowed  # the documents a filter lets through (a mask): a phrase reads positions of no other
        self.timed_out = False
        self.negated = False  # (evaluating an excluded part: ``_excluded``)
        self.reader = searcher.reader()
        self.n = self.reader.doc_count_all()
        self.leaves = _leaves(self.reader)
        self.schema = searcher.schema

    def live(self) -> np.ndarray:
        """Documents not deleted."""
        key = tuple((segment_key(r), r.doc_count_all(), r.doc_count()) for r, _ in self.leaves)
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
        if type(q) is Every and not q.fieldname:  # every episode (the deleted ones are left out by run)
            return self._zeros(), np.ones(self.n, dtype=bool)
        if isinstance(q, FieldsTerm):
            return self._fields_term(q)
        if type(q) is Term and (boolean or not self._scorable(q)):
            return self._zeros(), self._term_mask(q)
        if isinstance(q, Excluding | AndNot):
            scores, matched = self._eval(q.a, boolean)
            return scores, matched & ~self._excluded(q.b)
        if type(q) is Not:  # (excluded words alone: ``-rust``, ``NOT rust``; Whoosh's constant score, 1)
            matched = ~self._excluded(q.query)
            return (self._zeros() if boolean else matched.astype(float)), matched
        if isinstance(q, Require):
            scores, matched = self._eval(q.a, boolean)
            return scores, matched & self._eval(q.b, True)[1]
        if isinstance(q, AndMaybe):
            scores, matched = self._eval(q.a, boolean)
            if boolean:
                return scores, matched
            extra, maybe = self._eval(q.b, False)
            return scores + np.where(matched & maybe, extra, 0.0), matched
        if type(q) in (Phrase, SpacedPhrase) and self._has_positions(q.fieldname):
            return self._phrase(q, boolean)
        if type(q) is Term and self._scorable(q):
            return self._term(q), self._term_mask(q)
        if isinstance(q, ConstantScoreQuery):  # (a pattern's words: ``bounds``)
            child = q.child
            words = type(child) is Or and not child.minmatch and not child.scale
            _, matched = self._combine(child, False, True, words=True) if words else self._eval(child, True)
            return np.where(matched, float(q.score), 0.0), matched
        if type(q) is And:
            return self._combine(q, True, boolean)
        if type(q) is Or and not q.minmatch and not q.scale:
            return self._combine(q, False, boolean)
        return self._whoosh(q, boolean)

    def _excluded(self, q: Any) -> np.ndarray:
        """The documents an excluded part matches. Cut short at the deadline, a part answers with fewer documents
        than it matches; excluded, it answers with more (a phrase: every document holding its words; Whoosh's
        matcher: every document it had not reached), so that an answer cut short never holds what was excluded."""
        self.negated = not self.negated  # (an exclusion inside an exclusion is a match again)
        try:
            return self._eval(q, True)[1]
        finally:
            self.negated = not self.negated

    def _past_due(self) -> bool:
        """Whether the deadline has passed (and the search is then said to be cut short)."""
        if self.deadline is not None and monotonic() > self.deadline:
            self.timed_out = True
        return self.timed_out

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
        """Words next to each other, in order: the documents where the positions line up (a joined word's parts
        between it and the next word: ``SpacedPhrase.places``); typed with a slop (``"a b c"~N``, a Whoosh slop of
        N + 1: ``query.lucene_slop``) the words within N moves of the phrase, as Lucene (OpenSearch) counts them
        (:func:`near`: a word left out is one, two words swapped two). Scored as Whoosh scores a phrase (the sum of
        its words' BM25 in the field, times the phrase's boost). Whoosh's own sloppy matcher is never used: 40
        common words within 100,000 moves worked 493 s of CPU on the site corpus inside its documents, where no
        deadline is read."""
        field = self.schema[q.fieldname]
        matched = np.zeros(self.n, dtype=bool)
        try:
            words = [field.to_bytes(w) for w in q.words]
        except ValueError:
            return self._zeros(), matched
        if not words:
            return self._zeros(), matched
        places = getattr(q, "places", None) or range(len(words))
        again = [group for group in _said_again(words, places) if len(group) > 1]
        gave_up = False
        for r, offset in self.leaves:
            # Candidates first: the documents that hold every word (postings only); positions are read only when
            # there are some. Past the deadline a phrase stops before its third word's positions (a cold first
            # search still reads two), and the documents matched so far are its answer, cut short; excluded, its
            # answer is every candidate instead, of this segment and the next ones (``_excluded``).
            candidates = None
            if self.allowed is not None:  # (a few documents let through: each word's postings looked up for them)
                candidates = np.flatnonzero(self.allowed[offset:offset + r.doc_count_all()])
            for word in words:
                if candidates is not None and not len(candidates):
                    break
                ids, _ = postings(r, q.fieldname, word)
                candidates = ids if candidates is None else (candidates[in_sorted(candidates, ids)]
                                                             if len(candidates) < len(ids)
                                                             else np.intersect1d(candidates, ids, assume_unique=True))
            if candidates is None or not len(candidates):
                continue
            if gave_up:
                matched[candidates + offset] = True
                continue
            cut = False  # (this phrase stopped at the deadline; an earlier part's time-out leaves it be)
            few = self.allowed is not None and len(candidates) <= FEW_CANDIDATES
            if q.slop > 1:
                moves = q.slop - 1  # (Whoosh's slop 1 is the exact phrase, Lucene's 0)
                each, last = [], 0
                for i, word in enumerate(words):
                    if len(each) >= 2 and self._past_due():
                        cut = True
                        break
                    keys, furthest = _starts(r, q.fieldname, word, candidates, places[i], few)
                    each.append(keys)
                    last = max(last, furthest)
                if not cut and moves > last + max(places):  # a window wider than any of the documents: each
                    matched[_said_enough(candidates, each, again) + offset] = True  # holds every word (enough times)
                    continue
                if not cut:
                    found, complete = near(each, moves, self._past_due, places, again)
                    matched[found + offset] = True
                    cut = not complete
            else:
                keys = None
                for i, word in enumerate(words):
                    if i >= 2 and self._past_due():
                        cut = True
                        break
                    these, _ = _starts(r, q.fieldname, word, candidates, places[i], few)
                    keys = these if keys is None else keys[in_sorted(keys, these)]
                    if not len(keys):
                        break
                if not cut and keys is not None and len(keys):
                    matched[np.unique(keys // _SHIFT) + offset] = True
            if cut:
                if not self.negated:
                    break
                gave_up = True
                matched[candidates + offset] = True
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
                    if self.negated:  # (excluded: every document not reached is taken as a match)
                        matched[doc + 1:] = True
                    return scores, matched
        return scores, matched

    def _combine(self, q: Any, all_of: bool, boolean: bool, words: bool = False) -> tuple[np.ndarray, np.ndarray]:
        """All (``all_of``) or any of the parts. Of a pattern's ``words`` (its expansion: up to 64 in each field),
        past the deadline, those not yet read are left out (20 patterns read 2,539 postings, 5.3 s of CPU cold at
        10k, with no deadline), or, excluded, taken to match every document (``_excluded``)."""
        subs = []
        for n, sub in enumerate(q.subqueries):
            if n and words and self._past_due():
                if self.negated:
                    return self._zeros(), np.ones(self.n, dtype=bool)
                break
            subs.append(self._eval(sub, boolean))
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
        btexts: dict[str, bytes] = {}
        for fieldname in set(q.df_fields) | set(q.weights):
            btext = q._bytes(self.schema, fieldname)
            if btext is not None:
                btexts[fieldname] = btext
        df = largest_df(self.leaves, {f: btexts[f] for f in q.df_fields if f in btexts})
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
    """One page of a search, as the engine reads Whoosh's ``ResultsPage``: ``total``, the matching documents
    (``results.docs()``, for the facets) and the page's hits (``hit["id"]``, ``hit.score``). Ranked by score, or,
    with ``places`` (each document's place in an order: :func:`date_places`), in that order."""

    def __init__(self, searcher: Any, query: Any, pagenum: int, pagelen: int, allow: Any,
                 deadline: float | None, places: np.ndarray | None = None) -> None:
        allowed = None
        if allow is not None:
            allowed = np.zeros(searcher.reader().doc_count_all(), dtype=bool)
            allowed[np.fromiter(allow, dtype=np.int64)] = True
        ev = Evaluator(searcher, deadline, allowed)
        scores, matched = ev.run(query)
        self.timed_out = ev.timed_out
        if allowed is not None:
            matched &= allowed
        self._docs = np.flatnonzero(matched)
        self.total = len(self._docs)
        if places is None:
            best = top(scores, matched, pagenum * pagelen)[(pagenum - 1) * pagelen:]
        else:
            best = [(float(scores[d]), d) for d in first_by(places, self._docs, pagenum * pagelen)[(pagenum - 1) * pagelen:]]
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
        if name == "id":
            return doc_ids(self.searcher.reader())[0][self.docnum]
        return self.searcher.stored_fields(self.docnum)[name]


_IDS: LRU[tuple[Any, ...], tuple[list[str | None], dict[str, int]]] = LRU(4)


def doc_ids(reader: Any) -> tuple[list[str | None], dict[str, int]]:
    """(the id of each document number, None for a deleted one; the number of each id) of the generation
    ``reader`` reads, made once per process: a page's hits are named without unpickling their stored fields."""
    key = tuple((segment_key(r), r.doc_count_all(), r.doc_count()) for r, _ in reader.leaf_readers())
    found = _IDS.get(key)
    if found is None:
        ids: list[str | None] = [None] * reader.doc_count_all()
        for docnum, fields in reader.iter_docs():
            ids[docnum] = fields["id"]
        found = (ids, {i: n for n, i in enumerate(ids) if i is not None})
        _IDS.put(key, found)
    return found


def first_by(places: np.ndarray, docs: np.ndarray, limit: int) -> list[int]:
    """The ``limit`` first of ``docs`` by their ``places`` (all different)."""
    if len(docs) > limit:
        docs = docs[np.argpartition(places[docs], limit - 1)[:limit]]
    return docs[np.argsort(places[docs], kind="stable")].tolist()


_DATES: LRU[tuple[Any, ...], np.ndarray] = LRU(8)


def date_places(reader: Any, newest: bool) -> np.ndarray:
    """Each document's place in date order, newest (or oldest) first, those without a date after every dated one,
    those of one date (or none) by their ``order`` column (``base.listing_key``: the highest first when newest
    first, the lowest when oldest first; as OpenSearch sorts them), then by document number (an index of schema 7,
    without the column: until 5 December 2026 the only tie-break, as Whoosh's collector sorted them); made once
    per index generation and order. A date-sorted search (the search feeds and watches) is then matched and
    scored as a ranked one is, in arrays, rather than match by match by Whoosh's collector (a query of a dozen
    patterns spent 0.65 s building Whoosh's matchers)."""
    key = (tuple((segment_key(r), r.doc_count_all()) for r, _ in _leaves(reader)), newest)
    found = _DATES.get(key)
    if found is None:
        n = reader.doc_count_all()
        field = reader.schema["published"]
        missing = field.column_type.default_value()
        values = np.full(n, missing, dtype=np.uint64)
        orders = np.full(n, b"", dtype=object)
        ordered = "order" in reader.schema  # (not in an index of schema 7)
        for r, offset in _leaves(reader):
            if r.has_column("published"):
                column = r.column_reader("published", translate=False)
                values[offset:offset + r.doc_count_all()] = np.fromiter(
                    (column[d] for d in range(r.doc_count_all())), dtype=np.uint64, count=r.doc_count_all())
            if ordered and r.has_column("order"):
                column = r.column_reader("order", translate=False)
                orders[offset:offset + r.doc_count_all()] = [column[d] for d in range(r.doc_count_all())]
        undated = values == missing
        dates = np.iinfo(np.uint64).max - values if newest else values
        ranks = np.unique(orders, return_inverse=True)[1].reshape(n) if n else np.zeros(0, dtype=np.int64)
        order = np.lexsort((np.arange(n), -ranks if newest else ranks, dates, undated))
        found = np.empty(n, dtype=np.int64)
        found[order] = np.arange(n)
        _DATES.put(key, found)
    return found


def _leaves(reader: Any) -> list[tuple[Any, int]]:
    """(segment reader, its first document number) of each segment ``reader`` reads."""
    return list(reader.leaf_readers()) if not reader.is_atomic() else [(reader, 0)]


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
