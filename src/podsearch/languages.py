"""Languages: tags as feeds write them, detection from text, and what analysis each language gets.

* :func:`normalize` turns ``en-US``, ``RO-ro``, ``de_DE``, ``eng`` or ``English`` into a tag (``en-US``,
  ``ro-RO``, ``de-DE``, ``en``); :func:`primary` keeps the language alone (``ro``).
* :func:`detect` names the language of a text with py3langid (its model ships inside the wheel, nothing is
  downloaded), loaded once per process on first use.
* :func:`stemmer`, :func:`index_stop_words` (the search index's), :func:`stop_words` (the similarity model's)
  and :data:`SNOWBALL` say how a language is analysed; :func:`profile`
  groups the languages that are analysed alike; :func:`cjk_bigrams` segments Japanese and Chinese.

Nothing here imports Whoosh: the index (``analysis.py``) and the similarity model both use it.
"""

from __future__ import annotations

import itertools
import logging
import re
import threading
import unicodedata
from collections.abc import Callable, Iterable
from functools import lru_cache
from typing import Any

log = logging.getLogger(__name__)

# The languages Snowball stems (pystemmer's algorithm names), by ISO 639-1 code. Dutch is Snowball's first Dutch
# algorithm ("dutch_porter" since Snowball 3), the one Lucene's "Dutch" filter runs: pystemmer 3's "dutch" is Snowball
# 3's new algorithm, which OpenSearch does not have, and the engines stemmed 3,369 of the 8,218 words said in the
# corpus's Dutch feeds apart ("alle" "al" against "all": "álles" 38 Dutch episodes on Whoosh, 3 on OpenSearch) until
# 6 December 2026.
SNOWBALL = {
    "ar": "arabic", "hy": "armenian", "eu": "basque", "ca": "catalan", "cs": "czech", "da": "danish",
    "nl": "dutch_porter", "en": "english", "eo": "esperanto", "et": "estonian", "fi": "finnish", "fr": "french",
    "de": "german", "el": "greek", "hi": "hindi", "hu": "hungarian", "id": "indonesian", "ga": "irish",
    "it": "italian", "lt": "lithuanian", "ne": "nepali", "no": "norwegian", "nb": "norwegian",
    "nn": "norwegian", "fa": "persian", "pl": "polish", "pt": "portuguese", "ro": "romanian",
    "ru": "russian", "sr": "serbian", "st": "sesotho", "es": "spanish", "sv": "swedish", "ta": "tamil",
    "tr": "turkish", "yi": "yiddish",
}

# Names for the facet and for tags written as names ("English", "Deutsch"); ISO 639-2 codes feeds use.
NAMES = {
    "ar": "Arabic", "ca": "Catalan", "cs": "Czech", "da": "Danish", "de": "German", "el": "Greek",
    "en": "English", "es": "Spanish", "fi": "Finnish", "fr": "French", "he": "Hebrew", "hi": "Hindi",
    "hu": "Hungarian", "id": "Indonesian", "it": "Italian", "ja": "Japanese", "ko": "Korean",
    "nl": "Dutch", "no": "Norwegian", "pl": "Polish", "pt": "Portuguese", "ro": "Romanian",
    "ru": "Russian", "sv": "Swedish", "tr": "Turkish", "uk": "Ukrainian", "zh": "Chinese",
}
_ALIASES = {
    "english": "en", "deutsch": "de", "german": "de", "nederlands": "nl", "dutch": "nl", "español": "es",
    "espanol": "es", "spanish": "es", "dansk": "da", "danish": "da", "română": "ro", "romana": "ro",
    "romanian": "ro", "français": "fr", "francais": "fr", "french": "fr", "italiano": "it", "italian": "it",
    "português": "pt", "portugues": "pt", "portuguese": "pt", "svenska": "sv", "swedish": "sv",
    "japanese": "ja", "日本語": "ja", "chinese": "zh", "中文": "zh", "norsk": "no", "polski": "pl",
    "eng": "en", "deu": "de", "ger": "de", "nld": "nl", "dut": "nl", "spa": "es", "dan": "da", "ron": "ro",
    "rum": "ro", "fra": "fr", "fre": "fr", "ita": "it", "por": "pt", "swe": "sv", "jpn": "ja", "zho": "zh",
    "chi": "zh", "nor": "no", "nob": "nb", "pol": "pl", "rus": "ru", "fin": "fi", "tur": "tr", "kor": "ko",
    "cmn": "zh", "yue": "zh",
}
CJK = frozenset({"ja", "zh"})  # segmented into character bigrams; Korean is written with spaces

_TAG = re.compile(r"^([a-z]{2,3})(?:-([a-z0-9]{1,8}))*$")


def normalize(tag: str | None) -> str:
    """A language tag in its usual case (``en-US``, ``ro-RO``, ``zh-Hant``), or "" when it is not one.

    Underscores count as hyphens; names and ISO 639-2 codes of common languages become their two-letter code.
    """
    raw = (tag or "").strip().lower().replace("_", "-")
    if not raw:
        return ""
    if raw in _ALIASES:
        return _ALIASES[raw]
    if not _TAG.match(raw):
        return ""
    parts = raw.split("-")
    lang = _ALIASES.get(parts[0], parts[0])
    if lang in {"und", "mul", "zxx", "xx"}:
        return ""
    out = [lang]
    for part in parts[1:]:
        if len(part) == 2 and part.isalpha():
            out.append(part.upper())  # a region
        elif len(part) == 4 and part.isalpha():
            out.append(part.title())  # a script
        else:
            out.append(part)
    return "-".join(out)


def primary(tag: str | None) -> str:
    """The language alone: ``ro`` for ``RO-ro``, "" for no or a bad tag."""
    return normalize(tag).split("-")[0]


