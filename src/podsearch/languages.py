"""Languages: tags as feeds write them, detection from text, and what analysis each language gets.

* :func:`normalize` turns ``en-US``, ``RO-ro``, ``de_DE``, ``eng`` or ``English`` into a tag (``en-US``,
  ``ro-RO``, ``de-DE``, ``en``); :func:`primary` keeps the language alone (``ro``).
* :func:`detect` names the language of a text with py3langid (its model ships inside the wheel, nothing is
  downloaded), loaded once per process on first use.
* :func:`stemmer`, :func:`stop_words` and :data:`SNOWBALL` say how a language is analysed; :func:`profile`
  groups the languages that are analysed alike; :func:`cjk_bigrams` segments Japanese and Chinese.

Nothing here imports Whoosh: the index (``analysis.py``) and the similarity model both use it.
"""

from __future__ import annotations

import logging
import re
import threading
import unicodedata
from collections.abc import Callable, Iterable
from functools import lru_cache
from typing import Any

log = logging.getLogger(__name__)

# The languages Snowball stems (pystemmer's algorithm names), by ISO 639-1 code.
SNOWBALL = {
    "ar": "arabic", "hy": "armenian", "eu": "basque", "ca": "catalan", "cs": "czech", "da": "danish",
    "nl": "dutch", "en": "english", "eo": "esperanto", "et": "estonian", "fi": "finnish", "fr": "french",
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


def has_opening_dot(text: str) -> bool:
    """Whether a dot opens a word of ``text`` (:data:`OPENING_DOT`). A pattern of words that may open with one is a
    third slower over a transcript (its look-behind is tried at every place) and about one text in 800 has one:
    the engines read the others with the pattern without it, which finds the same words there."""
    return _OPENING_DOT_FIRST.search(text) is not None


def lower(text: str) -> str:
    """``text`` in lower case, the Turkish capital dotted I (``İ``) as ``i``: its own lower case is ``i`` and a
    combining dot, which no word holds, so ``İstanbul`` was the words "i" and "stanbul" and found nothing (4 site
    episodes say "Istanbul"). Every engine's analysis and word lists lower words so."""
    return text.lower() if "İ" not in text else text.replace("İ", "I").lower()


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


def fold(word: str) -> str:
    """Accents removed (``café`` -> ``cafe``, ``ș`` -> ``s``); other letters (``ß``, ``ø``) stay, and so does
    Japanese and Chinese (``で`` is not ``て``)."""
    if word.isascii() or HAS_CJK.search(word):
        return word
    decomposed = unicodedata.normalize("NFKD", word)
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch))


@lru_cache(maxsize=64)
def stop_words(lang: str) -> frozenset[str]:
    """The function words of a language (the ``stop-words`` package's list), lower case, as the list writes them
    and with accents folded (``für`` and ``fur``); empty for a language without a list and for CJK languages.

    The similarity model drops them from an episode in that language. (The search index has its own lists, the
    Snowball ones: ``engines.whoosh.analysis``.)
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
