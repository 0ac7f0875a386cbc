"""How podsearch reads what people type, for every engine: the field weights, the syntax, the all-words /
any-word strategy, a query typed in capitals. Each engine turns the readings into its own queries
(``engines.whoosh.query``, ``engines.opensearch.query``); an excluded word (``-word``, ``NOT word``) is
excluded by both, in the any-word fallback too."""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import date, timedelta
from typing import NamedTuple

from ..errors import QueryError
from ..languages import lower

# Query-time field weights: title > persons, show > notes > transcript (Whoosh's BM25F multiplies a word's
# frequency in each field by them: engines/whoosh/ranking.py; OpenSearch boosts each field's score by them).
FIELD_WEIGHTS: tuple[tuple[str, float], ...] = (
    ("title", 1.5), ("persons", 1.3), ("show", 1.3), ("notes", 1.15), ("transcript", 1.0))
FIELD_BOOSTS = dict(FIELD_WEIGHTS)
SEARCH_FIELDS = list(FIELD_BOOSTS)
# names people may write before a colon, for the fields above
FIELD_ALIASES = {"persons": ["person", "speaker", "guest", "host"], "notes": ["notes", "description"],
                 "show": ["podcast"]}
MAX_QUERY_LENGTH = 500
LONG_QUERY_WORDS = 4  # plain queries of more words than this are ranked on any word straight away
RELAX_BELOW = 10  # fewer all-words hits than a page of them: rank on any word (docs/search.md, 4 December 2026)
SUGGEST_BELOW = 3  # fewer all-words hits than this (or a query ranked on any word): look for a spelling suggestion

# Operators written out: the person said how to combine the words, so there is no any-word fallback
# (``-word`` and ``+word`` are kept by the fallback, which stays).
OPERATORS = re.compile(r"\b(?:AND|OR|NOT|ANDNOT|ANDMAYBE)\b")
_SYNTAX = re.compile(r'["():\[\]{}^~*?]|(?:^|\s)[-+]\w|\b(?:AND|OR|NOT|ANDNOT|ANDMAYBE)\b')


def has_syntax(text: str) -> bool:
    """Whether the text uses query syntax (quotes, operators, field:, -word...)."""
    return bool(_SYNTAX.search(text))


def plain_words(text: str) -> str:
    """The text as plain words: operators lower-cased, syntax characters removed."""
    text = re.sub(r'["():\[\]{}^~*?]', " ", text)
    text = re.sub(r"(?:^|(?<=\s))[-+]+", " ", text)
    return re.sub(r"\b(AND|OR|NOT|ANDNOT|ANDMAYBE|TO)\b", lambda m: m.group(1).lower(), text)


MAX_NESTING = 8  # parentheses inside parentheses


def check_text(text: str) -> None:
    """Refuse, before an engine reads it, what no reading of ``text`` could run cheaply (both engines alike:
    parentheses nested deeper than ``MAX_NESTING``, a word starting with a wildcard)."""
    depth = deepest = 0
    for ch in text:
        if ch == "(":
            depth += 1
            deepest = max(deepest, depth)
        elif ch == ")":
            depth = max(0, depth - 1)
    if deepest > MAX_NESTING:
        raise QueryError(f"The query nests parentheses {deepest} deep; the limit is {MAX_NESTING}. "
                         "Write the words without the extra parentheses.")
    refuse_leading_wildcard(text)


MIN_PREFIX = 1  # letters before a pattern's first wildcard
# A word that starts with a wildcard (a lone "*" is every episode): "*a*", "?", "-?ube", "title:*go"
_LEADING = re.compile(r"(?:^|[\s(:])[+-]?(?:[*?][^\s\]}]|\?(?=[\s)]|$))")  # "[a TO *]" is a range


def leading_wildcard(part: str) -> str:
    """Why a pattern with no letter before its wildcard is refused, and what to type instead."""
    return (f"'{part}' starts with a wildcard, which would compare every word in the index; put at least "
            f"{MIN_PREFIX} letter before * or ? (like 'kube*').")


def refuse_leading_wildcard(text: str) -> None:
    """QueryError for a word of ``text`` that starts with a wildcard, the same on every engine (Whoosh compared
    every word of the index; OpenSearch refused it as a query it could not parse)."""
    found = _LEADING.search(text)
    if found:
        raise QueryError(leading_wildcard(text[found.start():].split()[0].lstrip("(:+-").rstrip(")")))


# What no engine can read and Whoosh's parser skips, repaired for every engine (OpenSearch's query string refuses
# them): an operator with nothing on one side ("go AND", "OR go", "go AND OR rust", "NOT AND go", "(ANDNOT go)") or
# doubled ("go ANDNOT NOT rust", "go NOT -rust", "+NOT go"), an operator used as a field's name ("OR:go"), a boost
# that is not a positive number ("kubernetes^-1", "go^nan"), has no word ("^2") or runs into the next ("go^2*"), a
# colon with no field before it (":network", "go*:") or no value after it ("title:", "go title:"), a field's doubled
# colon ("title::go"), a field run into the word before it ("go*title:x", "go-title:x": Whoosh read a field there)
# or after another ("title:person:x": "title:person x"), a sign with no word ("-", "go +", "--go"), a fuzzy mark
# after no word ("~go") or run into the next ("go~2rust": "go~2 rust"; "go~."), brackets that are no range ("[go
# rust}", "[]": no "to" between two ends) or that close before they open (")(", "{[}]"), an empty group or phrase
# ("()", 'title:""'), a pattern mark beside a quote ('"go"?'), a fuzzy mark or a boost on an operator ("go NOT~1
# rust", "go OR~": it is no word), a second fuzzy mark ("go~1~1": "go~1"); a backslash is a space (no syntax of
# podsearch's: OpenSearch read it as an escape, Whoosh as a letter). A sign or an operator right after a field's
# colon is read before the field ("title:-rust" is "-title:rust", "title:NOT rust" "NOT title:rust": Whoosh dropped
# the sign, OpenSearch refused it); an operator with no word after it there is the word ("title:OR": "title:or").
_DANGLING = re.compile(r"(?:^|(?<=\())\s*(?:(?:AND|OR|ANDNOT|ANDMAYBE)\b\s*)+"
                       r"|(?:\s*\b(?:AND|OR|NOT|ANDNOT|ANDMAYBE))+\s*(?:$|(?=\)))")