def name(code: str) -> str:
    """A language's English name for people ("German"), or the code when it has none here."""
    return NAMES.get(primary(code), code)


# The script each analysis profile's language is written in (``profile``): "plain" (any other language) and
# Serbian (Cyrillic or Latin) may be written in any, so they are not here.
_NOT_LATIN = {"ru": "Cyrillic", "el": "Greek", "ar": "Arabic", "fa": "Arabic", "hi": "Devanagari", "ne": "Devanagari",
              "ta": "Tamil", "hy": "Armenian", "yi": "Hebrew"}
PROFILE_SCRIPTS = {"en": "Latin", **{code: _NOT_LATIN.get(code, "Latin") for code in SNOWBALL
                                     if code not in {"sr", "nb", "nn"}}}
_SCRIPT_NAMES = {"CJK": "Han", "IDEOGRAPHIC": "Han", "HIRAGANA": "Hiragana", "KATAKANA": "Katakana",
                 "KATAKANA-HIRAGANA": "Katakana", "HANGUL": "Hangul"}


def scripts_of(text: str) -> set[str]:
    """The scripts of the letters of ``text`` by their Unicode names ("Latin", "Cyrillic", "Han", "Hiragana"...),
    each letter read in its compatibility form (NFKC: a letter styled as a mathematical one, ``𝐱``, full-width,
    ``Ｘ``, or half-width, ``ﾗ``, is in the script of the letter it styles, as the analysis reads it, not in
    "Mathematical", "Fullwidth" or "Halfwidth"); digits, marks and symbols are in none."""
    found = set()
    for ch in unicodedata.normalize("NFKC", text):
        if ch.isalpha():
            first = unicodedata.name(ch, "").split(" ")[0]
            if first:
                found.add(_SCRIPT_NAMES.get(first, first.title()))
    return found


# -- detection ------------------------------------------------------------------------------------------
_identifier: Any = None
_identifier_lock = threading.Lock()
MIN_CONFIDENCE = 0.9  # below this the text does not say its language clearly enough
DETECT_CHARS = 4000  # enough text for a sure answer; more only costs time


def _ident() -> Any:
    global _identifier
    with _identifier_lock:
        if _identifier is None:
            from py3langid.langid import MODEL_FILE, LanguageIdentifier

            _identifier = LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)
        return _identifier


def detect(text: str) -> tuple[str, float]:
    """(language code, probability) of ``text``; ("", 0.0) when there is no text to judge."""
    text = " ".join(text[:DETECT_CHARS].split())
    if sum(ch.isalpha() for ch in text) < 3:
        return "", 0.0
    lang, prob = _ident().classify(text)
    return primary(lang), float(prob)


def detect_language(text: str, min_confidence: float = MIN_CONFIDENCE) -> str:
    """The language of ``text`` when the detector is sure enough, else ""."""
    lang, prob = detect(text)
    return lang if prob >= min_confidence else ""


def choose(*declared: str | None, text: Callable[[], str] | str = "") -> str:
    """The first declared tag that is one (normalised), else the language detected from ``text`` ("" if unsure).

    ``text`` may be a function, so that nothing is joined or detected when a tag was declared.
    """
    for tag in declared:
        norm = normalize(tag)
        if norm:
            return norm
    body = text() if callable(text) else text
    return detect_language(body) if body else ""


def majority(languages: Iterable[str], pooled: Callable[[], str]) -> str:
    """A fallback for a show's undetected episodes: the language most of its episodes were detected in,
    else the one the show's pooled text is detected in (with any confidence above one half)."""
    counts: dict[str, int] = {}
    for lang in languages:
        if lang:
            counts[lang] = counts.get(lang, 0) + 1
    if counts:
        return max(counts.items(), key=lambda kv: kv[1])[0]
    return detect_language(pooled(), min_confidence=0.5)


# -- analysis -----------------------------------------------------------------------------------------
def profile(lang: str | None) -> str:
    """The analysis a language gets: "en" (also for no language: the site's default), the code of a
    Snowball language, or "plain" (folded, unstemmed words; CJK bigrams) for the others."""
    code = primary(lang)
    if code in {"", "en"}:
        return "en"
    if code in SNOWBALL and code not in {"nb", "nn"}:
        return code
    if code in {"nb", "nn"}:
        return "no"
    return "plain"


@lru_cache(maxsize=64)
def stemmer(lang: str) -> Callable[[str], str] | None:
    """The Snowball stemmer of a language (pystemmer), or None when Snowball has none for it."""
    algorithm = SNOWBALL.get(primary(lang))
    if algorithm is None:
        return None
    import Stemmer

    return Stemmer.Stemmer(algorithm).stemWord


# An English word ending in "ly" (or "lies") is not Snowball-stemmed: its ending is written "li", as Porter's stemmer
# writes it, so an adverb keeps apart from its base (issue 15): Snowball makes "fairly" "fair", the stem of "fair" and
# "fairness", and a spoken transcript says "fairly", "basically", "actually", "exactly" far more often than the words
# they come from. A noun keeps its plural ("family" and "families" are "famili", "supply" and "supplies" "suppli").
# Both engines, index and queries (engines.opensearch.analysis: a keyword_marker before the stemmer, a pattern_replace
# after it).
ENGLISH_LY = "([a-z]+l)(?:y|ies)"
_ENGLISH_LY = re.compile(ENGLISH_LY)


def ly_apart(stem: Callable[[str], str]) -> Callable[[str], str]:
    """``stem`` (English Snowball) but for a word ending in "ly" or "lies", written with "li" (:data:`ENGLISH_LY`)."""

    def stem_word(word: str) -> str:
        found = _ENGLISH_LY.fullmatch(word)
        return found.group(1) + "i" if found else stem(word)

    return stem_word


