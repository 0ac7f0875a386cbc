"""What people type, read as OpenSearch queries: one ``query_string`` per analysis profile (language) over that
profile's fields with podsearch's field weights, the filters, the facets' aggregations, the sort."""

from __future__ import annotations

import re
from typing import Any

from ..base import Filters
from ..querytext import (
    FIELD_ALIASES,
    FIELD_BOOSTS,
    SEARCH_FIELDS,
    Reading,
    hyphens_together,
    lenient,
    plain_words,
    words_apart,
)
from .analysis import python_analyzer

FACET_FIELDS = {"show": "show_id", "year": "year", "person": "person_key", "language": "language"}
FACET_SIZE = 20  # the values the answer shows per facet (answers.FACET_TOP), counted exactly on each shard
FACET_SHARD_SIZE = 500

_FIELD_NAMES = {name: name for name in SEARCH_FIELDS} | {
    alias: field for field, aliases in FIELD_ALIASES.items() for alias in aliases}
_FIELD_PREFIX = re.compile(r"(?<![\w\\])(\w+):")
# Lucene's query syntax characters that podsearch's syntax reads as text (a slash starts a regular expression
# there; "&&", "||" and "!" are operators)
_ESCAPE = re.compile(r"([/<>=!&|\\])")
_ALL_SYNTAX = re.compile(r'([/<>=!&|\\+\-"():\[\]{}^~*?])')


def text_field(field: str, profile: str) -> str:
    """The index field holding ``field`` analysed for ``profile``: ``title__de``."""
    return f"{field}__{profile}"


def query_string(text: str, profile: str, any_word: bool, plain: bool,
                 apart: tuple[tuple[str, str], ...] = ()) -> dict[str, Any]:
    """``text`` as a query over one profile's fields: all words (or any word), podsearch's syntax (or none).

    Each word is read across the fields (``cross_fields``: one document frequency per word, blended over the
    fields, and the word's best weighted field counts), the nearest OpenSearch has to Whoosh's BM25F (it has no
    ``combined_fields``); summing each field's score (``most_fields``) let a word in the title and the text count
    twice, and ranked known items lower (MRR@10 0.887 against 0.972 on the site's dev set). The joined words of
    ``apart`` are read both ways, one word or two (``querytext.words_apart``, after the text is escaped)."""
    if plain:
        typed = _ALL_SYNTAX.sub(r"\\\1", plain_words(text))
    else:
        typed = _ESCAPE.sub(r"\\\1", _FUZZY_KEPT.sub(r"\1", lenient(text)))
        typed = re.sub(r"\bANDNOT\b", "AND NOT", typed)
        typed = re.sub(r"\bANDMAYBE\b", "OR", typed)
        typed = _FIELD_PREFIX.sub(lambda m: _field_prefix(m.group(1), profile), typed)
        typed = _RANGE.sub(_range, _PUBLISHED_DAYS.sub(_published_days, typed))
        typed = _QUOTED.sub(lambda m: _JOINED.sub(" ", m.group(0)), typed)
        if any_word:
            typed = hyphens_together(typed)
    typed = words_apart(typed, apart)
    return {"query_string": {
        "query": typed, "fields": [f"{text_field(f, profile)}^{boost}" for f, boost in FIELD_BOOSTS.items()],
        "type": "cross_fields", "default_operator": "OR" if any_word else "AND", "allow_leading_wildcard": False,
        "analyze_wildcard": False, "auto_generate_synonyms_phrase_query": False, "lenient": True,
        # a fuzzy word (word~, word~2) as Whoosh reads it (engines/whoosh/bounds.py): its first letter as typed,
        # its 64 most frequent matches
        "fuzzy_prefix_length": 1, "fuzzy_max_expansions": 64}}


# A quoted phrase's joined words ("3.12", "node.js", "snake_case": words the tokenizer keeps whole) as their
# parts: the index holds such a word whole and then its parts at positions of their own (sp_parts), so read whole
# the word after it was not next to it and "python 3.12 scripts" found nothing. (Whoosh: whoosh/query.py,
# SpacedPhrase; here a quoted "3.12" also finds "3 12".)
_QUOTED = re.compile(r'(?<!\\)"(?:[^"\\]|\\.)*"')
_JOINED = re.compile(r"(?<=\w)[._:](?=\w)")


# Whoosh's "word~2/3" (three letters kept as typed): the query string has no per-word form, so "word~2"
_FUZZY_KEPT = re.compile(r"(?<=\S)(~\d?)/\d+")


# Whoosh's ranges as people write them: "[2025-01-01 to 2025-12-31]", "[2025 to]", "{to 2024}"
_RANGE = re.compile(r"([\[{])\s*(?:([^\s\]}]*)\s+)?(?:to|TO)(?:\s+([^\s\]}]*))?\s*([\]}])")


# A date range as querytext.published writes it, of whole days (UTC, as the dates are stored): the last day to
# its last second (the query string reads "2024-12-31" as the day's first instant, and a year as its first day)
_PUBLISHED_DAYS = re.compile(r"published:\[(\S*?) ?to ?(\S*?)\]")


def _published_days(m: re.Match[str]) -> str:
    start, end = m.group(1), m.group(2)
    return f"published:[{start + 'T00:00:00' if start else '*'} TO {end + 'T23:59:59' if end else '*'}]"


def _range(m: re.Match[str]) -> str:
    return f"{m.group(1)}{m.group(2) or '*'} TO {m.group(3) or '*'}{m.group(4)}"


def _field_prefix(name: str, profile: str) -> str:
    field = _FIELD_NAMES.get(name.lower())
    if field is not None:
        return text_field(field, profile) + ":"
    if name.lower() == "published":
        return "published:"
    return name + "\\:"  # not a field: the word and the colon are text ("note:", "http:")


