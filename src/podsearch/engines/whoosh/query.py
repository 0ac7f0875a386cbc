"""Reading what people type into Whoosh queries: the parser, the all-words / any-word strategy, the terms."""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

from whoosh.qparser import AndGroup, FieldAliasPlugin, MultifieldParser, OrGroup, PlusMinusPlugin
from whoosh.qparser.dateparse import DateParserPlugin
from whoosh.query import NullQuery, Or, Require, Term

from ...errors import QueryError
from .schema import query_schema

# Query-time field weights: title > persons, show > notes > transcript. Each field is scored with BM25 on its
# own and the scores are added, so a word in the title and the text counts twice already; measured on
# Cranfield (titles + abstracts), nDCG@10 falls from 0.371 (title 1.0) to 0.364 (1.5) and 0.334 (4.0).
FIELD_BOOSTS = {"title": 1.5, "persons": 1.3, "show": 1.3, "notes": 1.15, "transcript": 1.0}
SEARCH_FIELDS = list(FIELD_BOOSTS)
MAX_QUERY_LENGTH = 500
LONG_QUERY_WORDS = 4  # plain queries longer than this are ranked on any word with a coordination bonus

_OPERATORS = re.compile(r"(?:^|\s)[-+]\w|\b(?:AND|OR|NOT|ANDNOT|ANDMAYBE)\b")
_SYNTAX = re.compile(r'["():\[\]{}^~*?]|(?:^|\s)[-+]\w|\b(?:AND|OR|NOT|ANDNOT|ANDMAYBE)\b')


def has_syntax(text: str) -> bool:
    """Whether the text uses query syntax (quotes, operators, field:, -word...)."""
    return bool(_SYNTAX.search(text))


def plain_words(text: str) -> str:
    """The text as plain words: operators lower-cased, syntax characters removed."""
    text = re.sub(r'["():\[\]{}^~*?]', " ", text)
    text = re.sub(r"(?:^|(?<=\s))[-+]+", " ", text)
    return re.sub(r"\b(AND|OR|NOT|ANDNOT|ANDMAYBE|TO)\b", lambda m: m.group(1).lower(), text)


def _lenient(text: str) -> str:
    """Repair what people type: unbalanced quotes and brackets are dropped rather than refused."""
    if text.count('"') % 2:
        text = text.replace('"', " ")
    if text.count("(") != text.count(")"):
        text = text.replace("(", " ").replace(")", " ")
    if text.count("[") != text.count("]"):
        text = text.replace("[", " ").replace("]", " ")
    return text


def _parser(key: str, relaxed: bool) -> MultifieldParser:
    group = OrGroup if relaxed else AndGroup
    parser = MultifieldParser(SEARCH_FIELDS, query_schema(key), fieldboosts=FIELD_BOOSTS, group=group)
    # +word / -word only at the start of a word: "real-gas" and "wi-fi" are words, not "NOT gas".
    parser.add_plugin(PlusMinusPlugin(plusexpr=r"(?:^|(?<=[\s(]))\+(?=\w)", minusexpr=r"(?:^|(?<=[\s(]))-(?=\w)"))
    parser.add_plugin(FieldAliasPlugin({"persons": ["person", "speaker", "guest", "host"],
                                        "notes": ["notes", "description"], "show": ["podcast"]}))
    parser.add_plugin(DateParserPlugin(free=False))
    return parser


def parse(text: str, relaxed: bool = False, plain: bool = False, profiles: list[str] | None = None) -> Any:
    """The query for ``text``: all words (or any word with ``relaxed``); ``plain`` ignores query syntax.

    With several analysis ``profiles`` (languages), the text is analysed for each, and each reading
    only matches the episodes of its profile: ``Or(Require(q_de, analysis:de), Require(q_en, analysis:en))``,
    so an episode is scored once, on the reading of its own language.
    """
    if len(text) > MAX_QUERY_LENGTH:
        raise QueryError(f"The query is {len(text)} characters long; the limit is {MAX_QUERY_LENGTH}.")
    return _parse_cached(text, relaxed, plain, tuple(profiles or ["en"]))


@lru_cache(maxsize=512)
def _parse_cached(text: str, relaxed: bool, plain: bool, profiles: tuple[str, ...]) -> Any:
    """Parsed queries are kept: a query is parsed once per language in the index (queries are immutable)."""
    typed = plain_words(text) if plain else _lenient(text)
    readings: dict[str, tuple[Any, list[str]]] = {}  # languages that read the text alike share one query
    for key in profiles:
        try:
            q = _parser(key, relaxed).parse(typed)
        except Exception as exc:  # Whoosh's parser raises assorted errors on odd input
            raise QueryError(f"Cannot read the query {text!r}: {exc}") from None
        if len(profiles) == 1:
            return q
        if q is not NullQuery:
            readings.setdefault(repr(q), (q, []))[1].append(key)
    parts = [Require(q, Term("analysis", keys[0]) if len(keys) == 1 else Or([Term("analysis", k) for k in keys]))
             for q, keys in readings.values()]
    return Or(parts) if len(parts) > 1 else (parts[0] if parts else NullQuery)


def strategy(text: str, plain: bool, profiles: list[str] | None = None) -> tuple[Any, Any]:
    """(first query, fallback query or None) for the text typed.

    Short plain queries want every word (the fallback is any word); long ones (sentences, pasted
    questions) are ranked on any word with a coordination bonus straight away.
    """
    p = profiles
    if plain or not has_syntax(text):
        if len(re.findall(r"\w+", text)) > LONG_QUERY_WORDS:
            return parse(text, relaxed=True, plain=True, profiles=p), None
        return parse(text, plain=plain, profiles=p), parse(text, relaxed=True, plain=plain, profiles=p)
    if _OPERATORS.search(text):  # the person said how to combine the words: no second guessing
        return parse(text, profiles=p), None
    return parse(text, profiles=p), parse(text, relaxed=True, profiles=p)


def query_terms(query: Any) -> dict[str, set[str]]:
    """The analysed terms of a query, by field."""
    out: dict[str, set[str]] = {}
    for fieldname, text in query.iter_all_terms(phrases=True):
        if isinstance(text, bytes):
            text = text.decode("utf-8", "replace")
        out.setdefault(fieldname, set()).add(str(text))
    return out
