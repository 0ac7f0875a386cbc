"""Per-language analysis for OpenSearch, and the same analysis in Python.

Each analysis profile (``languages.profile``: "en", a Snowball language's code, or "plain") is an OpenSearch
analyzer ``sp_<profile>``: the standard tokenizer (Unicode word breaks; each Japanese or Chinese character a
token), apostrophes inside words removed ("don't" = "dont"), CJK width folded, lower case, CJK characters joined
into overlapping bigrams, joined words kept whole and split into their parts ("node.js" -> "node.js", "node",
"js"), the language's stop words dropped, Snowball stemming, accents folded (before stemming in English, as the
Whoosh engine does, after it elsewhere: the Snowball stemmers of other languages read accents; there an accented word
is also indexed, at its place, as the stem of it written without accents, for a reader who types it so).

:class:`PythonAnalyzer` does the same in Python (pystemmer runs the same Snowball algorithms), so that the
answer builder can find a query's terms in titles, notes and transcript segments without asking the engine.
A word the two split differently is at worst not highlighted; what is found is decided by OpenSearch.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterator
from functools import lru_cache
from typing import Any

from ... import languages

# OpenSearch's snowball filter names, by code; Snowball languages it lacks are stop words alone, unstemmed.
SNOWBALL_FILTER = {
    "ar": "Arabic", "hy": "Armenian", "eu": "Basque", "ca": "Catalan", "da": "Danish", "nl": "Dutch",
    "en": "English", "et": "Estonian", "fi": "Finnish", "fr": "French", "de": "German", "el": "Greek",
    "hi": "Hindi", "hu": "Hungarian", "id": "Indonesian", "ga": "Irish", "it": "Italian", "lt": "Lithuanian",
    "ne": "Nepali", "no": "Norwegian", "pt": "Portuguese", "ro": "Romanian", "ru": "Russian", "sr": "Serbian",
    "es": "Spanish", "sv": "Swedish", "ta": "Tamil", "tr": "Turkish", "yi": "Yiddish",
}

APOSTROPHE = re.compile(r"(?<=\w)['’](?=\w)")
# An ampersand between word characters ("AT&T", "Q&A") joins them as a dot does: the char filter below writes it so
# ("at.t", parts "at" and "t"), where the standard tokenizer breaks at it (Whoosh keeps "at&t": analysis.JOINING)
AMPERSAND = re.compile(r"(?<=\w)&(?=\w)")
# Unicode word breaks (UAX #29) as the standard tokenizer finds them, closely enough: letters joined by a dot
# or a colon, digits by a dot, stay one word ("node.js", "3.12"; "2:2" is two); CJK characters are matched one by one.
# (Apostrophes are gone before, and the commas of a number written with thousands separators, "1,000": \x00 marks
# where one was; any other comma between digits breaks the word, as the char filter sp_comma makes it.)
_CJK = languages.HAS_CJK.pattern[1:-1]  # the character class's inside
_VOICING = "\uff9e\uff9f"  # the half-width voicing marks (cjk_width: composed with the katakana before them)
# A word character runs on through the combining marks after it (languages.MARKS: Devanagari vowel signs, the
# virama), as a word of UAX #29 does (until 5 December 2026 the mirror cut "क्या" into "क" and "य", and marked them)
# (and through a half-width voicing mark, ``ﾞ`` or ``ﾟ``: the tokenizer reads it as such a mark, "aﾞ" one word)
# (not an "other number" no digit spells, "½": languages.NOT_WORD_NUMBERS, which the tokenizer takes for no word)
_W = rf"(?:(?![{_CJK}]){languages.WORD_CHAR}[{languages.MARKS}{_VOICING}]*)"
_JOIN = r"(?:(?<=[^\W\d_])[.:](?=[^\W\d_])|(?<=\d)\.(?=\d)|\x00)"
_EMOJI = "\U0001F300-\U0001FAFF\u2600-\u27BF"  # the standard tokenizer keeps each emoji as a token
# A word's closing "++" or "#" (not before a word character) is part of it, spelled out by the char filters
# below ("C#" -> "csharp", "C++" -> "cplusplus": the standard tokenizer drops the symbols, and "c#" was "c")
_SYMBOL_END = r"(?:\+\+(?![\w+])|#(?![\w#]))"
# A dot that opens a word (".NET") is written "dot." by the char filter below: "dot.net", a joined word
_DOT_START = rf"(?:{languages.OPENING_DOT})?"
# (the katakana middle dot, "トム・クルーズ", is in the kana's block but breaks words, as punctuation does)
WORD = re.compile(rf"(?!\u30fb)[{_CJK}{_EMOJI}]|{_DOT_START}{_W}+(?:{_JOIN}{_W}+)*{_SYMBOL_END}?")
SYMBOLS_SPELLED = languages.SYMBOLS_SPELLED
# (word_delimiter_graph reads a mark as a letter, and an underscore: its type_table, schema 10)
PARTS = re.compile(rf"\w(?:\w|[{languages.MARKS}])*")
# WORD for a text of ASCII alone (most transcripts' segments): no CJK or emoji to rule out letter by letter
_ASCII_PLAIN = re.compile(r"\w+(?:(?:(?<=[^\W\d_])[.:](?=[^\W\d_])|(?<=\d)\.(?=\d)|\x00)\w+)*" + _SYMBOL_END + "?",
                          re.ASCII)
_ASCII_DOTTED = re.compile(_DOT_START + _ASCII_PLAIN.pattern, re.ASCII)


def _ascii_words(text: str) -> re.Pattern[str]:
    """The pattern of a text's words: with an opening dot only when one is there (``languages.has_opening_dot``)."""
    return _ASCII_DOTTED if languages.has_opening_dot(text) else _ASCII_PLAIN
