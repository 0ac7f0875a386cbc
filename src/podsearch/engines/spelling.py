""""Did you mean": a spelling suggestion that only helps, the same rules on every engine.

Rules (issue 15; docs/search.md):

- only words the index does not know, or that at most ``RARE_HELD`` episodes hold when a word as near is held
  ``RARE_FACTOR`` times as often (a typo in a few transcripts: ``kuberentes``, 1 site episode, against
  ``kubernetes``, 423), are corrected, in place and in the case they were typed in, by the closest known word
  (edit distance, a swap of neighbours counting as one edit, then the longer common beginning, then the more
  frequent): field names (``title:``), operators (AND, OR, NOT, TO written in capitals), markup (``<script>``),
  patterns (``pyth*``), fuzzy words (``kubrnetes~``), ranges, numbers and words of one or two letters are left as
  typed, and so are quotes, ``-`` and ``+``;
- a replacement is a word of the query's language: not one of its stop words, and found in at least one
  episode analysed for that language (``tax`` is not "corrected" to ``to``);
- the suggestion is offered only when it finds clearly more: at least twice as many episodes holding every
  word as the query typed (and at least one), counted with the same filters, whatever the query's length (a
  long query is ranked on any word, so an unknown word in it leaves it a total; it is corrected all the same);
  a single unknown word's replacements as near as the nearest are tried in turn until one does.

A suggestion is searched instead of the query (``corrected``) only when each word it replaces is no word of the
query's languages by ``wordfreq``'s lists (:func:`words_of_the_language`): a typo (``kuberentes``, ``dnace``).
A real word the index lacks (``waggle``, ``Pynchon``, ``quinoa``, ``niño``, ``Straße``) is answered as typed and
the suggestion is offered beside it ("Did you mean"): until 5 December 2026 ``Pynchon`` was answered with 671
episodes about Python and ``waggle dance`` with "wiggle dance".

Each engine answers the questions about its index (:class:`Vocabulary`): ``engines/whoosh/spelling.py``,
``engines/opensearch/__init__.py``.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from typing import Protocol

from .. import languages

log = logging.getLogger(__name__)

MAX_DISTANCE = 2
RARE_HELD = 5  # a word held by this many episodes or fewer may be a typo in them ("kuberentes": 1, "langauge": 5)
RARE_FACTOR = 20  # ... when a word as near is held this many times as often ("kubernetes": 423)
CANDIDATES = 5  # per unknown word, closest first
# Spans of the query that are never corrected: markup, a field name with its colon, an operator in capitals, a
# pattern (``pyth*``, ``te?t``), a fuzzy word (``kubrnetes~``: near spellings are asked for already), a range.
_KEEP = re.compile(r"<[^<>]*>|\b\w+:|\b(?:AND|OR|NOT|TO|ANDNOT|ANDMAYBE)\b|[\w*?]*[*?][\w*?]*|\w+~|\[[^\]]*\]|\{[^}]*\}")
_WORD = re.compile(languages.WORD)


Asked = tuple[str, "tuple[str, ...] | None"]  # a word, and the profiles to look in (None: the query's)


class Vocabulary(Protocol):
    """What a suggestion asks of an engine's index (words in lower case). Each question is asked of many words at
    once, so that an engine behind a network answers it in one request (until 6 December 2026 OpenSearch was asked
    one word, and one replacement, at a time: about 85 requests for 12 typos)."""

    def held(self, words: list[str]) -> dict[str, int]:
        """How many episodes hold each of ``words`` (0 for a word none holds)."""

    def form(self, word: str) -> str:
        """``word`` (lower case) as the index's word list writes it: accents folded (``größte`` -> ``groste``)."""

    def candidates(self, words: list[str]) -> dict[str, list[str]]:
        """For each of ``words``, the known words within ``MAX_DISTANCE`` edits of it with its first letter, at most
        ``CANDIDATES``: the nearest, then the more frequent."""

    def in_language(self, asked: list[Asked]) -> set[Asked]:
        """Those of ``asked`` whose word is a content word of one of the query's languages (or of the profiles
        given): not a stop word, and in the text of an episode analysed for that language."""

    def languages_of(self, words: list[str]) -> dict[str, list[str] | None]:
        """For each of ``words``, the query's languages (profiles) of the episodes that hold it, or None when the
        vocabulary cannot tell (the typo rule then wants a replacement of their language)."""


