"""``/search.rss``: a search as an RSS 2.0 feed, newest first, each item at its best moment.

It takes every parameter the search takes (``q``, ``show``, ``person``, ``from``, ``to``, ``duration_min``,
``duration_max``, ``lang``/``language``, ``page``, ``per_page``); ``sort`` is always newest first. The
matching follows :func:`podsearch.follow.standing_search`. Conditional GET as the API has it (``cacheable``).
"""

from __future__ import annotations

import logging
import mimetypes
import xml.etree.ElementTree as ET
from datetime import UTC, datetime
from email.utils import format_datetime, formatdate
from html import escape

from flask import Blueprint, Response, request, url_for

from ..answers import Hit, SearchResult, shorten
from ..follow import best_moment, feed_query, moment_path, plain, standing_search, xml_safe
from ..requests import SearchRequest
from .admission import run_search
from .caching import cacheable
from .context import FEED_PATH, asked_search, library
from .filters import clock
from .links import absolute_url, holds_links, site_root, this_url

log = logging.getLogger(__name__)

bp = Blueprint("rss", __name__)

PODCAST_NS = "https://podcastindex.org/namespace/1.0"
ATOM_NS = "http://www.w3.org/2005/Atom"
MIMETYPE = "application/rss+xml"
# The query-string names of a search that say what is asked (not which page of it, nor its order).
FEED_ARGS = ("q", "show", "person", "from", "to", "duration_min", "duration_max", "language", "lang")


@bp.get(FEED_PATH)
@holds_links
@cacheable
def search_rss() -> Response:
    req = asked_search()
    lib = library()
    result = run_search(req, lambda r: standing_search(lib, r))
    ends = {h.id: lib.catalog.segment_end(h.id, m.start) for h in result.hits
            if (m := best_moment(h)) is not None and m.start is not None}
    body = render_feed(result, req, base=site_root(), self_url=this_url(), ends=ends)
    return Response(body, mimetype=MIMETYPE)


@bp.app_template_global()
def feed_url() -> str:
    """The feed of the search on the current page (for the results page and its head)."""
    args = {k: request.args.getlist(k) for k in FEED_ARGS if request.args.get(k, "").strip()}
    return url_for("rss.search_rss", **args)


def render_feed(result: SearchResult, req: SearchRequest, *, base: str, self_url: str,
                ends: dict[str, float | None]) -> bytes:
    """The RSS document. ``base`` is the site's address (links are absolute); ``ends`` is when each hit's best
    moment ends, where known (for ``podcast:soundbite``, which needs a duration)."""
    ET.register_namespace("podcast", PODCAST_NS)
    ET.register_namespace("atom", ATOM_NS)
    rss = ET.Element("rss", {"version": "2.0"})
    channel = ET.SubElement(rss, "channel")
    what = f"“{req.q.strip()}”" if req.q.strip() else "every episode"
    _text(channel, "title", f"podsearch: {what}")
    query = feed_query(req)
    _text(channel, "link", f"{absolute_url('views.search')}?{query}{'&' if query else ''}sort=date")
    _text(channel, "description", f"Episodes matching {what}, newest first, each at the moment that matches best.")
    ET.SubElement(channel, f"{{{ATOM_NS}}}link", {"href": self_url, "rel": "self", "type": MIMETYPE})
    _text(channel, "generator", "podsearch")
    _text(channel, "lastBuildDate", formatdate(usegmt=True))
    _text(channel, "docs", "https://www.rssboard.org/rss-specification")
    for hit in result.hits:
        _item(channel, hit, base, ends.get(hit.id))
    return ET.tostring(rss, encoding="utf-8", xml_declaration=True)


def _item(channel: ET.Element, hit: Hit, base: str, end: float | None) -> None:
    item = ET.SubElement(channel, "item")
    link = f"{base}{moment_path(hit)}"
    _text(item, "title", hit.title)
    _text(item, "link", link)
    _text(item, "guid", hit.id).set("isPermaLink", "false")
    if hit.published:
        when = datetime.strptime(hit.published, "%Y-%m-%dT%H:%M:%SZ")
        _text(item, "pubDate", format_datetime(when.replace(tzinfo=UTC), usegmt=True))
    _text(item, "category", hit.show)
    moment = best_moment(hit)
    if moment is not None:
        at = f'<a href="{escape(link)}">{clock(moment.start)}</a> ' if moment.start is not None else ""
        who = f"{escape(moment.speaker, quote=False)}: " if moment.speaker else ""
        _text(item, "description", f"<p>{at}{who}{_bold(moment.text)}</p>")
        if moment.start is not None and end is not None and end > moment.start:
            bite = _text(item, f"{{{PODCAST_NS}}}soundbite", shorten(plain(moment.text), 128))
            bite.set("startTime", f"{moment.start:g}")
            bite.set("duration", f"{end - moment.start:g}")
    elif hit.snippet:
        _text(item, "description", f"<p>{_bold(hit.snippet)}</p>")
    if hit.audio_url:
        kind = mimetypes.guess_type(hit.audio_url)[0] or "audio/mpeg"
        ET.SubElement(item, "enclosure", {"url": hit.audio_url, "length": "0", "type": kind})


def _bold(highlighted: str) -> str:
    """The search's highlighted HTML (escaped text, matches in <mark>) with the matches in <b>: feed readers
    sanitise what they show, and several (feedparser among them) drop <mark>."""
    return highlighted.replace("<mark>", "<b>").replace("</mark>", "</b>")


def _text(parent: ET.Element, tag: str, text: str) -> ET.Element:
    element = ET.SubElement(parent, tag)
    element.text = xml_safe(text)
    return element