# punctuation that tokenizes as an ASCII character does: the right single quote is an apostrophe, the rest breaks
_TO_ASCII = (("\u2019", "'"), ("\u2018", " "), ("\u201c", " "), ("\u201d", " "), ("\u2014", " "), ("\u2013", " "),
             ("\u2026", " "))


def _ascii_punctuation(text: str) -> str:
    """``text`` with that punctuation in ASCII, one character for one (offsets stay)."""
    if not text.isascii():
        for char, ascii_char in _TO_ASCII:
            if char in text:
                text = text.replace(char, ascii_char)
    return text


# the filters of an index analyzer that its query analyzer (``sp_<profile>_q``) leaves out
INDEX_ONLY = ("sp_parts", "sp_unaccented", "sp_once")


def profiles() -> list[str]:
    """Every analysis profile: English, each Snowball language, and "plain"."""
    keys = {languages.profile(code) for code in languages.SNOWBALL}
    return sorted(keys | {"en", "plain"})


def stop_words(key: str) -> list[str]:
    """The stop words of a profile, as written and with accents folded (the index drops both): the lists the Whoosh
    engine drops, ``languages.index_stop_words`` (until schema 10 those of the ``stop-words`` package, twice as long
    in Spanish, Portuguese, French, Italian, Swedish, Finnish, Russian: ``después``, ``agora`` found nothing)."""
    return sorted(languages.index_stop_words(key))


def stemmer_name(key: str) -> str:
    return SNOWBALL_FILTER.get(key, "")