def text_query(reading: Reading, profiles: list[str]) -> dict[str, Any]:
    """The text read for each profile, each reading matching only the episodes analysed alike, so that an
    episode is scored once, on the reading of its own language."""
    parts = [{"bool": {"must": [query_string(reading.text, p, reading.any_word, reading.plain, reading.apart)],
                       "filter": [{"term": {"analysis": p}}]}} for p in profiles]
    return parts[0] if len(parts) == 1 else {"bool": {"should": parts, "minimum_should_match": 1}}


def filter_clauses(f: Filters) -> list[dict[str, Any]]:
    clauses: list[dict[str, Any]] = []
    if f.shows:
        clauses.append({"terms": {"show_id": list(f.shows)}})
    if f.person:
        clauses.append({"term": {"person_key": f.person.strip().lower()}})
    if f.published_from or f.published_to:
        bounds = {}
        if f.published_from:
            bounds["gte"] = f.published_from.strftime("%Y-%m-%dT%H:%M:%S")
        if f.published_to:
            bounds["lte"] = f.published_to.strftime("%Y-%m-%dT%H:%M:%S")
        clauses.append({"range": {"published": bounds}})
    if f.duration_min is not None or f.duration_max is not None:
        bounds = {}
        if f.duration_min is not None:
            bounds["gte"] = f.duration_min
        if f.duration_max is not None:
            bounds["lte"] = f.duration_max
        clauses.append({"range": {"duration": bounds}})
    if f.language:
        clauses.append({"term": {"language": f.language}})
    if f.ids:
        clauses.append({"terms": {"id": list(f.ids)}})
    return clauses


def facet_aggregations() -> dict[str, Any]:
    return {facet: {"terms": {"field": field, "size": FACET_SIZE, "shard_size": FACET_SHARD_SIZE,
                              "order": [{"_count": "desc"}, {"_key": "asc"}]}}
            for facet, field in FACET_FIELDS.items()}


def facet_counts(aggregations: dict[str, Any]) -> dict[str, dict[str, int]]:
    return {facet: {str(b["key"]): int(b["doc_count"]) for b in aggregations.get(facet, {}).get("buckets", [])}
            for facet in FACET_FIELDS}


def sort_clause(sort: str, has_text: bool) -> list[Any]:
    if sort == "date" or (not has_text and sort != "oldest"):
        return [{"published": {"order": "desc", "missing": "_last"}}, {"id": "asc"}]
    if sort == "oldest":
        return [{"published": {"order": "asc", "missing": "_last"}}, {"id": "asc"}]
    return ["_score", {"id": "asc"}]


# -- the terms a query looks for, to mark them in the answer ---------------------------------------------
_QUERY_PART = re.compile(r'(?:(?<=[\s(])|^)(?P<neg>[-!]|NOT\s+)?(?:(?P<field>\w+):)?(?P<word>"[^"]*"|[^\s()"]+)')
_RANGES = re.compile(r"(?:(?<=[\s(])|^)[-!]?\w+:[\[{][^\]}]*[\]}]")
_OPERATORS = frozenset({"AND", "OR", "NOT", "ANDNOT", "ANDMAYBE", "TO"})
_EXCLUDED_GROUP = re.compile(r'(?:(?<=[\s(])|^)(?:[-!]|NOT\s+)\(')


def _without_excluded_groups(text: str) -> str:
    """``text`` without its excluded groups (``-(rust OR go)``, ``NOT (a b)``); ``lenient`` has balanced them."""
    while m := _EXCLUDED_GROUP.search(text):
        depth, end = 0, len(text)
        for end in range(m.end() - 1, len(text)):
            depth += {"(": 1, ")": -1}.get(text[end], 0)
            if depth == 0:
                break
        text = text[:m.start()] + " " + text[end + 1:]
    return text


_FIELD_GROUP = re.compile(r'(?:(?<=[\s(])|^)(\w+):\(([^()]*)\)')
_GROUP_PART = re.compile(r'[-!]?"[^"]*"|[^\s"]+')


def _fields_spread(text: str) -> str:
    """``text`` with each field's group spread over its words: ``title:(python "go time")`` is
    ``title:python title:"go time"`` to :func:`query_terms` (operators and signs inside are kept as they are)."""
    def spread(m: re.Match[str]) -> str:
        parts = _GROUP_PART.findall(m.group(2))
        return " ".join(p if p in _OPERATORS or p[0] in "-!" else f"{m.group(1)}:{p}" for p in parts)
    return _FIELD_GROUP.sub(spread, text)


def query_terms(reading: Reading, profiles: list[str]) -> dict[str, set[str]]:
    """The analysed terms of the query, by field (the words excluded with -word or NOT left out)."""
    words: dict[str, list[str]] = {field: [] for field in SEARCH_FIELDS}
    source = words_apart(plain_words(reading.text) if reading.plain else lenient(reading.text), reading.apart)
    source = _fields_spread(_without_excluded_groups(_RANGES.sub(" ", source)))  # (a range looks for no word)
    for m in _QUERY_PART.finditer(source):
        word = m.group("word")
        if m.group("neg") or word in _OPERATORS:
            continue
        word = word.strip('"')
        field = _FIELD_NAMES.get((m.group("field") or "").lower())
        for name in [field] if field else SEARCH_FIELDS:
            words[name].append(word)
    out: dict[str, set[str]] = {}
    for field, found in words.items():
        if found:
            joined = " ".join(found)
            out[field] = {t for p in profiles for t in python_analyzer(p, parts=False).texts(joined)}
    return out