# A word's closing "++" or "#" is part of it ("C++", "C#", "F#" are not "C" and "F"). An engine whose tokenizer
# drops the symbols has them spelled out before it ("csharp", "cplusplus": engines.opensearch.analysis), so a term
# may end with a spelling its text does not hold (answers' term bounds).
SYMBOLS_SPELLED = {"++": "plusplus", "#": "sharp"}
# A dot that opens a word (".NET", ".env": after a space or a sign, before an ASCII letter) is part of it; such an
# engine has it written "dot." before its tokenizer ("dot.net": a joined word, which also gives its parts "dot" and
# "net"), so ".net" asks for ".NET" alone and "net" still finds it.
OPENING_DOT = r"(?<![\w.])\.(?=[A-Za-z])"
OPENING_DOT_SPELLED = "dot."
_OPENING_DOT_FIRST = re.compile(r"\.(?<![\w.]\.)(?=[A-Za-z])")  # the same, the dot matched first: a quick scan


# A number written with thousands separators ("1,000", "12,500,000", "1,000.5", "$1,000", "10,000th"; at most six groups,
# a group of one to three digits then groups of three) is one number, its commas left out: "1000", on both engines, in
# the index and in queries (issue 15). Until 6 December 2026 Whoosh read "1,000" as the words "1" and "000" (552 site
# episodes holding both, and "1000" found none of the 163 writing "1,000") and OpenSearch as "1,000" (and its parts);
# now each reads "1000". Any other comma between digits ("3,14", "1,2,3", "1,0000") breaks the word, as it did on
# Whoosh (OpenSearch's tokenizer kept "3,14" whole).
THOUSANDS = r"(?<![\w,.])[0-9]{1,3}(?:,[0-9]{3}){1,5}(?![0-9]|,[0-9])"
_THOUSANDS = re.compile(THOUSANDS)
# the same for a char filter, which cannot remove the commas of a match one by one: each group captured ("$1$2...")
THOUSANDS_GROUPS = r"(?<![\w,.])([0-9]{1,3}),([0-9]{3})" + r"(?:,([0-9]{3}))?" * 4 + r"(?![0-9]|,[0-9])"


_DIGIT_COMMA = re.compile(r"\d,\d")


def has_digit_comma(text: str) -> bool:
    """Whether a comma stands between two digits in ``text`` (a number written with thousands separators may be there:
    the engines read a text without one by patterns without :data:`THOUSANDS`, whose look-behind slows every place)."""
    return "," in text and _DIGIT_COMMA.search(text) is not None


def thousands_joined(text: str, by: str = "") -> str:
    """``text`` with the commas of its numbers written with thousands separators as ``by`` (removed, or "\x00" to keep
    the offsets)."""
    if not has_digit_comma(text):
        return text
    return _THOUSANDS.sub(lambda m: m.group(0).replace(",", by), text)


def has_opening_dot(text: str) -> bool:
    """Whether a dot opens a word of ``text`` (:data:`OPENING_DOT`). A pattern of words that may open with one is a
    third slower over a transcript (its look-behind is tried at every place) and about one text in 800 has one:
    the engines read the others with the pattern without it, which finds the same words there."""
    return _OPENING_DOT_FIRST.search(text) is not None


def lower(text: str) -> str:
    """``text`` in lower case, the Turkish capital dotted I (``İ``) as ``i``: its own lower case is ``i`` and a
    combining dot, which no word holds, so ``İstanbul`` was the words "i" and "stanbul" and found nothing (4 site
    episodes say "Istanbul"); letters styled as mathematical letters as the letters they are (:func:`unstyled`).
    Every engine's analysis and word lists lower words so."""
    if text.isascii():
        return text.lower()
    text = unstyled(text)
    return text.lower() if "İ" not in text else text.replace("İ", "I").lower()


def _styled_letters() -> dict[int, str]:
    from .asciifolding import FOLDED

    chars = [*range(0x1D400, 0x1D800), *map(ord, "ℎℬℰℱℋℐℒℳℛℯℊℴℭℌℑℜℨℂℍℕℙℚℝℤ")]
    table = {c: unicodedata.normalize("NFKC", chr(c)) for c in chars if unicodedata.category(chr(c)) != "Cn"}
    # digits written small or circled (² ₂ ① ⑩ ⑴ ⒈: "other numbers", which the standard tokenizer does not take as
    # word characters), as the digits asciifolding folds each to, without its parentheses or dot (⑴ "(1)" is 1)
    digits = {ord(c): v.strip("().") for c, v in FOLDED.items()
              if unicodedata.category(c) == "No" and v.strip("().").isdigit()}
    return {**{c: v for c, v in table.items() if len(v) == 1 and v != chr(c)}, **digits}