_EMPTY_GROUP = re.compile(r"\(\s*\)")
_EMPTY_PHRASE = re.compile(r"(?:^|(?<=[\s(:+-]))\"\"")
_QUOTE_PATTERN = re.compile(r"(?<=\")[*?]+")
_SIGNED_OPERATOR = re.compile(r"(?<![\w+#-])[+-]+(?=(?:AND|OR|NOT|ANDNOT|ANDMAYBE)\b)")
_LONE_BOOST = re.compile(r"(?<![\w\")\]}~*?])\^[\d.]*")
_DOUBLED = re.compile(r"\b(AND|OR|ANDNOT|ANDMAYBE)(?:\s+(?:AND|OR|ANDNOT|ANDMAYBE)\b)+")
_NOT_BEFORE = re.compile(r"\bNOT\s+(?=(?:AND|OR|NOT|ANDNOT|ANDMAYBE)\b)")
_NOT_SIGN = re.compile(r"\b((?:AND)?NOT\s+)[+-]+(?=[\w\"(])")
_NOT_NOT = re.compile(r"\b((?:AND)?NOT)(?:\s+NOT\b)+")
# Every name a query may put before a colon, in any case; any other ``name:`` is text on both engines ("note:",
# "http:", and the index's own fields: ``year:2024`` is the words year and 2024, not the year field)
QUERY_FIELD_NAMES = (*SEARCH_FIELDS, *(alias for aliases in FIELD_ALIASES.values() for alias in aliases), "published")
_HYPHEN_FIELD = re.compile(rf"(?<=\w)[+-]+(?=(?:{'|'.join(QUERY_FIELD_NAMES)}):)", re.IGNORECASE)
# Another name before a colon and a value after it (``year:2024``, ``foo:bar``): the two words, grouped as one word
# that analysis splits is on both engines (every part wanted in an all-words reading, any in an any-word one); a
# ``*`` value is a ``*`` among words (``year:*``: every episode holding year); a comparison sign before the value is
# no part of it, as before a field's word (``year:>2020`` is ``year:2020``, the words year and 2020: until 6 December
# 2026 the sign kept it whole, and Whoosh read the two words in one field, 232 site episodes against ``year 2020``'s 240)
_OTHER_FIELD = re.compile(rf"(?<![\w\\:])(?!(?:{'|'.join(QUERY_FIELD_NAMES)}):)([^\W\d_]\w*):(?:[<>]=?|=)?"
                          r"(\w[^\s()\[\]{}\"]*|\*(?=[\s)]|$))", re.IGNORECASE)
# ... and before a range (``year:[a TO z]``, a part of its own: ``_outside_quotes_and_ranges``): the word, then the
# range over the words, bounded as any (OpenSearch searched it unbounded: 1,674 site episodes where Whoosh refused it)
_OTHER_FIELD_RANGE = re.compile(rf"(?<![\w\\:])(?!(?:{'|'.join(QUERY_FIELD_NAMES)}):)([^\W\d_]\w*):$", re.IGNORECASE)
_OPERATOR_FIELD = re.compile(r"\b(AND|OR|NOT|ANDNOT|ANDMAYBE|TO)(?=:)")
_GLUED_FIELD = re.compile(r"(?<=[^\s\w(+\-\\\":])(?=[+-]?[^\W\d_]\w*:)")
_BAD_BOOST = re.compile(r"\^(?!\d*\.?\d+(?![\w.]))[^\s()\[\]{}\"]*")
_BARE_COLON = re.compile(r"(?<!\w):+")
_DOUBLE_COLON = re.compile(r"(?<=\w):{2,}")
_NO_VALUE = re.compile(r"(?<![\w\\:])\w+:(?=[\s)]|$)")
_TRAILING_COLON = re.compile(r"(?<=\w):(?=[\s)]|$)")
_CHAINED_FIELD = re.compile(r"(?<=:)([^\W\d_]\w*):(?=\S)")
# (a sign before a range, "-[a TO c]", is no lone sign: until 5 December 2026 it was dropped, and the range required)
_LONE_SIGN = re.compile(r"(?<![\w+#-])[+-]+(?![\w\"(\[{])")
_SIGNS = re.compile(r"(?:^|(?<=[\s(]))[+-]{2,}(?=[\w\"(\[{])")
_LONE_FUZZY = re.compile(r"(?<![\w\"])~+")
_BOOST_RUN_ON = re.compile(r"(?<=[\w\")\]}*?])(\^\d*\.?\d+)(?![\d.])(?=[^\s()\[\]{}\"])")
_FUZZY_TWICE = re.compile(r"(?<=[\w\"])(~\d*(?:\.\d+)?(?:/\d+)?)(?:~[\d./]*)+")  # go~1~1: the first mark
_FUZZY_MANY = re.compile(r"(?<=\w)~\d{2,}")  # word~10: Whoosh's parser reads one digit (word~1, then a word 0)
_NEGATIVE_TILDE = re.compile(r"(?<=[\w\"])~-[\d.]*")  # "coffee pot"~-1: no moves (it was ~ and an excluded 1)
_FUZZY_SLASH = re.compile(r"(~\d*(?:\.\d+)?)([/.])(?!\d)")
_FUZZY_RUN_ON = re.compile(r"(?<=[\w\"])(~\d*(?:\.\d+)?(?:/\d+)?)(?![\d./])(?=[^\s()\[\]{}^\"])")
_BRACKETS = re.compile(r"([\[{])([^\[\]{}]*)([\]}])")
_RANGE_INSIDE = re.compile(r"\s*(?:(\S+)\s+)?(?:to|TO)(?:\s+(\S+))?\s*")  # a range's ends, either open
_NO_BRACKETS = str.maketrans("[]{}", "    ")
_FIELD = rf"(?<![\w\\:])([+-]*)((?i:{'|'.join(QUERY_FIELD_NAMES)})):"
_OPERATOR_NAMES = r"(?:AND|OR|NOT|ANDNOT|ANDMAYBE)\b"
_FIELD_THEN_OPERATOR = re.compile(rf"{_FIELD}({_OPERATOR_NAMES})(?:\s+(?=[+-]*(?!{_OPERATOR_NAMES})[\w\"(])|(?=[\"(]))?")
_FIELD_THEN_SIGN = re.compile(rf"{_FIELD}([+-]+)(?=[\w\"(])")
_MARKED_OPERATOR = re.compile(rf"\b({_OPERATOR_NAMES})[~^][\d./]*(?=[\s()\"]|$)")
# A field's hyphenated value, as its parts (a phrase): Whoosh held the whole word, OpenSearch's tokenizer split it
_FIELD_HYPHENATED = re.compile(rf"{_FIELD}(\w+(?:-\w+)+)(?![\w*?~:/-])")


