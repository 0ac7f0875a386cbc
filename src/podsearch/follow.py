"""What a feed of a search (``/search.rss``) and a watch share: a standing search, newest first, and its links.

A standing search is a search someone follows rather than reads once. It differs from the search box in two
ways: its matches are listed newest first (never by relevance), and it never falls back to "any of the words".
The search box does that when fewer than three episodes have every word, so that a person is not left with an
empty page; a feed or a watch would then list (or announce) episodes that lack a word of the query, and the
fallback would switch off by itself as soon as the third match arrived. When the search answers with the
fallback, the standing search asks again with the words joined by ``AND``, which the search takes as written.
For the same reason its words are never replaced by their spelling suggestion (``correct=False``): the search box
answers a search for "voclano" with the episodes of "volcano", but a feed of "voclano" would then change subject
the day an episode said "voclano".
"""

from __future__ import annotations

import html
import logging
import re
from dataclasses import replace
from urllib.parse import quote, urlencode

from .answers import Hit, Moment, SearchResult, transcript_part
from .engines.querytext import as_typed
from .requests import SearchRequest
from .service import Library

log = logging.getLogger(__name__)

# A term of a query: a quoted phrase (with what is glued to it, as in title:"a b"), or a run of non-blanks.
_TERM = re.compile(r'[^\s"]*"[^"]*"[^\s"]*|\S+')
_MARK = re.compile(r"</?mark>")
# Characters XML 1.0 does not allow, which a transcript may still hold.
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def every_word(q: str) -> str:
    """The query with its terms joined by AND: ``kubernetes security`` -> ``kubernetes AND security``. A query in
    capitals is read in lower case first, as the search reads it (``as_typed``): ``WAGGLE AND DANCE`` has no
    lower-case letter either, so its AND was read as a word and the feed fell back to any word again (until 5
    December 2026: ``ECASH MINTS`` 47 items, ``ecash mints`` 5)."""
    return " AND ".join(_TERM.findall(as_typed(q)))


def standing_search(lib: Library, req: SearchRequest) -> SearchResult:
    """``req`` newest first, without the search's any-word fallback (see the module doc); its searches share one
    deadline (a query of patterns spent it twice: 2.2 s for a feed)."""
    req = replace(req, sort="date", correct=False)
    deadline = lib.deadline()
    result = lib.search(req, deadline)
    if result.relaxed:
        strict = lib.search(replace(req, q=every_word(req.q)), deadline)
        log.debug("standing search %r: the search fell back to any word; %d with every word", req.q, strict.total)
        result = replace(strict, query=req.q, suggestion=result.suggestion)
    return result


def best_moment(hit: Hit) -> Moment | None:
    """The moment that matches best (the search lists them best first), if the transcript matched."""
    return hit.moments[0] if hit.moments else None


def moment_seconds(hit: Hit) -> int:
    """Where to start listening: the best moment's second, or 0 (the match is in the title or notes, or the
    transcript has no times)."""
    moment = best_moment(hit)
    return int(moment.start) if moment is not None and moment.start is not None else 0


def moment_path(hit: Hit) -> str:
    """The site's path of a hit at its best moment: ``/episodes/<id>?t=754`` (the page opens the part playing
    then), for a transcript without times the paragraph itself as the search page links it (``#p92``,
    ``?part=2#p2400``: until 6 December 2026 ``?t=0``, the top of the page, for 779 of the site corpus's 1,869
    episodes), ``?t=0`` when the words are not in the transcript."""
    moment = best_moment(hit)
    if moment is None or moment.start is not None or not moment.anchor:
        return episode_path(hit.id, moment_seconds(hit))
    part = transcript_part(moment.segment)
    return f"{episode_path(hit.id)}{f'?part={part}' if part > 1 else ''}#{moment.anchor}"


def episode_path(episode_id: str, t: int | None = None) -> str:
    """The site's path of an episode page, at second ``t``: ``/episodes/<id>?t=754``, the id percent-encoded as one
    path segment (as docs/api.md asks: ids hold '/', ':' and '?', and a proxy may merge the '//' of a URL id)."""
    path = "/episodes/" + quote(episode_id, safe="")
    return path if t is None else f"{path}?t={int(t)}"


def feed_query(req: SearchRequest) -> str:
    """The query string of ``/search.rss`` (and of the search page) for a request's words and filters."""
    args: list[tuple[str, str]] = [("q", req.q)] if req.q else []
    args += [("show", s) for s in req.shows]
    for name, value in (("person", req.person), ("from", req.published_from), ("to", req.published_to),
                        ("lang", req.language)):
        if value:
            args.append((name, value))
    for name, seconds in (("duration_min", req.duration_min), ("duration_max", req.duration_max)):
        if seconds is not None:
            args.append((name, str(seconds // 60)))  # the page and the API take minutes
    return urlencode(args)


def plain(text_html: str) -> str:
    """Highlighted HTML (escaped text with <mark>) as plain text."""
    return html.unescape(_MARK.sub("", text_html))


def xml_safe(text: str) -> str:
    """``text`` without the characters XML 1.0 cannot carry (a feed with one of them does not parse)."""
    return _NOT_XML.sub("", text)