# Letters styled as mathematical letters (bold 𝐞𝐞𝐧, italic, script, fraktur, double-struck, sans-serif, monospace:
# Unicode's Mathematical Alphanumeric Symbols, and the letterlike symbols that fill that block's gaps, ℎ ℬ ℂ ℍ ℝ),
# which show notes use for emphasis, each as the letter or digit it styles (its compatibility form, NFKC): the same
# table is OpenSearch's char filter sp_styled (asciifolding leaves them as they are). Until 6 December 2026 Whoosh
# read them as ASCII after its stop list and stemmer (its folding) and OpenSearch not at all: `één` found 40 Dutch
# episodes on Whoosh, 23 on OpenSearch, and a capital (𝐄) stayed a capital on Whoosh.
# Digits written small or circled too (``I²C`` is ``I2C``, ``H₂O`` ``H2O``, ``①`` ``1``; OpenSearch schema 14): the
# standard tokenizer takes no "other number" as a word character, so until 6 December 2026 OpenSearch read ``I²C``
# as the words i and c (``i2c`` 6 site episodes there, 9 on Whoosh, which read them as word characters and folded
# them; ``I²C`` 624 against 9, ``o(n²)`` 82 against 214). So are those of more than one digit or written with
# parentheses or a dot (``⑩`` is ``10``, ``⑴`` and ``⒈`` ``1``; both engines since 6 December 2026, issue 15: OpenSearch
# read none of them, and Whoosh ``⑴`` as the term "(1)"); the other "other numbers" (fractions ``½`` ``⅓``, Bengali and
# Tamil fractions, ancient numbers: :data:`NOT_WORD_NUMBERS`) are no word characters on either engine. A value may be
# longer than its character: :func:`unstyled` may lengthen a text.
STYLED_LETTERS = _styled_letters()
_STYLED = re.compile("[" + "".join(map(chr, sorted(STYLED_LETTERS))) + "]")


def unstyled(text: str) -> str:
    """``text`` with its letters styled as mathematical letters (:data:`STYLED_LETTERS`) as the letters they style,
    one character for one (offsets stay) but for numbers of two digits (``⑩`` -> ``10``): ``𝐄𝐞𝐧`` -> ``Een``."""
    return text.translate(STYLED_LETTERS) if not text.isascii() and _STYLED.search(text) else text


# Full-width ASCII (``ＡＢＣ``) and half-width katakana (``ﾀｺ``, ``ｶﾞ``): what OpenSearch's cjk_width folds
WIDE = re.compile("[\uff01-\uff5e\uff65-\uff9f]")


@lru_cache(maxsize=1)
def _width_table() -> dict[int, str]:
    return {c: unicodedata.normalize("NFKC", chr(c)) for c in [*range(0xFF01, 0xFF5F), *range(0xFF65, 0xFFA0)]}


def narrow(text: str) -> str:
    """Full-width ASCII as ASCII, half-width katakana as katakana with their voicing marks composed (``ﾀｺ`` ->
    ``タコ``, ``ｶﾞｽ`` -> ``ガス``), as OpenSearch's ``cjk_width`` reads them; other text as it is."""
    if text.isascii() or not WIDE.search(text):
        return text
    return unicodedata.normalize("NFC", text.translate(_width_table()))


def narrow_chars(text: str) -> tuple[str, list[int]]:
    """:func:`narrow` of ``text`` and, for each of its characters, where it starts in ``text`` (a half-width kana
    and its voicing mark are one character: ``ｶﾞ`` -> ``ガ`` at 0, the next at 2)."""
    out: list[str] = []
    starts: list[int] = []
    table = _width_table()
    for i, ch in enumerate(text):
        wide = ch.translate(table)
        if out and unicodedata.combining(wide):
            joined = unicodedata.normalize("NFC", out[-1] + wide)
            if len(joined) == 1:
                out[-1] = joined
                continue
        out.append(wide)
        starts.append(i)
    return "".join(out), starts