def _quoted(m: re.Match[str]) -> bool:
    """Whether ``m`` starts inside a phrase (the quotes are balanced where it is asked)."""
    return m.string.count('"', 0, m.start()) % 2 == 1


def _field_then_operator(m: re.Match[str]) -> str:
    signs, field, operator = m.groups()
    if _quoted(m):
        return m.group(0)
    if m.end() == m.end(3) and not m.string.startswith(('"', "("), m.end()):  # nothing read after it: the word
        return f"{signs}{field}:{operator.lower()}"
    return f"{operator} {signs}{field}:"


def _signs_first(text: str) -> str:
    return _FIELD_THEN_SIGN.sub(lambda m: m.group(0) if _quoted(m) else f"{m.group(3)[-1]}{m.group(2)}:", text)


def _fields_signed(text: str) -> str:
    """``text`` with a sign or an operator right after a field's colon read before the field, and an operator with no
    word after it there read as the word; a field's hyphenated value (``show:go-time``) as a phrase."""
    text = _signs_first(_FIELD_THEN_OPERATOR.sub(_field_then_operator, _signs_first(text)))  # (title:-NOT x, title:NOT -x)
    return _FIELD_HYPHENATED.sub(lambda m: m.group(0) if _quoted(m) or m.group(2).lower() == "published" else
                                 f'{m.group(1)}{m.group(2)}:"{m.group(3)}"', text)


def lenient(text: str) -> str:
    """Repair what people type: unbalanced quotes and brackets are dropped rather than refused, and so are the
    marks above that no engine reads (Whoosh skipped them; OpenSearch refused the query with a 400)."""
    text = _DOUBLE_COLON.sub(":", _LONE_BOOST.sub(" ", _BAD_BOOST.sub("", text.replace("\\", " "))))
    if text.count('"') % 2:
        text = text.replace('"', " ")
    text = _QUOTE_PATTERN.sub(" ", _EMPTY_PHRASE.sub(" ", text))
    if not _nested(text, "(", ")"):
        text = text.replace("(", " ").replace(")", " ")
    if not _nested(text.replace("{", "[").replace("}", "]"), "[", "]", deepest=1):  # ({a TO b] is a range)
        text = text.translate(_NO_BRACKETS)
    text = _BRACKETS.sub(_range_or_words, text)
    text = _FUZZY_MANY.sub("~2", _FUZZY_TWICE.sub(r"\1", _NEGATIVE_TILDE.sub("~0", text)))  # (more than 2 edits are read as 2)
    text = _FUZZY_RUN_ON.sub(r"\1 ", _FUZZY_SLASH.sub(r"\1 \2", _LONE_FUZZY.sub(" ", _BOOST_RUN_ON.sub(r"\1 ", text))))
    text = _OPERATOR_FIELD.sub(lambda m: m.group(1).lower(), _GLUED_FIELD.sub(" ", _HYPHEN_FIELD.sub(" ", text)))
    text = _fields_signed(_MARKED_OPERATOR.sub(r"\1", text))
    text = _CHAINED_FIELD.sub(r"\1 ", _LONE_SIGN.sub(" ", text))  # (a sign alone first: "go title:-" has no value)
    text = _TRAILING_COLON.sub(" ", _NO_VALUE.sub(" ", _BARE_COLON.sub(" ", text)))
    text = _SIGNS.sub(lambda m: m.group(0)[-1], _LONE_SIGN.sub(" ", _SIGNED_OPERATOR.sub("", text)))
    text = _NOT_SIGN.sub(r"\1", _NOT_NOT.sub(r"\1", _DOUBLED.sub(r"\1", _NOT_BEFORE.sub("", text))))
    text = _DANGLING.sub(" ", text)
    while _EMPTY_GROUP.search(text):  # "()", and "(())" once the inner one is gone
        text = _EMPTY_GROUP.sub(" ", text)
    text = _outside_quotes_and_ranges(text, lambda part: _OTHER_FIELD_RANGE.sub(r"\1 ", _OTHER_FIELD.sub(r"(\1 \2)", part)))
    return published(_outside_quotes_and_ranges(
        text, lambda part: _JOINED_PATTERN.sub(_joined_pattern, _PATTERN_APOSTROPHE.sub("", part))))


