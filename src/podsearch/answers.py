"""The answers podsearch gives, built in one place and serialised in one place.

A search answer is assembled here from an engine's result (ids, scores, matched terms, facet counts) and one
batched catalog read of the page's episodes: titles with the matches marked, a snippet from the show notes,
the transcript moments that match best, facet labels. ``to_dict`` of each answer type is its JSON shape, the
one the API and the CLI print; the HTML pages render the same objects.
"""

from __future__ import annotations

import bisect
import heapq
import html
import math
import re
import time
import unicodedata
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field, replace
from typing import Any
from urllib.parse import urlsplit

import numpy as np

from . import languages
from .catalog import Catalog
from .documents import parse_datetime
from .engines.base import FACETS, UNDATED, EngineResult, SegmentCounts, TextAnalyzer
from .engines.querytext import named_persons, transcript_phrases
from .engines.segments import MASK_TERMS
from .episodes import Chapter, Episode, Segment, Show, person_key
from .requests import MAX_DEPTH

FACET_TOP = 20  # values shown per facet
SNIPPET_CHARS = 240  # a snippet fragment at most, and the notes shown when nothing matched in them
SURROUND = 80  # characters of context on each side of a match
FRAGMENTS = 2  # fragments of the notes in a snippet
MOMENTS = 3  # transcript moments per hit
# segments analysed for the moments of a page's hits that the engine gives no counts for (OpenSearch's): this many
# over the page, each hit keeping MOMENT_READS for itself (a page of 100 hits for common words analysed 5,000: 1.4 s)
PAGE_MOMENT_READS = 1000
MOMENT_READS = 16
# hits of a page whose moments are found whatever the deadline (a page of the default size); the others' only while
# the search's deadline has not passed: a page of 100 hits of a long query spent 0.3 s on its moments on a quiet
# machine, 1.0-1.3 s under load, after the engine's 1 s (until 6 December 2026)
MOMENTS_ALWAYS = 10
# transcript paragraphs an episode page and the API's episode answer hold, the rest in further parts (?part=2, ...):
# the site corpus's longest transcript has 1,172; until 5 December 2026 a 15 MB VTT of 300,000 half-second cues made
# a 66 MB page at 6 s of CPU per GET (docs/reliability.md)
PART_SEGMENTS = 2000


@dataclass
class Moment:
    start: float | None
    speaker: str
    text: str  # highlighted HTML (escaped, matches in <mark>)
    chapter: str = ""
    segment: int | None = None  # its place in the episode's transcript (from 0)
    anchor: str = ""  # its paragraph's id on the episode page (segment_anchor)


def segment_anchor(place: int, start: float | None, before: float | None) -> str:
    """The id of a transcript paragraph on the episode page, from its place, its start and the start of the one
    before it: ``t754`` (its start second), ``t754-18`` when the one before starts in the same second (its place,
    from 1), ``p12`` when it has no time."""
    if start is None:
        return f"p{place + 1}"
    if place and before is not None and int(before) == int(start):
        return f"t{int(start)}-{place + 1}"
    return f"t{int(start)}"


@dataclass
class EpisodeRef:
    """What every list of episodes shows of one (search hits, nearby episodes)."""

    id: str
    title: str
    show: str
    show_id: str
    published: str | None  # ISO 8601 UTC
    url: str  # the episode's own page (the feed's link)


@dataclass
class Hit(EpisodeRef):
    audio_url: str
    duration: int | None
    score: float
    snippet: str  # highlighted HTML (escaped, matches in <mark>)
    title_html: str
    moments: list[Moment] = field(default_factory=list)
    language: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "title": self.title, "show": self.show, "show_id": self.show_id,
                "published": self.published, "url": self.url, "audio_url": self.audio_url,
                "duration": self.duration, "score": self.score, "snippet": self.snippet,
                "title_html": self.title_html, "language": self.language,
                "moments": [asdict(m) for m in self.moments]}