# The combining marks (Unicode categories Mn, Mc and Me, Unicode 14.0 as Python 3.11 has it), as the ranges of a regular
# expression's character class: Python's ``\w`` matches none of them, so ``\w+`` cut ``क्या`` (Hindi) into ``क`` and ``य``
# (the virama and the vowel sign are marks), and so every word of Devanagari, Bengali, Tamil, Telugu, Thai, Khmer,
# Tibetan..., and Hebrew or Arabic written with its points, and a Latin accent written apart (``e`` + U+0301). A word is
# a word character followed by word characters and marks: ``rf"\w[\w{MARKS}]*"``. Written out once (a scan of every
# code point, kept out of import time) by:
#   ranges = []
#   for c in range(sys.maxunicode + 1):
#       if unicodedata.category(chr(c)) in ("Mn", "Mc", "Me"):
#           if ranges and ranges[-1][1] == c - 1: ranges[-1][1] = c
#           else: ranges.append([c, c])
#   then each range as "\uXXXX-\uXXXX" ("\UXXXXXXXX" past U+FFFF), a lone mark as itself: 299 ranges, 2,408 marks.
# (tests/test_languages.py checks it against unicodedata.)
MARKS = (
    "\u0300-\u036f\u0483-\u0489\u0591-\u05bd\u05bf\u05c1-\u05c2\u05c4-\u05c5\u05c7\u0610-\u061a"
    "\u064b-\u065f\u0670\u06d6-\u06dc\u06df-\u06e4\u06e7-\u06e8\u06ea-\u06ed\u0711\u0730-\u074a"
    "\u07a6-\u07b0\u07eb-\u07f3\u07fd\u0816-\u0819\u081b-\u0823\u0825-\u0827\u0829-\u082d\u0859-\u085b"
    "\u0898-\u089f\u08ca-\u08e1\u08e3-\u0903\u093a-\u093c\u093e-\u094f\u0951-\u0957\u0962-\u0963"
    "\u0981-\u0983\u09bc\u09be-\u09c4\u09c7-\u09c8\u09cb-\u09cd\u09d7\u09e2-\u09e3\u09fe\u0a01-\u0a03"
    "\u0a3c\u0a3e-\u0a42\u0a47-\u0a48\u0a4b-\u0a4d\u0a51\u0a70-\u0a71\u0a75\u0a81-\u0a83\u0abc"
    "\u0abe-\u0ac5\u0ac7-\u0ac9\u0acb-\u0acd\u0ae2-\u0ae3\u0afa-\u0aff\u0b01-\u0b03\u0b3c\u0b3e-\u0b44"
    "\u0b47-\u0b48\u0b4b-\u0b4d\u0b55-\u0b57\u0b62-\u0b63\u0b82\u0bbe-\u0bc2\u0bc6-\u0bc8\u0bca-\u0bcd"
    "\u0bd7\u0c00-\u0c04\u0c3c\u0c3e-\u0c44\u0c46-\u0c48\u0c4a-\u0c4d\u0c55-\u0c56\u0c62-\u0c63"
    "\u0c81-\u0c83\u0cbc\u0cbe-\u0cc4\u0cc6-\u0cc8\u0cca-\u0ccd\u0cd5-\u0cd6\u0ce2-\u0ce3\u0d00-\u0d03"
    "\u0d3b-\u0d3c\u0d3e-\u0d44\u0d46-\u0d48\u0d4a-\u0d4d\u0d57\u0d62-\u0d63\u0d81-\u0d83\u0dca"
    "\u0dcf-\u0dd4\u0dd6\u0dd8-\u0ddf\u0df2-\u0df3\u0e31\u0e34-\u0e3a\u0e47-\u0e4e\u0eb1\u0eb4-\u0ebc"
    "\u0ec8-\u0ecd\u0f18-\u0f19\u0f35\u0f37\u0f39\u0f3e-\u0f3f\u0f71-\u0f84\u0f86-\u0f87\u0f8d-\u0f97"
    "\u0f99-\u0fbc\u0fc6\u102b-\u103e\u1056-\u1059\u105e-\u1060\u1062-\u1064\u1067-\u106d\u1071-\u1074"
    "\u1082-\u108d\u108f\u109a-\u109d\u135d-\u135f\u1712-\u1715\u1732-\u1734\u1752-\u1753\u1772-\u1773"
    "\u17b4-\u17d3\u17dd\u180b-\u180d\u180f\u1885-\u1886\u18a9\u1920-\u192b\u1930-\u193b\u1a17-\u1a1b"
    "\u1a55-\u1a5e\u1a60-\u1a7c\u1a7f\u1ab0-\u1ace\u1b00-\u1b04\u1b34-\u1b44\u1b6b-\u1b73\u1b80-\u1b82"
    "\u1ba1-\u1bad\u1be6-\u1bf3\u1c24-\u1c37\u1cd0-\u1cd2\u1cd4-\u1ce8\u1ced\u1cf4\u1cf7-\u1cf9"
    "\u1dc0-\u1dff\u20d0-\u20f0\u2cef-\u2cf1\u2d7f\u2de0-\u2dff\u302a-\u302f\u3099-\u309a\ua66f-\ua672"
    "\ua674-\ua67d\ua69e-\ua69f\ua6f0-\ua6f1\ua802\ua806\ua80b\ua823-\ua827\ua82c\ua880-\ua881"
    "\ua8b4-\ua8c5\ua8e0-\ua8f1\ua8ff\ua926-\ua92d\ua947-\ua953\ua980-\ua983\ua9b3-\ua9c0\ua9e5"
    "\uaa29-\uaa36\uaa43\uaa4c-\uaa4d\uaa7b-\uaa7d\uaab0\uaab2-\uaab4\uaab7-\uaab8\uaabe-\uaabf\uaac1"
    "\uaaeb-\uaaef\uaaf5-\uaaf6\uabe3-\uabea\uabec-\uabed\ufb1e\ufe00-\ufe0f\ufe20-\ufe2f\U000101fd"
    "\U000102e0\U00010376-\U0001037a\U00010a01-\U00010a03\U00010a05-\U00010a06\U00010a0c-\U00010a0f"
    "\U00010a38-\U00010a3a\U00010a3f\U00010ae5-\U00010ae6\U00010d24-\U00010d27\U00010eab-\U00010eac"
    "\U00010f46-\U00010f50\U00010f82-\U00010f85\U00011000-\U00011002\U00011038-\U00011046\U00011070"
    "\U00011073-\U00011074\U0001107f-\U00011082\U000110b0-\U000110ba\U000110c2\U00011100-\U00011102"
    "\U00011127-\U00011134\U00011145-\U00011146\U00011173\U00011180-\U00011182\U000111b3-\U000111c0"
    "\U000111c9-\U000111cc\U000111ce-\U000111cf\U0001122c-\U00011237\U0001123e\U000112df-\U000112ea"
    "\U00011300-\U00011303\U0001133b-\U0001133c\U0001133e-\U00011344\U00011347-\U00011348"
    "\U0001134b-\U0001134d\U00011357\U00011362-\U00011363\U00011366-\U0001136c\U00011370-\U00011374"
    "\U00011435-\U00011446\U0001145e\U000114b0-\U000114c3\U000115af-\U000115b5\U000115b8-\U000115c0"
    "\U000115dc-\U000115dd\U00011630-\U00011640\U000116ab-\U000116b7\U0001171d-\U0001172b"
    "\U0001182c-\U0001183a\U00011930-\U00011935\U00011937-\U00011938\U0001193b-\U0001193e\U00011940"
    "\U00011942-\U00011943\U000119d1-\U000119d7\U000119da-\U000119e0\U000119e4\U00011a01-\U00011a0a"
    "\U00011a33-\U00011a39\U00011a3b-\U00011a3e\U00011a47\U00011a51-\U00011a5b\U00011a8a-\U00011a99"
    "\U00011c2f-\U00011c36\U00011c38-\U00011c3f\U00011c92-\U00011ca7\U00011ca9-\U00011cb6"
    "\U00011d31-\U00011d36\U00011d3a\U00011d3c-\U00011d3d\U00011d3f-\U00011d45\U00011d47"
    "\U00011d8a-\U00011d8e\U00011d90-\U00011d91\U00011d93-\U00011d97\U00011ef3-\U00011ef6"
    "\U00016af0-\U00016af4\U00016b30-\U00016b36\U00016f4f\U00016f51-\U00016f87\U00016f8f-\U00016f92"
    "\U00016fe4\U00016ff0-\U00016ff1\U0001bc9d-\U0001bc9e\U0001cf00-\U0001cf2d\U0001cf30-\U0001cf46"
    "\U0001d165-\U0001d169\U0001d16d-\U0001d172\U0001d17b-\U0001d182\U0001d185-\U0001d18b"
    "\U0001d1aa-\U0001d1ad\U0001d242-\U0001d244\U0001da00-\U0001da36\U0001da3b-\U0001da6c\U0001da75"
    "\U0001da84\U0001da9b-\U0001da9f\U0001daa1-\U0001daaf\U0001e000-\U0001e006\U0001e008-\U0001e018"
    "\U0001e01b-\U0001e021\U0001e023-\U0001e024\U0001e026-\U0001e02a\U0001e130-\U0001e136\U0001e2ae"
    "\U0001e2ec-\U0001e2ef\U0001e8d0-\U0001e8d6\U0001e944-\U0001e94a\U000e0100-\U000e01ef"
)

