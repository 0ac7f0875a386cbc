"""The interface every search engine implements, and the plain data it takes and gives.

An engine indexes :class:`Document` s, deletes them, and answers an :class:`EngineQuery` with an
:class:`EngineResult`: episode ids and scores, the analysed terms the query matched (per field), facet counts
over every match, a spelling suggestion. It knows nothing of the catalog: the answer builder
(``podsearch.answers``) reads what a page shows from the catalog in one batched read, and uses the engine's
:class:`TextAnalyzer` to find the matched words in titles, notes and transcript segments (snippets, moments).

Engines: ``whoosh`` (embedded, the default; ``engines.whoosh``) and ``opensearch`` (``engines.opensearch``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol

from ..episodes import person_key

SORTS = ("relevance", "date", "oldest")
FACETS = ("show", "year", "person", "language")  # the facets of a search answer, in this order
UNDATED = "unknown"  # the year facet's value of an episode without a date (a search answer leaves it out)


@dataclass
class Document:
    """One episode as every engine indexes it (built from the catalog by ``podsearch.documents``)."""

    id: str
    show_id: str
    show: str  # the show's title
    title: str
    persons: list[str]  # names of the feed's podcast:person entries
    speakers: list[str]  # transcript speakers that are not among the persons
    notes: str  # the show notes as plain text
    transcript: str
    published: datetime | None
    duration: int | None  # seconds
    language: str  # primary language subtag ("en", "de"), "" when unknown
    link: str
    audio_url: str
    content_hash: str  # changes whenever anything above changes: the incremental sync compares it
    segments: tuple[str, ...] = ()  # the transcript's segments (``transcript`` is their non-empty texts joined)
    number: int | None = None  # the episode's number in its show (the feed's itunes:episode), None when unnumbered


class DocumentSource(Protocol):
    """What an engine's sync reads: the wanted documents' hashes, and the documents themselves."""

    def hashes(self) -> dict[str, str]: ...

    def documents(self, ids: Iterable[str]) -> Iterator[Document]: ...


@dataclass(frozen=True)
class Filters:
    shows: tuple[str, ...] = ()
    person: str = ""  # lower case
    published_from: datetime | None = None
    published_to: datetime | None = None
    duration_min: int | None = None  # seconds
    duration_max: int | None = None
    language: str = ""  # primary language subtag
    ids: tuple[str, ...] = ()  # only these episodes (the library asks whether episodes a query names pass the rest)
    no_duration: bool = False  # only episodes without a known length (the library counts what a duration filter
    # left out)

    def __bool__(self) -> bool:
        return bool(self.shows or self.person or self.published_from or self.published_to
                    or self.duration_min is not None or self.duration_max is not None or self.language or self.ids
                    or self.no_duration)


@dataclass(frozen=True)
class EngineQuery:
    text: str  # as typed ("" lists everything the filters let through, newest first)
    filters: Filters = Filters()
    sort: str = "relevance"  # one of SORTS
    page: int = 1
    per_page: int = 10
    facets: bool = True
    suggest: bool = True  # look for a spelling suggestion when little is found
    deadline: float | None = None  # time.monotonic() by which the engine answers with what it has


@dataclass
class EngineHit:
    id: str
    score: float


@dataclass
class EngineResult:
    total: int
    hits: list[EngineHit]
    terms: dict[str, set[str]] = field(default_factory=dict)  # field -> analysed terms of the query that ran
    facets: dict[str, dict[str, int]] = field(default_factory=dict)  # facet -> value -> matching documents
    suggestion: str = ""
    relaxed: bool = False  # all-words matching found too little; any-word matching was used
    all_words: int | None = None  # when relaxed: the episodes that hold every word (ranked among the others)
    corrected: str = ""  # the text searched instead of the query's (its spelling suggestion), set by the library
    timed_out: bool = False  # the deadline passed: the hits are the best of the documents read; total a lower bound
    total_exact: bool = True  # False: ``total`` is a lower bound (an engine that stops counting, or a timeout)
    notes: list[str] = field(default_factory=list)  # what the engine did to bound the query (for the person)
    no_duration: int | None = None  # with a duration filter: the matching episodes left out for having no length
    without_fields: int | None = None  # a search in fields that found nothing: the episodes its words find anywhere


@dataclass(frozen=True)
class SegmentCounts:
    """Where a query's terms are in one episode's transcript, segment by segment, as an engine's index knows it
    (moments are chosen from this without reading every segment). Parallel arrays over the segments that
    hold at least one term: their place in the episode's segment list, how many distinct terms each holds,
    how many of its tokens are terms, and its length in words (whitespace-separated). ``complete`` False: only
    some of the terms were read (the deadline passed), the counts are of those."""

    indexes: Any  # numpy int arrays
    distinct: Any
    tokens: Any
    words: Any
    complete: bool = True
    # which terms each segment holds, one bit a term of ``terms`` (the first ``MASK_TERMS`` found in the episode),
    # None when not counted (a Japanese or Chinese word's bigrams): a quoted phrase's moments are looked for among
    # the segments holding all its words (``answers``)
    masks: Any = None
    terms: tuple[str, ...] = ()


class TextAnalyzer(Protocol):
    """An engine's analysis of one language, to find a query's terms in text the engine does not store."""

    def texts(self, text: str) -> list[str]:
        """The terms of ``text``, in order."""

    def spans(self, text: str) -> Iterator[tuple[str, int, int]]:
        """(term, start, end) of each term of ``text``, with character offsets into it."""

    def term_spans(self, text: str, terms: set[str]) -> list[tuple[str, int, int]]:
        """The spans of ``spans`` whose term is in ``terms``, in text order."""


class Engine(Protocol):
    """A search engine over :class:`Document` s. Implementations are thread-safe."""

    name: str

    def exists(self) -> bool:
        """Whether there is an index to search."""

    def stamp(self) -> tuple[str, float]:
        """(token, time) of the index being served: the token changes whenever the index does."""

    def doc_count(self) -> int: ...

    def size_bytes(self) -> int: ...

    def health(self) -> dict[str, Any]:
        """What /readyz says of the engine beyond the index's figures: a cluster's health ({} for an embedded index)."""

    def cleanup(self) -> None:
        """Remove what a killed reindex left half-written."""

    def plan(self, full: bool = False) -> str:
        """How :meth:`sync` will write the index, as the reindex log says it (:func:`sync_plan`)."""

    def sync(self, source: DocumentSource, full: bool = False, progress: Callable[[int], None] | None = None,
             hashes: dict[str, str] | None = None) -> dict[str, int]:
        """Bring the index in line with ``source``: add, update, delete (a full rebuild with ``full``).
        Returns counts: added, updated, removed (and full: 1 for a rebuild)."""

    def search(self, query: EngineQuery) -> EngineResult: ...

    def passages(self, ids: list[str], terms: list[str], width: int) -> list[float]:
        """Each episode's best transcript window of ``width`` words for the analysed query ``terms`` (the sum over
        the terms of idf x saturated count in the window); 0 where the engine cannot tell (the feedback's passage
        step, ``podsearch.feedback``, then changes nothing)."""

    def rank(self, text: str, limit: int = 1000, plain: bool = False) -> list[tuple[str, float]]:
        """(id, score) best first for ``text`` as the search box reads it (``plain``: ignoring query syntax)."""

    def suggest(self, prefix: str, limit: int = 8, deadline: float | None = None) -> dict[str, list[tuple[str, str]]]:
        """Completions of a typed prefix: {"episode": [(id, title)], "person": [("", key)] (``person_key``: the
        library shows the name as written), "term": [("", word)]}, best first. ``deadline`` (``time.monotonic()``):
        when an engine that waits for a cluster gives up (EngineUnavailable)."""

    def analyzer(self, language: str) -> TextAnalyzer:
        """The analysis of ``language`` (a primary subtag; "" for English)."""

    def read_as(self, language: str = "") -> list[str]:
        """The analysis profiles (``languages.profile``) a query is read for: the asked language's, else those of
        the episodes in the index (["en"] when it has none); each is a language :meth:`analyzer` takes."""

    def warm(self) -> None:
        """Load now what the first search would otherwise load."""

    def segment_counts(self, ids: list[str], terms: set[str], deadline: float | None = None,
                       cjk: dict[str, tuple[frozenset[str], ...]] | None = None,
                       always: int | None = None) -> dict[str, SegmentCounts]:
        """For the episodes of ``ids``, where the transcript ``terms`` (analysed) are, segment by segment, read
        from the index; an episode the index cannot say this for is left out (its moments are then found by
        reading its segments). Past ``deadline`` (``time.monotonic()``'s clock) an engine may stop reading the
        terms of a long list (a pattern's words) and count those it read (``complete`` False). ``cjk``: the
        Japanese or Chinese words typed (``languages.cjk_words``), whose bigrams count only in a segment holding
        one of those words whole. ``always``: how many terms are read whatever the deadline (default the
        engine's; 0: none past it)."""

    def more_like(self, episode_id: str, text: str, k: int = 10) -> list[tuple[str, float]]:
        """The engine's own "more like this" (a baseline for the similar model)."""


INCREMENTAL = "incremental"


def sync_plan(full: bool, exists: bool, schema: Callable[[], str], current: str) -> str:
    """How an engine's sync writes its index: ``incremental`` (what changed), or a full rebuild and why (asked, no
    index yet, or an index of another schema than ``current``; ``schema`` reads the index's). Until 6 December 2026
    the reindex log said "incremental" for a schema change, which rebuilds the whole index (76 s for the site corpus
    on three OpenSearch nodes)."""
    if full:
        return "full rebuild"
    if not exists:
        return "full rebuild (no index yet)"
    have = schema()
    if have != current:
        return f"full rebuild (schema {have} -> {current})"
    return INCREMENTAL


def listing_key(episode_id: str, number: int | None) -> str:
    """Where an episode goes among those of its date, and among the undated, in a list by date: the numbered after
    the unnumbered, by number, then by id with its numbers read as numbers (``gotime:99`` before ``gotime:100``).
    ``sort=date`` (the search feeds, watches) lists such episodes from the highest key, ``sort=oldest`` from the
    lowest, and a show's page as ``sort=date`` does (``Library.episodes_of``): the site corpus's 341 undated Go
    Time episodes are #340, #339 ... #1, then the two unnumbered, on both engines. Both index it (Whoosh's
    ``order`` column, OpenSearch's ``order`` keyword) and compare it as text; each run of digits is written after
    its length (``7`` is ``017``, ``340`` is ``03340``), so that text order is number order. Until 5 December 2026
    Whoosh listed them in the order it had indexed them (its document numbers) and OpenSearch by id as text (#1,
    #10, #100 ...)."""
    def digits(m: re.Match[str]) -> str:
        run = m.group().lstrip("0") or "0"
        return f"{len(run):02d}{run}"

    named = _DIGITS.sub(digits, episode_id)
    return f"1{_DIGITS.sub(digits, str(max(0, number)))} {named}" if number is not None else f"0{named}"


_DIGITS = re.compile(r"\d+")


def facet_values(doc: Document) -> dict[str, Any]:
    """A document's facet values as every engine indexes them."""
    return {"show": doc.show_id, "year": doc.published.strftime("%Y") if doc.published else UNDATED,
            "language": doc.language, "person": person_keys(doc)}


def people(doc: Document) -> list[str]:
    """The episode's people as written: its persons (hosts and guests, as the feed names them) and the speakers its
    transcript names; what ``person:``, ``host:``, ``guest:`` and ``speaker:`` search (the persons field), and the
    person filter's values. (Until Whoosh schema 7 and OpenSearch schema 4, 5 December 2026, the field held the
    persons only: ``host:"Maya Okafor"`` found none of the sample's 12 episodes she hosts and speaks in, which the
    person filter found.)"""
    return doc.persons + doc.speakers


def person_keys(doc: Document) -> list[str]:
    """The person filter and facet values: lower-cased names of persons and speakers."""
    return [person_key(p) for p in people(doc)]