def edits_allowed(word: str) -> int:
    """How far a correction of ``word`` may be: 1 edit for a word of 5 letters or fewer, 2 for a longer one (as
    Lucene's fuzziness AUTO). With 2 for every word, a short word the index lacks became another short word two
    letters apart: ``zebra`` "zero", ``taco`` "take", ``café`` "can"."""
    return 1 if len(word) <= 5 else MAX_DISTANCE


WORD_ZIPF = 2.0  # wordfreq's Zipf frequency from which a word is one of the language (about once in 100 million
# words: "waggle" 2.07, "Pynchon" 2.34; the dev set's typos 0 to 1.16, "fitler")


def words_of_the_language(typed: str, suggested: str, languages: list[str]) -> list[str]:
    """The words ``suggested`` replaces in ``typed`` that are words of one of ``languages`` (ISO codes) by
    wordfreq's lists (data shipped in the package, read on first use: 0.1-0.3 s a language)."""
    from wordfreq import available_languages, zipf_frequency

    known = [lang for lang in dict.fromkeys(languages) if lang in available_languages()]
    replaced = [a for (_, _, a), (_, _, b) in zip(correctable(typed), correctable(suggested)) if a.lower() != b.lower()]
    return [w for w in replaced if any(zipf_frequency(w, lang) >= WORD_ZIPF for lang in known)]


def keeping(typed: str, suggested: str, kept: list[str]) -> str:
    """``suggested`` with the words of ``kept`` (words it replaces in ``typed``) as typed again: the correction of
    the other words alone (``voclano eruption``, suggested ``volcano erupting``, keeping ``eruption``: ``volcano
    eruption``)."""
    pairs = list(zip(correctable(typed), correctable(suggested)))
    out = suggested
    for (_, _, a), (start, end, b) in reversed(pairs):
        if a.lower() != b.lower() and a in kept:
            out = out[:start] + a + out[end:]
    return out


def correctable(text: str) -> list[tuple[int, int, str]]:
    """(start, end, word) of each word of ``text`` a suggestion may replace."""
    kept = [m.span() for m in _KEEP.finditer(text)]
    out = []
    for m in _WORD.finditer(text):
        if any(lo <= m.start() < hi for lo, hi in kept):
            continue
        word = m.group(0)
        if len(word) < 3 or any(c.isdigit() for c in word):
            continue
        out.append((m.start(), m.end(), word))
    return out