# A pattern's apostrophes are left out, as the index leaves them out of its words ("don't" is "dont", "O'Reilly"
# "oreilly"): ``don'*`` is ``don*``, ``o'reil*`` ``oreil*``, on both engines (issue 15: OpenSearch listed the words
# beginning with "don'", none, and found nothing, where Whoosh's parser left the apostrophe out: 1,821 site episodes)
_PATTERN_APOSTROPHE = re.compile(r"(?<=\w)['’](?=[\w'’]*[*?])")


# A pattern holding a joining sign (``open-sour*``, ``ci/c*``, ``twenty-f?ur``), required, excluded or in a field
# too: read as its parts, every one wanted, each a word or a pattern of letters (``(open AND sour*)``,
# ``-(open AND sour*)``, ``(title:open AND title:sour*)``), as a hyphenated word is read (``open-source`` is its parts
# anywhere on both engines, hyphens_apart), so it finds at least what the word finds. Until 6 December 2026 Whoosh
# read it over its whole-word stems (``open-sour*`` 77 site episodes, those writing "open-source") and OpenSearch,
# whose index and word list hold the parts only, found nothing (``ci/c*`` 118 against 0). A lone ``*`` after the
# sign is any word (``gpt-*`` is ``(gpt)``), a boost the group's (``(open AND sour*)^2``); fuzzy, or with another part
# that starts with a wildcard (``gpt-*4``): as typed. (A "?" ending the query is a question's: questions_asked.)
_JOINED_PATTERN = re.compile(
    rf"(?<![\w.:/\\~^*?+\-])([+-]?)((?i:{'|'.join(SEARCH_FIELDS)}|{'|'.join(a for v in FIELD_ALIASES.values() for a in v)}):)?"
    r"([^\W_][\w*?]*(?:[-/](?:[^\W_][\w*?]*|\*(?=[\s)^]|$)))+)(\^\d+(?:\.\d+)?)?(?![\w*?~^:/\-]|\.\w)")


def _joined_pattern(m: re.Match[str]) -> str:
    """A pattern with a joining sign as its parts (a lone ``*`` part is any word: ``gpt-*`` is ``(gpt)``)."""
    sign, field, word, boost = m.group(1), m.group(2) or "", m.group(3), m.group(4) or ""
    if "*" not in word and "?" not in word:
        return m.group(0)
    parts = [part for part in re.split(r"[-/]", word) if part != "*"]
    return f"{sign}(" + " AND ".join(field + part for part in parts) + ")" + boost


def _nested(text: str, opening: str, closing: str, deepest: int = MAX_QUERY_LENGTH) -> bool:
    """Whether every ``closing`` closes an ``opening`` before it (``)(`` has as many of each, and is not), at most
    ``deepest`` deep (a range holds no range)."""
    depth = 0
    for c in text:
        if c == opening:
            depth += 1
            if depth > deepest:
                return False
        elif c == closing:
            depth -= 1
            if depth < 0:
                return False
    return depth == 0


def _range_or_words(m: re.Match[str]) -> str:
    """A bracketed range as typed; brackets holding no range (no "to" between two ends) are words. Dates are
    left to :func:`published`, which says what a date range must hold."""
    if _RANGE_INSIDE.fullmatch(m.group(2)) or m.string[:m.start()].lower().endswith("published:"):
        return m.group(0)
    return f" {m.group(2)} "


# A date as both engines read it the same: a year, a month or a day (2024, 2024-05, 2024-05-01).
_DATE = re.compile(r"([0-9]{4})(?:-([0-9]{1,2})(?:-([0-9]{1,2}))?)?")
_PUBLISHED = re.compile(r"(?<![\w\\])published:(?:(>=|<=|>|<)?([^\s()\[\]{}\"]+)|([\[{])([^\]}]*)([\]}]))",
                        re.IGNORECASE)
_DATES_READ = "write 2024, 2024-05 or 2024-05-01, a range [2024-01 TO 2024-06], or >2023, <=2024-05"


def published(text: str) -> str:
    """The ``published:`` clauses of ``text`` in the one form both engines read alike, or a clear refusal.

    Each becomes a range of whole days, ``published:[2024-01-01 to 2024-12-31]``, either end open: ``published:2024``
    is that year (OpenSearch read it as its first instant and found nothing), ``published:*`` every dated episode,
    ``published:>2023`` after 2023, ``>=``, ``<`` and ``<=`` likewise (as Lucene reads them: ``>`` after the period
    named, ``<`` before it begins); a range's ``*`` bound is an open end, its exclusive brackets (``{2020 TO 2023}``)
    the periods inside, and a range written backwards is read the other way round. A date that is no year, month
    or day (``published:yesterday``, ``2024-13``) is refused: Whoosh read some in English and skipped the rest
    (``published:x`` found nothing, ``go published:x`` searched ``go``), OpenSearch skipped them all."""
    if "published:" not in text.lower():
        return text
    pieces = text.split('"')  # the quotes are balanced here (lenient); a quoted "published:x" is words
    pieces[::2] = [_PUBLISHED.sub(_published_clause, piece) for piece in pieces[::2]]
    return '"'.join(pieces)


