"""One word or two: ``opensource`` is also read as the phrase "open source", ``python3`` as "python 3", and
``type script`` as "typescript" (issue 15), the same rule on every engine.

``opensource`` found the 9 site episodes that write it so and none of the 1,087 that say "open source"; spoken
transcripts spell most such words apart, and people type some words apart that the episodes write as one. A
plain word of the query (not quoted, excluded, required, a field's value or a pattern) is read as
``(opensource OR "open source")`` when it splits into two words the index knows (each of two characters or more
and not a stop word, or letters and digits: ``python|3``; ``detect|or`` is not two words) and more episodes say
the two words next to each other than hold the joined word; two plain neighbours are read as
``((type script) OR typescript)`` when more episodes hold the joined word than say the two together. The typed
form keeps its own score. A phrase is only counted when the other spelling could win: a joined word held by
fewer than a tenth of the episodes holding its rarer part (``javascript``, ``website``, ``backend`` are never
looked at), two words whose joined form is held by at least a tenth of them (``rusty russell``: "rustyrussell"
is held by 6 site episodes, "russell" by 53: the phrase is counted, 18, and the name is read as typed). At most
``MAX_WORDS`` words (one split each, the one whose rarer part is the most frequent) and ``MAX_PAIRS`` pairs of a
query are looked at, and ``MAX_PHRASES`` phrases counted. Each engine answers the questions (:class:`Counts`);
the decisions are kept per index generation.
"""

from __future__ import annotations

import math
import time
from typing import Any, Protocol

from ..lru import LRU
from .querytext import bare_words

MIN_LENGTH = 5  # a joined word of fewer characters is not split, unless letters meet digits ("web3")
MIN_PART = 2  # characters of each part (a run of digits may be shorter)
MAX_WORDS = 3  # words of one query looked at (a phrase count each, at most)
MAX_PAIRS = 3  # pairs of neighbouring words of one query looked at
MAX_PHRASES = 3  # phrases counted for one query (the decisions that need more wait for a later query)
RARER = 10  # the joined word is held by fewer than 1/RARER of the episodes holding its rarer part
MIN_PHRASE = 3  # episodes saying the parts together, at least
COUNT_SECONDS = 0.3  # one query's phrase counts stop by then (or at the request's deadline, when sooner)
CUTS = 2  # a decision whose count is cut short this many times is read as typed until the index changes


class Counts(Protocol):
    """What the rule asks of an engine's index (words in lower case)."""

    timed_out: bool  # whether a count was cut short by ``deadline``
    deadline: float | None  # when the counts stop (``time.monotonic()``; :func:`count_deadline`)

    def frequencies(self, words: list[str]) -> dict[str, int]:
        """How many episodes hold each word (in any field; 0 for a word no episode holds)."""

    def phrase(self, first: str, second: str, enough: int) -> int:
        """How many episodes say ``first second``, next to each other; the count may stop at ``enough``."""

    def stop_word(self, word: str) -> bool:
        """Whether ``word`` is a stop word of every language the query is read in."""


def count_deadline(deadline: float | None) -> float:
    """When one query's phrase counts stop: ``COUNT_SECONDS`` from now, or the request's ``deadline`` when sooner
    (the search itself keeps the rest of its time)."""
    return min(time.monotonic() + COUNT_SECONDS, math.inf if deadline is None else deadline)


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
    together = counts.phrase(*best, max(held + 1, MIN_PHRASE))
    return f"{best[0]} {best[1]}" if together >= MIN_PHRASE and together > held else ""


def joined(first: str, second: str, counts: Counts) -> str:
    """The one word two neighbours of a query are also written as (``type script``: "typescript"), or "": more
    episodes hold the joined word than say the two together (and at least ``MIN_PHRASE``), neither is a stop
    word, and the phrase is only counted when the joined word is held by at least a tenth of the episodes
    holding the rarer of the two (``rusty russell``: "rustyrussell", a handle in 6 links, is not his name)."""
    first, second = first.lower(), second.lower()
    word = first + second
    if len(word) < MIN_LENGTH or (first, second) not in splits(word):
        return ""
    freq = counts.frequencies(sorted({first, second, word}))
    rarer = min(freq.get(first, 0), freq.get(second, 0))
    held = freq.get(word, 0)
    if held < MIN_PHRASE or held * RARER < rarer or counts.stop_word(first) or counts.stop_word(second):
        return ""
    # (no more episodes say the two together than hold the rarer one: held > rarer needs no count)
    return word if held > rarer or held > counts.phrase(first, second, held) else ""


def apart(text: str, counts: Counts, kept: LRU[tuple[Any, ...], str],
          generation: tuple[Any, ...]) -> tuple[tuple[str, str], ...]:
    """(as typed, the other spelling) for the plain words of ``text`` read both ways: a joined word said apart
    (:func:`spaced`; at most ``MAX_WORDS`` words, the longest first) and two neighbours written as one word
    (:func:`joined`; at most ``MAX_PAIRS``, the first). Each decision is kept in ``kept`` under the index
    ``generation`` and the words; at most ``MAX_PHRASES`` phrases are counted for one query (the pairs first), a word
    that needs another is read as typed until a later query. A count cut short by ``counts.deadline`` reads its
    words as typed, and the query's later decisions too; the next query tries again, and after ``CUTS`` cuts the
    words are read as typed until the index changes (a pair too common to count in time would be counted, and cut,
    by every query)."""
    runs = [[w.lower() for w in run] for run in bare_words(text)]
    words = sorted({w for run in runs for w in run if len(w) >= 4 and any(c.isalpha() for c in w)},
                   key=lambda w: (-len(w), w))[:MAX_WORDS]
    pairs = list(dict.fromkeys(f"{a} {b}" for run in runs for a, b in zip(run, run[1:])))[:MAX_PAIRS]
    budget = _Budget(counts, MAX_PHRASES)
    found = []
    for typed in pairs + words:
        key = (*generation, typed)
        other = kept.get(key)
        if other is None:
            if budget.timed_out:  # (the time for counting is spent: a later query decides)
                continue
            try:
                other = joined(*typed.split(" "), budget) if " " in typed else spaced(typed, budget)
            except _Spent:  # (not kept: the next query with the words decides)
                continue
            if budget.timed_out:  # this decision's count was cut short
                cut = (*generation, typed, "cut")
                cuts = int(kept.get(cut) or 0) + 1
                kept.put(cut, str(cuts))
                if cuts < CUTS:
                    continue
                other = ""
            kept.put(key, other)
        if other:
            found.append((typed, other))
    return tuple(found)


class _Spent(Exception):
    """A query asked for more phrase counts than ``MAX_PHRASES``."""


class _Budget:
    """:class:`Counts` that counts at most ``left`` phrases, then raises :class:`_Spent`."""

    def __init__(self, counts: Counts, left: int) -> None:
        self.counts, self.left, self.cut = counts, left, False

    @property
    def timed_out(self) -> bool:
        return self.cut or self.counts.timed_out

    def frequencies(self, words: list[str]) -> dict[str, int]:
        return self.counts.frequencies(words)

    def stop_word(self, word: str) -> bool:
        return self.counts.stop_word(word)

    def phrase(self, first: str, second: str, enough: int) -> int:
        if self.left <= 0:
            raise _Spent
        deadline = self.counts.deadline
        if deadline is not None and time.monotonic() > deadline:  # (no count is started once the time is spent)
            self.cut = True
            return 0
        self.left -= 1
        return self.counts.phrase(first, second, enough)
