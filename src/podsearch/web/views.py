"""HTML pages. Each view calls the library once or twice and renders a template."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any, Protocol

from flask import Blueprint, render_template, request, url_for

from ..answers import PART_SEGMENTS, SearchResult, segment_anchor, transcript_part, transcript_parts
from ..episodes import Segment
from ..errors import IndexMissing, NotFound, PodsearchError, QueryError
from ..requests import MAX_DEPTH, MAX_QUERY_CHARS, SearchRequest, SeekParams, ShowPageParams, parse
from .admission import run_search
from .context import asked_search, library

bp = Blueprint("views", __name__)
log = logging.getLogger(__name__)

# The query-string names of the search page that describe what is asked (``page`` is not among them:
# changing anything else starts again at page 1).
SEARCH_ARGS = ("q", "show", "person", "from", "to", "duration_min", "duration_max", "language", "lang", "sort", "per_page",
               "correct")
SORT_LABELS = {"relevance": "Best match", "date": "Newest first", "oldest": "Oldest first"}
NEARBY_K = 8


def search_url(**changes: Any) -> str:
    """The search page for the current request with some parameters changed (None removes one)."""
    args: dict[str, Any] = {k: request.args.getlist(k) for k in SEARCH_ARGS if request.args.get(k, "").strip()}
    for key, value in changes.items():
        key = {"from_": "from"}.get(key, key)
        if value is None or value == "":
            args.pop(key, None)
        else:
            args[key] = value
    return url_for("views.search", **args)


def active_filters(req: SearchRequest, shows: dict[str, str], person: str = "") -> list[tuple[str, str]]:
    """(label, URL without that filter) for each filter in use (``person``: the person's name as shown)."""
    out = [(f"Show: {shows.get(s, s)}", search_url(show=[x for x in req.shows if x != s] or None)) for s in req.shows]
    if req.person:
        out.append((f"Person: {person or req.person}", search_url(person=None)))
    if req.published_from or req.published_to:
        span = req.published_from if req.published_from == req.published_to else \
            f"{req.published_from or '…'} – {req.published_to or '…'}"
        out.append((f"Published: {span}", search_url(from_=None, to=None)))
    if req.duration_min is not None or req.duration_max is not None:
        out.append(("Duration", search_url(duration_min=None, duration_max=None)))
    if req.language:
        out.append((f"Language: {req.language}", search_url(language=None)))
    return out


def facet_links(result: SearchResult, req: SearchRequest) -> list[tuple[str, list[dict[str, Any]]]]:
    """The facets as (heading, rows) with each row's link and whether it is the filter in use: the ten most counted
    shows and people, every year the answer counts (answers.FACET_TOP at most), newest first (until 5 December 2026
    the years were ordered and cut as the others: 2020, 2019, 2021, ..., and 2025 and 2026 left out)."""
    titles = {"show": "Show", "year": "Year", "person": "People"}
    out = []
    for name, title in titles.items():
        values = result.facets.get(name, [])
        values = sorted(values, key=lambda r: str(r["value"]), reverse=True) if name == "year" else values[:10]
        rows = []
        for row in values:
            value = row["value"]
            if name == "show":
                current = value in req.shows
                href = search_url(show=None if current else value)
            elif name == "year":
                current = req.published_from == value and req.published_to == value
                href = search_url(from_=None, to=None) if current else search_url(from_=value, to=value)
            else:
                current = req.person.lower() == value.lower()
                href = search_url(person=None if current else value)
            rows.append({"label": row["label"], "count": row["count"], "href": href, "current": current})
        if rows:
            out.append((title, rows))
    return out


def page_numbers(page: int, pages: int, per_page: int) -> list[int | None]:
    """Page numbers to link around the current one; None marks a gap."""
    last = min(pages, max(1, MAX_DEPTH // per_page))
    wanted = sorted({1, last, *range(max(1, page - 2), min(last, page + 2) + 1)})
    out: list[int | None] = []
    for n in wanted:
        if out and n - (out[-1] or 0) > 1:
            out.append(None)
        out.append(n)
    return out


@bp.get("/")
def home():
    lib = library()
    try:
        shows, recent = lib.shows(), lib.recent(8)
    except IndexMissing:
        shows, recent = [], []
    names = {s.id: s.title for s in shows}
    return render_template("home.html", shows=shows, recent=recent, names=names)


@bp.get("/search")
def search():
    try:
        req = asked_search()
    except QueryError as exc:
        return _refused(exc, query=False)
    lib = library()
    if not req.q.strip() and not req.shows and not req.person and not req.published_from and not req.published_to:
        shows = lib.shows()
        return render_template("search.html", req=req, result=None, all_shows=shows,
                               **_search_context(req, {s.id: s.title for s in shows}))
    try:
        result = run_search(req)
    except QueryError as exc:
        return _refused(exc, query=True)
    shows = {s.id: s.title for s in lib.shows()}
    return render_template("search.html", req=req, result=result, facets=facet_links(result, req),
                           pages=page_numbers(result.page, result.pages, result.per_page), **_search_context(req, shows))


def _refused(exc: QueryError, query: bool) -> tuple[str, int]:
    """The search page for a request that could not be run (400): the reason, the syntax help when the query
    itself was the problem (the box holds it to change; a link back to it would be the same refusal), else the way
    back (the same words, without the other parameters: a page past the last, a filter out of bounds)."""
    req = SearchRequest(q=request.args.get("q", "")[:MAX_QUERY_CHARS])
    return render_template("search.html", req=req, result=None, error=str(exc), query_error=query,
                           back=url_for("views.search", q=req.q) if req.q else url_for("views.search"),
                           **_search_context(req, {})), 400


def _search_context(req: SearchRequest, shows: dict[str, str]) -> dict[str, Any]:
    person = library().person_name(req.person) if req.person else ""
    return {"filters": active_filters(req, shows, person), "search_url": search_url, "sorts": SORT_LABELS,
            "shows": shows}


class Times(Protocol):
    """The times of one episode's transcript as its page reads them: what one part needs, not every segment's."""

    def count(self) -> int: ...

    def playing(self, t: float) -> int: ...

    def starts(self, first: int, stop: int) -> list[float | None]: ...

    def seconds_before(self, first: int, seconds: set[int]) -> set[int]: ...


class LibraryTimes:
    """:class:`Times` read from the catalog a part at a time (a few SQLite reads; until 6 December 2026 every
    segment's start was read into a list for any part: 0.11 s for a transcript of 300,000 cues)."""

    def __init__(self, lib: Any, episode_id: str) -> None:
        self.lib, self.id = lib, episode_id
        self._count: int | None = None

    def count(self) -> int:
        if self._count is None:
            self._count = self.lib.segment_count(self.id)
        return self._count

    def playing(self, t: float) -> int:
        return self.lib.segment_playing(self.id, t)

    def starts(self, first: int, stop: int) -> list[float | None]:
        return self.lib.segment_starts(self.id, first, stop)

    def seconds_before(self, first: int, seconds: set[int]) -> set[int]:
        return self.lib.segment_seconds_before(self.id, first, seconds)


def transcript_rows(times: Times, t: float | None, part: int | None,
                    read: Callable[[int, int], list[Segment]]) -> tuple[list[dict[str, Any]], int, int, int]:
    """The rows of one part of a transcript (``answers.PART_SEGMENTS`` paragraphs), from its ``times`` and
    ``read(first, stop)``, the segments of the part: each with a stable anchor (``answers.segment_anchor``: ``t754``,
    its start second, as the moments of a search link it); then the index among them of the one playing at ``t``
    (-1: none there), the part and the number of parts. The one playing is the first of those that start in the
    latest second at or before ``t``, each start counted in whole seconds as the links' ``t`` is (the paragraph at
    2082.4 is the one ``?t=2082`` names; until 5 December 2026 the one before it was marked). Without ``part`` the
    part is the one holding that paragraph, else the first. Until 5 December 2026 the page held every paragraph:
    300,000 cues made a 66 MB page."""
    total = times.count()
    current = times.playing(t) if t is not None and total else -1
    parts = transcript_parts(total)
    if part is None:
        part = transcript_part(current) if current >= 0 else 1
    elif part > parts:
        raise NotFound(f"This episode's transcript has {parts} part{'s' if parts > 1 else ''}, not {part}.")
    first, stop = (part - 1) * PART_SEGMENTS, min(total, part * PART_SEGMENTS)
    segments = read(first, stop) if stop > first else []
    starts = times.starts(max(0, first - 1), stop)  # (and the one before the part: an anchor says if it shares its
    before_part, starts = (starts[0], starts[1:]) if first and starts else (None, starts)  # second)
    # a paragraph's anchor is its second (``t754``); one repeated (a transcript whose times go back) is made unique by
    # its place: a second said before the part counts too
    said = times.seconds_before(first, {int(s) for s in starts if s is not None})
    rows: list[dict[str, Any]] = []
    seen: set[str] = {f"t{s}" for s in said}
    for k, start in enumerate(starts[:len(segments)]):
        i = first + k
        before = starts[k - 1] if k else before_part
        anchor = segment_anchor(i, start, before)
        if anchor in seen:
            anchor = f"{anchor}-{i + 1}"
        seen.add(anchor)
        # its time is shown where it changes: a paragraph starting in the second of the one before (transcripts with
        # section times only: "0:00" on eleven paragraphs in a row until 5 December 2026) shows none of its own
        rows.append({"seg": segments[k], "anchor": anchor,
                     "timed": start is not None and (before is None or int(before) != int(start))})
    return rows, current - first if first <= current < first + len(rows) else -1, part, parts


@bp.get("/episodes/<id:episode_id>")
def episode(episode_id: str):
    lib = library()
    p = parse(SeekParams, request.args)
    t = p.t
    ep = lib.episode(episode_id, with_segments=False)  # (its segments a part at a time, below)
    times = LibraryTimes(lib, episode_id)
    rows, current, part, parts = transcript_rows(times, t, p.part,
                                                 lambda first, stop: lib.segments(episode_id, first, stop))
    show = lib.show(ep.show_id)
    gone, since = lib.episode_gone(episode_id)
    try:
        nearby = lib.similar(episode_id, NEARBY_K).similar
    except PodsearchError as exc:
        # (the reason names the data folder and an admin's command: for the log and the API, not for listeners,
        # who read "No nearby episodes yet."; until 5 December 2026 the page showed it)
        log.info("no nearby episodes for %s: %s", episode_id, exc)
        nearby = []
    first_start = rows[0]["seg"].start if rows and part == 1 else (times.starts(0, 1) or [None])[0]
    return render_template("episode.html", ep=ep, show=show, nearby=nearby, t=t, rows=rows, current=current,
                           part=part, parts=parts, first=(part - 1) * PART_SEGMENTS, total=times.count(),
                           timed=first_start is not None,
                           part_arg=part if parts > 1 else None, gone=gone, gone_since=since)


@bp.get("/shows/<show_id>")
def show(show_id: str):
    lib = library()
    p = parse(ShowPageParams, request.args)
    page, per_page = p.page, p.per_page
    show = lib.show(show_id)
    episodes = lib.episodes_of(show_id, limit=page * per_page + 1)
    chunk = episodes[(page - 1) * per_page:page * per_page]
    # (a page size asked for is kept by the page links: "Older" dropped it, and page 2 of 5 was page 2 of 50)
    kept = per_page if "per_page" in request.args else None
    return render_template("show.html", show=show, episodes=chunk, page=page, per_page=kept,
                           has_more=len(episodes) > page * per_page)