def _published_clause(m: re.Match[str]) -> str:
    sign, value, opening, inside, closing = m.groups()
    clause = m.group(0)
    start: date | None
    end: date | None
    if value is not None:
        if value == "*" and not sign:
            return "published:[to]"
        first, last = _period(value, clause)
        if sign == ">":
            start, end = last + timedelta(days=1), None
        elif sign == "<":
            start, end = None, _day_before(first, clause)
        else:
            start, end = (first if sign != "<=" else None), (last if sign != ">=" else None)
    else:
        bounds = _RANGE_INSIDE.fullmatch(inside)
        if bounds is None:
            raise QueryError(f"Cannot read the dates {clause!r}: {_DATES_READ}.")
        low, high = (b if b not in {None, "*"} else "" for b in bounds.groups())
        start = end = None
        if low:
            first, last = _period(low, clause)
            start = last + timedelta(days=1) if opening == "{" else first
        if high:
            first, last = _period(high, clause)
            end = _day_before(first, clause) if closing == "}" else last
        if start and end and end < start:
            if opening == "{" or closing == "}":
                raise QueryError(f"The dates {clause!r} hold no day: {_DATES_READ}.")
            start, end = _period(high, clause)[0], _period(low, clause)[1]  # written backwards
    return f"published:[{start or ''} to {end or ''}]".replace("[ ", "[").replace(" ]", "]")


def period(value: str) -> tuple[date, date]:
    """The first and last day of the year, month or day ``value`` names (``2024``, ``2024-05``, ``2024-05-01``; ASCII
    digits, years 0001 to 9998, as the date parameters ``from`` and ``to`` read them too); ValueError if it names
    none."""
    m = _DATE.fullmatch(value)
    try:
        if m is None:
            raise ValueError(value)
        year, month, day = int(m.group(1)), int(m.group(2) or 0), int(m.group(3) or 0)
        if year < 1 or year > 9998:  # (the day after 9999-12-31 is no date: "published:>9999" was a 500)
            raise ValueError(value)
        if day:
            first = last = date(year, month, day)
        elif month:
            first = date(year, month, 1)
            last = (first + timedelta(days=31)).replace(day=1) - timedelta(days=1)
        else:
            first, last = date(year, 1, 1), date(year, 12, 31)
    except (ValueError, OverflowError):
        raise ValueError(value) from None
    return first, last


def _period(value: str, clause: str) -> tuple[date, date]:
    try:
        return period(value)
    except ValueError:
        raise QueryError(f"Cannot read the date {value!r} in {clause!r}: {_DATES_READ}.") from None


def _day_before(day: date, clause: str) -> date:
    """The day before ``day``; ``published:<0001`` holds no day (the day before 0001-01-01 was a 500)."""
    if day == date.min:
        raise QueryError(f"The dates {clause!r} hold no day: {_DATES_READ}.")
    return day - timedelta(days=1)


_HYPHENATED = re.compile(r"(?<![\w:+-])(\w+(?:-\w+)+)(?![\w*?~^:-])")


def hyphens_apart(text: str) -> str:
    """A hyphenated word read as its parts too, outside quotes: ``open-source`` as ``open source``, so it finds
    the episodes that write (or whose transcripts spell) it apart, which in spoken transcripts are most: the site
    corpus has "open source" in 1,052 episodes, "open-source" in 77; "real time" in 139, "real-time" in 239. The
    parts of a hyphenated word are indexed with it, so the hyphenated spelling is found too. The typed form is
    preferred (``ANDMAYBE``): an episode saying "open-source" ranks above one saying "open source" as often.
    As typed: a word excluded or required (``-open-source``, ``+wi-fi``), a field's value (``title:real-gas``),
    a fuzzy or boosted word (``wi-fi~``), a quoted phrase, a range's bounds, dates (a pattern, ``open-sour*``, is
    its parts by then: :func:`lenient`).
    The parts are joined by AND, so that the any-word reading does not take the word for two (``twenty OR
    four``)."""
    return _outside_quotes_and_ranges(text, lambda part: _HYPHENATED.sub(_alternatives, part))


_RANGES = re.compile(r"(\[[^\]]*\]|\{[^}]*\})")


def _alternatives(m: re.Match[str]) -> str:
    word, parts = m.group(1), _together(m)
    return word if parts == word else f"({parts} ANDMAYBE {word})"


def hyphens_together(text: str) -> str:
    """A hyphenated word's parts all wanted, outside quotes: ``twenty-four`` as ``(twenty AND four)``, for an
    engine whose analyzer splits the word itself (OpenSearch), in the any-word reading: the word is one of the
    words the query was typed with, not two (``twenty OR four`` found every episode saying "four"). As typed:
    the words :func:`hyphens_apart` leaves as typed."""
    return _outside_quotes_and_ranges(text, lambda part: _HYPHENATED.sub(_together, part))


def _together(m: re.Match[str]) -> str:
    """The parts of a hyphenated word, all wanted; a date or a number (2025-01-01, 3-2-1) as typed."""
    word = m.group(1)
    return f'({word.replace("-", " AND ")})' if any(c.isalpha() for c in word) else word