def analysis_settings() -> dict[str, Any]:
    """The ``settings.analysis`` of an index: one analyzer per profile, ``sp_<profile>`` (``sp_<profile>_q`` for
    queries); ``sp_words`` for the spelling field (folded, unstemmed words)."""
    filters: dict[str, Any] = {
        "sp_parts": {"type": "word_delimiter_graph", "preserve_original": True, "split_on_case_change": False,
                     "split_on_numerics": False, "stem_english_possessive": False, "generate_number_parts": True,
                     "generate_word_parts": True, "catenate_all": False, "adjust_offsets": False,
                     # an underscore joins as a letter does, as on Whoosh ("utm_source", "op_return" one word, no
                     # parts: until schema 10 "source" found the links' "utm_source=")
                     "type_table": ["_ => ALPHANUM"]},
        "sp_bigrams": {"type": "cjk_bigram", "ignored_scripts": ["hangul"], "output_unigrams": False},
        "sp_fold": {"type": "asciifolding", "preserve_original": False},
        # (other Snowball languages, index only) an accented word folded before the stemmer too, beside itself, and
        # the one of the two stems left when they are one: the index holds "somatiz" and "somatizaca" for
        # "somatização", so "somatizacao" typed without accents finds it (Whoosh: analysis.SpokenAnalyzer._unaccented)
        "sp_unaccented": {"type": "asciifolding", "preserve_original": True},
        "sp_once": {"type": "remove_duplicates"},
        "sp_ly_kept": {"type": "keyword_marker", "keywords_pattern": languages.ENGLISH_LY},
        "sp_ly": {"type": "pattern_replace", "pattern": "^" + languages.ENGLISH_LY + "$", "replacement": "$1i"},
    }
    analyzers: dict[str, Any] = {
        "sp_words": {"type": "custom", "tokenizer": "standard", "char_filter": ["sp_styled", "sp_apostrophe"],
                     "filter": ["cjk_width", "lowercase", "sp_bigrams", "sp_fold"]},
    }
    for key in profiles():
        chain = ["cjk_width", "lowercase", "sp_bigrams"]
        if key == "en":
            chain.append("sp_fold")
        chain.append("sp_parts")
        if stop_words(key):
            filters[f"sp_stop_{key}"] = {"type": "stop", "stopwords": stop_words(key), "ignore_case": False}
            chain.append(f"sp_stop_{key}")
        both = key != "en" and bool(stemmer_name(key))  # an accented word also stemmed as written without accents
        if both:
            chain.append("sp_unaccented")
        if stemmer_name(key):
            filters[f"sp_stem_{key}"] = {"type": "snowball", "language": stemmer_name(key)}
            if key == "en":  # a word ending in "ly" or "lies" is not stemmed but written "li" (languages.ENGLISH_LY)
                chain.append("sp_ly_kept")
            chain.append(f"sp_stem_{key}")
            if key == "en":
                chain.append("sp_ly")
        if key != "en":
            chain.append("sp_fold")
        if both:
            chain.append("sp_once")
        analyzers[f"sp_{key}"] = {"type": "custom", "tokenizer": "standard",
                                  "char_filter": ["sp_styled", "sp_apostrophe", "sp_thousands", "sp_comma", "sp_ampersand",
                                                  "sp_plusplus", "sp_sharp", "sp_dot"],
                                  "filter": chain}
        # queries keep joined words whole: "node.js" asks for "node.js", which the index has beside its parts; and
        # they are read as typed, one stem a word (as on Whoosh)
        analyzers[f"sp_{key}_q"] = {**analyzers[f"sp_{key}"], "filter": [f for f in chain if f not in INDEX_ONLY]}
    # (?U): Java's \w is ASCII alone without it ("l’été")
    char_filters: dict[str, Any] = {
        # letters styled as mathematical letters (𝐞𝐞𝐧) as the letters they style, as languages.lower reads them (schema
        # 11: asciifolding leaves them, and "één" found 23 Dutch episodes here, 40 on Whoosh)
        "sp_styled": {"type": "mapping", "mappings": [f"{chr(c)} => {v}" for c, v in sorted(languages.STYLED_LETTERS.items())]},
        "sp_apostrophe": {"type": "pattern_replace", "pattern": r"(?U)(?<=\w)['’](?=\w)", "replacement": ""},
        # a number written with thousands separators is one number, its commas left out ("1,000" is "1000", as on
        # Whoosh: languages.THOUSANDS, schema 15); any other comma between digits breaks the word ("3,14" is "3" and
        # "14", as on Whoosh: the standard tokenizer kept it whole)
        "sp_thousands": {"type": "pattern_replace", "pattern": "(?U)" + languages.THOUSANDS_GROUPS,
                         "replacement": "$1$2$3$4$5$6"},
        "sp_comma": {"type": "pattern_replace", "pattern": r"(?U)(?<=\d),(?=\d)", "replacement": " "},
        "sp_plusplus": {"type": "pattern_replace", "pattern": r"(?U)(?<=\w)\+\+(?![\w+])",
                        "replacement": SYMBOLS_SPELLED["++"]},
        "sp_sharp": {"type": "pattern_replace", "pattern": r"(?U)(?<=\w)#(?![\w#])", "replacement": SYMBOLS_SPELLED["#"]},
        "sp_ampersand": {"type": "pattern_replace", "pattern": r"(?U)(?<=\w)&(?=\w)", "replacement": "."},
        "sp_dot": {"type": "pattern_replace", "pattern": "(?U)" + languages.OPENING_DOT,
                   "replacement": languages.OPENING_DOT_SPELLED},
    }
    return {"char_filter": char_filters, "filter": filters, "analyzer": analyzers}


