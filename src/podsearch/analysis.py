"""Text analysis shared by the index (Whoosh) and the moment finder: one tokenizer, one stemmer.

The analyzers are Whoosh objects, so this module belongs to the index layer: only ``index.py`` and the
moment finder beside it import it.
"""

from __future__ import annotations

from whoosh.analysis import CharsetFilter, Filter, LowercaseFilter, RegexTokenizer, StemFilter, StopFilter
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


def spoken_english_analyzer(stem: bool = True):
    chain = (RegexTokenizer(TOKEN_PATTERN) | LowercaseFilter() | CharsetFilter(accent_map)
             | JoinedPartsFilter() | StopFilter(stoplist=STOP_WORDS, minsize=1))
    if stem:
        chain = chain | StemFilter(lang="en", cachesize=50000)
    return chain


def plain_analyzer():
    """Unstemmed, for spelling suggestions and typeahead."""
    return RegexTokenizer(r"\w+") | LowercaseFilter() | CharsetFilter(accent_map)
