"""What a wildcard, prefix, fuzzy or range part of a query may expand to, for every engine: the limits, the
choice of its words and what the person is told (``engines/whoosh/bounds.py`` and ``engines/opensearch/expand.py``
apply them, each to its own index; docs/search.md, "What one search may cost").

The limits are read as ``expansions.NAME`` when a query is bounded, so that a test may lower one for both engines.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterable
from typing import TypeVar

from ..errors import QueryError

MAX_EXPANSIONS = 64  # words a wildcard, prefix, fuzzy or range part is searched with (its most frequent)
MAX_MATCHING_WORDS = 2000  # words a part may match before it is refused as too broad
MAX_SCANNED_WORDS = 20000  # words of the index read to find the matches of a pattern (kub?rnetes)
MAX_CLAUSES = 4096  # terms of the whole query after expansion, every field and language counted
MAX_FUZZY_EDITS = 2  # as Lucene: more edits match most of the vocabulary

W = TypeVar("W")


def most_frequent(words: Iterable[W], frequency: Callable[[W], int]) -> list[W]:
    """The :data:`MAX_EXPANSIONS` most frequent of ``words`` (the greater word first among equals), sorted."""
    return sorted(heapq.nlargest(MAX_EXPANSIONS, words, key=lambda w: (frequency(w), w)))


def cut_note(shown: str, matching: int) -> str | None:
    """What the answer says of a part searched with fewer words than it matches (None when it was searched whole)."""
    if matching <= MAX_EXPANSIONS:
        return None
    return (f"'{shown}' matches {matching:,} words; the {MAX_EXPANSIONS} most frequent were searched. "
            "Type more letters to narrow it.")


def too_broad(shown: str, why: str) -> QueryError:
    """The refusal of a part over the limits: ``why`` says which."""
    return QueryError(f"'{shown}' is too broad: {why}. Type more letters before the * or narrow the range.")


def too_many_matching(shown: str) -> QueryError:
    return too_broad(shown, f"it matches more than {MAX_MATCHING_WORDS:,} words")


def too_many_scanned(shown: str, prefix: str) -> QueryError:
    return too_broad(shown, f"more than {MAX_SCANNED_WORDS:,} words begin with '{prefix}'")


def fuzzy_too_broad(shown: str, text: str, maxdist: int, prefix: str) -> QueryError:
    """The refusal of a fuzzy part whose first letters begin more than :data:`MAX_SCANNED_WORDS` words."""
    return QueryError(f"'{shown}' is too broad: more than {MAX_SCANNED_WORDS:,} words begin with '{prefix}'. "
                      f"Keep more letters as typed (like '{text}~{maxdist}/{len(prefix) + 1}').")


def too_many_clauses(clauses: int, limit: int | None = None, more: bool = False) -> QueryError:
    """The refusal of a query of more than ``limit`` terms (:data:`MAX_CLAUSES`, or an engine's own lower one);
    ``more``: ``clauses`` were counted when its expansions passed the limit, and more were to come."""
    return QueryError(f"The query asks for {'at least ' if more else ''}{clauses:,} terms (every word in every field "
                      f"and language counts); the limit is {limit or MAX_CLAUSES:,}. Use fewer words or wildcards.")