# A word joined by slashes (client/server, tcp/ip, 24/7, 12/25/2024), excluded or required too: not a field's
# value, not part of a hyphenated word or an address (bitcoin.org/en, https://...), not a pattern or a fuzzy word,
# nor a fuzzy word's bounds (word~1/4); boosted, the boost is the phrase's and the word's (client/server^2)
_SLASHED = re.compile(r"(?:(?<=[\s(][-+])|(?<=^[-+])|(?<![\w.:/+\-\\~^*?]))(\w+(?:/\w+)+)(?![\w~*?:/]|\.\w)")


def slashes_apart(text: str, kept: Callable[[str], bool]) -> str:
    """A word joined by slashes read as the phrase of its parts too, outside quotes and ranges: ``client/server``
    as ``("client server" ANDMAYBE client/server)``. The index holds the whole word and its parts one after
    another (as it does a hyphenated word's), so the phrase finds the word written so and said apart ("client
    server", "twenty four seven" aside, "24 7"), as OpenSearch, whose tokenizer splits it, reads it; the typed form
    adds to the score. A phrase, not the parts anywhere: ``http/2`` is not every episode saying "http" and a 2. As
    typed when fewer than two parts are words the index keeps (``kept``: ``i/o``, ``and/or``; their phrase would be
    the other part anywhere), a field's value (``title:client/server``), a pattern or a fuzzy word. Excluded
    (``-client/server``), the phrase is what is left out, as it is what the word finds."""

    def read(m: re.Match[str]) -> str:
        word = m.group(1)
        parts = word.split("/")
        return f'("{" ".join(parts)}" ANDMAYBE {word})' if _a_phrase(parts, kept) else word

    return _outside_quotes_and_ranges(text, lambda part: _SLASHED.sub(read, part))


def _a_phrase(parts: list[str], kept: Callable[[str], bool]) -> bool:
    """Whether a joined word's parts make a phrase: two of them or more are words the index keeps (a stop word
    between keeps its place: "stay-at-home" is "stay", a word, "home"); with one, the phrase would be that part
    anywhere (``i/o``, ``a-team``)."""
    return sum(1 for part in parts if kept(part)) >= 2


_JOINED_IN_QUOTES = re.compile(r"(?<![\w.:/\\-])\w+(?:[-/]\w+)+(?![\w:/-]|\.\w)")


def quoted_parts(text: str, kept: Callable[[str], bool]) -> str:
    """A hyphenated or slash-joined word inside a quoted phrase read as its parts: ``"open-source maintainers"``
    as ``"open source maintainers"``. The index holds such a word whole and its parts one after another, so the
    parts are a phrase of the text whether it joins them or not, while the whole word was a phrase of the joined
    spelling only: on the site corpus ``"open-source maintainers"`` found 1 episode and ``"open source
    maintainers"`` 50 (spoken transcripts spell most such words apart; OpenSearch, whose tokenizer splits them,
    found 50 both ways). As typed when fewer than two parts are words the index keeps (``kept``: ``"a-team"``, whose
    phrase would be "team" anywhere), and in an address (``"bitcoin.org/en"``)."""

    def read(m: re.Match[str]) -> str:
        parts = re.split(r"[-/]", m.group(0))
        return " ".join(parts) if _a_phrase(parts, kept) else m.group(0)

    pieces = text.split('"')
    for i in range(1, len(pieces) - (0 if len(pieces) % 2 else 1), 2):  # (an unbalanced last quote: not a phrase)
        pieces[i] = _JOINED_IN_QUOTES.sub(read, pieces[i])
    return '"'.join(pieces)


# A plain word: not quoted (callers skip quotes), not a field's name or value, not excluded or required, not a
# pattern, a fuzzy or boosted word, not part of a hyphenated, dotted or symbol-ended word, not an operator.
_BARE = re.compile(r"(?<![\w:+\-.'’#\\/])([^\W_]+)(?![\w*?~^:\-.'’#+/])")


def _outside_quotes_and_ranges(text: str, change: Callable[[str], str]) -> str:
    """``text`` with ``change`` applied to its parts outside quotes and range brackets."""
    pieces = text.split('"')
    for i in range(0, len(pieces), 2 if len(pieces) % 2 else 1):  # unbalanced quotes are dropped later
        outside = _RANGES.split(pieces[i])  # a range's bounds stay as typed: [2025-01-01 to 2025-12-31]
        outside[::2] = [change(part) for part in outside[::2]]
        pieces[i] = "".join(outside)
    return '"'.join(pieces)


def _runs(part: str) -> list[list[re.Match[str]]]:
    """The plain words of ``part`` in runs of words with only spaces between them (operators end a run)."""
    runs: list[list[re.Match[str]]] = [[]]
    for m in _BARE.finditer(part):
        if OPERATORS.fullmatch(m.group(1)):
            runs.append([])
            continue
        if runs[-1] and part[runs[-1][-1].end():m.start()].strip():
            runs.append([])
        runs[-1].append(m)
    return [run for run in runs if run]


def bare_words(text: str) -> list[list[str]]:
    """The plain words of ``text`` (``_BARE``: outside quotes and ranges, not operators), as typed, in runs of
    neighbours (words with only spaces between them)."""
    found: list[list[str]] = []

    def collect(part: str) -> str:
        found.extend([m.group(1) for m in run] for run in _runs(part))
        return part

    _outside_quotes_and_ranges(text, collect)
    return found


