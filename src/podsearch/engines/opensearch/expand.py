"""A query's wildcard, prefix and range parts read as Whoosh reads them (``engines/whoosh/bounds.py``): each part's
words are listed from the index and counted, a part over the limits is refused with Whoosh's message, and the
part is searched as its :data:`expansions.MAX_EXPANSIONS` most frequent words (the answer says so when it had
more), which are also the terms the answer marks.

The words come from the ``wordlist`` field (every word of an episode once, unstemmed, with doc values): a ``terms``
aggregation with an ``include`` expression lists the words that begin with a part's letters and how many episodes
hold each, over the episodes that hold one (a ``prefix`` query on ``words``); a part in a short field (``title:kube*``) from
the ``vocab`` field, the words of title, show, persons and notes. As on Whoosh a part matches the words
of the index, which are stems: each listed word is stemmed for the query's languages (the Python twin of the
analysis) and the stems are what is counted and chosen; a chosen stem is searched as its most frequent word, which
OpenSearch stems back. A fuzzy part (``word~``) stays OpenSearch's own (its 64 nearest words).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

from .. import expansions
from ..querytext import FIELD_ALIASES, SEARCH_FIELDS, lenient
from .analysis import fold, python_analyzer

# A word with a wildcard (not at its start: refused before), or a range of words, outside quotes; a field's name
# (title:kube*) and a sign (-kube*) before it are kept as they are. A date range (published:) is not words.
_FIELDS = "|".join((*SEARCH_FIELDS, *(a for aliases in FIELD_ALIASES.values() for a in aliases)))
_PART = re.compile(
    r"(?:(?<=[\s(])|^)(?P<lead>[+\-!]?(?:(?:" + _FIELDS + r"):)?)"
    r"(?:(?P<word>[^\W_][^\s()\"~^:\[\]{}\\]*?[*?][^\s()\"~^:\[\]{}\\]*)(?=[\s)^]|$)"
    r"|(?P<range>[\[{]\s*(?:[^\s\]}]*\s+)?(?:to|TO)(?:\s+[^\s\]}]*)?\s*[\]}]))", re.IGNORECASE)
_RANGE_ENDS = re.compile(r"([\[{])\s*(?:([^\s\]}]*)\s+)?(?:to|TO)(?:\s+([^\s\]}]*))?\s*([\]}])")


class Part(NamedTuple):
    """A part of a query that expands: ``key`` as it is looked up, ``shown`` as the person is told of it."""

    key: str
    shown: str
    prefix: str  # the letters every word it matches begins with
    matches: Callable[[str], bool]  # whether a word written (a range: a stem of the index) is one of its words
    ends: tuple[str, str] | None = None  # a range's lowest and highest word ("" where it is open)
    short: bool = False  # in a field other than the transcript: its words are listed from those fields' alone
    excluded: bool = False  # after "-", "!" or NOT: left to OpenSearch whole (excluded_as_typed)


def parts(text: str) -> list[Part]:
    """The expanding parts of a reading's text (``Reading.text``), each once."""
    found: dict[str, Part] = {}

    def collect(m: re.Match[str]) -> str:
        part = _part(m)
        if part is not None and (part.key not in found or found[part.key].excluded):  # (searched anywhere: searched)
            found[part.key] = part
        return m.group(0)

    _each(text, collect)
    return list(found.values())


def substitute(text: str, words: Mapping[str, tuple[str, ...]], joined: str = " OR ") -> str:
    """``text`` with each expanding part whose words are known replaced by the group of its words (a part that
    matched none is left as typed: it finds nothing; so is an excluded part, :func:`excluded_as_typed`)."""
    def replace(m: re.Match[str]) -> str:
        part = _part(m)
        chosen = words.get(part.key) if part is not None and not part.excluded else None
        if not chosen:
            return m.group(0)
        return f"{m.group('lead')}({joined.join(chosen)})"

    return _each(text, replace)


def _each(text: str, change: Callable[[re.Match[str]], str]) -> str:
    """``lenient(text)`` with ``change`` applied to each expanding part outside quotes."""
    pieces = lenient(text).split('"')
    return '"'.join(_PART.sub(change, p) if i % 2 == 0 else p for i, p in enumerate(pieces))


