"""Reading what people type into Whoosh queries: the parser, the all-words / any-word strategy, the terms."""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

from whoosh.qparser import (
    AndGroup,
    FieldAliasPlugin,
    FieldsPlugin,
    FuzzyTermPlugin,
    MultifieldPlugin,
    OrGroup,
    PlusMinusPlugin,
    PrefixPlugin,
    QueryParser,
    WildcardPlugin,
    syntax,
)
from whoosh.qparser.dateparse import DateParserPlugin
from whoosh.qparser.plugins import Plugin
from whoosh.query import AndNot, Not, NullQuery, Or, Phrase, Prefix, Require, Term, Wildcard

from ...errors import QueryError
from ...languages import ascii_fold, lower
from ..querytext import (
    FIELD_ALIASES,
    MAX_QUERY_LENGTH,
    QUERY_FIELD_NAMES,
    hyphens_apart,
    lenient,
    plain_words,
    quoted_parts,
    readings,
    slashes_apart,
    words_apart,
)
from .analysis import SpokenAnalyzer
from .bm25f import as_bm25f
from .exclusions import exclusions_hold, positive_terms
from .ranking import RANKING, Ranking
from .schema import query_schema

# The engine-neutral rules (syntax, capitals, the all-words / any-word readings): ``engines/querytext.py``;
# field weights, length normalisation, the any-word fallback and the long-query rule: ranking.py.


class _Parser(QueryParser):
    """Whoosh's parser, with a word typed once that analysis makes several tokens (a run of Japanese or Chinese
    characters: its bigrams) read as one word, all of its tokens wanted, in the any-word reading too: until 5
    December 2026 that reading wanted any of them, and ``たこ焼き`` found "すき焼き" (焼き) and "思ったこと" (たこ)."""

    def multitoken_query(self, spec: str, texts: list[str], fieldname: str, termclass: Any, boost: float) -> Any:
        return super().multitoken_query("and" if spec.lower() == "default" else spec, texts, fieldname, termclass,
                                        boost)


class _Binary(syntax.BinaryGroup):
    """Whoosh's ``BinaryGroup.query`` reads each of its two sides twice (once to see whether it is empty, once to
    build the query): a chain of ``ANDNOT``, ``ANDMAYBE`` or ``REQUIRE`` nests them, so its reading doubled with
    each operator, ``weight ANDNOT weight ...`` 3.5 s for 15 of them and hours for the 50 that fit in 500
    characters, a worker held past any deadline (a fuzzed walk, 5 December 2026). Each side is read once."""

    def query(self, parser: Any) -> Any:
        qa = self.nodes[0].query(parser)
        qb = self.nodes[1].query(parser)
        if qa is None or qb is None:
            q = qb if qa is None and qb is not None else qa if qa is not None else NullQuery
        else:
            q = self.qclass(qa, qb)
        return syntax.attach(q, self)


class _AndNotGroup(_Binary, syntax.AndNotGroup):
    pass


class _AndMaybeGroup(_Binary, syntax.AndMaybeGroup):
    pass


class _RequireGroup(_Binary, syntax.RequireGroup):
    pass


_ONCE = {syntax.AndNotGroup: _AndNotGroup, syntax.AndMaybeGroup: _AndMaybeGroup, syntax.RequireGroup: _RequireGroup}


def _parser(key: str, relaxed: bool, ranking: Ranking) -> QueryParser:
    group = OrGroup if relaxed else AndGroup
    parser = _Parser(None, query_schema(key), group=group)  # (what MultifieldParser makes, with the method above)
    for plugin in parser.plugins:  # (the operators' taggers are this parser's own: see _Binary)
        for tagger, _ in getattr(plugin, "ops", ()):
            tagger.grouptype = _ONCE.get(tagger.grouptype, tagger.grouptype)
    parser.add_plugin(MultifieldPlugin(ranking.fields, fieldboosts=ranking.boosts))
    parser.plugins = [QueryFields() if type(p) is FieldsPlugin else p for p in parser.plugins]  # (in its place)
    parser.add_plugin(Signs())
    parser.add_plugin(FieldAliasPlugin(FIELD_ALIASES))
    parser.add_plugin(DateParserPlugin(free=False))
    parser.add_plugin(FuzzyTermPlugin())  # word~, word~2, word~2/3 (edits / letters kept as typed): bounds.py
    parser.add_plugin(FoldedPatterns(key))
    return parser


