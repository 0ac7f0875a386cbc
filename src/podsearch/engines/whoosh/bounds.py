"""What one query may cost, as Lucene and Elasticsearch bound it: no part expands to more than a few words, no
query has more than so many clauses, parentheses nest only so deep, and a word may not start with a wildcard.

A field's ``*`` (``title:*``, or a ``*`` among other words) is every episode, read as such (Whoosh's own reading
unions the postings of every word of the field: 7-16 s for one query on the site corpus).

A wildcard, prefix, fuzzy or range part is searched with its ``MAX_EXPANSIONS`` most frequent words (and
the answer says so when it had more); a part that matches more than ``MAX_MATCHING_WORDS`` words, or
whose words cannot be listed without reading ``MAX_SCANNED_WORDS`` of the index's, is refused with a
message that says which part and what to do (the limits and the messages are every engine's:
``engines/expansions.py``). Every expanded part keeps Whoosh's constant score.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, MutableMapping
from itertools import islice
from typing import Any

from whoosh.query import (
    AndNot,
    ConstantScoreQuery,
    Every,
    FuzzyTerm,
    MultiTerm,
    Not,
    NullQuery,
    Or,
    Prefix,
    Term,
    TermRange,
    Wildcard,
)
from whoosh.support.levenshtein import distance

from ...errors import QueryError
from .. import expansions
from ..querytext import MIN_PREFIX, leading_wildcard
from .analysis import profile_analyzer
from .query import LettersPrefix, LettersWildcard
from .scoring import Expired

WORDS = "words"  # the word list: every word of an episode, unstemmed (schema.unique_words)


def bound(query: Any, reader: Any, deadline: float | None = None,
          seen: MutableMapping[tuple[str, str], tuple[list[Any], int]] | None = None) -> tuple[Any, list[str]]:
    """``query`` with each expanding part replaced by its most frequent words (constant score, as before),
    and notes for the person on what was cut; QueryError for a part or a query over the limits. ``seen``: the
    parts' expansions already made over ``reader`` (by other queries: the spelling suggestion's counts repeat
    the query's patterns), added to."""
    notes: dict[str, str] = {}
    seen = {} if seen is None else seen
    # the terms so far: the words' and the expansions' (a query over the limit is refused as soon as its expansions
    # pass it, not when the last is made: 65 two-letter prefixes ran into the deadline first, a 503, and a 400 once
    # their expansions were kept)
    terms = [sum(1 for leaf in query.leaves() if not isinstance(leaf, MultiTerm))]

    def expand(q: Any, excluded: bool) -> Any:
        if isinstance(q, Every) and q.fieldname:  # "title:*", or a "*" among words: every episode (Whoosh's
            return Every(boost=q.boost)  # fielded form reads the postings of every word of the field)
        if not isinstance(q, MultiTerm):
            return q
        if deadline is not None and time.monotonic() > deadline:
            raise Expired
        shown = _shown(q)
        # an excluded part is every word it matches (at most MAX_MATCHING_WORDS): its most frequent alone let the
        # others through ("go -ch*" found an episode saying "choir", until 5 December 2026)
        key = (q.fieldname, repr(q), excluded) if excluded else (q.fieldname, repr(q))
        if key not in seen:
            seen[key] = _expansion(q, reader, shown, deadline, every=excluded)
        words, matching = seen[key]
        terms[0] += len(words)
        if terms[0] > expansions.MAX_CLAUSES:
            raise expansions.too_many_clauses(terms[0], more=True)
        note = expansions.cut_note(shown, matching) if len(words) < matching else None
        if note:
            notes[shown] = note
        if not words:
            return NullQuery
        inner = words[0] if len(words) == 1 else Or(words)
        return ConstantScoreQuery(inner, score=q.boost)

    def walk(q: Any, excluded: bool) -> Any:
        """``q`` with its parts expanded, ``excluded`` when it is inside an odd number of exclusions (as
        ``Query.accept`` walks, children first)."""
        if isinstance(q, AndNot):
            return q.__class__(walk(q.a, excluded), walk(q.b, not excluded))
        if isinstance(q, Not):
            return q.__class__(walk(q.query, not excluded))
        return expand(q.apply(lambda child: walk(child, excluded)), excluded)

    bounded = walk(query, False)
    clauses = sum(1 for _ in bounded.leaves())
    if clauses > expansions.MAX_CLAUSES:
        raise expansions.too_many_clauses(clauses)
    return bounded, list(notes.values())


def _shown(q: Any) -> str:
    """A part as the person typed it."""
    if isinstance(q, TermRange):  # (with its brackets as typed: "{" and "}" leave the end out)
        return f"{'{' if q.startexcl else '['}{q.start or '*'} TO {q.end or '*'}{'}' if q.endexcl else ']'}"
    if isinstance(q, Prefix):
        return f"{q.text}*"
    if isinstance(q, FuzzyTerm):
        return f"{q.text}~{q.maxdist}"
    return str(q.text)