def fold(word: str) -> str:
    """What OpenSearch's asciifolding does to a word: ``languages.ascii_fold``, its table read from the node (until 6
    December 2026 a model of it here, from Unicode's decompositions, which missed 1,318 of its characters: ``ĸ``, ``ŋ``,
    ``ƀ``, and read ``½`` and ``ª`` that it leaves)."""
    return languages.ascii_fold(word)


# cjk_width: full-width ASCII as ASCII, half-width katakana as full-width
_WIDTH = {c: unicodedata.normalize("NFKC", chr(c)) for c in [*range(0xFF01, 0xFF5F), *range(0xFF65, 0xFFA0)]}


class PythonAnalyzer:
    """A profile's OpenSearch analysis in Python: ``texts`` and ``spans`` of the engine interface (``parts``: as
    when indexing, joined words also give their parts, and in a language other than English an accented word also
    the stem of it written without accents; queries keep a word whole, one stem). Its reading of a transcript is
    kept in the index (each document's table of segment terms, ``segments.py``): a change to what :meth:`texts`
    gives a text bumps the engine's ``SCHEMA_VERSION``."""

    def __init__(self, key: str, parts: bool = True) -> None:
        self.key, self.parts = key, parts
        self.stops = frozenset(stop_words(key))
        self.stem: Callable[[str], str] | None = languages.stemmer(key) if stemmer_name(key) else None
        if key == "en" and self.stem is not None:
            self.stem = languages.ly_apart(self.stem)  # sp_ly_kept, sp_ly
        # sp_unaccented: the index's other stem of an accented word (a stemmer of another language than English)
        self.unaccented = parts and key != "en" and self.stem is not None
        self._cache: dict[str, tuple[tuple[str, int, int], ...]] = {}
        self._terms: dict[str, tuple[str, ...]] = {}  # a word as matched in a lower-cased ASCII text: its terms

    def _term(self, piece: str) -> str | None:
        if self.key == "en":
            piece = fold(piece)
        if piece in self.stops:
            return None
        if self.stem is not None and not languages.HAS_CJK.search(piece):
            piece = self.stem(piece)
        return piece if self.key == "en" else fold(piece)

    def _bare(self, piece: str) -> str:
        """The stem of ``piece`` (not a stop word) written without its accents, as sp_unaccented then the stemmer
        and sp_fold make it: "" when asciifolding leaves it as it is (no Latin accent)."""
        bare = fold(piece)
        if bare == piece:
            return ""
        return fold(self.stem(bare)) if self.stem is not None else bare

    def _word(self, word: str) -> tuple[tuple[str, int, int], ...]:
        """The terms of one word (lower case, apostrophes gone) with their offsets in it: the word, then its
        parts, stopped and stemmed."""
        out = self._cache.get(word)
        if out is None:
            if len(self._cache) > 100_000:
                self._cache.clear()
            # (a run of underscores alone is no word to the standard tokenizer)
            pieces = [(word, 0, len(word))] if word.strip("_") else []
            if self.parts and not word.isalnum():
                pieces += [(m.group(0), m.start(), m.end()) for m in PARTS.finditer(word) if m.group(0) != word]
            found = []
            for piece, start, end in pieces:
                term = self._term(piece)
                if term is not None:
                    found.append((term, start, end))
                    if self.unaccented and not piece.isascii():
                        other = self._bare(piece)
                        if other and other != term:  # (sp_once: the two stems are one term)
                            found.append((other, start, end))
            out = self._cache[word] = tuple(found)
        return out

    def spans(self, text: str) -> Iterator[tuple[str, int, int]]:
        """(term, start, end) of each term of ``text``, with offsets into ``text`` (a part of a joined word at
        its own place, so that a match on it marks the part)."""
        return self._spans(text, None)

    def term_spans(self, text: str, terms: set[str]) -> list[tuple[str, int, int]]:
        return list(self._spans(text, terms))

    def _spans(self, text: str, wanted: set[str] | None) -> Iterator[tuple[str, int, int]]:
        """:meth:`spans`, those of ``wanted`` terms only when it is given. A text of ASCII alone, punctuation
        aside, is matched lower-cased at once, a word of no wanted term skipped before its offsets are worked
        out (3-4 x faster; the same spans as :meth:`_unicode_spans`, tested)."""
        plain = _ascii_punctuation(text)
        if not plain.isascii():
            yield from (span for span in self._unicode_spans(text) if wanted is None or span[0] in wanted)
            return
        cleaned = _joined(_numbers((APOSTROPHE.sub("\x00", plain) if "'" in plain else plain).lower(), "\x00"))
        for m in _ascii_words(cleaned).finditer(cleaned):
            raw = m.group(0)
            word = raw.replace("\x00", "") if "\x00" in raw else raw
            if wanted is not None and wanted.isdisjoint(self._word_terms(word)):
                continue
            if word[-1] in "#+" or word[0] == ".":
                word = _spelled(word)
            whole = len(word) != len(raw)  # apostrophes removed or a symbol spelled: offsets inside no longer line up
            for term, start, end in self._word(word):
                if wanted is None or term in wanted:
                    yield (term, m.start(), m.end()) if whole else (term, m.start() + start, m.start() + end)

    def _unicode_spans(self, text: str) -> Iterator[tuple[str, int, int]]:
        """:meth:`spans` of any text: CJK, width, folding and case minded letter by letter."""
        cleaned = _joined(_numbers(APOSTROPHE.sub("\x00", text), "\x00"))  # removed below; offsets stay
        cjk: list[tuple[str, int, int]] = []
        for m in WORD.finditer(cleaned):
            raw = m.group(0)
            if len(raw) == 1 and languages.HAS_CJK.match(raw):
                if cjk and cjk[-1][2] != m.start():
                    yield from _bigrams(cjk)
                    cjk = []
                if raw in _VOICING:  # a half-width voicing mark: with the character before it (a word's letters
                    # hold it: _W), or after none, no part of a word
                    if not cjk:
                        continue
                    before, start, _ = cjk[-1]
                    voiced = _voiced(before, raw)
                    if voiced:
                        cjk[-1] = (voiced, start, m.end())
                        continue
                cjk.append((raw.translate(_WIDTH), m.start(), m.end()))
                continue
            if cjk:
                yield from _bigrams(cjk)
                cjk = []
            # lower case letter by letter, as Java does: "İ" is "i", not "i" and a combining dot
            word = _spelled(raw.replace("\x00", "").translate(_WIDTH).translate(languages.STYLED_LETTERS)
                            .replace("İ", "i").lower())
            if len(word) == len(raw):
                for term, start, end in self._word(word):
                    yield term, m.start() + start, m.start() + end
            else:  # apostrophes removed: offsets inside the word no longer line up; mark the whole word
                for term, _, _ in self._word(word):
                    yield term, m.start(), m.end()
        if cjk:
            yield from _bigrams(cjk)

    def texts(self, text: str) -> list[str]:
        """The terms of ``text``: those of :meth:`spans`, found faster in a text of ASCII alone, punctuation aside
        (no width, folding or case to mind letter by letter: matched in the text lower-cased at once; 3-4 x)."""
        plain = _ascii_punctuation(text)  # a transcript's curly quotes and dashes
        if not plain.isascii():
            return [t for t, _, _ in self._unicode_spans(text)]
        out: list[str] = []
        known = self._terms.get  # _word_terms' cache read here, a call saved per word: texts 0.12 s, not 0.16 s,
        # over 22,401 transcript lines (median of 15)
        lowered = _joined(_numbers((APOSTROPHE.sub("", plain) if "'" in plain else plain).lower(), ""))
        for word in _ascii_words(lowered).findall(lowered):
            found = known(word)
            out.extend(self._word_terms(word) if found is None else found)
        return out

    def _word_terms(self, word: str) -> tuple[str, ...]:
        """The terms of one word of a lower-cased ASCII text (apostrophes gone), kept."""
        found = self._terms.get(word)
        if found is None:
            if len(self._terms) > 100_000:
                self._terms.clear()
            spelled = _spelled(word) if word[-1] in "#+" or word[0] == "." else word
            found = self._terms[word] = tuple(t for t, _, _ in self._word(spelled))
        return found


