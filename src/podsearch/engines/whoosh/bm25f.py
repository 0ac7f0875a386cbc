"""BM25F proper: a word scored once over all the fields it is searched in (a Whoosh query and matcher).

Whoosh's multi-field search scores each field with its own BM25 and adds the results: each field has its own
idf (a word rare in show notes counts as rare there even when every transcript says it) and its own
saturation (one mention in a five-word link list scores about as much as fifty in a transcript). Measured on
the podcast sets, a title or notes field of any weight then *lowers* the ranking (docs/search.md).

BM25F (Robertson, Zaragoza and Taylor, 2004) adds a word's weighted, length-normalised frequencies over the
fields first and saturates once, with one idf per word::

    tf'(w, d)  = sum over fields f of  weight_f * tf_f(w, d) / (1 - b_f + b_f * len_f(d) / avglen_f)
    score(w, d) = idf(w) * tf' * (k1 + 1) / (tf' + k1)

``FieldsTerm`` is that word; :func:`as_bm25f` turns the per-field alternatives the multi-field query
parser writes for each word (``title:w^1.5 OR notes:w^1.15 OR ...``) into one ``FieldsTerm`` whose field
weights are those boosts. idf uses the largest document frequency of the word over its fields (a document
frequency over the union of fields is not kept; the transcript's is nearly always the largest).
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from typing import Any

from whoosh import matching
from whoosh.matching import mcore
from whoosh.query import Or, Term, qcore

from ...lru import LRU
from .scoring import field_lengths


class FieldsTerm(qcore.Query):
    """One word searched in several fields with a weight each, scored by BM25F (see the module)."""

    def __init__(self, text: str, weights: Mapping[str, float], b: Mapping[str, float] | None = None,
                 k1: float = 1.2, boost: float = 1.0, df_fields: tuple[str, ...] = ()) -> None:
        self.text = text
        self.weights = dict(weights)
        self.b = dict(b or {})
        self.k1 = k1
        self.boost = boost
        self.df_fields = tuple(df_fields) or tuple(self.weights)  # the fields whose document frequency sets idf

    def _key(self) -> tuple[Any, ...]:
        return (self.text, tuple(sorted(self.weights.items())), tuple(sorted(self.b.items())), self.k1, self.boost,
                self.df_fields)

    def __eq__(self, other: object) -> bool:
        return type(self) is type(other) and self._key() == other._key()  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        fields = ", ".join(f"{f}^{w:g}" for f, w in sorted(self.weights.items()))
        return f"FieldsTerm({self.text!r}, [{fields}]" + (f", boost={self.boost:g})" if self.boost != 1 else ")")

    def __str__(self) -> str:
        return f"({'|'.join(sorted(self.weights))}):{self.text}"

    def is_leaf(self) -> bool:
        return True

    def has_terms(self) -> bool:
        return True

    def field(self) -> str | None:
        return None

    def terms(self, phrases: bool = False) -> Iterator[tuple[str, Any]]:
        for fieldname in self.weights:
            yield fieldname, self.text

    def estimate_size(self, ixreader: Any) -> int:
        return sum(self._doc_frequency(ixreader, f) for f in self.weights)

    def _doc_frequency(self, reader: Any, fieldname: str) -> int:
        btext = self._bytes(reader.schema, fieldname)
        return reader.doc_frequency(fieldname, btext) if btext is not None else 0

    def _bytes(self, schema: Any, fieldname: str) -> bytes | None:
        if fieldname not in schema:
            return None
        try:
            return schema[fieldname].to_bytes(self.text)
        except ValueError:
            return None

    def normalize(self) -> FieldsTerm:
        return self

    def simplify(self, ixreader: Any) -> FieldsTerm:
        return self

    def matcher(self, searcher: Any, context: Any = None) -> Any:
        reader = searcher.reader()
        parent = searcher.get_parent()
        subs = []
        df = 0
        for fieldname in self.df_fields:
            btext = self._bytes(searcher.schema, fieldname)
            if btext is not None:
                df = max(df, parent.doc_frequency(fieldname, btext))
        for fieldname, weight in self.weights.items():
            btext = self._bytes(searcher.schema, fieldname)
            if btext is None or weight <= 0:
                continue
            if (fieldname, btext) not in reader:
                continue
            avg = parent.avg_field_length(fieldname) or 1.0
            factor = _factors(reader, fieldname, weight, self.b.get(fieldname, 0.75), avg)
            subs.append(_Field(reader.postings(fieldname, btext), factor))
        if not subs:
            return matching.NullMatcher()
        total = parent.doc_count_all()
        idf = math.log(1.0 + (total - df + 0.5) / (df + 0.5))
        return BM25FMatcher(subs, idf, self.k1, self.boost)


class _Field:
    """One field's postings of the word, and per document the factor its frequency is multiplied by:
    weight / (1 - b + b * length / average length)."""

    __slots__ = ("m", "factor")

    def __init__(self, m: Any, factor: list[float]) -> None:
        self.m, self.factor = m, factor

    def copy(self) -> _Field:
        return _Field(self.m.copy(), self.factor)


_FACTORS: LRU[tuple[Any, ...], list[float]] = LRU(128)


def _factors(reader: Any, fieldname: str, weight: float, b: float, avg: float) -> list[float]:
    """The per-document factors of one field in one segment (kept: they change only with the index)."""
    segment = reader.segment()
    key = (segment.segment_id() if segment is not None else str(id(reader)), fieldname, reader.doc_count_all(),
           weight, b, avg)
    found = _FACTORS.get(key)
    if found is None:
        found = [weight / (1.0 - b + b * (n or 0) / avg) for n in field_lengths(reader, fieldname)]
        _FACTORS.put(key, found)
    return found


class BM25FMatcher(mcore.Matcher):
    """The union of one word's postings in several fields, scored by BM25F. It is never replaced by a
    cheaper matcher (no block quality), so every match is scored."""

    def __init__(self, fields: list[_Field], idf: float, k1: float, boost: float = 1.0) -> None:
        self._fields = fields
        self._idf, self._k1, self._boost = idf, k1, boost
        self._id: int | None = None
        self._at: list[_Field] = []  # the fields whose postings are at the current document
        self._find()

    def _find(self) -> None:
        best: int | None = None
        at: list[_Field] = []
        for f in self._fields:
            m = f.m
            if m.is_active():
                i = m.id()
                if best is None or i < best:
                    best, at = i, [f]
                elif i == best:
                    at.append(f)
        self._id, self._at = best, at

    def is_active(self) -> bool:
        return self._id is not None

    def id(self) -> int:
        if self._id is None:
            raise mcore.ReadTooFar
        return self._id

    def next(self) -> None:
        if self._id is None:
            raise mcore.ReadTooFar
        for f in self._at:
            f.m.next()
        self._find()

    def skip_to(self, id: int) -> None:
        if self._id is None:
            raise mcore.ReadTooFar
        for f in self._fields:
            if f.m.is_active() and f.m.id() < id:
                f.m.skip_to(id)
        self._find()

    def reset(self) -> None:
        for f in self._fields:
            f.m.reset()
        self._find()

    def copy(self) -> BM25FMatcher:
        return BM25FMatcher([f.copy() for f in self._fields], self._idf, self._k1, self._boost)

    def replace(self, minquality: float = 0) -> Any:
        return self if self.is_active() else matching.NullMatcher()

    def children(self) -> list[Any]:
        return [f.m for f in self._fields]

    def term_matchers(self) -> Iterator[Any]:
        for f in self._fields:
            yield from f.m.term_matchers()

    def supports(self, astype: str) -> bool:
        return all(f.m.supports(astype) for f in self._fields)

    def supports_block_quality(self) -> bool:
        return False

    def max_quality(self) -> float:
        """The most any document can score: the saturation's limit (Whoosh's ``AndMaybeMatcher.replace`` asks
        for it even with no quality to reach: a date-sorted ``open-source`` failed without it)."""
        return self._boost * self._idf * (self._k1 + 1.0)

    def weight(self) -> float:
        current = self._id
        return sum(f.factor[current] * f.m.weight() for f in self._at)

    def score(self) -> float:
        tf = self.weight()
        return self._boost * self._idf * tf * (self._k1 + 1.0) / (tf + self._k1)


def as_bm25f(q: Any, b: Mapping[str, float] | None = None, k1: float = 1.2,
             separate: Mapping[str, float] | None = None) -> Any:
    """``q`` with each word's per-field alternatives turned into one :class:`FieldsTerm`.

    The multi-field parser writes a word as ``Or([Term(title, w, boost=1.5), Term(notes, w, boost=1.15),
    ...])``, and Whoosh flattens nested ``Or`` s, so the terms of an any-word query arrive in one ``Or``:
    they are grouped by text, each group (one term per field) becoming a ``FieldsTerm`` weighted by the
    boosts.
    """
    if type(q) is Or:
        groups: dict[Any, list[Any]] = {}
        rest = []
        for sub in q.subqueries:
            if type(sub) is Term:
                groups.setdefault(sub.text, []).append(sub)
            else:
                rest.append(as_bm25f(sub, b, k1, separate))
        parts = []
        for text, terms in groups.items():
            fields = [t.fieldname for t in terms]
            if len(terms) > 1 and len(set(fields)) == len(fields):
                parts.extend(_word(text, {t.fieldname: t.boost for t in terms}, b, k1, separate or {}))
            else:
                parts.extend(terms)
        parts += rest
        if len(parts) == 1 and q.boost == 1:
            return parts[0]
        return Or(parts, boost=q.boost, minmatch=q.minmatch, scale=q.scale)
    if q.is_leaf():
        return q
    return q.apply(lambda sub: as_bm25f(sub, b, k1, separate))


def _word(text: str, weights: dict[str, float], b: Mapping[str, float] | None, k1: float,
          separate: Mapping[str, float]) -> list[Any]:
    """One word: a FieldsTerm over its fields, or with ``separate`` fields (field -> k1) saturated on their own
    (with the word's idf over all fields), an Or of such terms."""
    alone = {f: w for f, w in weights.items() if f in separate}
    together = {f: w for f, w in weights.items() if f not in separate}
    terms = [FieldsTerm(text, together, b, k1, df_fields=tuple(weights))] if together else []
    terms += [FieldsTerm(text, {f: w}, b, separate[f], df_fields=tuple(weights)) for f, w in alone.items()]
    return terms if len(terms) == 1 else [Or(terms)]