def words_apart(text: str, apart: tuple[tuple[str, str], ...]) -> str:
    """The plain words of ``apart`` (``engines/compounds.py``: (as typed, in lower case; the other spelling)) read
    both ways: a joined word also as its two words said together, ``opensource`` as ``(opensource OR "open
    source")``; two neighbours also as one word, ``type script`` as ``((type script) OR typescript)``."""
    if not apart:
        return text
    other = dict(apart)

    def change(part: str) -> str:
        out, last = [], 0
        for run in _runs(part):
            i = 0
            while i < len(run):
                m = run[i]
                pair = run[i + 1] if i + 1 < len(run) else None
                both = f"{m.group(1)} {pair.group(1)}" if pair is not None else ""
                if both and both.lower() in other:
                    out.append(f"{part[last:m.start()]}(({both}) OR {other[both.lower()]})")
                    last, i = pair.end(), i + 2
                    continue
                if m.group(1).lower() in other:
                    out.append(f'{part[last:m.start()]}({m.group(1)} OR "{other[m.group(1).lower()]}")')
                    last = m.end()
                i += 1
        return "".join(out) + part[last:]

    return _outside_quotes_and_ranges(text, change)


# the fields a search can be asked in (``published:`` is a date, no words to search elsewhere)
_WORD_FIELD = re.compile(rf"(?<![\w\\:])([+-]*)(?:{'|'.join(n for n in QUERY_FIELD_NAMES if n != 'published')}):(?=\S|$)",
                         re.IGNORECASE)


def fields_dropped(text: str) -> str:
    """The query with its words' fields left out (``title:generics`` -> ``generics``, ``-notes:ad`` -> ``-ad``),
    outside quotes and ranges; ``text`` itself when it names no field of words."""
    return _outside_quotes_and_ranges(text, lambda part: _WORD_FIELD.sub(r"\1", part))


# Names people put before a colon meaning a filter the search box does not read as a field (the index's facets and
# the API's filters): searched as words, as any other unknown name is, with a note saying where the filter is.
_FILTER_NAMES = ("year", "date", "duration", "length", "language", "lang", "id", "episode")
_FILTER_FIELD = re.compile(rf"(?<![\w:\\])({'|'.join(_FILTER_NAMES)}):(?=\S)", re.IGNORECASE)


def filter_names(text: str) -> list[str]:
    """A note for a query that puts a filter's name before a colon (``year:2024``, ``duration:>10``): no field of
    that name is searched; its words are (until 5 December 2026 silently: ``duration:>10`` found the word "10")."""
    names = list(dict.fromkeys(m.group(1).lower() for m in _FILTER_FIELD.finditer(re.sub(r'"[^"]*"', " ", text))))
    if not names:
        return []
    return [f"{', '.join(f'{n}:' for n in names)} {'is no field' if len(names) == 1 else 'are no fields'} a search "
            "reads: searched as words. Fields: title:, person:, show:, notes:, transcript:, published: (a year, a "
            "date or [2023 TO 2024]); the duration and language are filters (duration_min, duration_max, language "
            "in the API; beside the results on the page)."]


def as_typed(text: str) -> str:
    """The text to read: a query typed all in capitals (``TO BE OR NOT TO BE``, a title pasted from a
    catalogue) is read in lower case, so its AND, OR, NOT and TO are words, not operators."""
    if any(c.isupper() for c in text) and not any(c.islower() for c in text):
        return lower(text)
    return text


# A question mark that ends a word ("what is kubernetes?", "why c#?"), in a word with no other pattern character:
# the end of a question, not Whoosh's one-character wildcard (which would ask for "kubernetes" and one more
# character and find nothing). Inside a word (``te?t``) or beside ``*`` (``kube*?``) it stays a pattern.
_ASKED = re.compile(r"(?<![^\s\"'(\[{])([^\s*?\"'()\[\]{}]*[^\W_][#+]*)\?+(?=[\s\"')\]}]|$)")


# A question mark standing alone after the question's last word, as French and some other typography writes it
# ("qu'est-ce que Go ?"): punctuation too (it was the one-letter wildcard with no letter before it, refused)
_ASKED_APART = re.compile(r"(?<=[^\W_])(\s+)\?+(?=[\s\"')\]}]*$)")


# Typographic double quotes, as phones' smart punctuation and word processors write them ("“every twenty four
# hours”", „so“, « ainsi »): the query's quotes, read as '"' (they were punctuation, and the phrase was words)
_DOUBLE_QUOTES = str.maketrans(dict.fromkeys("\u201c\u201d\u201e\u201f\u00ab\u00bb\u2033\uff02\u301d\u301e\u301f", '"'))


def straight_quotes(text: str) -> str:
    """``text`` with its typographic double quotes as '"' (:data:`_DOUBLE_QUOTES`)."""
    return text if text.isascii() else text.translate(_DOUBLE_QUOTES)


# A phrase the query asks for (not excluded, not a field's): its words, and a slop or boost after it
_WANTED_PHRASE = re.compile(r'(?:^|(?<=[\s(]))(?<!NOT )"([^"]*[^\W_][^"]*)"(?:[~^][\d.]*)?')


def phrases_as_words(text: str, slop: int = 0) -> str:
    """``text`` with each phrase it asks for read as its words (a quote remembered with a word wrong finds nothing
    as a phrase), or with ``slop`` as a phrase whose words may be that many places apart; excluded phrases
    (``-"a b"``, ``NOT "a b"``) and a field's (``title:"a b"``) stay phrases."""
    if slop:
        return _WANTED_PHRASE.sub(lambda m: f'"{m.group(1).strip()}"~{slop}', text)
    return _WANTED_PHRASE.sub(lambda m: m.group(1).strip(), text)