def _voiced(kana: str, mark: str) -> str:
    """A katakana (full-width, as cjk_width made it) with a half-width voicing mark written after it, as cjk_width
    composes them (``ｶﾞ`` -> ``ガ``, ``ﾊﾟ`` -> ``パ``, ``ｳﾞ`` -> ``ヴ``): "" when the two make no one character (``ｱﾞ``,
    a hiragana, a kanji: the mark stays a character of its own). Until 5 December 2026 the twin never composed them
    (``ｶﾞｽ`` was ``カ゛`` and ``゛ス``, which the node's ``ガス`` is not: nothing was marked)."""
    if len(kana) != 1 or not "\u30a6" <= kana <= "\u30fd":
        return ""
    joined = unicodedata.normalize("NFC", kana + mark.translate(_WIDTH))
    return joined if len(joined) == 1 else ""


def _numbers(text: str, by: str) -> str:
    """``text`` with the commas of its numbers written with thousands separators as ``by`` (sp_thousands: "" removes
    them, "\x00" keeps the offsets and joins the number) and any other comma between digits as a space (sp_comma)."""
    if not languages.has_digit_comma(text):
        return text
    return _COMMA.sub(" ", languages.thousands_joined(text, by))


_COMMA = re.compile(r"(?<=\d),(?=\d)")


def _joined(text: str) -> str:
    """``text`` with an ampersand between word characters written as a dot, as the char filter does (one
    character for one: offsets stay)."""
    return AMPERSAND.sub(".", text) if "&" in text else text


def _spelled(word: str) -> str:
    """A word's closing symbol spelled out, and its opening dot, as the char filters write them ("c#" -> "csharp",
    ".net" -> "dot.net")."""
    if word.startswith("."):
        word = languages.OPENING_DOT_SPELLED + word[1:]
    for symbol, spelled in SYMBOLS_SPELLED.items():
        if word.endswith(symbol):
            return word[: -len(symbol)] + spelled
    return word


def _bigrams(run: list[tuple[str, int, int]]) -> Iterator[tuple[str, int, int]]:
    if len(run) == 1:
        yield run[0]
        return
    for (a, start, _), (b, _, end) in zip(run, run[1:]):
        yield a + b, start, end


@lru_cache(maxsize=128)
def python_analyzer(key: str, parts: bool = True) -> PythonAnalyzer:
    return PythonAnalyzer(key, parts)
