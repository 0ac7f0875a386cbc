"""Excluded words that stay excluded (``coffee -espresso``, ``coffee NOT espresso``).

Whoosh's ``AndNotMatcher`` checks its first document against the excluded postings only when both happen
to start on the same document: when the excluded word's first posting comes earlier, the first matching
document is returned even if it holds the excluded word (whoosh3 3.54). With a rare word, that first
document is often the only one: ``dockershim -kubernetes`` returned the one episode about dockershim,
which says Kubernetes 57 times. :func:`exclusions_hold` swaps each ``AndNot`` of a parsed query for one
whose matcher checks its first document too.

:func:`positive_terms` lists the terms a query looks for, without the excluded ones (what highlights and
moments show).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from whoosh.matching import AndNotMatcher
from whoosh.query import AndNot, Not


class _AndNotMatcher(AndNotMatcher):
    def _find_first(self) -> None:
        if self.a.is_active() and self.b.is_active():
            self._find_next()


class Excluding(AndNot):
    """``a ANDNOT b`` whose every match, the first included, holds no match of ``b``."""

    def matcher(self, searcher: Any, context: Any = None) -> Any:
        scored = self.a.matcher(searcher, context)
        excluded = self.b.matcher(searcher, searcher.boolean_context())
        return _AndNotMatcher(scored, excluded)


def exclusions_hold(q: Any) -> Any:
    """``q`` with each ``AndNot`` (how the parser writes ``-word`` and ``NOT word``) made an :class:`Excluding`."""
    if isinstance(q, AndNot):
        return Excluding(exclusions_hold(q.a), exclusions_hold(q.b))
    if q.is_leaf():
        return q
    return q.apply(exclusions_hold)


def positive_terms(q: Any) -> Iterator[tuple[str, Any]]:
    """``(field, text)`` of every term ``q`` looks for (phrases included), leaving out excluded ones."""
    if isinstance(q, AndNot):
        yield from positive_terms(q.a)
    elif isinstance(q, Not):
        return
    elif q.is_leaf():
        if q.has_terms():
            yield from q.terms(phrases=True)
    else:
        for child in q.children():
            yield from positive_terms(child)