class FoldedPatterns(Plugin):
    """A pattern's letters (``somatizaç*``, ``caf?``, ``[é TO f]``) read without their accents, as the bare letters
    are (Portuguese ``conteú*`` was ``conteu*``; on OpenSearch, ``expand._part``, the listed words are folded).

    A pattern of word characters alone (``conteu*``, ``kub?rnetes``) is read by its letters, not stemmed
    (:class:`LettersPrefix`, :class:`LettersWildcard`): its words are the words written in the episodes that begin
    with (or match) the letters typed, each searched as its stem, as on OpenSearch (``expand.expand``). Until 6
    December 2026 the field's analysis stemmed the letters, then matched the stems beginning with them: the Portuguese
    stemmer reads ``conteu`` as ``cont``, so ``conteu*`` found 47 feeds' episodes (contar, contra, contigo), 7 on
    OpenSearch, and ``kub?rnetes`` was ``kub?rnet``. A pattern with a joining sign (``ci/c*``, ``open-sour*``) comes
    here as its parts (``querytext.lenient``: ``(open AND sour*)``); one left whole (``open-*``) is read over the
    whole word's stems, as before (the word list holds parts alone)."""

    def __init__(self, key: str = "en") -> None:
        self.key = key

    def filters(self, parser: Any) -> list[tuple[Any, int]]:
        return [(self._fold, 1000)]  # (after the wildcard plugin's: its prefix nodes are made by then)

    def _fold(self, parser: Any, group: Any) -> Any:
        for i, node in enumerate(group):
            if isinstance(node, syntax.GroupNode):
                self._fold(parser, node)
            elif isinstance(node, (WildcardPlugin.WildcardNode, PrefixPlugin.PrefixNode)):
                node.text = ascii_fold(lower(node.text))
                if _LETTERS.fullmatch(node.text if isinstance(node, WildcardPlugin.WildcardNode) else node.text + "*"):
                    group[i] = _LettersNode(node, self.key)
            elif type(node) is syntax.RangeNode:  # (a range of words; the dates' are read apart)
                node.start, node.end = (ascii_fold(lower(v)) if isinstance(v, str) else v for v in (node.start, node.end))
        return group


# a pattern of word characters alone (no joining sign: ci/c*), with a letter or digit before its first mark
_LETTERS = re.compile(r"[^\W_]\w*[*?][\w*?]*")


class _LettersNode(syntax.TextNode):
    """A pattern read by its letters (:class:`FoldedPatterns`)."""

    def __init__(self, node: Any, key: str) -> None:
        super().__init__(node.text if isinstance(node, WildcardPlugin.WildcardNode) else node.text + "*")
        self.fieldname, self.boost, self.key = node.fieldname, node.boost, key
        self.startchar, self.endchar = node.startchar, node.endchar

    def r(self) -> str:
        return f"Letters {self.text!r}"

    def query(self, parser: Any) -> Any:
        fieldname = self.fieldname or parser.fieldname
        field = parser.schema[fieldname] if parser.schema and fieldname in parser.schema else None
        text = self.text  # (folded as the word list's words are)
        if field is None or not isinstance(getattr(field, "analyzer", None), SpokenAnalyzer):
            return syntax.attach(Wildcard(fieldname, text, boost=self.boost).normalize(), self)
        if "?" not in text and text.endswith("*") and text.count("*") == 1:
            q: Any = LettersPrefix(fieldname, text[:-1], self.key, boost=self.boost)
        else:
            q = LettersWildcard(fieldname, text, self.key, boost=self.boost)
        return syntax.attach(q, self)


class _Letters:
    """What a pattern read by its letters adds to Whoosh's: the analysis profile its words are stemmed with."""

    key: str

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.fieldname!r}, {self.text!r}, {self.key!r})"  # type: ignore[attr-defined]

    def __eq__(self, other: object) -> bool:
        return super().__eq__(other) and self.key == getattr(other, "key", None)  # type: ignore[misc]

    def __hash__(self) -> int:
        return hash((super().__hash__(), self.key))  # type: ignore[misc]


