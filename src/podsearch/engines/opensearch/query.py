"""What people type, read as OpenSearch queries: one ``query_string`` per analysis profile (language) over that
profile's fields with podsearch's field weights, the filters, the facets' aggregations, the sort."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ... import languages
from ...episodes import person_keys
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
from .expand import substitute

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
# A comparison sign opening a word (``title:>10``, ``notes:<=x``), as escaped: the query string reads a field's word
# that starts with one as an open range over the field's words even escaped (``title__en:\>10`` is
# ``title__en:{10 TO *]``: every site episode, unbounded, where Whoosh reads the word "10", 13). Left out: the analysis
# drops it anyway. (``published:>2023`` is a range of days before this: querytext.published.)
_OPENING_COMPARISON = re.compile(r"(?:(?<=[\s(:])|^)(?:\\[<>=])+")


def text_field(field: str, profile: str) -> str:
    """The index field holding ``field`` analysed for ``profile``: ``title__de``."""
    return f"{field}__{profile}"


def query_string(text: str, profile: str, any_word: bool, plain: bool,
                 apart: tuple[tuple[str, str], ...] = (), chosen: Mapping[str, tuple[str, ...]] | None = None
                 ) -> dict[str, Any]:
    """``text`` as a query over one profile's fields: all words (or any word), podsearch's syntax (or none).

    Each word is read across the fields (``cross_fields``: one document frequency per word, blended over the
    fields, and the word's best weighted field counts), the nearest OpenSearch has to Whoosh's BM25F (it has no
    ``combined_fields``); summing each field's score (``most_fields``) let a word in the title and the text count
    twice, and ranked known items lower (MRR@10 0.887 against 0.972 on the site's dev set). The joined words of
    ``apart`` are read both ways, one word or two (``querytext.words_apart``, after the text is escaped). A
    wildcard, prefix or range part is the group of its ``chosen`` words (``expand.py``)."""
    if plain:
        typed = _ALL_SYNTAX.sub(r"\\\1", plain_words(text))
    else:
        typed = operator_groups(lenient(text))
        typed = substitute(typed, chosen) if chosen else typed
        typed = _FUZZY_WORD.sub(lambda m: _fuzzy_stem(m, profile), _FUZZY_KEPT.sub(r"\1", typed))
        typed = _ESCAPE.sub(r"\\\1", typed)
        typed = _OPENING_COMPARISON.sub("", typed)
        typed = '"'.join(_SLASHED.sub(r'"\1"', p) if i % 2 == 0 else p for i, p in enumerate(typed.split('"')))
        typed = re.sub(r"\bANDNOT\b", "AND NOT", typed)
        typed = re.sub(r"\bANDMAYBE\b", "OR", typed)
        typed = _FIELD_PREFIX.sub(lambda m: _field_prefix(m.group(1), profile), typed)
        typed = _RANGE.sub(_range, _PUBLISHED_DAYS.sub(_published_days, typed))
        typed = _QUOTED.sub(lambda m: _JOINED.sub(" ", m.group(0)), typed)
        if any_word:
            typed = hyphens_together(typed)
    if any_word:
        typed = cjk_words_whole(typed, profile)
    typed = words_apart(typed, apart)
    return {"query_string": {
        "query": typed, "fields": [f"{text_field(f, profile)}^{boost}" for f, boost in FIELD_BOOSTS.items()],
        "type": "cross_fields", "default_operator": "OR" if any_word else "AND", "allow_leading_wildcard": False,
        "analyze_wildcard": False, "auto_generate_synonyms_phrase_query": False, "lenient": True,
        # a fuzzy word (word~, word~2) as Whoosh reads it (engines/whoosh/bounds.py): its first letter as typed,
        # its 64 most frequent matches
        "fuzzy_prefix_length": 1, "fuzzy_max_expansions": 64,
        "fuzziness": 1}}  # (``word~`` with no number: 1 edit, as on Whoosh; OpenSearch's AUTO took 2 for 5+ letters)


def operator_groups(text: str) -> str:
    """``text`` (``lenient``'s) with its AND and OR chains in parentheses where Whoosh's parser reads a group: AND
    before OR, both before the parts side by side (``machine OR react docker`` is ``(machine OR react) docker``,
    ``a AND b OR c`` is ``(a AND b) OR c``). Lucene's parser gives each clause a flag from the operator beside it
    instead: with AND the default, ``machine OR react docker`` required docker alone (373 site episodes against
    Whoosh's 322) and ``machine OR react AND docker`` machine and docker (98 against 1,055).

    As Whoosh's ``Signs`` read them, a level's ``-`` parts exclude from the whole level (``a OR -b c`` is ``(a OR
    c) -b``), ``+`` adds nothing where every word is required, and ``NOT b`` beside OR is every episode without b
    (Lucene's excluded b from the chain). A level with ANDNOT or ANDMAYBE, or an operator without a part on each
    side, is left as it is."""
    chunks = [_groups_inside(c) for c in _chunks(text)]
    if not {"AND", "OR"} & set(chunks) or {"ANDNOT", "ANDMAYBE"} & set(chunks):
        return " ".join(chunks)
    units: list[str] = []
    for chunk in chunks:  # NOT and what it excludes are one part
        if units and units[-1] == "NOT" and chunk not in _OPERATORS:
            units[-1] = "NOT " + chunk
        else:
            units.append(chunk)
    banned = [u for u in units if u.startswith("-")]
    kept: list[str] = []
    for unit in units:
        if unit.startswith("-") or (unit in ("AND", "OR") and (not kept or kept[-1] in ("AND", "OR"))):
            continue  # (an operator left beside nothing by an excluded part is dropped, as Whoosh's parser does)
        kept.append(unit[1:] if unit[:1] == "+" and len(unit) > 1 else unit)
    while kept and kept[-1] in ("AND", "OR"):
        kept.pop()
    if any(u in _OPERATORS for u in kept if u not in ("AND", "OR")):
        return " ".join(chunks)
    return " ".join(_chained(_chained(kept, "AND"), "OR") + banned)


def _chained(units: list[str], operator: str) -> list[str]:
    """``units`` with each chain joined by ``operator`` made one part, in parentheses unless it is all of them."""
    out: list[list[str]] = []
    for k, unit in enumerate(units):
        if k and units[k - 1] == operator:
            out[-1].append(unit)
        elif unit != operator:
            out.append([unit])
    if operator == "OR":  # NOT beside OR is every episode but those (Lucene's excluded them from the chain)
        out = [[f"(*:* {u})" if u.startswith("NOT ") else u for u in chain] if len(chain) > 1 else chain
               for chain in out]
    joined = [f" {operator} ".join(chain) for chain in out]
    if len(out) == 1:
        return joined
    return [f"({j})" if len(chain) > 1 else j for j, chain in zip(joined, out)]


def _chunks(text: str) -> list[str]:
    """``text`` split at its spaces outside quotes, parentheses and brackets: a phrase, a group or a range is one
    chunk with what is glued to it (a sign, a field, a boost)."""
    out: list[str] = []
    start, depth, quoted = -1, 0, False
    for i, c in enumerate(text):
        if quoted:
            quoted = c != '"'
        elif c == '"':
            quoted = True
        elif c in "([{":
            depth += 1
        elif c in ")]}":
            depth = max(0, depth - 1)
        elif c.isspace() and not depth:
            if start >= 0:
                out.append(text[start:i])
            start = -1
            continue
        if start < 0:
            start = i
    if start >= 0:
        out.append(text[start:])
    return out


def _groups_inside(chunk: str) -> str:
    """A chunk with :func:`operator_groups` applied inside each of its groups in parentheses."""
    spans: list[tuple[int, int]] = []
    depth, quoted, opened = 0, False, 0
    for i, c in enumerate(chunk):
        if c == '"':
            quoted = not quoted
        elif quoted:
            continue
        elif c == "(":
            depth += 1
            opened = i + 1 if depth == 1 else opened
        elif c == ")" and depth:
            depth -= 1
            if not depth:
                spans.append((opened, i))
    if depth or quoted:  # (lenient balanced them; left as it is otherwise)
        return chunk
    out, last = [], 0
    for start, end in spans:
        out += [chunk[last:start], operator_groups(chunk[start:end])]
        last = end
    return "".join(out) + chunk[last:]


# A quoted phrase's joined words ("3.12", "node.js", "snake_case": words the tokenizer keeps whole) as their
# parts: the index holds such a word whole and then its parts at positions of their own (sp_parts), so read whole
# the word after it was not next to it and "python 3.12 scripts" found nothing. (Whoosh: whoosh/query.py,
# SpacedPhrase; here a quoted "3.12" also finds "3 12".)
_QUOTED = re.compile(r'(?<!\\)"(?:[^"\\]|\\.)*"')
# A word joined by slashes ("24/7", "ci/cd", "http/2"), escaped, outside quotes: Whoosh keeps it one word (and its
# parts after it), the standard tokenizer splits it, and its parts anywhere were too many ("http/2" found 289 site
# episodes on OpenSearch, 32 on Whoosh); read as the phrase of its parts, which holds the word written so (33). Not
# in an address ("bitcoin.org/en"), nor fuzzy or a pattern.
_SLASHED = re.compile(r"(?<![\w.\\])(\w+(?:\\/\w+)+)(?![\w\\~*?]|\.\w)")
_JOINED = re.compile(r"(?<=\w)[.:](?=\w)")  # (not an underscore: a word of the index, schema 10)
# A run of Japanese or Chinese characters typed as a word (after a space, a bracket, a field or a sign; before a
# space or a bracket): not one fuzzy, boosted or joined to other letters
_CJK_WORD = re.compile(rf"(?:(?<=[\s(:+\-])|^)({languages.CJK_RUN.pattern})(?=[\s)]|$)")


def cjk_words_whole(typed: str, profile: str) -> str:
    """``typed`` with each run of Japanese or Chinese characters outside quotes as the group of all its bigrams
    (``たこ焼き`` -> ``(たこ AND こ焼 AND 焼き)``), for the any-word reading: the query string makes the bigrams of
    a word SHOULD clauses with the OR operator, and until 5 December 2026 that reading found ``すき焼き`` (焼き) and
    ``思ったこと`` (たこ) for ``たこ焼き``, as Whoosh did until that afternoon (docs/languages.md). Two runs typed
    apart are still either run."""
    analyzer = python_analyzer(profile)

    def whole(m: re.Match[str]) -> str:
        terms = analyzer.texts(m.group(1))
        return "(" + " AND ".join(terms) + ")" if len(terms) > 1 else m.group(0)

    out, last = [], 0
    for quoted in _QUOTED.finditer(typed):
        out += [_CJK_WORD.sub(whole, typed[last:quoted.start()]), quoted.group(0)]
        last = quoted.end()
    return "".join(out) + _CJK_WORD.sub(whole, typed[last:])


# Whoosh's "word~2/3" (three letters kept as typed): the query string has no per-word form, so "word~2"
_FUZZY_KEPT = re.compile(r"(?<=\S)(~\d?)/\d+")


# A fuzzy word ("mining~1", "title:kubrnetes~"): compared as the index keeps words, stemmed, as Whoosh compares it
# (the query string compares the word as typed: "mining~1" found 2 site episodes, none saying "mining")
_FUZZY_WORD = re.compile(r"(?:(?<=[\s(:+\-])|^)([^\W\d_][^\s()\"~^:\[\]{}]*)(?=~\d*(?![\w.]))")


# A fuzzy part as a reading holds it, not excluded: its word, its edits ("" for ~: 1) and the letters kept (/3)
_FUZZY_PART = re.compile(r"(?:(?<=[\s(:+])|^)([^\W\d_][^\s()\"~^:\[\]{}]*)~(\d*)(?:\.\d+)?(?:/(\d+))?(?![\w.])")


def fuzzy_parts(text: str) -> list[tuple[str, int, int]]:
    """(word, edits, letters kept) of each fuzzy part of ``text`` outside quotes that is not excluded (``-word~``
    is no word to mark)."""
    out = []
    for i, piece in enumerate(text.split('"')):
        if i % 2 == 0:
            for m in _FUZZY_PART.finditer(piece):
                if m.group(1).upper() not in {"AND", "OR", "NOT", "TO"}:
                    out.append((m.group(1), min(2, int(m.group(2) or 1)), int(m.group(3) or 1)))
    return out


def _fuzzy_stem(m: re.Match[str], profile: str) -> str:
    stems = python_analyzer(profile, parts=False).texts(m.group(1))
    return stems[0] if len(stems) == 1 else m.group(1)


def _instant(when: Any) -> str:
    """A filter's date as the index's format reads it, the year in four digits (``strftime("%Y")`` wrote the year
    1 as "1": ``from=0001`` was a 400 quoting OpenSearch's parser)."""
    return when.isoformat(timespec="seconds")[:19]


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
    return name + "\\: "  # not a field: the word and the colon are text ("note:", "http:"), the word after it
    #                       another word (``foo:water`` was one token to Lucene's tokenizer, two to Whoosh's)


def text_query(reading: Reading, profiles: list[str],
               chosen: Mapping[str, tuple[str, ...]] | None = None) -> dict[str, Any]:
    """The text read for each profile, each reading matching only the episodes analysed alike, so that an
    episode is scored once, on the reading of its own language; a pattern is its ``chosen`` words."""
    parts = [{"bool": {"must": [query_string(reading.text, p, reading.any_word, reading.plain, reading.apart, chosen)],
                       "filter": [{"term": {"analysis": p}}]}} for p in profiles]
    return parts[0] if len(parts) == 1 else {"bool": {"should": parts, "minimum_should_match": 1}}


def filter_clauses(f: Filters) -> list[dict[str, Any]]:
    clauses: list[dict[str, Any]] = []
    if f.shows:
        clauses.append({"terms": {"show_id": list(f.shows)}})
    if f.person:
        clauses.append({"terms": {"person_key": person_keys(f.person)}})
    if f.published_from or f.published_to:
        bounds = {}
        if f.published_from:
            bounds["gte"] = _instant(f.published_from)
        if f.published_to:
            bounds["lte"] = _instant(f.published_to)
        clauses.append({"range": {"published": bounds}})
    if f.duration_min is not None or f.duration_max is not None:
        bounds = {}
        if f.duration_min is not None:
            bounds["gte"] = f.duration_min
        if f.duration_max is not None:
            bounds["lte"] = f.duration_max
        clauses.append({"range": {"duration": bounds}})
    if f.no_duration:
        clauses.append({"bool": {"must_not": [{"exists": {"field": "duration"}}]}})
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
    """By date (newest or oldest first, the undated after every dated episode), those of one date (or none) by
    ``order`` (``base.listing_key``), the highest first when newest first, as Whoosh lists them
    (``whoosh.fast.date_places``); or by score. An index of schema 5 has no ``order`` (``unmapped_type``): its ties
    go by id, as every index's did until 5 December 2026."""
    if sort == "date" or (not has_text and sort != "oldest"):
        return [{"published": {"order": "desc", "missing": "_last"}},
                {"order": {"order": "desc", "unmapped_type": "keyword"}}, {"id": "asc"}]
    if sort == "oldest":
        return [{"published": {"order": "asc", "missing": "_last"}},
                {"order": {"order": "asc", "unmapped_type": "keyword"}}, {"id": "asc"}]
    return ["_score", {"id": "asc"}]


# -- the terms a query looks for, to mark them in the answer ---------------------------------------------
_QUERY_PART = re.compile(r'(?:(?<=[\s(])|^)(?P<neg>[-!]|NOT\s+)?(?:(?P<field>\w+):)?(?P<word>"[^"]*"|[^\s()"]+)')
_RANGES = re.compile(r"(?:(?<=[\s(])|^)[-!]?\w+:[\[{][^\]}]*[\]}]")
_SUFFIX = re.compile(r"(?:[~^][\d./]*)+$")  # a word's fuzziness or boost ("mining~1", "rust^2"): not words
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


def query_terms(reading: Reading, profiles: list[str],
                chosen: Mapping[str, tuple[str, ...]] | None = None) -> dict[str, set[str]]:
    """The analysed terms of the query, by field (the words excluded with -word or NOT left out; a pattern's, the
    ``chosen`` words it was searched with)."""
    words: dict[str, list[str]] = {field: [] for field in SEARCH_FIELDS}
    source = plain_words(reading.text) if reading.plain else substitute(reading.text, chosen or {}, " ")
    source = words_apart(source, reading.apart)
    source = _fields_spread(_without_excluded_groups(_RANGES.sub(" ", source)))  # (a range looks for no word)
    for m in _QUERY_PART.finditer(source):
        word = m.group("word")
        if m.group("neg") or word in _OPERATORS:
            continue
        word = _SUFFIX.sub("", word).strip('"')
        field = _FIELD_NAMES.get((m.group("field") or "").lower())
        for name in [field] if field else SEARCH_FIELDS:
            words[name].append(word)
    out: dict[str, set[str]] = {}
    for field, found in words.items():
        if found:
            joined = " ".join(found)
            out[field] = {t for p in profiles for t in python_analyzer(p, parts=False).texts(joined)}
    return out