def suggestion(text: str, vocabulary: Vocabulary, count: Callable[[str], int], before: int | None) -> str:
    """``text`` with its unknown words corrected, or "" when nothing is worth suggesting.

    ``count(text)``: how many episodes hold every word of a query (with the request's filters), however long it
    is; ``before``: that count for the text as typed, or None to have it counted when a correction is found.
    Each unknown word takes its nearest replacement. Of a single unknown word, the replacements as near whose
    common beginning with it is as long or one letter shorter are tried together and the one that finds the most
    is taken (``pyton``: ``python``, 671 site episodes, not ``pyto``, 1); then the others as near, in turn
    (``caarity`` is one edit from ``clarity`` and from ``charity``: ``caarity majors go time libhoney`` is
    answered for ``charity``, which an episode says with the other words).
    """
    try:
        words = correctable(text)
        form = vocabulary.form
        held = vocabulary.held(sorted({form(w.lower()) for _, _, w in words}))
        unknown = []  # (start, end, word as typed, its replacements nearest first, each with its closeness)
        accented = []  # (start, end, word as typed, as the word list writes it): a known word typed with accents
        asked = []  # (start, end, word as typed, as the word list writes it): a word that may be a typo
        for start, end, word in words:
            # the word list folds accents: a word typed with them is looked up as it is written there (until 5
            # December 2026 every accented word was unknown: "größte" was offered the Dutch "grote", "emoções" the
            # Dutch "emoties", "Gründe" "Grunde")
            low = form(word.lower())
            if held.get(low, 0) and low != word.lower():  # typed with its accents, and held: no typo, however few
                accented.append((start, end, word, low))  # hold it (a rare German "größte" is no typo of the
                continue  # Dutch "grote", held 20 times as often)
            if held.get(low, 0) > RARE_HELD:
                continue
            asked.append((start, end, word, low))
        # each question below is asked of every such word at once (see Vocabulary)
        lows = list(dict.fromkeys(low for *_, low in asked))
        near = vocabulary.candidates(lows)
        scored = {low: sorted(((closeness(low, c), c) for c in near.get(low, [])), key=lambda pair: pair[0])
                  for low in lows}  # (sorted is stable: then the more frequent)
        close = {low: [(n, c) for n, c in scored[low] if n[0] <= edits_allowed(low)] for low in lows}
        of_the_language = vocabulary.in_language(list(dict.fromkeys((c, None) for low in lows for _, c in close[low])))
        options = {low: [(n, c) for n, c in close[low] if (c, None) in of_the_language] for low in lows}
        rare = [low for low in lows if options[low] and held.get(low, 0)]
        if rare:  # a word a few episodes hold: a typo in them, when a word as near is held RARE_FACTOR times as
            # often, a word of their language (until 5 December 2026 any language's: the Portuguese "informacao" was
            # offered the Spanish "informacion", held by many more episodes; the engine may not tell: None)
            often = vocabulary.held(list(dict.fromkeys(c for low in rare for _, c in options[low])))
            theirs = vocabulary.languages_of(rare)
            for low in rare:
                options[low] = [(n, c) for n, c in options[low] if often.get(c, 0) >= RARE_FACTOR * held[low]]
            wanted = [(c, tuple(theirs[low])) for low in rare if theirs.get(low) is not None for _, c in options[low]]
            theirs_too = vocabulary.in_language(list(dict.fromkeys(wanted)))
            for low in rare:
                if theirs.get(low) is not None:
                    options[low] = [(n, c) for n, c in options[low] if (c, tuple(theirs[low])) in theirs_too]
        for start, end, word, low in asked:
            if options[low]:
                unknown.append((start, end, word, options[low]))
        if not unknown:
            # known words typed with accents another language of the index writes without them (Portuguese
            # "impedâncias", Spanish "impedancias"): offered as written there when the query found nothing
            if not accented or (count(text) if before is None else before):
                return ""
            out, last = [], 0
            for start, end, word, written in accented:
                out.append(text[last:start] + _same_case(word, written))
                last = end
            suggested = "".join(out) + text[last:]
            return suggested if count(suggested) else ""
        typed = count(text) if before is None else before
        groups = [[[u[3][0][1] for u in unknown]]]
        if len(unknown) == 1:  # (as near as the nearest: a farther word is never preferred to it)
            (edits, begun), _ = unknown[0][3][0]
            near = [(shorter, o) for (d, shorter), o in unknown[0][3][1:] if d == edits]
            # those whose common beginning is as long, or one letter shorter (pyton: "pyto" 4, "python" 3; a letter
            # left out or put in moves it by one), are one choice: the one that finds the most; then the others,
            # in turn (kimchee: "kimchi" 5 before "kitchen" 2, which finds more)
            groups[0] += [[o] for shorter, o in near if shorter <= begun + 1]
            groups += [[[o]] for shorter, o in near if shorter > begun + 1]
        least = max(1, 2 * typed, typed + 1)  # (found clearly more: twice as many, and at least one more)
        for group in groups:
            best, most = "", least - 1
            for chosen in group:
                out, last = [], 0
                for (start, end, word, _), replacement in zip(unknown, chosen):
                    out.append(text[last:start] + _same_case(word, replacement))
                    last = end
                suggested = "".join(out) + text[last:]
                found = count(suggested)
                if found > most:
                    best, most = suggested, found
            if best:
                return best
        return ""
    except Exception:  # a suggestion is a nicety; never fail the search for it
        log.exception("spelling suggestion failed for %r", text)
        return ""


def closeness(typed: str, candidate: str) -> tuple[int, int]:
    """Sort key of a correction: edit distance counting a swap of two neighbours as one edit ("dnace" is one
    from "dance", two from "dna"), then the longer common beginning ("kimchee": "kimchi" before "kitchen")."""
    a, b = typed, candidate
    d = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
    for i in range(len(a) + 1):
        d[i][0] = i
    for j in range(len(b) + 1):
        d[0][j] = j
    for i in range(1, len(a) + 1):
        for j in range(1, len(b) + 1):
            d[i][j] = min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] != b[j - 1]))
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                d[i][j] = min(d[i][j], d[i - 2][j - 2] + 1)
    common = next((k for k, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
    return d[len(a)][len(b)], -common


def _same_case(typed: str, word: str) -> str:
    """``word`` written the way ``typed`` was: all capitals, a capital first, or lower case."""
    if typed.isupper():
        return word.upper()
    if typed[:1].isupper():
        return word[:1].upper() + word[1:]
    return word
