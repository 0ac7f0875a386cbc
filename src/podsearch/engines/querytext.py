"""How podsearch reads what people type, for every engine: the field weights, the syntax, the all-words /
any-word strategy. Each engine turns the readings into its own queries (``engines.whoosh.query``,
``engines.opensearch.query``)."""

from __future__ import annotations

import re

# Query-time field weights: title > persons, show > notes > transcript. Each field is scored with BM25 on its
# own and the scores are added, so a word in the title and the text counts twice already; measured on
# Cranfield (titles + abstracts), nDCG@10 falls from 0.371 (title 1.0) to 0.364 (1.5) and 0.334 (4.0).
FIELD_BOOSTS = {"title": 1.5, "persons": 1.3, "show": 1.3, "notes": 1.15, "transcript": 1.0}
SEARCH_FIELDS = list(FIELD_BOOSTS)
# names people may write before a colon, for the fields above
FIELD_ALIASES = {"persons": ["person", "speaker", "guest", "host"], "notes": ["notes", "description"],
                 "show": ["podcast"]}
MAX_QUERY_LENGTH = 500
LONG_QUERY_WORDS = 4  # plain queries longer than this are ranked on any word with a coordination bonus
RELAX_BELOW = 3  # fewer all-words hits than this: fall back to any-word matching

OPERATORS = re.compile(r"(?:^|\s)[-+]\w|\b(?:AND|OR|NOT|ANDNOT|ANDMAYBE)\b")
_SYNTAX = re.compile(r'["():\[\]{}^~*?]|(?:^|\s)[-+]\w|\b(?:AND|OR|NOT|ANDNOT|ANDMAYBE)\b')


def has_syntax(text: str) -> bool:
    """Whether the text uses query syntax (quotes, operators, field:, -word...)."""
    return bool(_SYNTAX.search(text))


def plain_words(text: str) -> str:
    """The text as plain words: operators lower-cased, syntax characters removed."""
    text = re.sub(r'["():\[\]{}^~*?]', " ", text)
    text = re.sub(r"(?:^|(?<=\s))[-+]+", " ", text)
    return re.sub(r"\b(AND|OR|NOT|ANDNOT|ANDMAYBE|TO)\b", lambda m: m.group(1).lower(), text)


def lenient(text: str) -> str:
    """Repair what people type: unbalanced quotes and brackets are dropped rather than refused."""
    if text.count('"') % 2:
        text = text.replace('"', " ")
    if text.count("(") != text.count(")"):
        text = text.replace("(", " ").replace(")", " ")
    if text.count("[") != text.count("]"):
        text = text.replace("[", " ").replace("]", " ")
    return text


def readings(text: str, plain: bool) -> list[tuple[bool, bool]]:
    """The readings of ``text`` to try in turn, each (any word rather than all words, as plain words): the
    second is the fallback when the first finds fewer than ``RELAX_BELOW``.

    Short plain queries want every word (the fallback is any word); long ones (sentences, pasted questions) are
    ranked on any word straight away; a query whose operators say how to combine the words is read as written.
    """
    if plain or not has_syntax(text):
        if len(re.findall(r"\w+", text)) > LONG_QUERY_WORDS:
            return [(True, True)]
        return [(False, plain), (True, plain)]
    if OPERATORS.search(text):
        return [(False, False)]
    return [(False, False), (True, False)]