# The "other numbers" (Unicode category No) that no digit spells (:data:`STYLED_LETTERS` has the others): fractions
# (``½``, ``⅓``, ``¾``), Bengali, Tamil, Malayalam fractions, Ethiopic, Aegean and other ancient numbers, circled
# ideographs. The standard tokenizer takes none of them as a word character, Python's ``\w`` every one: until 6 December
# 2026 ``½`` was a word on Whoosh alone (issue 15); the engines' word patterns now leave them out
# (:data:`WORD_CHAR`). Written out once as MARKS is (tests/test_languages.py checks it against unicodedata and
# asciifolding's table): 63 ranges, 763 characters.
NOT_WORD_NUMBERS = (
    "\u00bc-\u00be\u09f4-\u09f9\u0b72-\u0b77\u0bf0-\u0bf2\u0c78-\u0c7e\u0d58-\u0d5e\u0d70-\u0d78"
    "\u0f2a-\u0f33\u1369-\u137c\u17f0-\u17f9\u19da\u2150-\u215f\u2189\u2cfd\u3192-\u3195\u3220-\u3229"
    "\u3248-\u324f\u3251-\u325f\u3280-\u3289\u32b1-\u32bf\ua830-\ua835\U00010107-\U00010133"
    "\U00010175-\U00010178\U0001018a\U0001018b\U000102e1-\U000102fb\U00010320-\U00010323"
    "\U00010858-\U0001085f\U00010879-\U0001087f\U000108a7-\U000108af\U000108fb-\U000108ff"
    "\U00010916-\U0001091b\U000109bc\U000109bd\U000109c0-\U000109cf\U000109d2-\U000109ff"
    "\U00010a40-\U00010a48\U00010a7d\U00010a7e\U00010a9d-\U00010a9f\U00010aeb-\U00010aef"
    "\U00010b58-\U00010b5f\U00010b78-\U00010b7f\U00010ba9-\U00010baf\U00010cfa-\U00010cff"
    "\U00010e60-\U00010e7e\U00010f1d-\U00010f26\U00010f51-\U00010f54\U00010fc5-\U00010fcb"
    "\U00011052-\U00011065\U000111e1-\U000111f4\U0001173a\U0001173b\U000118ea-\U000118f2"
    "\U00011c5a-\U00011c6c\U00011fc0-\U00011fd4\U00016b5b-\U00016b61\U00016e80-\U00016e96"
    "\U0001d2e0-\U0001d2f3\U0001d360-\U0001d378\U0001e8c7-\U0001e8cf\U0001ec71-\U0001ecab"
    "\U0001ecad-\U0001ecaf\U0001ecb1-\U0001ecb4\U0001ed01-\U0001ed2d\U0001ed2f-\U0001ed3d"
    "\U0001f100-\U0001f10c"
)
WORD_CHAR = rf"[^\W{NOT_WORD_NUMBERS}]"  # a word character: ``\w`` but those numbers

# a word: a word character, then word characters and marks (``\w+`` cut ``क्या``); not a fraction (``½``: since 6
# December 2026 the word lists hold none, and a query of one says it holds no word, as one of symbols does)
WORD = rf"{WORD_CHAR}(?:{WORD_CHAR}|[{MARKS}])*"
_WORDS = re.compile(WORD)
_PLAIN_WORDS = re.compile(rf"{WORD_CHAR}+")  # (a text without marks)
_ASCII_WORDS = re.compile(r"\w+")
_WORDS_W = re.compile(rf"\w(?:\w|[{MARKS}])*")  # (a text without NOT_WORD_NUMBERS)


# The blocks where a combining mark may be (every one of MARKS is in them: tests/test_languages.py): a text with no
# character of them holds no mark, and ``\w`` patterns find its words as those with marks do, a third faster (an
# English transcript's curly quotes and dashes are outside them: 5 % of the site corpus's segments are not ASCII).
_MAY_HOLD_MARKS = re.compile("[\u0300-\u1DFF\u20D0-\u20FF\u2CEF-\u2DFF\u302A-\u309A\uA66F-\uABFF\uFB1E"
                             "\uFE00-\uFE2F\U00010000-\U0010FFFF]")


def may_hold_marks(text: str) -> bool:
    """Whether ``text`` may hold a combining mark (a character of the blocks where they are)."""
    return not text.isascii() and _MAY_HOLD_MARKS.search(text) is not None