# An excluded part (after "-", "!", or NOT and ANDNOT) is left to OpenSearch as typed, a prefix, wildcard or range query
# that matches every word it reads, where its 64 most frequent words let the others through ("go -ch*" found an
# episode saying "choir", as on Whoosh until 5 December 2026, engines/whoosh/bounds.py); it is still listed, so that
# one matching too many words is refused alike.
_NOT_BEFORE = re.compile(r"\b(?:AND)?NOT\s+$")


def _excluded(m: re.Match[str]) -> bool:
    return m.group("lead").startswith(("-", "!")) or bool(_NOT_BEFORE.search(m.string, 0, m.start()))


def _part(m: re.Match[str]) -> Part | None:
    """The part ``m`` matched, its letters folded as the index's words and stems are (``somatizaç*`` is
    ``somatizac*``: until 6 December 2026 it listed no word, so it was searched as typed, which the node folds and
    finds, and its words were not marked), as typed when shown."""
    field = m.group("lead").lstrip("+-!").rstrip(":").lower()
    excluded = _excluded(m)
    short = bool(field) and field != "transcript"
    scope = f"{field}:" if short else ""
    if m.group("word"):
        shown = m.group("word").lower()
        word = fold(shown)
        literal = re.split(r"[*?]", word, maxsplit=1)[0]
        if "?" not in word and word.endswith("*") and word.count("*") == 1:
            return Part(scope + word, shown, literal, lambda stem: stem.startswith(literal), short=short,
                        excluded=excluded)
        pattern = re.compile("".join({"*": ".*", "?": "."}.get(c, re.escape(c)) for c in word) + r"\Z")
        return Part(scope + word, shown, literal, lambda stem: pattern.match(stem) is not None, short=short,
                    excluded=excluded)
    ends = _RANGE_ENDS.fullmatch(m.group("range"))
    if ends is None:
        return None
    opening, low, high, closing = ends.groups()
    low = "" if low in (None, "*") else fold(low.lower())
    high = "" if high in (None, "*") else fold(high.lower())
    if low and high and low > high:
        low, high = high, low
    shown = f"{opening}{low or '*'} TO {high or '*'}{closing}"  # (as typed: "{" and "}" leave the end out)

    def within(stem: str) -> bool:
        if low and (stem < low or (opening == "{" and stem == low)):
            return False
        return not high or stem < high or (stem == high and closing == "]")

    common = ""
    for a, b in zip(low, high):
        if a != b:
            break
        common += a
    return Part(f"{scope}{opening}{low} TO {high}{closing}", shown, common, within, (low, high), short, excluded)


class Expansion(NamedTuple):
    words: tuple[str, ...]  # the words searched (a stem's most frequent word), sorted
    matching: int  # the stems the part matches, in the language that has the most


def expand(part: Part, listed: list[tuple[str, int]], complete: bool, profiles: list[str]) -> Expansion:
    """A part's words chosen among ``listed`` (the index's words beginning with its letters, with the episodes
    holding each; ``complete``: every such word), or QueryError when it matches too many."""
    if not complete:  # (more words begin with its letters than are read)
        if part.ends is None and ("?" in part.key or not part.key.endswith("*") or part.key.count("*") > 1):
            raise expansions.too_many_scanned(part.shown, part.prefix)
        raise expansions.too_many_matching(part.shown)
    chosen: set[str] = set()
    matching = 0
    for profile in profiles:
        analyzer = python_analyzer(profile, parts=False)
        stems: dict[str, tuple[int, str]] = {}  # stem -> (episodes of its most frequent word, that word)
        for word, episodes in listed:
            # a pattern's words are those written that begin with its letters or match it, each searched as its stem,
            # as on Whoosh (query.FoldedPatterns); a range's, the stems within it. Until 6 December 2026 a pattern's
            # stems had to begin with its letters too, so a word whose stem is shorter was left out: "kubernetes*"
            # did not search "kubernetes" (kubernet) where Whoosh stemmed the letters typed (conteu* was cont*)
            if part.ends is None and not part.matches(word):
                continue
            for stem in analyzer.texts(word):  # (a stop word has none: the index does not hold it)
                if (part.ends is None or part.matches(stem)) and (episodes, word) > stems.get(stem, (0, "")):
                    stems[stem] = (episodes, word)
        if len(stems) > expansions.MAX_MATCHING_WORDS:
            raise expansions.too_many_matching(part.shown)
        matching = max(matching, len(stems))
        top = expansions.most_frequent(stems.items(), lambda item: item[1][0])
        chosen.update(word for _, (_, word) in top)
    return Expansion(tuple(sorted(chosen)), matching)


