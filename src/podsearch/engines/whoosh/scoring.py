"""BM25F as podsearch scores it, and the collector that keeps every match for totals and facets."""

from __future__ import annotations

import math
from collections.abc import Callable
from time import monotonic
from typing import Any

from whoosh import collectors
from whoosh.query.qcore import QueryError as WhooshQueryError
from whoosh.scoring import BM25F, BM25FScorer
from whoosh.searching import ResultsPage

from ...errors import QueryError
from ...lru import LRU
from .ranking import RANKING, Ranking


class SpokenBM25F(BM25F):
    """Whoosh's BM25F with the Robertson-Sparck Jones idf, log(1 + (N - n + 0.5) / (n + 0.5)).

    Whoosh's own idf, log(N / (n + 1)) + 1, gives a word found in every document a weight of 1, which lets
    the common words of long queries outvote the rare ones.
    """

    def idf(self, searcher: Any, fieldname: str, text: str) -> float:
        parent = searcher.get_parent()
        n = parent.doc_frequency(fieldname, text)
        total = parent.doc_count_all()
        return math.log(1.0 + (total - n + 0.5) / (n + 0.5))

    def scorer(self, searcher: Any, fieldname: str, text: str, qf: int = 1) -> Any:
        if not searcher.schema[fieldname].scorable:
            return super().scorer(searcher, fieldname, text, qf)
        return _LengthCachedScorer(searcher, fieldname, text, self._field_B.get(fieldname, self.B), self.K1, qf=qf)


class _LengthCachedScorer(BM25FScorer):
    """Whoosh's BM25F scorer, reading field lengths from an array kept per segment (segments never change)
    instead of a column read per document and field."""

    def setup(self, searcher: Any, fieldname: str, text: str) -> Any:
        plain = super().setup(searcher, fieldname, text)
        self.dfl = field_lengths(searcher.reader(), fieldname).__getitem__
        return plain

    def score(self, matcher: Any) -> float:
        tf = matcher.weight()
        k1 = self.K1
        return self.idf * tf * (k1 + 1) / (tf + k1 * ((1 - self.B) + self.B * self.dfl(matcher.id()) / self.avgfl))


_LENGTHS: LRU[tuple[str, str, int], list[int]] = LRU(64)


def field_lengths(reader: Any, fieldname: str) -> list[int]:
    """Every document's length in ``fieldname``, for one segment's reader (kept for the 64 latest)."""
    segment = reader.segment()
    key = (segment.segment_id() if segment is not None else str(id(reader)), fieldname, reader.doc_count_all())
    found = _LENGTHS.get(key)
    if found is None:
        found = [reader.doc_field_length(d, fieldname, 1) for d in range(reader.doc_count_all())]
        _LENGTHS.put(key, found)
    return found


def weighting(ranking: Ranking = RANKING) -> BM25F:
    """The scoring of single-field terms and phrases (a word searched in several fields is scored by BM25F
    over them when the ranking says so: ``query._rewrite``)."""
    return SpokenBM25F(B=ranking.b_default, K1=ranking.k1, **{f"{f}_B": b for f, b in ranking.b})


def run(method: Callable[..., Any], query: Any, *args: Any, **kwargs: Any) -> Any:
    """Run a search; a query Whoosh refuses at run time (a phrase on a field without positions, say,
    ``year:"2023 2024"``) is the person's mistake, reported as such rather than as a server error."""
    try:
        return method(query, *args, **kwargs)
    except WhooshQueryError as exc:
        raise QueryError(f"This query cannot be run: {exc}") from None


def page(query: Any, searcher: Any, pagenum: int, pagelen: int, filt: Any, sortedby: Any,
         deadline: float | None = None) -> tuple[Any, bool]:
    """(one page of results, whether the deadline cut the search short), with the total and the set of all
    matching documents (for the facets): exact, or when cut short those of the documents read. Whoosh's own
    matching, collected match by match: the engine searches in numpy (``fast.Page``, ranked or by date since 4
    December 2026), and this is what its answers are checked against (tests/test_engine_fast.py).

    Ranked by score, every match is scored in one pass that also keeps the matching documents. (Whoosh's
    own top-N collector skips low-scoring blocks, then runs the query again to count the matches and a
    third time, without the filter, when asked for them.)
    """
    collector: Any
    if sortedby is not None:
        collector = searcher.collector(limit=pagenum * pagelen, sortedby=sortedby, filter=filt)
    else:
        collector = _TopAndMatches(pagenum * pagelen)
        if filt is not None:
            collector = collectors.FilterCollector(collector, allow=filt)
    timed = _Deadline(collector, deadline) if deadline is not None else collector
    try:
        searcher.search_with_collector(query, timed)
    except Expired:
        pass
    return ResultsPage(collector.results(), pagenum, pagelen), timed is not collector and timed.expired


class Expired(Exception):
    """The request's deadline passed."""


class _Deadline(collectors.WrappingCollector):
    """Stops collecting (raises :class:`Expired`) once ``deadline`` (``time.monotonic()``) has passed; what was
    collected until then stays in the wrapped collector. The clock is read every 128 matches, first after the
    first 128: a search that reaches its matches late (a stall, a cold first search after a reindex) still
    answers with a first page of them, cut short, rather than with nothing (a 503); that is at most 128
    matches of work past the deadline."""

    def __init__(self, child: Any, deadline: float) -> None:
        super().__init__(child)
        self.deadline = deadline
        self.expired = False
        self.collected = 0  # matches collected, over every segment

    def collect_matches(self) -> None:
        if self.collected and monotonic() > self.deadline:
            self.expired = True
            raise Expired
        collect = self.child.collect
        for sub_docnum in self.matches():
            collect(sub_docnum)
            self.collected += 1
            if not self.collected & 127 and monotonic() > self.deadline:
                self.expired = True
                raise Expired


class _TopAndMatches(collectors.TopCollector):
    """The top ``limit`` by score, plus every matching document number, in one pass.

    Whoosh's collectors "replace" the matcher as the top fills up: an ``a OR b`` whose parts can no longer
    reach the top alone becomes ``a AND b``, which is right for the top and wrong for the count (every
    document only one part matches is dropped). Here the matcher is never replaced.
    """

    def __init__(self, limit: int) -> None:
        super().__init__(limit=limit, usequality=False, replace=0)

    def _collect(self, global_docnum: int, score: float) -> Any:
        self.docset.add(global_docnum)
        return super()._collect(global_docnum, score)

    def all_ids(self) -> Any:
        return self.docset
