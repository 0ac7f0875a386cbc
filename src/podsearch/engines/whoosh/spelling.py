""""Did you mean" on a Whoosh index: the questions the engine-neutral rules (``engines/spelling.py``) ask of
the index, answered by a searcher (the ``words`` field holds every word of an episode once)."""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
from typing import Any

from whoosh.query import And, Or, Term

from .. import spelling
from .analysis import spoken_analyzer


class WhooshVocabulary:
    """:class:`spelling.Vocabulary` over one searcher, for the query's languages (analysis profiles)."""

    def __init__(self, searcher: Any, profiles: list[str]) -> None:
        self.searcher, self.profiles = searcher, profiles
        self._corrector: Any = None

    def known(self, words: list[str]) -> set[str]:
        return {w for w in words if self.searcher.doc_frequency("words", w) > 0}

    def candidates(self, word: str) -> list[str]:
        if self._corrector is None:
            self._corrector = self.searcher.corrector("words")
        # prefix=1: only words with the same first letter are compared (a whole-vocabulary scan of a
        # multilingual site took seconds; a typo in the first letter is rare)
        return list(self._corrector.suggest(word, limit=spelling.CANDIDATES, maxdist=spelling.MAX_DISTANCE,
                                            prefix=1))

    def in_language(self, word: str) -> bool:
        for key in self.profiles:
            terms = _analyzer(key).texts(word)
            if not terms:  # a stop word of this language
                continue
            in_text = Or([Term(f, terms[0]) for f in ("title", "notes", "transcript")])
            if self.searcher.search(And([in_text, Term("analysis", key)]), limit=1).scored_length():
                return True
        return False


def suggestion(searcher: Any, text: str, profiles: list[str], count: Callable[[str], int], before: int) -> str:
    """``text`` with its unknown words corrected, or "" (``spelling.suggestion`` over this searcher)."""
    return spelling.suggestion(text, WhooshVocabulary(searcher, profiles), count, before)


@lru_cache(maxsize=32)
def _analyzer(key: str) -> Any:
    return spoken_analyzer(key)
