"""A word typed joined that the episodes say apart: ``opensource`` is also read as the phrase "open source",
``python3`` as "python 3" (issue 15), the same rule on every engine.

``opensource`` found the 9 site episodes that write it so and none of the 1,087 that say "open source"; spoken
transcripts spell most such words apart. A plain word of the query (not quoted, excluded, required, a field's
value or a pattern) is read as ``(opensource OR "open source")`` when it splits into two words the index knows
(each of two characters or more and not a stop word, or letters and digits: ``python|3``; ``detect|or`` is
not two words) and more episodes say the two words
next to each other than hold the joined word. The typed form keeps its own score, so an episode that writes
"opensource" still ranks with those that say "open source". Words the index holds about as often as their parts
are never looked at (``javascript``, ``website``, ``backend``): a phrase is only counted for a word held by
fewer than a tenth of the episodes holding its rarer part, for at most ``MAX_WORDS`` words of a query, one
split each (the one whose rarer part is the most frequent). Each engine answers the questions (:class:`Counts`);
the decisions are kept per index generation.
"""

from __future__ import annotations

from typing import Any, Protocol

from ..lru import LRU
from .querytext import bare_words

MIN_LENGTH = 5  # a joined word of fewer characters is not split, unless letters meet digits ("web3")
MIN_PART = 2  # characters of each part (a run of digits may be shorter)
MAX_WORDS = 3  # words of one query looked at
RARER = 10  # the joined word is held by fewer than 1/RARER of the episodes holding its rarer part
MIN_PHRASE = 3  # episodes saying the parts together, at least


class Counts(Protocol):
    """What the rule asks of an engine's index (words in lower case)."""

    timed_out: bool  # whether a count was cut short by the request's deadline

    def frequencies(self, words: list[str]) -> dict[str, int]:
        """How many episodes hold each word (in any field; 0 for a word no episode holds)."""

    def phrase(self, first: str, second: str) -> int:
        """How many episodes say ``first second``, next to each other."""

    def stop_word(self, word: str) -> bool:
        """Whether ``word`` is a stop word of every language the query is read in."""


def splits(word: str) -> list[tuple[str, str]]:
    """The ways ``word`` may be two words: each part of ``MIN_PART`` characters or more, or a run of letters
    next to a run of digits."""
    out = []
    for i in range(1, len(word)):
        first, second = word[:i], word[i:]
        letters_then_digits = _one_run(first) and _one_run(second) and first[-1].isdigit() != second[0].isdigit()
        if letters_then_digits or (len(word) >= MIN_LENGTH and min(len(first), len(second)) >= MIN_PART):
            out.append((first, second))
    return out


def _one_run(part: str) -> bool:
    return part.isdigit() or part.isalpha()


def spaced(word: str, counts: Counts) -> str:
    """The two words ``word`` is said as ("open source"), or "" when it is read only as typed."""
    word = word.lower()
    candidates = splits(word)
    if not candidates:
        return ""
    freq = counts.frequencies(sorted({word} | {p for pair in candidates for p in pair}))
    held = freq.get(word, 0)

    def rarer(pair: tuple[str, str]) -> int:
        return min(freq.get(pair[0], 0), freq.get(pair[1], 0))

    candidates = [pair for pair in candidates if rarer(pair) > held * RARER and rarer(pair) >= MIN_PHRASE
                  and not counts.stop_word(pair[0]) and not counts.stop_word(pair[1])]
    if not candidates:
        return ""
    best = max(candidates, key=lambda pair: (rarer(pair), len(pair[0])))
    together = counts.phrase(*best)
    return f"{best[0]} {best[1]}" if together >= MIN_PHRASE and together > held else ""


def apart(text: str, counts: Counts, kept: LRU[tuple[Any, ...], str],
          generation: tuple[Any, ...]) -> tuple[tuple[str, str], ...]:
    """(joined word, its two words) for the plain words of ``text`` said apart (:func:`spaced`); at most
    ``MAX_WORDS`` words are looked at, the longest first. Each decision is kept in ``kept`` under the index
    ``generation`` and the word, unless the deadline cut its count short."""
    words = sorted({w.lower() for w in bare_words(text) if len(w) >= 4 and any(c.isalpha() for c in w)},
                   key=lambda w: (-len(w), w))[:MAX_WORDS]
    found = []
    for word in words:
        key = (*generation, word)
        two = kept.get(key)
        if two is None:
            two = spaced(word, counts)
            if not counts.timed_out:
                kept.put(key, two)
        if two:
            found.append((word, two))
    return tuple(found)