@lru_cache(maxsize=1)
def _not_word_numbers() -> frozenset[str]:
    """The characters of :data:`NOT_WORD_NUMBERS` (its single characters and ranges)."""
    spec, chars, k = NOT_WORD_NUMBERS, set(), 0
    while k < len(spec):
        if k + 2 < len(spec) and spec[k + 1] == "-":
            chars.update(map(chr, range(ord(spec[k]), ord(spec[k + 2]) + 1)))
            k += 3
        else:
            chars.add(spec[k])
            k += 1
    return frozenset(chars)


def has_not_word_number(text: str) -> bool:
    r"""Whether ``text`` holds one of :data:`NOT_WORD_NUMBERS` (``½``). A text without one has the same words by
    ``\w`` as by :data:`WORD_CHAR`, whose class (``\w`` but those) made a scan of a text that is not ASCII three times
    slower, 1.5 ms of the 13 ms of the site mix's searches (6 December 2026); this test costs a sixth of what it saves."""
    return not text.isascii() and not _not_word_numbers().isdisjoint(text)


def words(text: str) -> list[str]:
    r"""The words of ``text`` (:data:`WORD`; ``\w+`` for a text without marks or :data:`NOT_WORD_NUMBERS`, which
    finds the same words faster)."""
    if text.isascii():
        return _ASCII_WORDS.findall(text)
    if may_hold_marks(text):
        return (_WORDS if has_not_word_number(text) else _WORDS_W).findall(text)
    return (_PLAIN_WORDS if has_not_word_number(text) else _ASCII_WORDS).findall(text)


# Where the combining marks :func:`strip_accents` removes are: Combining Diacritical Marks (and their extended and
# supplement blocks, for symbols, half marks), Hebrew points, Arabic harakat.
_ACCENT_BLOCKS = ((0x0300, 0x036F), (0x1AB0, 0x1AFF), (0x1DC0, 0x1DFF), (0x20D0, 0x20FF), (0xFE20, 0xFE2F),
                  (0x0591, 0x05C7), (0x064B, 0x065F), (0x0670, 0x0670))


@lru_cache(maxsize=1)
def _accents() -> re.Pattern[str]:
    marks = "".join(chr(c) for lo, hi in _ACCENT_BLOCKS for c in range(lo, hi + 1) if unicodedata.combining(chr(c)))
    return re.compile(f"[{re.escape(marks)}]+")


def strip_accents(text: str) -> str:
    """``text`` in compatibility form (NFKD) without the accents of the Latin, Greek and Cyrillic alphabets (and the
    vowel points of Hebrew and Arabic), composed again (NFC): ``Café`` -> ``Cafe``; the marks that are part of another
    script's letters stay: Japanese voicing marks (``ラジオ``, not ``ラシオ``), the Devanagari virama."""
    decomposed = unicodedata.normalize("NFKD", text)
    if decomposed == text:
        return text
    return unicodedata.normalize("NFC", _accents().sub("", decomposed))


@lru_cache(maxsize=1)
def _ascii_folded() -> dict[int, str]:
    from .asciifolding import FOLDED

    return {ord(c): v for c, v in FOLDED.items()}


def ascii_fold(word: str) -> str:
    """``word`` as OpenSearch's ``asciifolding`` writes it (``asciifolding.FOLDED``, read from the node): the accents of
    Latin letters removed, ligatures and letters spelled out (``ß`` ss, ``ø`` o, ``æ`` ae, ``ŋ`` n), superscript and
    circled digits as digits; other scripts (Greek ``ά``, Cyrillic ``й``), a mark written apart and Japanese and
    Chinese as they are. Both engines' analysis folds so (Whoosh since its schema 17: it used :func:`fold`, which
    leaves ``ø`` and ``ß`` and removes Greek and Cyrillic accents, for other languages than English, and Whoosh's
    ``accent_map`` for English)."""
    return word if word.isascii() else word.translate(_ascii_folded())


def fold(word: str) -> str:
    """Accents removed (``café`` -> ``cafe``, ``ș`` -> ``s``); other letters (``ß``, ``ø``) stay, and so does
    Japanese and Chinese (``で`` is not ``て``)."""
    if word.isascii() or HAS_CJK.search(word):
        return word
    decomposed = unicodedata.normalize("NFKD", word)
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch))


# The stop words the search index drops from English text (and from a query read as English): the usual function
# words and the fillers of transcripts. One list for both engines.
SPOKEN_ENGLISH_STOP_WORDS = frozenset("""
a an and are as at be but by for if in into is it no not of on or such that the their then there these
they this to was will with i you we he she um uh yeah like so just oh okay ok
""".split())


@lru_cache(maxsize=64)
def index_stop_words(key: str) -> frozenset[str]:
    """The stop words the search index drops for an analysis profile (:func:`profile`), both engines: spoken
    English's for "en", none for "plain" (CJK text is bigrams), else Snowball's list (``stoplists``, as Whoosh and
    NLTK ship them) or, for a language Snowball has none for (Romanian, Catalan, Polish, ...), the ``stop-words``
    package's; lower case, as the list writes them and with accents folded (``für`` and ``fur``).

    Snowball's lists are the short ones, function words alone: the ``stop-words`` package's add words a listener
    searches for (Spanish ``después``, ``además``, ``actualmente``, Portuguese ``agora``, French ``après``), which
    until 6 December 2026 OpenSearch's index dropped (its schema 10) where Whoosh's kept them.

    Both engines read a word of these languages against the list as written (lower case, before its accents are
    folded): Swedish ``år`` (year) is a word where ``är`` (is) is a stop word, Dutch ``één`` (one) where ``een`` (a) is,
    Spanish ``dónde`` where ``donde`` is (until 6 December 2026, its schema 14, Whoosh's index also dropped a word whose
    folded spelling was listed, and OpenSearch's kept it). So the list spells each word as it is written and typed:
    as listed, without its accents (``fur`` for ``für``, what a reader typing without accents asks for), the
    ``stop-words`` package's accented spellings of a listed word (Spanish ``cómo``, Portuguese ``é``, "is"), and a list
    written without accents with the language's letters as well (Romanian ``și``, ``să``, ``în``: ``ACCENTED``).
    """
    if key == "en":
        return SPOKEN_ENGLISH_STOP_WORDS
    if key == "plain" or key in CJK:
        return frozenset()
    from .stoplists import SNOWBALL_STOP_WORDS
    words = set(SNOWBALL_STOP_WORDS.get(key, ())) or set(package_stop_words(key))
    words |= {fold(w) for w in words}
    words |= {w for w in package_stop_words(key) if fold(w) in words}
    return frozenset(words | _respelled(words, ACCENTED.get(key, "")))


