"""Reading what people type into Whoosh queries: the parser, the all-words / any-word strategy, the terms."""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

from whoosh.qparser import AndGroup, FieldAliasPlugin, MultifieldParser, OrGroup, PlusMinusPlugin
from whoosh.qparser.dateparse import DateParserPlugin
from whoosh.query import NullQuery, Or, Require, Term

from ...errors import QueryError
from .bm25f import as_bm25f
from .exclusions import exclusions_hold, positive_terms
from .ranking import RANKING, Ranking
from .schema import query_schema

# Field weights, length normalisation, the any-word fallback and the long-query rule: ranking.py.
MAX_QUERY_LENGTH = 500

# Operators written out: the person said how to combine the words, so there is no any-word fallback
# (``-word`` and ``+word`` are kept by the fallback, which stays).
_OPERATORS = re.compile(r"\b(?:AND|OR|NOT|ANDNOT|ANDMAYBE)\b")
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


def _parser(key: str, relaxed: bool, ranking: Ranking) -> MultifieldParser:
    group = OrGroup if relaxed else AndGroup
    parser = MultifieldParser(ranking.fields, query_schema(key), fieldboosts=ranking.boosts, group=group)
    # +word / -word only at the start of a word: "real-gas" and "wi-fi" are words, not "NOT gas".
    parser.add_plugin(PlusMinusPlugin(plusexpr=r"(?:^|(?<=[\s(]))\+(?=\w)", minusexpr=r"(?:^|(?<=[\s(]))-(?=\w)"))
    parser.add_plugin(FieldAliasPlugin({"persons": ["person", "speaker", "guest", "host"],
                                        "notes": ["notes", "description"], "show": ["podcast"]}))
    parser.add_plugin(DateParserPlugin(free=False))
    return parser


def parse(text: str, relaxed: bool = False, plain: bool = False, profiles: list[str] | None = None,
          ranking: Ranking = RANKING) -> Any:
    """The query for ``text``: all words (or any word with ``relaxed``); ``plain`` ignores query syntax.

    With several analysis ``profiles`` (languages), the text is analysed for each, and each reading
    only matches the episodes of its profile: ``Or(Require(q_de, analysis:de), Require(q_en, analysis:en))``,
    so an episode is scored once, on the reading of its own language.
    """
    if len(text) > MAX_QUERY_LENGTH:
        raise QueryError(f"The query is {len(text)} characters long; the limit is {MAX_QUERY_LENGTH}.")
    return _parse_cached(text, relaxed, plain, tuple(profiles or ["en"]), ranking)


@lru_cache(maxsize=512)
def _parse_cached(text: str, relaxed: bool, plain: bool, profiles: tuple[str, ...], ranking: Ranking) -> Any:
    """Parsed queries are kept: a query is parsed once per language in the index (queries are immutable)."""
    typed = plain_words(text) if plain else _lenient(text)
    readings: dict[str, tuple[Any, list[str]]] = {}  # languages that read the text alike share one query
    for key in profiles:
        try:
            q = _parser(key, relaxed, ranking).parse(typed)
        except Exception as exc:  # Whoosh's parser raises assorted errors on odd input
            raise QueryError(f"Cannot read the query {text!r}: {exc}") from None
        q = _rewrite(q, ranking)
        if len(profiles) == 1:
            return q
        if q is not NullQuery:
            readings.setdefault(repr(q), (q, []))[1].append(key)
    parts = [Require(q, Term("analysis", keys[0]) if len(keys) == 1 else Or([Term("analysis", k) for k in keys]))
             for q, keys in readings.values()]
    return Or(parts) if len(parts) > 1 else (parts[0] if parts else NullQuery)


def _rewrite(q: Any, ranking: Ranking) -> Any:
    """A parsed query made ready to run: excluded words excluded from every match, and each word searched
    in several fields scored once over them (BM25F) when the ranking says so."""
    q = exclusions_hold(q)
    return as_bm25f(q, ranking.field_b(), ranking.k1) if ranking.bm25f else q


def as_typed(text: str) -> str:
    """The text to parse: a query typed all in capitals (``TO BE OR NOT TO BE``, a title pasted from a
    catalogue) is read in lower case, so its AND, OR, NOT and TO are words, not operators."""
    return text.lower() if any(c.isupper() for c in text) and not any(c.islower() for c in text) else text


def strategy(text: str, plain: bool, profiles: list[str] | None = None,
             ranking: Ranking = RANKING) -> tuple[Any, Any]:
    """(first query, fallback query or None) for the text typed.

    Short plain queries want every word (the fallback is any word); long ones (sentences, pasted
    questions) are ranked on any word straight away. A query typed all in capitals is read in lower
    case (:func:`as_typed`). ``-word`` and ``+word`` keep their meaning in the fallback; AND, OR and NOT
    written out mean there is none.
    """
    p, r = profiles, ranking
    text = as_typed(text)
    if plain or not has_syntax(text):
        if len(re.findall(r"\w+", text)) > ranking.long_query_words:
            return parse(text, relaxed=True, plain=True, profiles=p, ranking=r), None
        return (parse(text, plain=plain, profiles=p, ranking=r),
                parse(text, relaxed=True, plain=plain, profiles=p, ranking=r))
    if _OPERATORS.search(text):  # the person said how to combine the words: no second guessing
        return parse(text, profiles=p, ranking=r), None
    return parse(text, profiles=p, ranking=r), parse(text, relaxed=True, profiles=p, ranking=r)


def query_terms(query: Any) -> dict[str, set[str]]:
    """The analysed terms of a query, by field, excluded words left out (what highlights and moments show)."""
    out: dict[str, set[str]] = {}
    for fieldname, text in positive_terms(query):
        if isinstance(text, bytes):
            text = text.decode("utf-8", "replace")
        out.setdefault(fieldname, set()).add(str(text))
    return out