@dataclass
class SearchResult:
    query: str
    total: int
    page: int
    per_page: int
    hits: list[Hit]
    facets: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    suggestion: str = ""
    relaxed: bool = False  # all-words matching found too little; any-word matching was used
    all_words: int | None = None  # when relaxed: the episodes that hold every word
    corrected: str = ""  # the words searched instead of the query (its spelling suggestion)
    took_ms: float = 0.0
    timed_out: bool = False  # the deadline cut the search short: the best of what was read; total a lower bound
    total_exact: bool = True  # False: the total is a lower bound ("total_relation": "gte")
    notes: list[str] = field(default_factory=list)  # how the query was bounded (expansions cut), for the person
    no_duration: int | None = None  # with a duration filter: the matching episodes left out for having no length
    without_fields: int | None = None  # a search in fields that found nothing: the episodes its words find anywhere
    anywhere: str = ""  # with ``without_fields``: the query without its fields (the page links it)

    @property
    def pages(self) -> int:
        """The pages that can be asked for: of ``total``, those within the first ``MAX_DEPTH`` results (``-bitcoin``,
        7 a page, said 178 pages, and page 143 was a 400)."""
        return max(1, min(-(-self.total // self.per_page), MAX_DEPTH // self.per_page))

    @property
    def past_end(self) -> bool:
        """A page after the last one was asked for (it lists nothing; ``pages`` is the last)."""
        return self.total > 0 and self.page > self.pages

    def to_dict(self) -> dict[str, Any]:
        return {"query": self.query, "total": self.total,
                "total_relation": "eq" if self.total_exact and not self.timed_out else "gte",
                "page": self.page, "per_page": self.per_page,
                "pages": self.pages, "took_ms": self.took_ms, "relaxed": self.relaxed,
                "all_words": self.all_words,
                "suggestion": self.suggestion or None, "corrected": self.corrected or None,
                "timed_out": self.timed_out, "notes": list(self.notes),
                "no_duration": self.no_duration, "without_fields": self.without_fields,
                "hits": [h.to_dict() for h in self.hits], "facets": self.facets}


@dataclass
class SimilarItem(EpisodeRef):
    score: float
    reasons: list[str]
    duplicate: bool = False
    language: str = ""

    def to_dict(self, duplicate: bool = False) -> dict[str, Any]:
        out = {"id": self.id, "title": self.title, "show": self.show, "show_id": self.show_id,
               "published": self.published, "url": self.url, "score": self.score, "reasons": list(self.reasons),
               "language": self.language}
        if duplicate:
            out["duplicate"] = self.duplicate
        return out


@dataclass
class SimilarResult:
    id: str | None
    similar: list[SimilarItem]
    duplicates: list[SimilarItem] = field(default_factory=list)
    t: float | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"id": self.id, "similar": [s.to_dict() for s in self.similar],
                               "duplicates": [s.to_dict(duplicate=True) for s in self.duplicates]}
        if self.t is not None:
            out["t"] = self.t
        return out


# -- catalog answers ------------------------------------------------------------------------------------
def _public_url(value: str) -> str:
    """Only web addresses leave the server; local paths (feeds read from disk) stay private."""
    return value if urlsplit(value).scheme.lower() in {"http", "https"} else ""


def show_json(show: Show) -> dict[str, Any]:
    data = show.to_dict()
    data.pop("source", None)  # a feed URL or a path on the server's disk: not for the public
    return data


def transcript_part(place: int) -> int:
    """The part of a transcript (from 1) that holds its segment at ``place`` (from 0)."""
    return place // PART_SEGMENTS + 1


def transcript_parts(count: int) -> int:
    """How many parts a transcript of ``count`` segments is shown in (1 for none)."""
    return max(1, -(-count // PART_SEGMENTS))


def episode_json(ep: Episode, first: int = 0, total: int | None = None) -> dict[str, Any]:
    """An episode as the API answers it, ``ep.segments`` being one part of its transcript (``PART_SEGMENTS``
    segments at most: the place of the first is ``first``, ``total`` the transcript's, by default these); only web
    addresses (a feed read from disk names its transcripts and chapters by their paths on the server, which were
    published in ``transcript_links`` and ``chapters_url`` until 5 December 2026)."""
    segments, ep.segments = ep.segments, []
    try:
        data = ep.to_dict()  # (without the segments: asdict copied 300,000 of them in 2.7 s)
    finally:
        ep.segments = segments
    total = len(segments) if total is None else total
    data["transcript_source"] = _public_url(data.get("transcript_source") or "")
    data["transcript_links"] = [link for link in data.get("transcript_links", [])
                                if not link.get("local") and _public_url(link.get("url") or "")]
    data["chapters_url"] = "" if data.get("chapters_local") else _public_url(data.get("chapters_url") or "")
    data["segments"] = [{"text": s.text, "start": s.start, "end": s.end, "speaker": s.speaker} for s in segments]
    data.update(segments_total=total, segments_from=first, transcript_part=transcript_part(first),
                transcript_parts=transcript_parts(total))
    return data


# -- search answers -------------------------------------------------------------------------------------
def search_answer(query: str, page: int, per_page: int, found: EngineResult, catalog: Catalog,
                  analyzer: Callable[[str], TextAnalyzer], took_ms: float = 0.0,
                  segment_counts: Callable[..., dict[str, SegmentCounts]] | None = None,
                  deadline: float | None = None, person: str = "") -> SearchResult:
    """The answer to a search: ``found`` (the engine's) with what the page shows read from ``catalog`` at once.

    ``analyzer(language)`` is the engine's analysis of a language: the query's terms are found with it in the
    titles, notes and transcript segments the engine does not keep. ``segment_counts`` (the engine's) says
    which segments of the hits hold the query's transcript terms: only the segments shown as moments are then
    read; a hit it says nothing for has all its segments read and scanned (:func:`find_moments`), analysing at
    most ``PAGE_MOMENT_READS`` segments over the page, ``MOMENT_READS`` kept for each hit still to come (so at
    most ``MOMENT_READS`` a hit on a page of more than ``PAGE_MOMENT_READS / MOMENT_READS`` such hits).
    A person the query names (``guest:"Mat Ryer"``) or ``person`` (the person filter's) is shown speaking where
    the transcript labels them (:func:`_speaking_first`).
    """
    terms = found.terms
    transcript_terms = terms.get("transcript", set())
    ids = [h.id for h in found.hits]
    cjk = languages.cjk_words(found.corrected or query)  # (a Japanese or Chinese word searched counts where all its
    # bigrams are: the query as searched, its correction when it was answered for one)
    counts: dict[str, SegmentCounts] = {}
    if segment_counts and transcript_terms and ids:
        counts = segment_counts(ids[:MOMENTS_ALWAYS], transcript_terms, deadline, cjk)
    # the hits after the first MOMENTS_ALWAYS, when the deadline has passed: no moments, nothing counted or read for
    # them (the others' moments too are found only in time, below)
    late = set(ids[MOMENTS_ALWAYS:]) if transcript_terms and not _in_time(deadline) else set()
    if segment_counts and transcript_terms and len(ids) > MOMENTS_ALWAYS and not late:
        # (whatever the deadline, their terms are none: the first hits' took the time there was)
        counts.update(segment_counts(ids[MOMENTS_ALWAYS:], transcript_terms, deadline, cjk, always=0))
        if not _in_time(deadline):  # (their counts, cut by the deadline, are shown for none of them: nothing is
            late = set(ids[MOMENTS_ALWAYS:])  # picked or read for them, 40-60 ms of a page of 100 under load)
            counts = {i: c for i, c in counts.items() if i not in late}
    episodes = catalog.episodes_by_id(ids, segments_of=[i for i in ids if i not in counts and i not in late]
                                      if transcript_terms else ())
    units = _units_of(found.corrected or query, analyzer, transcript_terms, terms, cjk)
    picks = {i: best_segments(c) for i, c in counts.items() if i in episodes}
    # a quoted phrase's: the segments that may hold it, and the best holding the query's other words
    looks = {i: look for i in picks if (u := units(episodes[i].language, "transcript")) is not None
             and (look := phrase_candidates(counts[i], u)) is not None}
    # each picked segment and the one before it; and the first, which is the snippet when there are no notes
    wanted = {i: sorted({*places, *(p - 1 for p in places if p), *(() if episodes[i].description_text else (0,))})
              for i, places in ((i, [*picks[i], *(p for ps in looks.get(i, ()) for p in ps)]) for i in picks)}
    # (a late hit without notes shows its transcript's first words)
    wanted.update({i: [0] for i in late if i in episodes and not episodes[i].description_text})
    rows = catalog.segments_at(wanted) if wanted else {}
    speaks = _speaks([*named_persons(found.corrected or query), *([person] if person else [])])
    # (the turns of the hits shown with moments: past the deadline, the first MOMENTS_ALWAYS alone)
    turns = catalog.speaker_turns([i for k, i in enumerate(ids) if i in episodes and i not in late and (
        k < MOMENTS_ALWAYS or _in_time(deadline))], speaks) if speaks else {}
    shows = catalog.show_titles()
    hits = []
    unread = len(ids) - len(picks)  # hits whose segments may be analysed
    left = max(PAGE_MOMENT_READS, MOMENT_READS * unread)
    cut = False  # a hit was left without its moments by the deadline
    for place, h in enumerate(found.hits):
        ep = episodes.get(h.id)
        if ep is None:  # deleted from the catalog since the engine answered
            continue
        lang = languages.primary(ep.language)
        ana = analyzer(lang)
        moments = None
        if transcript_terms and place >= MOMENTS_ALWAYS and not _in_time(deadline):
            # past the deadline the rest of the page shows no moments and nothing marked (its snippet the notes'
            # first words, or the transcript's: marking a pattern's 1,500 words in 90 notes took 0.13 s); the
            # answer says it was cut short
            cut = True
            ep.segments = [rows[h.id, 0]] if (h.id, 0) in rows else ep.segments[:1]
            hits.append(_hit(ep, h.score, shows.get(ep.show_id, ep.show_id), {}, ana, lang, []))
            continue
        said = units(ep.language, "transcript")
        if h.id in picks:
            places = picks[h.id]
            if h.id in looks:
                looked, rest = looks[h.id]
                places = phrase_choice(looked, lambda i, hid=h.id: row.text if (row := rows.get((hid, i))) else None,
                                       rest, said, ana) or places  # type: ignore[arg-type]
            chosen = [(i, rows.get((h.id, i)), rows.get((h.id, i - 1))) for i in places]
            moments = _moments(chosen, transcript_terms, ana, ep.chapters, strict=True, units=said)
            ep.segments = [rows[h.id, 0]] if (h.id, 0) in rows else []  # for the snippet, when nothing else
        if moments is None and transcript_terms:  # no counts, or the catalog changed since the index was written
            if h.id in picks:
                ep.segments = catalog.segments(h.id)
            unread = max(0, unread - 1)
            moments, read = _find_moments(ep.segments, transcript_terms, ana, chapters=ep.chapters,
                                          english=languages.profile(lang) in ("", "en"),
                                          budget=max(MOMENT_READS, left - MOMENT_READS * unread), cjk=cjk,
                                          units=said)
            left -= read
        if h.id in turns:
            moments = _speaking_first(h.id, turns[h.id], moments or [], counts.get(h.id), ep, transcript_terms, ana,
                                      catalog)
        hits.append(_hit(ep, h.score, shows.get(ep.show_id, ep.show_id), terms, ana, lang, moments or [],
                         units(ep.language, "notes")))
    return SearchResult(query=query, total=found.total, page=page, per_page=per_page, hits=hits,
                        facets=facet_rows(found.facets, shows, catalog.person_names), suggestion=found.suggestion,
                        relaxed=found.relaxed, all_words=found.all_words,
                        corrected=found.corrected, took_ms=took_ms,
                        timed_out=found.timed_out or cut or not all(c.complete for c in counts.values()),
                        notes=list(found.notes), no_duration=found.no_duration,
                        without_fields=found.without_fields, total_exact=found.total_exact)


def _units_of(query: str, analyzer: Callable[[str], TextAnalyzer], transcript: set[str], terms: dict[str, set[str]],
              cjk: dict[str, tuple[frozenset[str], ...]] | None) -> Callable[[str, str], Units | None]:
    """``units(language, field)``: the query's :class:`Units` in a field of a hit of that language (None: it quotes
    no phrase there), read once a language. None for a query of Japanese or Chinese words, or of more transcript
    terms than the counts tell each segment's (``MASK_TERMS``: a pattern's words): both paths to the moments then
    choose by the words alone, as they choose alike."""
    read: dict[str, Units | None] = {}
    quoted = '"' in query or not query.isascii()

    def units(language: str, field_name: str) -> Units | None:
        if not quoted or cjk or len(transcript) > MASK_TERMS or not terms.get(field_name):
            return None
        lang = languages.primary(language)
        if lang not in read:
            read[lang] = Units.of(query, analyzer(lang))
        found = read[lang]
        return found.within(terms[field_name]) if found is not None else None
    return units


SUBSTANTIVE = 12  # words of a person's turn shown as their moment when none holds the query's words


def _speaks(persons: list[str]) -> Callable[[str], bool] | None:
    """Whether a transcript's speaker label is one of ``persons`` (every word of the name in the label: "Ryer" and
    "Mat Ryer" are "Mat Ryer"); None when no person is named."""
    wanted = [set(person_key(p).split()) for p in persons if person_key(p).split()]
    if not wanted:
        return None
    return lambda label: any(words <= set(person_key(label).split()) for words in wanted)


def _speaking_first(episode_id: str, turns: list[int], moments: list[Moment], counts: SegmentCounts | None,
                    ep: Episode, terms: set[str], ana: TextAnalyzer, catalog: Catalog) -> list[Moment]:
    """``moments`` of a hit whose transcript labels the person searched, their turns (``turns``: the places
    of their segments) first: those holding the query's words, chosen as the others are (from the counts, or
    reading the segments, within the same budget); else the first of their first ``MOMENT_READS`` turns of
    ``SUBSTANTIVE`` words or more (the longest of them if none is). Until 6 December 2026 ``guest:"Mat Ryer"``
    showed no moment, and ``person:ryer`` with words the moments of anyone who said them."""
    mine: list[Moment] = []
    if terms and counts is not None:
        held = np.isin(np.asarray(counts.indexes, dtype=np.int64), turns)
        sub = replace(counts, indexes=np.asarray(counts.indexes)[held], distinct=np.asarray(counts.distinct)[held],
                      tokens=np.asarray(counts.tokens)[held], words=np.asarray(counts.words)[held], masks=None)
        places = best_segments(sub)
        rows = catalog.segments_at({episode_id: sorted({*places, *(p - 1 for p in places if p)})}) if places else {}
        mine = _moments([(i, rows.get((episode_id, i)), rows.get((episode_id, i - 1))) for i in places], terms, ana,
                        ep.chapters, strict=True) or []
    elif terms and ep.segments:
        theirs = set(turns)
        only = [seg if i in theirs else Segment(text="") for i, seg in enumerate(ep.segments)]
        mine = _find_moments(only, terms, ana, ep.chapters, budget=MOMENT_READS)[0]
    if not mine:
        first = turns[:MOMENT_READS]
        rows = catalog.segments_at({episode_id: sorted({*first, *(p - 1 for p in first if p)})})
        said = [(i, rows[episode_id, i]) for i in first if (episode_id, i) in rows]
        if not said:
            return moments
        place, seg = next(((i, s) for i, s in said if len(s.text.split()) >= SUBSTANTIVE),
                          max(said, key=lambda p: (len(p[1].text.split()), -p[0])))
        before = rows.get((episode_id, place - 1))
        # (its text marked where it holds a word of the query, else its first words)
        mine = _moments([(place, seg, before)], terms, ana, ep.chapters) or []
        if not mine or not mine[0].text:
            mine = _moments([(place, seg, before)], set(), ana, ep.chapters) or []
    shown = {m.segment for m in mine}
    return [*mine, *(m for m in moments if m.segment not in shown)][:MOMENTS]


def _in_time(deadline: float | None) -> bool:
    return deadline is None or time.monotonic() <= deadline


_LINE_END = re.compile(r"([.!?:;,…])?[ \t]*\n\s*")


def lines_run_on(text: str) -> str:
    """Show notes' lines as one line: a line that ends a sentence is followed by a space, any other by `` · ``.
    A snippet is read as one line (the page collapses its line breaks), and notes are mostly lists: "What is a
    Feature and a Feature Store\nContribute to FEAST" read "What is a Feature and a Feature Store Contribute to
    FEAST"."""
    return _LINE_END.sub(lambda m: f"{m.group(1)} " if m.group(1) else " · ", text.strip())


def _hit(ep: Episode, score: float, show: str, terms: dict[str, set[str]], ana: TextAnalyzer, lang: str,
         moments: list[Moment], units: Units | None = None) -> Hit:
    notes = lines_run_on(ep.description_text or "")
    snippet = ""
    if notes and terms.get("notes"):
        snippet = highlight(notes, terms["notes"], ana, units=units)
    if not snippet and moments and "<mark>" in moments[0].text:
        snippet = moments[0].text
    if not snippet and terms.get("persons"):  # (a person searched, nothing else said: ``guest:"Mat Ryer"`` showed
        snippet = _persons_snippet(ep, notes, terms["persons"], ana)  # the notes' first words, or nothing, until
        # 6 December 2026: the episode's persons with the name marked, else the notes where they name the person)
    if not snippet and moments:  # (a person's turn)
        snippet = moments[0].text
    if not snippet:  # (nothing matched in the notes, no moment, or no terms given: the notes' first words)
        segments = ep.segments
        snippet = html.escape(shorten(notes or (segments[0].text if segments else ""), SNIPPET_CHARS))
    published = parse_datetime(ep.published)
    return Hit(id=ep.id, title=ep.title, show=show, show_id=ep.show_id,
               published=published.strftime("%Y-%m-%dT%H:%M:%SZ") if published else None,
               url=ep.link, audio_url=ep.audio_url, duration=ep.duration, score=round(float(score), 4),
               snippet=snippet, title_html=highlight(ep.title, terms.get("title", set()), ana, whole=True),
               moments=moments, language=lang)


def _persons_snippet(ep: Episode, notes: str, terms: set[str], ana: TextAnalyzer) -> str:
    """The snippet of a hit found by a person's name: "With " and the episode's persons, the name marked, else
    the notes where they hold it, marked; "" when neither holds it (a speaker of the transcript only)."""
    names = [highlight(p.name, terms, ana, whole=True) for p in ep.persons]
    if any("<mark>" in n for n in names):
        return "With " + ", ".join(names)
    return highlight(notes, terms, ana) if notes else ""


def person_label(key: str, names: dict[str, str]) -> str:
    """A person's name as shown: as written in the catalog (``Catalog.person_names``), else the key title-cased."""
    return names.get(key) or key.title()


def facet_rows(counts: dict[str, dict[str, int]], shows: dict[str, str],
               person_names: Callable[[list[str]], dict[str, str]]) -> dict[str, list[dict[str, Any]]]:
    """The answer's facets: per facet, the ``FACET_TOP`` values by count, with their labels (a person's as
    ``person_names`` gives it); each value is one its filter takes (the year facet leaves the undated out)."""
    out: dict[str, list[dict[str, Any]]] = {}
    for facet in FACETS:
        rows = []
        values = counts.get(facet, {}).items()
        if facet == "year":  # (the undated episodes' "unknown": no value the from/to filter takes)
            values = [(key, n) for key, n in values if key != UNDATED]
        top = heapq.nsmallest(FACET_TOP, values, key=lambda kv: (-kv[1], kv[0]))
        names = person_names([key for key, _ in top]) if facet == "person" and top else {}
        for key, count in top:
            if facet == "show":
                label = shows.get(key, key)
            elif facet == "person":
                label = person_label(key, names)
            else:
                label = languages.name(key) if facet == "language" else key
            rows.append({"value": key, "label": label, "count": count})
        out[facet] = rows
    return out


# -- quoted phrases ------------------------------------------------------------------------------------
_WORD = re.compile(r"[^\W_]+")  # a word's place in a text, for a phrase: a stop word and a joined word's parts count


@dataclass(frozen=True)
class Phrase:
    """A quoted phrase as an analyzer reads it: its terms, each term's place in it (in words), and its slop (how
    many moves its words may make, in any order, as Lucene and ``engines.whoosh.query.lucene_slop`` count them)."""

    terms: tuple[str, ...]
    places: tuple[int, ...]
    slop: int = 0


def _word_places(text: str, spans: list[tuple[str, int, int]]) -> list[int]:
    """The place (in words, from 0) of each span's word in ``text``."""
    starts = [m.start() for m in _WORD.finditer(text)]
    # (bisect on the list: np.searchsorted made an array of it for each span, a fifth of a quoted phrase's search)
    return [max(0, bisect.bisect_right(starts, start) - 1) for _, start, _ in spans]


@dataclass
class Units:
    """What a query asks of a text as units: its quoted phrases, each shown where the text holds it, and its words
    outside them (``free``: analysed, of every field). A phrase's words elsewhere are not what it asked for: until
    6 December 2026 moments and snippets were chosen and marked by the words alone, and of 240 searches of a quoted
    phrase of 2-5 words of the site corpus, 117 of 458 hits with a segment holding it showed another first."""

    phrases: tuple[Phrase, ...]
    free: frozenset[str]
    # ``held`` of the texts read (a moment's segment is read to choose it, then to mark it); one search's units
    _held: dict[tuple[str, int], tuple[int, list[tuple[str, int, int]]]] = field(
        default_factory=dict, init=False, repr=False, compare=False)

    @classmethod
    def of(cls, query: str, analyzer: TextAnalyzer) -> Units | None:
        """The units of ``query`` (as typed) read by ``analyzer``; None when it quotes no phrase of two terms."""
        typed, rest = transcript_phrases(query)
        phrases = []
        for words, slop in typed:
            words = re.sub(r"[^\w\s'’]", " ", words)  # (a joined word's parts, as the engines read them)
            spans = list(analyzer.spans(words))
            if len({p for p in _word_places(words, spans)}) < 2:  # (one word: a word)
                continue
            places = _word_places(words, spans)
            phrases.append(Phrase(tuple(t for t, _, _ in spans), tuple(p - places[0] for p in places), slop))
        if not phrases:
            return None
        return cls(tuple(dict.fromkeys(phrases)), frozenset(analyzer.texts(rest)))

    def within(self, terms: set[str]) -> Units | None:
        """These units where the field's ``terms`` hold every word of a phrase (a phrase of another field, or
        excluded, has none there); None when none does."""
        phrases = tuple(p for p in self.phrases if terms.issuperset(p.terms))
        return Units(phrases, self.free) if phrases else None

    def held(self, text: str, analyzer: TextAnalyzer) -> tuple[int, list[tuple[str, int, int]]]:
        """How many of the phrases ``text`` holds, and the spans of their words there."""
        key = (text, id(analyzer))
        known = self._held.get(key)
        if known is None:
            known = self._held[key] = self._read(text, analyzer)
        return known[0], list(known[1])

    def _read(self, text: str, analyzer: TextAnalyzer) -> tuple[int, list[tuple[str, int, int]]]:
        found = analyzer.term_spans(text, {t for p in self.phrases for t in p.terms})
        said = {term for term, _, _ in found}
        whole = [p for p in self.phrases if said.issuperset(p.terms)]  # (a phrase missing a word is not held)
        if not whole:
            return 0, []
        places = _word_places(text, found)
        count, spans = 0, []
        for phrase in whole:
            where = _phrase_spans(phrase, found, places)
            count += bool(where)
            spans += where
        return count, spans

    def spans(self, text: str, terms: set[str], analyzer: TextAnalyzer) -> list[tuple[int, int, str]]:
        """The spans to mark: the phrases' words where ``text`` holds them, and the query's other words; all of
        ``terms`` where it holds no phrase."""
        count, spans = self.held(text, analyzer)
        if not count:
            return _match_spans(text, terms, analyzer)
        free = terms & self.free
        return _widest([*spans, *(analyzer.term_spans(text, free) if free else [])])


def _phrase_spans(phrase: Phrase, found: list[tuple[str, int, int]], places: list[int]) -> list[tuple[str, int, int]]:
    """The spans of ``found`` (their words at ``places``) that make ``phrase``: each of its terms at its place, or
    within ``slop`` moves of it (the smallest stretches of the text holding each of its terms)."""
    events = sorted((place - offset, k, n) for n, (span, place) in enumerate(zip(found, places))
                    for k, (term, offset) in enumerate(zip(phrase.terms, phrase.places)) if span[0] == term)
    need, have, covered, left = len(phrase.terms), Counter(), 0, 0
    marked: set[int] = set()
    for right, (at, k, _) in enumerate(events):
        have[k] += 1
        covered += have[k] == 1
        while covered == need:
            start, first, _ = events[left]
            if at - start <= phrase.slop:
                taken = {}
                for _, k2, n2 in events[left:right + 1]:
                    taken.setdefault(k2, n2)
                if len(set(taken.values())) == need:  # (a word twice in the phrase: two words of the text)
                    marked.update(taken.values())
            have[first] -= 1
            covered -= have[first] == 0
            left += 1
    return [found[n] for n in sorted(marked)]


# -- highlighting ---------------------------------------------------------------------------------------
def highlight(text: str, terms: set[str], analyzer: TextAnalyzer, whole: bool = False,
              units: Units | None = None) -> str:
    """``text`` as escaped HTML with the words that give ``terms`` in ``<mark>``.

    ``whole``: all of it (a title); else the best ``FRAGMENTS`` stretches around the matches, at most
    ``SNIPPET_CHARS`` each, joined by " … " only where text was left out, with "… " before and " …" after when
    the text goes on, cut at spaces and never inside a name ("Henrietta Blake" stays whole), or "" when nothing
    matches. Without terms: the text (shortened). ``units``: the query's quoted phrases (:class:`Units`); where the
    text holds one, its words there are marked (not the same words elsewhere), with the query's other words.
    """
    if not text:
        return ""
    spans = (units.spans(text, terms, analyzer) if units is not None else _match_spans(text, terms, analyzer)) \
        if terms else []
    if whole:
        return _marked(text, 0, len(text), spans)
    if not spans:
        return html.escape(shorten(text, SNIPPET_CHARS)) if not terms else ""
    fragments = _fragments(text, spans)
    out = " … ".join(_marked(text, lo, hi, spans) for lo, hi in fragments)
    # (a stretch that starts or ends inside the text says so: "…it will be pretty" read as the whole of it)
    return ("… " if text[:fragments[0][0]].strip() else "") + out + (" …" if text[fragments[-1][1]:].strip() else "")


def _match_spans(text: str, terms: set[str], analyzer: TextAnalyzer) -> list[tuple[int, int, str]]:
    return _widest(analyzer.term_spans(text, terms))


def _widest(found: Iterable[tuple[str, int, int]]) -> list[tuple[int, int, str]]:
    """(start, end, term) of the spans ``found`` ((term, start, end) each), in text order, overlapping ones one."""
    spans = sorted({(start, end, term) for term, start, end in found})
    out: list[tuple[int, int, str]] = []
    for start, end, term in spans:  # a joined word and its parts share one span: keep the widest
        if out and start < out[-1][1]:
            if end > out[-1][1]:
                out[-1] = (out[-1][0], end, out[-1][2])
            continue
        out.append((start, end, term))
    return out


def _marked(text: str, lo: int, hi: int, spans: list[tuple[int, int, str]]) -> str:
    parts, pos = [], lo
    for start, end, _ in spans:
        if start < lo or end > hi:
            continue
        parts.append(html.escape(text[pos:start]))
        parts.append("<mark>" + html.escape(text[start:end]) + "</mark>")
        pos = end
    parts.append(html.escape(text[pos:hi]))
    return "".join(parts).strip()


def _fragments(text: str, spans: list[tuple[int, int, str]]) -> list[tuple[int, int]]:
    """The best stretches of ``text`` around the matches, in text order."""
    windows: list[list[Any]] = []  # [lo, hi, terms]
    for start, end, term in spans:
        lo, hi = max(0, start - SURROUND), min(len(text), end + SURROUND)
        if windows and lo <= windows[-1][1] and hi - windows[-1][0] <= SNIPPET_CHARS:
            windows[-1][1] = hi
            windows[-1][2].append(term)
        else:
            windows.append([lo, hi, [term]])
    best = sorted(range(len(windows)), key=lambda i: (-len(set(windows[i][2])), -len(windows[i][2]), i))[:FRAGMENTS]
    chosen = [(_snap_start(text, windows[i][0]), _snap_end(text, windows[i][1])) for i in sorted(best)]
    merged: list[tuple[int, int]] = []
    for lo, hi in chosen:  # two stretches with nothing between them are one
        if merged and lo <= merged[-1][1] + 1:
            merged[-1] = (merged[-1][0], max(hi, merged[-1][1]))
        else:
            merged.append((lo, hi))
    return merged


_NAME_WORD = re.compile(r"[A-Z][\w'’.-]*")


def _snap_start(text: str, lo: int) -> int:
    """Move a fragment's start back to the start of its word, and of a name the word is in."""
    while lo > 0 and not text[lo - 1].isspace():
        lo -= 1
    while lo > 0:  # "Henrietta Blake": a capitalised word before a capitalised word is taken too
        before = text[:lo].rstrip()
        m = re.search(r"(\S+)$", before)
        if not m or not _NAME_WORD.fullmatch(m.group(1)) or not _NAME_WORD.match(text[lo:]) or lo - m.start(1) > 40:
            break
        lo = m.start(1)
    return lo


def _snap_end(text: str, hi: int) -> int:
    """Move a fragment's end on to the end of its word, and of a name the word is in."""
    n = len(text)
    while hi < n and not text[hi].isspace():
        hi += 1
    while hi < n:
        m = re.match(r"\s+(\S+)", text[hi:])
        last = re.search(r"(\S+)$", text[:hi])
        if not m or not last or not _NAME_WORD.fullmatch(last.group(1).rstrip(",.;:!?")) \
                or last.group(1)[-1] in ",.;:!?" or not _NAME_WORD.fullmatch(m.group(1).rstrip(",.;:!?")) \
                or m.end() > 40:
            break
        hi += m.end()
    return hi


def shorten(text: str, n: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 1].rsplit(" ", 1)[0] + "…"


# -- moments ------------------------------------------------------------------------------------------
_SEP = "\x00"  # between segments in a transcript's joined text (a character no transcript holds)


def _term_bounds(texts: list[str], terms: set[str], english: bool) -> list[tuple[int, int]]:
    """Cheap upper bounds, before analysis, on how many of the (stemmed) terms each text holds and on how many
    of its tokens are one of them; all texts of a transcript at once.

    English stems differ from their words only in the last letter or so ("studi", "happi", "hope"), so each
    term without its last letter must appear in the text (apostrophes dropped, as the analyzer does), once
    for each word that gives it: the texts are joined, lower-cased and split at each such key in one call
    each, and the pieces' lengths say where every occurrence is. A text with other than ASCII letters
    (punctuation such as dashes and curly quotes aside) may hold them all: accent folding could match it (and
    then a word gives at most two tokens per character, joined and in parts, plus one). Other languages get
    that loose bound everywhere.
    """
    def loose(text: str) -> tuple[int, int]:
        return len(terms), 2 * len(text) + 1

    joined = _SEP.join(texts) if english else ""
    if not english or not texts or joined.count(_SEP) != len(texts) - 1:  # a text holding the separator
        return [loose(t) for t in texts]
    joined = joined.lower().replace("'", "").replace("\u2019", "")
    lowered = joined.split(_SEP)
    ends = np.cumsum(np.fromiter(map(len, lowered), dtype=np.int64, count=len(lowered)) + 1)  # past each SEP
    held = np.zeros(len(texts), dtype=np.int64)
    repeats = np.zeros(len(texts), dtype=np.int64)
    keys = Counter(_keys(t) for t in terms if t)  # two terms may share their keys: they count twice
    for either, times in keys.items():
        per_text = np.zeros(len(texts), dtype=np.int64)
        for key in either:  # a text that gives the term holds one of them
            pieces = joined.split(key)
            if len(pieces) == 1:
                continue
            lengths = np.fromiter(map(len, pieces), dtype=np.int64, count=len(pieces))
            at = np.cumsum(lengths[:-1] + len(key)) - len(key)  # where each occurrence starts
            per_text += np.bincount(np.searchsorted(ends, at, side="right"), minlength=len(texts))
        held += (per_text > 0) * times
        repeats += per_text * times
    out = list(zip(held.tolist(), repeats.tolist()))
    for i, low in enumerate(lowered):
        if not low.isascii() and not _only_punctuation(_NON_ASCII.findall(low)):
            out[i] = loose(texts[i])
    return out


def _keys(term: str) -> tuple[str, ...]:
    """What a text that gives ``term`` holds, lower-cased, one of them: the term without its last letter, or for
    a spelled-out closing symbol the word with its symbol too ("csharp" is said "C#": "c#" or "cshar"; the word
    alone, "c", is in nearly every segment, and on OpenSearch a feed of ``c#`` analysed all 8,000 segments of
    its 50 hits: 1.6 s). OpenSearch writes an opening dot "dot." (".NET" gives "dot.net": ".ne") and an ampersand
    between words a dot ("AT&T" gives "at.t": "at&" or "at.")."""
    plain = term[: max(2, len(term) - 1)]
    dot = languages.OPENING_DOT_SPELLED
    if term.startswith(dot) and len(term) > len(dot) + 1:
        rest = term[len(dot):]
        return "." + rest[: max(1, len(rest) - 1)], plain
    for symbol, spelled in languages.SYMBOLS_SPELLED.items():
        if len(term) > len(spelled) and term.endswith(spelled):
            return term[: -len(spelled)] + symbol, plain
    return (plain, plain.replace(".", "&")) if "." in plain else (plain,)


_NON_ASCII = re.compile(r"[^\x00-\x7f]")


def _only_punctuation(chars: list[str]) -> bool:
    """Whether these characters are all punctuation or spaces (dashes, curly quotes, ellipses): they fold to no
    letter, so a text whose only non-ASCII characters they are keeps the close bound (transcripts are full of
    them; the loose bound made every such segment be analysed)."""
    return all(unicodedata.category(c)[0] in "PZ" for c in set(chars))


def find_moments(segments: list[Segment], terms: set[str], analyzer: TextAnalyzer,
                 chapters: list[Chapter] | None = None, top: int = MOMENTS, english: bool = True,
                 budget: int | None = None, cjk: dict[str, tuple[frozenset[str], ...]] | None = None,
                 units: Units | None = None) -> list[Moment]:
    """The transcript segments that match the query's terms best, with their times and speakers.

    A segment scores 10 per distinct query term it holds, plus log1p(its tokens that are query terms) minus
    log1p(its words) / 2: distinct terms count most, repeats a little, long segments a little less. Segments
    are analysed best bound first (the bound from substring tests of the terms, which also bound the repeats),
    and the search stops once the top ``top`` cannot change: a few segments of a long transcript, not all
    that hold a term. ``english``: the analyzer is English's (a closer bound applies). ``budget``: at most this
    many segments are analysed (the best bounds first); the moments are then the best of those. ``cjk``: the
    Japanese or Chinese words typed (``languages.cjk_words``): their bigrams count where one of them is whole.
    ``units``: the query's quoted phrases (:class:`Units`): every segment within the budget is analysed, and the
    moments are those :func:`phrase_choice` takes from them, as from an engine's counts (:func:`phrase_candidates`).
    """
    return _find_moments(segments, terms, analyzer, chapters, top, english, budget, cjk, units)[0]


def _find_moments(segments: list[Segment], terms: set[str], analyzer: TextAnalyzer,
                  chapters: list[Chapter] | None = None, top: int = MOMENTS, english: bool = True,
                  budget: int | None = None, cjk: dict[str, tuple[frozenset[str], ...]] | None = None,
                  units: Units | None = None) -> tuple[list[Moment], int]:
    """:func:`find_moments`, and how many segments it analysed."""
    if not segments or not terms:
        return [], 0
    order = []
    for i, (n, repeats) in enumerate(_term_bounds([seg.text for seg in segments], terms, english)):
        if n:
            seg = segments[i]
            length = math.log1p(len(seg.text.split())) * 0.5
            order.append((n * 10 + math.log1p(repeats) - length, i, length))
    order.sort(key=lambda p: (-p[0], p[1]))
    scored: list[tuple[float, int]] = []
    held: dict[int, set[str]] = {}  # (with units: the terms each segment holds)
    read = 0
    for bound, i, length in order[:budget]:
        if units is None and len(scored) >= top and scored[top - 1][0] > bound:
            break
        read += 1
        matched = [t for t in analyzer.texts(segments[i].text) if t in terms]
        if cjk:
            whole = languages.whole_cjk_words(set(matched), cjk)
            matched = [t for t in matched if t in whole]
        if not matched:
            continue
        scored.append((_moment_score(len(set(matched)), len(matched), length), i))
        if units is None:
            scored.sort(key=lambda p: (-p[0], p[1]))
            del scored[top:]
        else:
            held[i] = set(matched)
    scored.sort(key=lambda p: (-p[0], p[1]))
    places = [i for _, i in scored[:top]]
    if units is not None:  # (the choice :func:`phrase_candidates` and :func:`phrase_choice` make from counts)
        cohold = {i: sum(held[i].issuperset(p.terms) for p in units.phrases) for _, i in scored}
        looked = [i for _, i in sorted(((-cohold[i], k), i) for k, (_, i) in enumerate(scored) if cohold[i])]
        rest = [i for _, i in scored if held[i] & units.free][:2 * top]
        places = phrase_choice(looked[:MOMENT_READS], lambda i: segments[i].text, rest, units, analyzer,
                               top) or places
    return _moments([(i, segments[i], segments[i - 1] if i else None) for i in places], terms, analyzer,
                    chapters, units=units) or [], read


def _moment_score(distinct: int, tokens: int, length: float) -> float:
    """A segment's score as a moment: 10 per distinct query term, log1p(tokens that are terms), minus ``length``
    (log1p(its words) / 2)."""
    return distinct * 10 + math.log1p(tokens) - length


def best_segments(counts: SegmentCounts, top: int = MOMENTS) -> list[int]:
    """The places of the ``top`` segments to show as moments, best first, from an engine's counts (the same
    choice :func:`find_moments` makes by reading the segments). A segment's score depends on its three counts
    alone, so each kind of segment is scored once (as :func:`find_moments` scores it) and the segments are ordered
    in arrays: until 6 December 2026 each was scored and sorted in Python, 0.2 s of a search for the 114,000
    segments of a 300,000-cue transcript that held the query's words."""
    if not len(counts.indexes):
        return []
    indexes = np.asarray(counts.indexes, dtype=np.int64)
    order = np.lexsort((indexes, -_segment_scores(counts)))[:top]  # best first, then the earliest
    return indexes[order].tolist()


def _segment_scores(counts: SegmentCounts) -> np.ndarray:
    """Each counted segment's score as a moment (:func:`_moment_score`), each kind of segment scored once."""
    distinct, tokens, words = (np.asarray(a, dtype=np.int64) for a in (counts.distinct, counts.tokens, counts.words))
    wide_k, wide_w = int(tokens.max()) + 1, int(words.max()) + 1
    if (int(distinct.max()) + 1) * wide_k * wide_w < 1 << 62:  # each kind one number
        keys, kind = np.unique((distinct * wide_k + tokens) * wide_w + words, return_inverse=True)
        kinds = [(key // wide_w // wide_k, key // wide_w % wide_k, key % wide_w) for key in keys.tolist()]
    else:
        found, kind = np.unique(np.stack([distinct, tokens, words]), axis=1, return_inverse=True)
        kinds = found.T.tolist()
    scores = np.array([_moment_score(n, k, math.log1p(w) * 0.5) for n, k, w in kinds], dtype=np.float64)
    return scores[np.ravel(kind)]


def phrase_candidates(counts: SegmentCounts, units: Units, reads: int = MOMENT_READS, top: int = MOMENTS
                      ) -> tuple[list[int], list[int]] | None:
    """Where to look for a quoted phrase's moments, from an engine's counts: the ``reads`` segments holding every
    word of the most phrases, best scored first, then the earliest; and the ``2 * top`` best segments holding a
    word of the query outside its phrases. None when the counts cannot tell (no masks)."""
    if counts.masks is None or not len(counts.indexes):
        return None
    bits = {term: 1 << k for k, term in enumerate(counts.terms)}
    masks = np.asarray(counts.masks, dtype=np.int64)
    cohold = np.zeros(len(masks), dtype=np.int64)
    for phrase in units.phrases:
        if all(t in bits for t in phrase.terms):
            need = sum(bits[t] for t in set(phrase.terms))
            cohold += (masks & need) == need
    free = sum(bits[t] for t in units.free if t in bits)
    indexes, scores = np.asarray(counts.indexes, dtype=np.int64), _segment_scores(counts)
    some = np.flatnonzero(cohold)
    looked = some[np.lexsort((indexes[some], -scores[some], -cohold[some]))[:reads]]
    others = np.flatnonzero(masks & free) if free else np.zeros(0, dtype=np.int64)
    rest = others[np.lexsort((indexes[others], -scores[others]))[:2 * top]]
    return indexes[looked].tolist(), indexes[rest].tolist()


def phrase_choice(looked: list[int], text_of: Callable[[int], str | None], rest: list[int], units: Units,
                  analyzer: TextAnalyzer, top: int = MOMENTS) -> list[int] | None:
    """The moments of a query quoting a phrase: of the segments ``looked`` at (best first), those whose text holds
    the most of its phrases, in that order; then, up to ``top``, the best of ``rest`` (segments holding a word
    asked apart). None when none of them holds a phrase (its words are apart everywhere, or it spans two segments):
    the moments are then chosen by the words."""
    holding = []
    most = len(units.phrases)
    for rank, place in enumerate(looked):
        text = text_of(place)
        count = units.held(text, analyzer)[0] if text else 0
        if count:
            holding.append((-count, rank, place))
        if sum(c == -most for c, _, _ in holding) >= top:  # (none after them comes first: the rest is not read, a
            break  # third of a quoted phrase's search when each of 16 segments of each hit was)
    if not holding:
        return None
    chosen = [place for _, _, place in sorted(holding)[:top]]
    chosen += [place for place in rest if place not in chosen][:top - len(chosen)]
    return chosen


def _moments(chosen: list[tuple[int, Segment | None, Segment | None]], terms: set[str], analyzer: TextAnalyzer,
             chapters: list[Chapter] | None, strict: bool = False, units: Units | None = None) -> list[Moment] | None:
    """The chosen segments, each as (its place, it, the segment before it), as moments, their matches marked
    (a quoted phrase of ``units`` where they hold it). ``strict`` (segments chosen from the index's counts): None
    when one of them is missing or holds none of the terms (the catalog changed since the index was written)."""
    moments = []
    for place, seg, before in chosen:
        text = highlight(seg.text, terms, analyzer, units=units) if seg is not None else ""
        if seg is None or (strict and "<mark>" not in text):
            return None
        chapter = ""
        for ch in chapters or []:
            if seg.start is not None and ch.start <= seg.start:
                chapter = ch.title
        moments.append(Moment(start=seg.start, speaker=seg.speaker, text=text, chapter=chapter, segment=place,
                              anchor=segment_anchor(place, seg.start, before.start if before is not None else None)))
    return moments