class LettersPrefix(_Letters, Prefix):
    """``conteu*`` read by its letters: the words of the word list (``words``) that begin with ``text``, each
    searched as its stem in profile ``key`` (``bounds._letters``)."""

    def __init__(self, fieldname: str, text: str, key: str, boost: float = 1.0) -> None:
        super().__init__(fieldname, text, boost=boost)
        self.key = key


class LettersWildcard(_Letters, Wildcard):
    """``kub?rnetes`` read by its letters: the words of the word list that match it, each searched as its stem."""

    def __init__(self, fieldname: str, text: str, key: str, boost: float = 1.0) -> None:
        super().__init__(fieldname, text, boost=boost)
        self.key = key

    def normalize(self) -> Any:
        return self


class QueryFields(FieldsPlugin):
    """The fields a query may name (``querytext.QUERY_FIELD_NAMES``), in any case, as OpenSearch reads them; any
    other ``name:`` is text. Whoosh's own plugin read every field of the index: ``year:2024``, ``language:en`` or
    ``duration:[0 TO 600]`` searched the index's year, language and duration (OpenSearch read them as words), and
    ``link:x`` was refused for a stored field; ``Title:bitcoin`` was text (OpenSearch: the title)."""

    class FieldnameTagger(FieldsPlugin.FieldnameTagger):
        def create(self, parser: Any, match: Any) -> Any:
            return syntax.FieldnameNode(match.group("text").lower(), match.group(0))

    def __init__(self) -> None:
        super().__init__(expr=rf"(?<!\w)(?P<text>(?i:{'|'.join(QUERY_FIELD_NAMES)})|[*]):")

    def taggers(self, parser: Any) -> list[tuple[Any, int]]:
        return [(self.FieldnameTagger(self.expr), 0)]


class Signs(PlusMinusPlugin):
    """``+`` and ``-`` before a word, a phrase or a group, read as OpenSearch's ``query_string`` reads them.

    Only at the start of a word: "real-gas" and "wi-fi" are words, not "NOT gas". ``-"machine learning"`` and
    ``-(rust OR go)`` exclude the phrase and the group (Whoosh's own plugin took the sign only before a letter:
    the phrase was then *required*), inside parentheses too (``go (python -rust)`` was an error). ``+`` changes
    nothing in an all-words reading (every word is required already: ``python +rust`` was rust alone with python
    optional) and marks the required words of an any-word one. A group of excluded words alone (``-rust``,
    ``python (-rust)``) is everything but them, as ``NOT rust`` is (it was nothing)."""

    def __init__(self) -> None:
        super().__init__(plusexpr=r"(?:^|(?<=[\s(]))\+(?=[\w\"(\[{])", minusexpr=r"(?:^|(?<=[\s(]))-(?=[\w\"(\[{])")

    def do_plusminus(self, parser: Any, group: Any) -> Any:
        nodes = [self.do_plusminus(parser, n) if isinstance(n, syntax.GroupNode) else n for n in group]
        if not any(isinstance(n, (self.Plus, self.Minus)) for n in nodes):
            group.nodes = nodes  # (a group without signs stays as it is, boost and all)
            return group
        every = isinstance(group, syntax.AndGroup)
        required, optional, banned = syntax.AndGroup(), syntax.AndGroup() if every else syntax.OrGroup(), syntax.OrGroup()
        into = optional
        for node in nodes:
            if isinstance(node, self.Plus):
                into = optional if every else required
            elif isinstance(node, self.Minus):
                into = banned
            else:
                into.append(node)
                into = optional
        for part in (required, optional):  # an operator the excluded parts left beside nothing is dropped (as
            part.nodes = _operands(part.nodes)  # OpenSearch's opensearch/query.operator_groups does)
        kept = syntax.AndMaybeGroup([required, optional]) if required else optional
        signed = kept if not banned else _Without([kept, banned]) if kept else syntax.NotGroup([banned])
        signed.boost = group.boost
        return signed


def _operands(nodes: list[Any]) -> list[Any]:
    """``nodes`` without an AND or OR that has no part before or after it (``a OR -b OR c`` without ``-b`` is
    ``a OR c``: with both ORs Whoosh read ``a AND c``)."""
    out: list[Any] = []
    for node in nodes:
        if not (isinstance(node, syntax.InfixOperator) and (not out or isinstance(out[-1], syntax.InfixOperator))):
            out.append(node)
    while out and isinstance(out[-1], syntax.InfixOperator):
        out.pop()
    return out