def _expansion(q: Any, reader: Any, shown: str, deadline: float | None, every: bool = False) -> tuple[list[Any], int]:
    """(the part's most frequent words as Terms, or with ``every`` all its words, how many words it matches)."""
    field = q.fieldname
    if field not in reader.schema:
        return [], 0
    if isinstance(q, LettersPrefix | LettersWildcard) and WORDS in reader.schema:
        return _letters(q, reader, shown, deadline, every)
    if isinstance(q, FuzzyTerm):
        matched = _near(q, reader, shown, deadline)
    elif isinstance(q, Wildcard | Prefix):
        prefix = q.text if isinstance(q, Prefix) else Wildcard._find_prefix(q, q.text)
        if len(prefix) < MIN_PREFIX:
            raise QueryError(leading_wildcard(shown))
        if isinstance(q, Wildcard):
            pattern = re.compile(q._get_pattern())
            found = _scan(reader, field, prefix, lambda word: pattern.match(word) is not None, deadline)
            if found is None:
                raise expansions.too_many_scanned(shown, prefix)
            matched = found
        else:
            matched = list(_timed(islice(reader.expand_prefix(field, prefix), expansions.MAX_MATCHING_WORDS + 1),
                                  deadline))
    else:
        matched = list(_timed(islice(q._btexts(reader), expansions.MAX_MATCHING_WORDS + 1), deadline))
    if len(matched) > expansions.MAX_MATCHING_WORDS:
        raise expansions.too_many_matching(shown)
    top = sorted(matched) if every else expansions.most_frequent(matched, lambda b: reader.doc_frequency(field, b))
    to_text = reader.schema[field].from_bytes
    return [Term(field, to_text(b)) for b in top], len(matched)


def _letters(q: Any, reader: Any, shown: str, deadline: float | None, every: bool) -> tuple[list[Any], int]:
    """The words of a pattern read by its letters (``query.FoldedPatterns``): the words of the word list (``words``,
    every word of title, show, notes and transcript, unstemmed) that begin with its letters or match it, read among
    at most ``MAX_SCANNED_WORDS``, each as its stem in the part's profile (a stop word has none), the stems the field
    holds; the same words OpenSearch lists and stems (``opensearch/expand.py``)."""
    field = q.fieldname
    prefix = q.text if isinstance(q, Prefix) else Wildcard._find_prefix(q, q.text)
    if len(prefix) < MIN_PREFIX:
        raise QueryError(leading_wildcard(shown))
    if isinstance(q, Prefix):
        words = _scan(reader, WORDS, prefix, lambda word: True, deadline)
        if words is None:
            raise expansions.too_many_matching(shown)
    else:
        pattern = re.compile(q._get_pattern())
        words = _scan(reader, WORDS, prefix, lambda word: pattern.match(word) is not None, deadline)
        if words is None:
            raise expansions.too_many_scanned(shown, prefix)
    analyzer, to_text, to_bytes = profile_analyzer(q.key), reader.schema[WORDS].from_bytes, reader.schema[field].to_bytes
    stems: dict[bytes, int] = {}
    for word in words:
        for token in analyzer(to_text(word), mode="query"):
            stem = to_bytes(token.text)
            if stem not in stems:
                stems[stem] = reader.doc_frequency(field, stem)
    # (counted as OpenSearch counts them, every stem of the words listed, the field's or not, when the field's are cut)
    if len(stems) > expansions.MAX_MATCHING_WORDS:
        raise expansions.too_many_matching(shown)
    matched = [stem for stem, episodes in stems.items() if episodes]
    top = sorted(matched) if every else expansions.most_frequent(matched, stems.__getitem__)
    from_bytes = reader.schema[field].from_bytes
    return [Term(field, from_bytes(b)) for b in top], len(stems) if len(top) < len(matched) else len(top)


def _near(q: FuzzyTerm, reader: Any, shown: str, deadline: float | None) -> list[bytes]:
    """The words of the index within ``q.maxdist`` edits (at most ``MAX_FUZZY_EDITS``) of a fuzzy part that
    begin with its first ``q.prefixlength`` letters (:data:`MIN_PREFIX` unless more are typed, ``word~2/3``: a
    typo in the first letter is rare), read among at most ``MAX_SCANNED_WORDS`` words that begin so."""
    maxdist, prefix = min(q.maxdist, expansions.MAX_FUZZY_EDITS), q.text[:max(q.prefixlength, MIN_PREFIX)]

    def near(word: str) -> bool:
        return abs(len(word) - len(q.text)) <= maxdist and distance(word, q.text, limit=maxdist) <= maxdist

    matched = _scan(reader, q.fieldname, prefix, near, deadline)
    if matched is None:
        raise expansions.fuzzy_too_broad(shown, q.text, maxdist, prefix)
    return matched


def _scan(reader: Any, field: str, prefix: str, keep: Callable[[str], bool], deadline: float | None) -> list[bytes] | None:
    """The words of ``field`` beginning with ``prefix`` that ``keep`` accepts, read among at most
    ``MAX_SCANNED_WORDS`` of them (None when more begin so), the deadline checked as they are read."""
    from_bytes = reader.schema[field].from_bytes
    matched, scanned, most = [], 0, expansions.MAX_SCANNED_WORDS
    for btext in _timed(islice(reader.expand_prefix(field, prefix), most + 1), deadline):
        scanned += 1
        if keep(from_bytes(btext)):
            matched.append(btext)
    return None if scanned > most else matched


def _timed(words: Any, deadline: float | None) -> Any:
    """The words, with the deadline checked every 512 of them."""
    for n, word in enumerate(words, 1):
        if deadline is not None and not n & 511 and time.monotonic() > deadline:
            raise Expired
        yield word

