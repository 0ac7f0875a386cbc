"""Text analysis shared by the index (Whoosh) and the moment finder: one tokenizer, one stemmer.

The analyzers are Whoosh objects, so this module belongs to the index layer: only ``index.py`` and the
moment finder beside it import it.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from whoosh.analysis import CharsetFilter, Filter, LowercaseFilter, RegexTokenizer, Token, Tokenizer
from whoosh.lang import stemmer_for_language
from whoosh.support.charset import accent_map

# Words joined by an apostrophe, a dot or a slash between word characters stay one token, so that
# "don't", "O'Reilly", "3.12", "HTTP/2" and "node.js" survive; the filter below also splits them.
TOKEN_PATTERN = r"\w+(?:['’./+-]\w+)*\+*"


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
            if any(c in text for c in "./+-"):
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
        if ch in "./+-":
            if cur:
                out.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    if cur:
        out.append("".join(cur))
    return out


STOP_WORDS = frozenset("""
a an and are as at be but by for if in into is it no not of on or such that the their then there these
they this to was will with i you we he she um uh yeah like so just oh okay ok
""".split())


class SpokenEnglishAnalyzer(Tokenizer):
    """Tokenize, lower-case, fold accents, split joined words, drop stop words and stem, in one pass.

    It does what ``RegexTokenizer | LowercaseFilter | CharsetFilter | JoinedPartsFilter | StopFilter |
    StemFilter`` does (the same tokens at the same positions) about three times faster: indexing a site's
    transcripts spends most of its time here. Stems are cached per process.
    """

    CACHE_LIMIT = 200_000

    def __init__(self, stem: bool = True) -> None:
        self.stem = stem
        self.expression = re.compile(TOKEN_PATTERN)
        self._cache: dict[str, str] = {}
        self._stemfn: Any = None

    def __eq__(self, other: object) -> bool:
        return type(self) is type(other) and self.stem == other.stem  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash((type(self).__name__, self.stem))

    def __getstate__(self) -> dict[str, Any]:
        return {"stem": self.stem}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state.get("stem", True))  # type: ignore[misc]

    def _stem(self, word: str) -> str:
        out = self._cache.get(word)
        if out is None:
            if self._stemfn is None:
                self._stemfn = stemmer_for_language("en")
            if len(self._cache) > self.CACHE_LIMIT:
                self._cache.clear()
            out = self._cache[word] = self._stemfn(word)
        return out

    def _words(self, raw: str, query: bool) -> list[str]:
        text = raw.lower()
        if not text.isascii():
            text = text.translate(accent_map)
        if text.isalnum():
            return [text]
        if "'" in text or "’" in text:
            return [text.replace("'", "").replace("’", "")]
        if query:
            return [text]
        return [text] + [p for p in _split(text) if p and p != text]

    def __call__(self, value: str, positions: bool = False, chars: bool = False, keeporiginal: bool = False,
                 removestops: bool = True, start_pos: int = 0, start_char: int = 0, tokenize: bool = True,
                 mode: str = "", **kwargs: Any) -> Iterator[Token]:
        t = Token(positions, chars, removestops=removestops, mode=mode, **kwargs)
        query = mode == "query"
        stops = STOP_WORDS
        cache = self._cache
        stem = self.stem
        pos = start_pos
        if not tokenize:
            matches: Any = [(value, 0, len(value))]
        elif chars:
            matches = ((m.group(0), m.start(), m.end()) for m in self.expression.finditer(value))
        else:  # indexing: no offsets needed, and findall is much faster than finditer
            matches = ((w, 0, 0) for w in self.expression.findall(value))
        for raw, start, end in matches:
            low = raw.lower()
            words = [low] if low.isascii() and low.isalnum() else self._words(raw, query)
            for word in words:
                stopped = word in stops
                if stopped and removestops:
                    continue
                if stem and not stopped:
                    t.text = cache.get(word) or self._stem(word)
                else:
                    t.text = word
                t.stopped = stopped
                t.boost = 1.0
                if keeporiginal:
                    t.original = raw
                if positions:
                    t.pos = pos
                if chars:
                    t.startchar = start_char + start
                    t.endchar = start_char + end
                if not stopped:
                    pos += 1
                yield t


def spoken_english_analyzer(stem: bool = True) -> SpokenEnglishAnalyzer:
    return SpokenEnglishAnalyzer(stem=stem)


def plain_analyzer():
    """Unstemmed, for spelling suggestions and typeahead."""
    return RegexTokenizer(r"\w+") | LowercaseFilter() | CharsetFilter(accent_map)