# A phrase the query looks for in the transcript (not excluded, not another field's): its words and its slop
_TRANSCRIPT_PHRASE = re.compile(r'(?:^|(?<=[\s(]))(?<!NOT )\+?(?:(?i:transcript):)?"([^"]*[^\W_][^"]*)"(?:~(\d+))?')
_QUOTED = re.compile(r'"[^"]*"(?:[~^][\d.]*)?')


def transcript_phrases(text: str) -> tuple[list[tuple[str, int]], str]:
    """The phrases ``text`` asks the transcript for, each as (its words, its slop: how many moves its words may
    make, in any order; 0 for an exact phrase), and the text without its quoted parts (the words it asks for
    apart); what a search's moments and snippets show as one unit (``answers``)."""
    text = straight_quotes(text)
    if text.count('"') % 2:  # (an unbalanced last quote: not a phrase)
        text = text[:text.rfind('"')] + " " + text[text.rfind('"') + 1:]
    phrases = [(m.group(1).strip(), int(m.group(2) or 0)) for m in _TRANSCRIPT_PHRASE.finditer(text)]
    return phrases, plain_words(_QUOTED.sub(" ", text))


# A person the query names (not excluded): ``guest:"Mat Ryer"``, ``person:ryer``, ``speaker:"Katie Hockman"``
_PERSON_NAMED = re.compile(rf'(?:^|(?<=[\s(]))(?<!NOT )\+?(?i:persons|{"|".join(FIELD_ALIASES["persons"])}):'
                           r'(?:"([^"]*[^\W_][^"]*)"|([^\W_][\w.\'’-]*))')


def named_persons(text: str) -> list[str]:
    """The persons ``text`` names in a person's field, as typed (``answers`` prefers the moments they speak)."""
    return [(m.group(1) or m.group(2)).strip() for m in _PERSON_NAMED.finditer(straight_quotes(text))]


def questions_asked(text: str) -> str:
    """``text`` with the question marks that end a question's words read as punctuation (:data:`_ASKED`), and
    one standing alone at the end (:data:`_ASKED_APART`)."""
    return _ASKED_APART.sub(r"\1", _ASKED.sub(r"\1", text))


class Reading(NamedTuple):
    """One way of reading the text typed: ``text`` to parse, any word rather than all words, as plain words."""

    text: str
    any_word: bool
    plain: bool
    apart: tuple[tuple[str, str], ...] = ()  # words read both ways, one word or two (``words_apart``)


# The words a person typed, a joined word one ("state-of-the-art", "don't", "node.js"): "state-of-the-art zebra" is
# two words, not a five-word sentence read on any word
_QUERY_WORDS = re.compile(r"\w+(?:(?:['’.\-]|(?<=\d),(?=\d))\w+)*")  # ("1,000": one number, languages.THOUSANDS)


def any_word_first(text: str, long_query_words: int = LONG_QUERY_WORDS) -> bool:
    """Whether ``text`` is ranked on any word straight away (a long plain query): a word no episode holds then
    leaves it a total, and its spelling is looked at anyway."""
    return readings(text, False, long_query_words)[0].any_word


EVERY_WORD = 10 ** 9  # as ``long_query_words``: never read a query on any word (the suggestions' counts)


def readings(text: str, plain: bool, long_query_words: int = LONG_QUERY_WORDS,
             apart: tuple[tuple[str, str], ...] = ()) -> list[Reading]:
    """The readings of ``text`` to try in turn: the second is the fallback when the first finds fewer than
    ``RELAX_BELOW`` (the engine's ``relax_below``).

    A query typed all in capitals is read in lower case (:func:`as_typed`). Short plain queries want every word
    (the fallback is any word); long ones (sentences, pasted questions) are ranked on any word straight away.
    ``-word`` and ``+word`` keep their meaning in the fallback; AND, OR and NOT written out mean there is none.
    ``apart``: the words each reading reads both ways, one word or two (``engines/compounds.py``).
    """
    text = as_typed(text)
    if plain or not has_syntax(text):
        if len(_QUERY_WORDS.findall(text)) > long_query_words:
            return [Reading(text, True, True, apart)]
        return [Reading(text, False, plain, apart), Reading(text, True, plain, apart)]
    if OPERATORS.search(text):
        return [Reading(text, False, False, apart)]
    return [Reading(text, False, False, apart), Reading(restrictions_kept(text), True, False, apart)]


# A clause that says which episodes rather than which words: a show, a person, dates
_RESTRICTION = re.compile(rf"(?<![\w+\-:\\])(?:published|show|{'|'.join(FIELD_ALIASES['show'])}|persons|"
                          rf"{'|'.join(FIELD_ALIASES['persons'])}):", re.IGNORECASE)


def restrictions_kept(text: str) -> str:
    """``text`` with its show, person and date clauses wanted (``+show:...``) where they stand on their own (not in
    quotes or parentheses, not signed), for the any-word reading: ``published:2024 volcano`` is the volcano episodes
    of 2024 (before, 2024's episodes or any about volcanoes: 17 sample episodes, two of 2023 among the first three),
    ``show:"signal path" volcano`` that show's."""
    out, depth, quoted, last = [], 0, False, 0
    for m in _RESTRICTION.finditer(text):
        for ch in text[last:m.start()]:
            if ch == '"':
                quoted = not quoted
            elif not quoted:
                depth += {"(": 1, ")": -1}.get(ch, 0)
        out.append(text[last:m.start()])
        out.append(m.group(0) if quoted or depth > 0 else "+" + m.group(0))
        last = m.end()
    out.append(text[last:])
    return "".join(out)