def listing(part: Part) -> dict[str, Any]:
    """The search body listing the index's words that may match ``part`` (in the order of their letters, at most
    ``MAX_SCANNED_WORDS`` and one more, to tell whether there were more), with the episodes holding each: the
    words of every field (``wordlist``), or for a part in another field than the transcript (``title:kube*``, as
    Whoosh counts a field's words) those of the title, show, persons and notes (``vocab``, the typeahead's)."""
    size = expansions.MAX_SCANNED_WORDS + 1
    listed, held_in = ("vocab", "vocab") if part.short else ("wordlist", "words")
    if part.ends is not None:
        low, high = part.ends
        first, last = regex_literal(low[:1] or "\u0001"), regex_literal(high[:1] or "\uffff")
        include = f"{regex_literal(part.prefix)}.*" if part.prefix else f"[{first}-{last}].*"
        held: dict[str, Any] = {"range": {held_in: {k: v for k, v in (("gte", low), ("lte", high + "\uffff" if high else ""))
                                                    if v}}}
    else:
        include = f"{regex_literal(part.prefix)}.*"
        # (the episodes holding a word that begins with its letters up to a joining sign: "node.js*" lists the joined
        # words of those holding "node...", which the words field holds apart)
        held = {"prefix": {held_in: _WORD_START.match(part.prefix).group(0) or part.prefix}}
    return {"size": 0, "query": held, "aggs": {"w": {"terms": {
        "field": listed, "include": include, "size": size, "shard_size": size, "order": {"_key": "asc"}}}}}


_WORD_START = re.compile(r"\w*")


def listed(answer: dict[str, Any]) -> tuple[list[tuple[str, int]], bool]:
    """(the words a :func:`listing` found with their episodes, whether that was every word)."""
    buckets = answer.get("aggregations", {}).get("w", {}).get("buckets", [])
    words = [(str(b["key"]), int(b["doc_count"])) for b in buckets]
    return words[:expansions.MAX_SCANNED_WORDS], len(words) <= expansions.MAX_SCANNED_WORDS


# OpenSearch's own limit on the terms of one query (``indices.query.bool.max_clause_count``, 1,024 by default):
# past it a search is an HTTP 500 ("too many nested clauses"), so the expanded words are counted against it first
MAX_CLAUSES = 1024


def check_clauses(chosen: Mapping[str, tuple[str, ...]], profiles: list[str]) -> None:
    """QueryError when the words of the parts expanded so far, over every field and language, pass ``MAX_CLAUSES``
    (Whoosh's ``expansions.MAX_CLAUSES`` where that is lower): called as each part is expanded, it refuses the query
    with "at least" the terms counted by then."""
    clauses = sum(len(words) for words in chosen.values()) * len(SEARCH_FIELDS) * len(profiles)
    limit = min(MAX_CLAUSES, expansions.MAX_CLAUSES)
    if clauses > limit:
        raise expansions.too_many_clauses(clauses, limit, more=True)


def regex_literal(text: str) -> str:
    """``text`` as a literal in a Lucene regular expression (a terms aggregation's ``include``): every character but
    a letter or digit escaped. Python's ``re.escape`` leaves ``"``, ``<``, ``>``, ``@``, ``&``, ``~`` and ``#`` as
    they are, which Lucene's syntax reads as operators (``-"`` typed in the search box was an HTTP 500)."""
    return "".join(c if c.isalnum() else "\\" + c for c in text)