class _Without(syntax.AndNotGroup):
    """``kept -banned``, where ``kept`` may be stop words alone (``to be or not to be -rust``): then it is
    ``NOT banned``, as on OpenSearch (where analysis drops the words and leaves the exclusion)."""

    def query(self, parser: Any) -> Any:
        kept, banned = (node.query(parser) for node in self.nodes)
        if kept is None or kept.normalize() is NullQuery:
            return syntax.attach(Not(banned), self)
        return syntax.attach(AndNot(kept, banned), self)


def parse(text: str, relaxed: bool = False, plain: bool = False, profiles: list[str] | None = None,
          ranking: Ranking = RANKING, apart: tuple[tuple[str, str], ...] = ()) -> Any:
    """The query for ``text``: all words (or any word with ``relaxed``); ``plain`` ignores query syntax;
    the words of ``apart`` are read both ways, one word or two (``querytext.words_apart``).

    With several analysis ``profiles`` (languages), the text is analysed for each, and each reading
    only matches the episodes of its profile: ``Or(Require(q_de, analysis:de), Require(q_en, analysis:en))``,
    so an episode is scored once, on the reading of its own language.
    """
    if len(text) > MAX_QUERY_LENGTH:
        raise QueryError(f"The query is {len(text)} characters long; the limit is {MAX_QUERY_LENGTH}.")
    return _parse_cached(text, relaxed, plain, tuple(profiles or ["en"]), ranking, apart)


@lru_cache(maxsize=512)
def _parse_cached(text: str, relaxed: bool, plain: bool, profiles: tuple[str, ...], ranking: Ranking,
                  apart: tuple[tuple[str, str], ...]) -> Any:
    """Parsed queries are kept: a query is parsed once per language in the index (queries are immutable)."""
    typed = words_apart(hyphens_apart(plain_words(text) if plain else lucene_slop(lenient(text))), apart)
    alike: dict[str, tuple[Any, list[str]]] = {}  # languages that read the text alike share one query
    for key in profiles:
        kept = _indexed(key)
        read = typed if plain else quoted_parts(slashes_apart(typed, kept), kept)
        try:
            q = _parser(key, relaxed, ranking).parse(read)
        except Exception as exc:  # Whoosh's parser raises assorted errors on odd input
            raise QueryError(f"Cannot read the query {text!r}: {exc}") from None
        q = _rewrite(spaced(q, read, key), ranking)
        if len(profiles) == 1:
            return q
        if q is not NullQuery:
            alike.setdefault(repr(q), (q, []))[1].append(key)
    parts = [Require(q, Term("analysis", keys[0]) if len(keys) == 1 else Or([Term("analysis", k) for k in keys]))
             for q, keys in alike.values()]
    return Or(parts) if len(parts) > 1 else (parts[0] if parts else NullQuery)


def _indexed(key: str) -> Any:
    """Whether the index keeps a word of profile ``key`` (a stop word it leaves out)."""
    analyzer = query_schema(key)["transcript"].analyzer
    return lambda word: bool(analyzer.texts(word))


_PHRASE_SLOP = re.compile(r'("[^"]*")~(\d+)')  # (quotes balanced by ``lenient``: each match is one phrase)


def lucene_slop(text: str) -> str:
    """``text`` with each phrase's slop as Whoosh's parser must read it to mean what it means on OpenSearch:
    Lucene counts the moves (``"a b"~1``: one word between, or none; swapped is two), Whoosh's parser calls the
    exact phrase slop 1, so it is given one more (``fast.Evaluator`` takes it back off and counts Lucene's way)."""
    return _PHRASE_SLOP.sub(lambda m: f"{m.group(1)}~{int(m.group(2)) + 1}", text) if '"~' in text else text