# The accented letters of a language whose stop list is written without them (the stop-words package's Romanian)
ACCENTED = {"ro": "ăâîșşțţ"}


def _respelled(words: set[str], letters: str) -> set[str]:
    """Every spelling of ``words`` with any of ``letters`` in place of the letter it folds to (``si`` -> ``și``,
    ``şi``)."""
    if not letters:
        return set()
    options: dict[str, list[str]] = {}
    for c in letters:
        options.setdefault(fold(c), [fold(c)]).append(c)
    out: set[str] = set()
    for w in words:
        out.update("".join(p) for p in itertools.product(*(options.get(ch, [ch]) for ch in w)))
    return out


@lru_cache(maxsize=64)
def stop_words(lang: str) -> frozenset[str]:
    """The function words of a language (the ``stop-words`` package's list), lower case, as the list writes them
    and with accents folded (``für`` and ``fur``); empty for a language without a list and for CJK languages.

    The similarity model drops them from an episode in that language. (The search index has its own lists, the
    shorter Snowball ones: :func:`index_stop_words`.)
    """
    code = primary(lang)
    if not code or code in CJK:
        return frozenset()
    words = set(package_stop_words({"no": "nb", "nn": "nb"}.get(code, code)))
    return frozenset(words | {fold(w) for w in words})


def package_stop_words(code: str) -> list[str]:
    """The ``stop-words`` package's list for a language code ([] when it has none)."""
    try:
        from stop_words import LANGUAGE_MAPPING, get_stop_words
    except ImportError:  # pragma: no cover - a runtime dependency
        return []
    if code not in LANGUAGE_MAPPING:
        return []
    try:
        return [w.lower() for w in get_stop_words(code)]
    except Exception:  # the package raises its own error for a language it lists but lacks
        return []


_CJK_RANGES = (
    (0x3040, 0x30FF),  # hiragana, katakana
    (0x3400, 0x4DBF),  # CJK extension A
    (0x4E00, 0x9FFF),  # CJK unified ideographs
    (0xF900, 0xFAFF),  # compatibility ideographs
    (0xFF66, 0xFF9F),  # half-width katakana
    (0x20000, 0x2FFFF),  # extensions B-F
)
_CJK_CLASS = "".join(f"\\U{lo:08x}-\\U{hi:08x}" for lo, hi in _CJK_RANGES)
CJK_RUN = re.compile(f"[{_CJK_CLASS}]+")
HAS_CJK = re.compile(f"[{_CJK_CLASS}]")


def cjk_bigrams(run: str) -> list[str]:
    """Overlapping character pairs of a run of CJK characters (a lone character stays as it is):
    ``いもほり`` -> ``いも``, ``もほ``, ``ほり``. A query of two characters or more finds any text that holds it."""
    if len(run) < 2:
        return [run] if run else []
    return [run[i:i + 2] for i in range(len(run) - 1)]


def cjk_words(text: str) -> dict[str, tuple[frozenset[str], ...]]:
    """The Japanese or Chinese words typed in ``text`` (a query) that are more than one bigram: each of their bigrams
    -> the bigram sets of the words it is part of (``たこ焼き`` -> ``たこ`` ``こ焼`` ``焼き``, each -> that set). A text
    holds such a word only where it holds all of its bigrams: a moment of ``たこ焼き`` is not ``すき焼き``. The words
    are the runs as typed: ``たこ焼き 焼き鳥`` is two (a segment saying 焼き鳥 holds the second), ``人工智能 OR 能源``
    one and a word of one bigram, which counts alone (until the evening of 5 December 2026 the bigrams of every
    typed word were chained by their shared characters into one word, and those queries had no moments)."""
    words: dict[str, list[frozenset[str]]] = {}
    for run in re.findall(f"[{_CJK_CLASS}]{{3,}}", narrow(lower(text))):
        bigrams = frozenset(cjk_bigrams(run))
        for b in bigrams:
            words.setdefault(b, []).append(bigrams)
    return {b: tuple(ws) for b, ws in words.items()}


def whole_cjk_words(held: set[str], words: dict[str, tuple[frozenset[str], ...]]) -> set[str]:
    """``held`` (the terms a text holds) without the bigrams of the words of :func:`cjk_words` it holds none of
    whole."""
    return {t for t in held if t not in words or any(w <= held for w in words[t])} if words else held


def split_cjk(word: str) -> list[tuple[bool, str]]:
    """``word`` cut into (is CJK, piece) runs: ``麻実子のいもほり倶楽部2024`` -> CJK run, then ``2024``."""
    out: list[tuple[bool, str]] = []
    pos = 0
    for m in CJK_RUN.finditer(word):
        if m.start() > pos:
            out.append((False, word[pos:m.start()]))
        out.append((True, m.group(0)))
        pos = m.end()
    if pos < len(word):
        out.append((False, word[pos:]))
    return out
