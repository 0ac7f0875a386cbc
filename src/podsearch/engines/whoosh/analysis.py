"""The Whoosh engine's text analysis: one tokenizer, one stemmer, per language profile.

The analyzers are Whoosh objects, so this module belongs to the engine; the answer builder reaches them
through :meth:`WhooshEngine.analyzer` (snippets and moments find the query's terms with the analysis that
indexed them).
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Iterator
from functools import lru_cache
from itertools import chain, compress
from typing import Any

import numpy as np
from whoosh.analysis import Filter, RegexTokenizer, Token, Tokenizer
from whoosh.lang import stemmer_for_language

from ... import languages
from ...languages import HAS_CJK, WIDE, ascii_fold, cjk_bigrams, lower, narrow, narrow_chars, split_cjk
from ...lru import LRU

# Words joined by an apostrophe, a dot, a slash or an ampersand between word characters stay one token, so that
# "don't", "O'Reilly", "3.12", "HTTP/2", "node.js" and "AT&T" survive; the filter below also splits them. A word's
# closing "++" or "#" (not before another word character) is kept: "C++", "C#" and "F#" are not "C" and "F". So
# is a dot that opens a word (languages.OPENING_DOT: after a space or a sign, before a letter): ".NET" is not
# "net" alone (the DC-nets, the neural nets); as a joined word it also gives its part, so "net" still finds it.
# A word character is followed by word characters and combining marks (languages.MARKS, schema 13): the vowel signs
# and viramas of Indic scripts, Hebrew points, Arabic harakat, an accent written apart; until then ``क्या`` (Hindi)
# was the words "क" and "य".
# A word character is ``\w`` but the "other numbers" no digit spells (``½``, ``⅓``: languages.NOT_WORD_NUMBERS, which the
# standard tokenizer takes for no word either; schema 18, issue 15: until then ``½`` was a word on Whoosh alone). A
# number written with thousands separators is one word (languages.THOUSANDS: "1,000", "12,500,000"; its commas are
# left out, "1000"; schema 18: it was "1" and "000").
_C = languages.WORD_CHAR
# a word's first character and the characters that may follow it: in a text of ASCII alone, in a text without marks
# (an English transcript's curly quotes and dashes: the same words a third faster), in any text
# (and in a text without one of NOT_WORD_NUMBERS, ``\w``: "ascii" for one without marks, "marks_w" with)
_CHARS = {"ascii": (r"\w", r"\w"), "plain": (_C, _C), "marks": (_C, rf"(?:{_C}|[{languages.MARKS}])"),
          "marks_w": (r"\w", rf"(?:\w|[{languages.MARKS}])")}


def _token_pattern(kind: str, dotted: bool, number: bool) -> str:
    """The words of a text of ``kind`` (:data:`_CHARS`), one opening with a dot (``dotted``) or a number written with
    thousands separators (``number``) among them."""
    first, then = _CHARS[kind]
    word = f"{first}{then}*"
    start = rf"(?:{languages.THOUSANDS}{then}*|{word})" if number else word
    found = rf"{start}(?:['’./+&-]{word})*(?:\++|#(?![\w#]))?"
    return rf"(?:{languages.OPENING_DOT})?{found}" if dotted else found


TOKEN_PATTERN = _token_pattern("marks", True, True)
JOINING = "./+&-"  # what joins two words into one (an apostrophe aside: removed, not split at)


class _Words:
    """``re.compile(TOKEN_PATTERN)``'s ``findall`` and ``finditer``, a text without an opening dot read by the
    pattern without it (as fast as before it: ``languages.has_opening_dot``), one without a comma between digits by the
    pattern without numbers written with thousands separators (``languages.has_digit_comma``: a look-behind tried at
    every place made the scan four times slower), a text that holds no combining mark (ASCII, or an English transcript's
    curly quotes and dashes: ``languages.may_hold_marks``) by the pattern without marks (a third faster), one without a
    number no word holds (``½``: ``languages.has_not_word_number``) by ``\\w`` patterns (three times faster)."""

    def __init__(self) -> None:
        self._compiled: dict[tuple[str, bool, bool], re.Pattern[str]] = {}

    def pattern(self, text: str) -> re.Pattern[str]:
        """The pattern that finds the words of ``text`` (or of ``text`` in another case) fastest."""
        kind = "ascii" if text.isascii() else "marks" if languages.may_hold_marks(text) else "plain"
        if kind != "ascii" and not languages.has_not_word_number(text):  # (the same words, three times faster)
            kind = "ascii" if kind == "plain" else "marks_w"
        key = (kind, languages.has_opening_dot(text), languages.has_digit_comma(text))
        found = self._compiled.get(key)
        if found is None:
            found = self._compiled[key] = re.compile(_token_pattern(*key))
        return found

    def findall(self, text: str) -> list[str]:
        return self.pattern(text).findall(text)

    def finditer(self, text: str) -> Iterator[re.Match[str]]:
        return self.pattern(text).finditer(text)


class JoinedPartsFilter(Filter):
    """For a token such as "o'reilly" or "http/2", emit the joined form ("oreilly", "http/2") and its parts.

    Apostrophes are removed ("don't" -> "dont"), so either spelling finds the other. Versions and
    slashed names keep the whole token (an exact match) and add their parts at the same position.
    """

    def __call__(self, tokens):  # type: ignore[override]
        for t in tokens:
            text = t.text
            if "'" in text or "’" in text:
                t.text = text.replace("'", "").replace("’", "")
                yield t
                continue
            if any(c in text for c in JOINING):
                yield t
                if t.mode == "query":
                    continue
                whole = text
                parts = [p for p in _split(whole) if p and p != whole]
                for part in parts:
                    t.text = part
                    yield t
                t.text = whole
                continue
            yield t


def _split(text: str) -> list[str]:
    out, cur = [], []
    for ch in text:
        if ch in JOINING:
            if cur:
                out.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    if cur:
        out.append("".join(cur))
    return out


# The index's stop words, one list a language for both engines: languages.index_stop_words (the spoken-English list,
# Snowball's lists, the stop-words package's where Snowball has none)
STOP_WORDS = languages.SPOKEN_ENGLISH_STOP_WORDS


# A text that starts with MARK + profile + MARK is analysed for that language (``languages.profile``);
# a text without the mark is English. ``mark`` writes it; the index adds it to each text field of an episode.
MARK = "\x1e"


def mark(key: str, text: str) -> str:
    """``text`` marked for the analysis profile ``key`` (English text is left as it is)."""
    return f"{MARK}{key}{MARK}{text}" if key and key != "en" and text else text


class _Profile:
    """How one language is analysed: its stop words, its stemmer and whether accents are folded before
    stemming (English, as it always was) or after (the Snowball stemmers of other languages read accents:
    German ``Häuser`` -> ``haus``, Romanian ``cărțile`` -> ``cărț`` -> ``cart``). In the other languages a word is a
    stop word as written, before its accents are folded (as OpenSearch's stop filter reads it): until schema 14 Whoosh
    also dropped a word whose folded spelling was listed, Swedish ``år`` (year) as ``är`` (is), Dutch ``één`` (one) as
    ``een`` (a), Spanish ``dónde`` as ``donde``."""

    __slots__ = ("key", "stops", "stemfn", "fold_first", "cache", "unaccented", "words", "sizes", "places")

    def __init__(self, key: str) -> None:
        self.key = key
        self.cache: dict[str, str] = {}
        self.unaccented: dict[str, str] = {}  # an accented word -> the stem of it written without accents, or ""
        self.words: dict[str, tuple[str, ...]] = {}  # a word as the tokenizer finds it -> its tokens (texts())
        self.sizes: dict[str, int] = {}  # a word -> how many positions it takes (token_counts())
        self.places: dict[str, tuple[int, ...]] = {}  # a word of several tokens -> their positions (texts_at())
        if key == "en":
            self.stops, self.fold_first = STOP_WORDS, True
            self.stemfn: Any = languages.ly_apart(stemmer_for_language("en"))
        else:
            self.stops = languages.index_stop_words(key)
            self.stemfn = languages.stemmer(key) if key != "plain" else None
            self.fold_first = False


class SpokenAnalyzer(Tokenizer):
    """Tokenize, lower-case, fold accents, split joined words, drop stop words and stem, in one pass.

    For English it does what ``RegexTokenizer | LowercaseFilter | CharsetFilter | JoinedPartsFilter |
    StopFilter | StemFilter`` does (the same tokens; a joined word's whole at its first part's position, where
    that chain gives it one of its own) about three times faster: indexing
    a site's transcripts spends most of its time here. Other languages get their own stop words and
    Snowball stemmer (``lang``, or the language mark at the start of the text: see :func:`mark`); runs of
    Japanese or Chinese characters become overlapping character bigrams in every language. Stems are
    cached per process.
    """

    CACHE_LIMIT = 200_000

    def __init__(self, stem: bool = True, lang: str = "") -> None:
        self.stem = stem
        self.lang = lang  # "" = the text's mark says, English without one
        self.expression = _Words()
        self._profiles: dict[str, _Profile] = {}
        self._term_flags: LRU[tuple[str, frozenset[str]], dict[str, bool]] = LRU(64)

    def __eq__(self, other: object) -> bool:
        return type(self) is type(other) and (self.stem, self.lang) == (other.stem, other.lang)  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash((type(self).__name__, self.stem, self.lang))

    def __getstate__(self) -> dict[str, Any]:
        return {"stem": self.stem, "lang": self.lang}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state.get("stem", True), state.get("lang", ""))  # type: ignore[misc]

    def profile(self, key: str) -> _Profile:
        prof = self._profiles.get(key)
        if prof is None:
            prof = self._profiles[key] = _Profile(key)
        return prof

    def _stem(self, prof: _Profile, word: str) -> str:
        cache = prof.cache
        out = cache.get(word)
        if out is None:
            if len(cache) > self.CACHE_LIMIT:
                cache.clear()
            if prof.stemfn is None or HAS_CJK.search(word):
                out = word if prof.fold_first else ascii_fold(word)
            elif prof.fold_first:
                out = prof.stemfn(word)
            else:
                out = ascii_fold(prof.stemfn(word))
            cache[word] = out
        return out

    def _unaccented(self, prof: _Profile, word: str) -> str:
        """The stem of ``word`` (lower case, accented) written without its accents, when it is not its own stem
        folded: the Portuguese ``informação`` is ``inform`` (stemmed, then folded) and also ``informaca``, the stem of
        ``informacao``, what a reader typing without accents asks for. "" when the two are one."""
        memo = prof.unaccented
        out = memo.get(word)
        if out is None:
            if len(memo) > self.CACHE_LIMIT:
                memo.clear()
            bare = ascii_fold(word)
            out = ""
            if bare != word and prof.stemfn is not None and not HAS_CJK.search(word):
                out = ascii_fold(prof.stemfn(bare))
                if out == (prof.cache.get(word) or self._stem(prof, word)):
                    out = ""
            memo[word] = out
        return out

    @staticmethod
    def _words(raw: str, query: bool, fold_first: bool = True) -> list[str]:
        text = lower(raw)
        if "," in text:  # (a number written with thousands separators: the only word holding one)
            text = text.replace(",", "")
        if not text.isascii() and WIDE.search(text):  # half-width katakana, full-width letters (schema 11)
            text = narrow(text)
        if not text.isascii() and HAS_CJK.search(text):  # before folding: "で" is not "て"
            out: list[str] = []
            for cjk, piece in split_cjk(text):
                if cjk:
                    out.extend(cjk_bigrams(piece))
                else:
                    piece = piece.strip("'’" + JOINING)
                    if piece:
                        out.extend(SpokenAnalyzer._words(piece, query, fold_first))
            return out
        if fold_first and not text.isascii():  # (asciifolding's table, as on OpenSearch: schema 17; Whoosh's
            text = ascii_fold(text)  # accent_map until then, ß "s", ² kept)
        if text.isalnum():
            return [text]
        if "'" in text or "’" in text:
            joined = text.replace("'", "").replace("’", "")
            if fold_first or query:
                return [joined]
            # Other languages also index the parts: Dutch "embryo's" finds "embryo", French "l'homme" "homme".
            return [joined] + [p for p in _JOINS.split(text) if p and p != joined]
        if query:
            return [text]
        return [text] + [p for p in _split(text) if p and p != text]

    def __call__(self, value: str, positions: bool = False, chars: bool = False, keeporiginal: bool = False,
                 removestops: bool = True, start_pos: int = 0, start_char: int = 0, tokenize: bool = True,
                 mode: str = "", **kwargs: Any) -> Iterator[Token]:
        key = self.lang or "en"
        if value.startswith(MARK):
            end = value.find(MARK, 1)
            if end > 0:
                key = value[1:end] or key
                value = value[end + 1:]
                start_char += end + 1
        prof = self._profiles.get(key) or self.profile(key)
        t = Token(positions, chars, removestops=removestops, mode=mode, **kwargs)
        query = mode == "query"
        stops = prof.stops
        cache = prof.cache
        fold_first = prof.fold_first
        stem = self.stem
        # the index also holds an accented word's stem as written without its accents (other Snowball languages)
        unaccented = stem and not query and not fold_first and prof.stemfn is not None
        pos = start_pos
        if not tokenize:
            matches: Any = [(value, 0, len(value))]
        elif chars:
            matches = ((m.group(0), m.start(), m.end()) for m in self.expression.finditer(value))
        else:  # indexing: no offsets needed, and findall is much faster than finditer
            matches = ((w, 0, 0) for w in self.expression.findall(value))
        for raw, start, end in matches:
            low = lower(raw)
            if low.isascii() and low.isalnum():
                words, joined = [low], False
            else:
                words = self._words(raw, query, fold_first)
                joined = len(words) > 1 and not HAS_CJK.search(raw)  # the whole word, then its parts
            held = False  # the whole word's position, not passed yet: its first part stands there too
            for i, word in enumerate(words):
                # a stop word as the list spells it, before its accents are folded (schema 14): Swedish "år" (year)
                # is a word, "är" (is) a stop word; the lists also spell their words without accents and Romanian's
                # with its letters ("și"): languages.index_stop_words
                stopped = word in stops
                at = pos
                if joined and i == 0:
                    held = True
                else:
                    pos += 1
                    held = False
                if stopped and removestops:  # (it keeps its place: a phrase does not reach across it)
                    continue
                if stem and not stopped:
                    t.text = cache.get(word) or self._stem(prof, word)
                elif fold_first:
                    t.text = word
                else:
                    t.text = ascii_fold(word)
                t.stopped = stopped
                t.boost = 1.0
                if keeporiginal:
                    t.original = raw
                if positions:
                    t.pos = at
                if chars:
                    t.startchar = start_char + start
                    t.endchar = start_char + end
                yield t
                if unaccented and not stopped and not word.isascii():
                    other = self._unaccented(prof, word)
                    if other:  # at the same place, the same characters
                        t.text = other
                        yield t
            if held:  # no part took the whole word's position
                pos += 1

    def texts(self, value: str) -> list[str]:
        """``[t.text for t in self(value)]``, faster (moments analyse the segments of every hit at query time):
        each word the tokenizer finds is analysed once per process and its tokens remembered; ASCII text is
        lower-cased whole before it is split, which finds the same words."""
        if value.startswith(MARK) or not self.stem:
            return [t.text for t in self(value)]
        _, _, tokens = self._word_tokens(value)
        return list(chain.from_iterable(tokens))

    def texts_at(self, value: str) -> tuple[list[str], list[int]]:
        """``texts(value)`` and the position of each, as ``self(value, positions=True)`` gives them: a stop word
        keeps its place (schema version 6), a joined word ("stay-at-home") stands at its first part's position,
        its parts one after another, so that the words typed apart ("stay at home") are a phrase of the text too."""
        if value.startswith(MARK) or not self.stem:
            tokens = [(t.text, t.pos) for t in self(value, positions=True)]
            return [text for text, _ in tokens], [pos for _, pos in tokens]
        prof, found, words = self._word_tokens(value)
        texts = list(chain.from_iterable(words))
        counts = np.fromiter(map(len, words), dtype=np.int64, count=len(words))
        widths = np.asarray(self._widths(prof, found), dtype=np.int64)  # the positions each word takes
        widths[widths < 0] = 1  # (token_counts' separator, written in a text: a word of one place)
        if (counts == 1).all() and (widths == 1).all():  # one position a token, no stop word
            return texts, list(range(len(texts)))
        firsts = np.cumsum(counts) - counts  # each word's first token
        offsets = np.zeros(len(texts), dtype=np.int64)  # each token's position within its word
        for i in np.flatnonzero((counts > 1) | ((counts == 1) & (widths > 1))).tolist():
            offsets[firsts[i]:firsts[i] + counts[i]] = self._places(prof, found[i])
        starts = np.cumsum(widths) - widths
        return texts, (np.repeat(starts, counts) + offsets).tolist()

    def _widths(self, prof: _Profile, found: list[str]) -> list[int]:
        """How many positions each word of ``found`` takes, remembered per word; -1 for :meth:`token_counts`'
        separator."""
        return self._remembered(prof.sizes, found, lambda raw: -1 if raw == _SEPARATOR else self._width(prof, raw))

    def _remembered(self, memo: dict[str, Any], found: list[str], compute: Callable[[str], Any]) -> list[Any]:
        """``compute(word)`` for each word of ``found``, each word computed once per process (``memo``, emptied
        past :data:`CACHE_LIMIT` words)."""
        values = list(map(memo.get, found))
        if None in values:  # words not seen yet
            if len(memo) > self.CACHE_LIMIT:
                memo.clear()
            for i, raw in enumerate(found):
                if values[i] is None:
                    values[i] = memo[raw] = compute(raw)
        return values

    def _word_tokens(self, value: str) -> tuple[_Profile, list[str], list[tuple[str, ...]]]:
        """(profile, the words the tokenizer finds in ``value`` (not marked), each word's tokens)."""
        key = self.lang or "en"
        prof = self._profiles.get(key) or self.profile(key)
        found = self.expression.findall(value.lower() if value.isascii() else value)
        return prof, found, self._remembered(prof.words, found, lambda raw: self._word_texts(prof, raw))

    def _places(self, prof: _Profile, raw: str) -> tuple[int, ...]:
        """Where each token of one word of more than one token stands, from the word's first position."""
        places = prof.places.get(raw)
        if places is None:
            if len(prof.places) > self.CACHE_LIMIT:
                prof.places.clear()
            places = prof.places[raw] = tuple(t.pos for t in self(raw, positions=True))
        return places

    def _width(self, prof: _Profile, raw: str) -> int:
        """How many positions one word takes: one, a stop word too; a joined word its parts'."""
        low = lower(raw)
        return 1 if low.isascii() and low.isalnum() else self.width(raw)

    def token_counts(self, key: str, texts: tuple[str, ...] | list[str]) -> list[int]:
        """How many positions each of ``texts`` takes under profile ``key`` (a joined word takes its parts':
        :meth:`texts_at`), faster than analysing each. English text is read in one pass: the texts are joined
        around a word none of them holds, and the positions between two of those are counted."""
        joined = _BETWEEN.join(texts)
        lowered = joined.lower() if joined.isascii() else joined
        if key not in ("", "en") or not self.stem or lowered.count(_SEPARATOR) != len(texts) - 1:
            return [self.width(mark(key, t)) if t else 0 for t in texts]
        prof = self._profiles.get("en") or self.profile("en")
        counted = np.array(self._widths(prof, self.expression.findall(lowered)), dtype=np.int64)
        between = counted < 0
        counted[between] = 0
        return np.bincount(np.cumsum(between), weights=counted, minlength=len(texts)).astype(np.int64).tolist()

    def width(self, value: str) -> int:
        """How many positions ``value`` (marked or not) takes."""
        last = -1
        for t in self(value, positions=True, removestops=False):
            last = t.pos
        return last + 1

    def spans(self, value: str) -> Iterator[tuple[str, int, int]]:
        """(term, start, end) of each term of ``value`` (not marked), with the character offsets of its word; the
        parts of a joined word ("docker-sponsored", "http/2") at their own places, so that a part can be marked.
        Words are analysed once per process, as in :meth:`texts`."""
        prof = self._profiles.get(self.lang or "en") or self.profile(self.lang or "en")
        ascii_text = value.isascii()
        for m in self.expression.finditer(value):
            yield from self._match_spans(prof, m, ascii_text)

    def term_spans(self, value: str, terms: set[str]) -> list[tuple[str, int, int]]:
        """The spans (as :meth:`spans` gives them) of the terms in ``terms`` only: the words of ``value`` are
        found in one pass, and only those that give one of the terms (or are joined words, whose parts are
        analysed apart) are looked at again for their offsets."""
        prof = self._profiles.get(self.lang or "en") or self.profile(self.lang or "en")
        ascii_text = value.isascii()
        pattern = self.expression.pattern(value)  # (chosen once for both passes)
        found = pattern.findall(value.lower() if ascii_text else value)
        flags = self._flags(prof, terms)
        unseen = set(found).difference(flags)
        if unseen:
            if len(flags) > self.CACHE_LIMIT:
                flags.clear()
                unseen = set(found)
            for word in unseen:
                tokens = self._tokens(prof, word)
                flags[word] = not terms.isdisjoint(tokens) or (len(tokens) > 1 and bool(_JOINERS.search(word)))
        marks = list(map(flags.__getitem__, found))
        if not any(marks):
            return []
        return [span for m in compress(pattern.finditer(value), marks)
                for span in self._match_spans(prof, m, ascii_text) if span[0] in terms]

    def _flags(self, prof: _Profile, terms: set[str]) -> dict[str, bool]:
        """{word: whether it gives one of ``terms`` (or is a joined word)}, kept for the most recent term sets
        (the titles, notes and moments of one search ask with the same terms)."""
        key = (prof.key, frozenset(terms))
        found = self._term_flags.get(key)
        if found is None:
            found = {}
            self._term_flags.put(key, found)
        return found

    def _match_spans(self, prof: _Profile, m: Any, ascii_text: bool) -> Iterator[tuple[str, int, int]]:
        """The spans of one word the tokenizer found (``m``, its match)."""
        raw = m.group(0)
        terms = self._tokens(prof, raw.lower() if ascii_text else raw)
        if not terms:
            return
        start, end = m.span()
        if HAS_CJK.search(raw) and len(terms) > 1:
            yield from self._cjk_spans(prof, raw, start)
            return
        if len(terms) == 1 or not _JOINERS.search(raw):
            for term in terms:
                yield term, start, end
            return
        yield terms[0], start, end  # the joined word, then its parts
        for part in _PART.finditer(raw):
            piece = part.group(0).lower() if ascii_text else part.group(0)
            for term in self._tokens(prof, piece):
                yield term, start + part.start(), start + part.end()

    def _cjk_spans(self, prof: _Profile, raw: str, start: int) -> Iterator[tuple[str, int, int]]:
        """The spans of a word holding Japanese or Chinese characters: each bigram of a run at its own two
        characters, the word's other pieces at theirs (as :meth:`_words` cuts it). Until 5 December 2026 each bigram
        had the whole word's span, and a search for たこ焼き marked a whole sentence (a run of kana and kanji). Half-width
        katakana are read full-width (``ｶﾞｽ`` is ``ガス``), at the characters written."""
        low = lower(raw)
        text, starts = narrow_chars(low) if WIDE.search(low) else (low, None)

        def where(k: int) -> int:  # the offset in ``raw`` of the character k of ``text`` (or of its end)
            return start + (k if starts is None else starts[k] if k < len(starts) else len(low))

        at = 0
        for cjk, piece in split_cjk(text):
            if cjk:
                if len(piece) < 2:
                    yield piece, where(at), where(at + len(piece))
                for i in range(len(piece) - 1):
                    yield piece[i:i + 2], where(at + i), where(at + i + 2)
            else:
                word = piece.strip("'’" + JOINING)
                if word:
                    first = at + piece.find(word)
                    for term in self._tokens(prof, word):
                        yield term, where(first), where(first + len(word))
            at += len(piece)

    def _tokens(self, prof: _Profile, word: str) -> tuple[str, ...]:
        """The tokens of one word (as the tokenizer finds it), analysed once per process (``prof.words``)."""
        memo = prof.words
        tokens = memo.get(word)
        if tokens is None:
            if len(memo) > self.CACHE_LIMIT:
                memo.clear()
            tokens = memo[word] = self._word_texts(prof, word)
        return tokens

    def _word_texts(self, prof: _Profile, raw: str) -> tuple[str, ...]:
        """The tokens of one word of a text, as :meth:`__call__` makes them there (alone it gives the same)."""
        low = lower(raw)
        if prof.fold_first and "'" in low:  # English "don't" is "dont", as _words makes it
            low = low.replace("'", "")
        if low.isascii() and low.isalnum():
            return () if low in prof.stops else (prof.cache.get(low) or self._stem(prof, low),)
        return tuple(t.text for t in self(raw))


_SEPARATOR = "qqzxsegmentxzqq"  # a word between two texts in token_counts (one that holds it is counted alone)
_BETWEEN = f" {_SEPARATOR} "
_JOINERS = re.compile(r"['’./+&-]")
_JOINS = re.compile(r"['’./+&-]+")
_PART = re.compile(r"[^'’./+&-]+")


class SpokenEnglishAnalyzer(SpokenAnalyzer):
    """The analyzer of schema version 1 (English only), kept so that an index written then still opens."""


def spoken_analyzer(lang: str = "", stem: bool = True) -> SpokenAnalyzer:
    return SpokenAnalyzer(stem=stem, lang=lang)


@lru_cache(maxsize=32)
def profile_analyzer(key: str) -> SpokenAnalyzer:
    """One analysis profile's analyzer (the one its fields are indexed with), made once per process: the query's
    stop-word checks ("did you mean", one word or two) and the answer builder's terms all ask this one."""
    return spoken_analyzer(key)


def spoken_english_analyzer(stem: bool = True) -> SpokenAnalyzer:
    return SpokenAnalyzer(stem=stem, lang="en")


class WordsLowercaseFilter(Filter):
    """Lower case as the analysis reads it (``languages.lower``: ``İ`` is ``i``, ``𝐞𝐞𝐧`` is ``een``; schema 16)."""

    def __call__(self, tokens):  # type: ignore[override]
        for t in tokens:
            t.text = lower(t.text)
            yield t


class AsciiFoldingFilter(Filter):
    """Accents folded as the analysis folds them (``languages.ascii_fold``, OpenSearch's asciifolding; schema 17)."""

    def __call__(self, tokens):  # type: ignore[override]
        for t in tokens:
            t.text = ascii_fold(t.text)
            yield t


def plain_analyzer():
    """Unstemmed, for spelling suggestions and typeahead."""
    return RegexTokenizer(languages.WORD) | WordsLowercaseFilter() | AsciiFoldingFilter()


# Whoosh pickles the schema, analyzers included, into every index it writes: indexes written before this module
# moved into the engine package name it ``podsearch.analysis``. That name stays an alias of this module so that
# they still open (and keep serving until the next reindex rewrites them).
sys.modules.setdefault("podsearch.analysis", sys.modules[__name__])