class SpacedPhrase(Phrase):
    """A phrase some of whose words are more than one position apart in the index: a stop word between two keeps
    its place (schema version 6: ``"javascript python"`` is not "JavaScript and Python", and ``"state of the
    art"`` is state and art three places apart); a joined word (``stay-at-home``, ``node.js``, French
    ``l'homme``) is indexed whole at its first part's position and its parts one after another (schema version
    5), so the word after it is as many places on as it has parts. ``places`` is where
    each word stands, counted from the first (``fast.Evaluator`` matches them there); the query keeps the joined
    word whole (as typed)."""

    def __init__(self, fieldname: str, words: list[str], places: tuple[int, ...], boost: float = 1.0,
                 char_ranges: list[tuple[int, int]] | None = None, slop: int = 1) -> None:
        super().__init__(fieldname, words, slop=slop, boost=boost, char_ranges=char_ranges)
        self.places = places

    def __eq__(self, other: object) -> bool:
        return super().__eq__(other) and self.places == other.places  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return super().__hash__() ^ hash(self.places)

    def __repr__(self) -> str:
        return f"{super().__repr__()[:-1]}, places={self.places})"


def spaced(q: Any, typed: str, key: str) -> Any:
    """``q`` with each exact phrase that holds a joined word or a stop word made a :class:`SpacedPhrase`: the
    positions each word of the phrase takes, and the stop words between two, are counted by the field's analyzer
    reading the text as typed (``typed[start:end]``, Whoosh's ``char_ranges``) as it reads an episode's text."""
    if type(q) is Phrase:
        ranges = q.char_ranges or []
        if len(ranges) != len(q.words):
            return q
        schema = query_schema(key)
        analyzer = schema[q.fieldname].analyzer if q.fieldname in schema else None
        if not isinstance(analyzer, SpokenAnalyzer):  # (the words field: no positions, no phrases)
            return q
        gaps = [typed[end:start] for (_, end), (start, _) in zip(ranges, ranges[1:])]  # (stop words between)
        counted = analyzer.token_counts(key, [typed[start:end] for start, end in ranges] + gaps)
        sizes, between = [max(1, n) for n in counted[:len(ranges)]], counted[len(ranges):]
        if all(n == 1 for n in sizes) and not any(between):
            return q
        # A word typed once may give several words of the phrase: a run of Japanese or Chinese characters gives its
        # bigrams, each with the run's range; they stand one after another, and the run's width is counted once
        # (until 5 December 2026 each bigram was counted as the whole run: "たこ焼き" quoted found nothing).
        places: list[int] = []
        at = 0
        for i in range(len(sizes)):
            if i and ranges[i] == ranges[i - 1]:
                places.append(places[-1] + 1)
                continue
            if i:
                at += sizes[i - 1] + between[i - 1]
            places.append(at)
        if places == list(range(len(places))):
            return q
        return SpacedPhrase(q.fieldname, q.words, tuple(places), boost=q.boost, char_ranges=ranges, slop=q.slop)
    if q.is_leaf():
        return q
    return q.apply(lambda sub: spaced(sub, typed, key))


def _rewrite(q: Any, ranking: Ranking) -> Any:
    """A parsed query made ready to run: excluded words excluded from every match, and each word searched
    in several fields scored once over them (BM25F) when the ranking says so."""
    q = exclusions_hold(q)
    return as_bm25f(q, ranking.field_b(), ranking.k1) if ranking.bm25f else q


def strategy(text: str, plain: bool, profiles: list[str] | None = None, ranking: Ranking = RANKING,
             apart: tuple[tuple[str, str], ...] = ()) -> tuple[Any, Any]:
    """(first query, fallback query or None) for the text typed, read as ``querytext.readings`` says (a query
    in capitals read in lower case; short plain queries all words, then any word; long ones any word), the
    words of ``apart`` read both ways (one word or two)."""
    queries = [parse(r.text, relaxed=r.any_word, plain=r.plain, profiles=profiles, ranking=ranking, apart=r.apart)
               for r in readings(text, plain, ranking.long_query_words, apart)]
    return queries[0], (queries[1] if len(queries) > 1 else None)


def query_terms(query: Any) -> dict[str, set[str]]:
    """The analysed terms of a query, by field, excluded words left out (what highlights and moments show), and
    the languages it is read in left out too (``analysis``: an index of two or more requires them, and a query of
    no word, ``-rust`` or ``published:2024``, then looked for words: until 5 December 2026 it was ranked by score and
    reordered by the model, not listed newest first)."""
    out: dict[str, set[str]] = {}
    for fieldname, text in positive_terms(query):
        if fieldname == "analysis":
            continue
        if isinstance(text, bytes):
            text = text.decode("utf-8", "replace")
        out.setdefault(fieldname, set()).add(str(text))
    return out
