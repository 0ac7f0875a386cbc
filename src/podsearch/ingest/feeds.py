"""Feed parsing: feedparser for the RSS/Atom fields, the raw XML for the Podcasting 2.0 tags.

feedparser keeps only the last of repeated tags of an unknown namespace (several ``podcast:transcript``
per item are common), so ``podcast:*`` elements are read from the XML itself.
"""

from __future__ import annotations

import hashlib
import html
import logging
import re
import unicodedata
import xml.etree.ElementTree as ET
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urljoin, urlsplit

import feedparser
from defusedxml import ElementTree as SafeET
from defusedxml.common import DefusedXmlException

from ..episodes import Chapter, Episode, Person, Show, TranscriptLink
from ..errors import FeedError
from ..languages import choose, lower, majority, narrow, normalize, strip_accents
from .text import collapse, html_to_text, parse_duration, sanitize_html, struct_to_iso, to_int
from .transcripts import parse_time, pick_order

log = logging.getLogger(__name__)

PODCAST_NS = "https://podcastindex.org/namespace/1.0"
# Publishers also use these spellings of the namespace URI.
PODCAST_NS_ALIASES = {PODCAST_NS, "http://podcastindex.org/namespace/1.0",
                      "https://github.com/Podcastindex-org/podcast-namespace/blob/main/docs/1.0.md"}
PSC_NS = "http://podlove.org/simple-chapters"
ITUNES_NS = "http://www.itunes.com/dtds/podcast-1.0.dtd"


@dataclass
class RawItem:
    """The Podcasting 2.0 tags of one item, read from the XML."""

    guid: str = ""
    persons: list[Person] = field(default_factory=list)
    transcripts: list[TranscriptLink] = field(default_factory=list)
    chapters_url: str = ""
    chapters_local: bool = False
    chapters: list[Chapter] = field(default_factory=list)  # inline Podlove Simple Chapters
    podcast_guid: str = ""  # channel only: podcast:guid, the show's identity
    new_feed_url: str = ""  # channel only: itunes:new-feed-url, where the feed has moved


@dataclass
class ParsedFeed:
    show: Show
    episodes: list[Episode]
    warnings: list[str] = field(default_factory=list)
    new_feed_url: str = ""  # the feed says it has moved there (itunes:new-feed-url)

    def assign(self, show_id: str) -> None:
        """Give the show (and so its episodes) the id it has in the catalog."""
        self.show.id = show_id
        for ep in self.episodes:
            ep.show_id = show_id


def slugify(text: str, fallback: str = "show") -> str:
    """The words of ``text`` in lower case ASCII letters and digits, joined by hyphens (at most 60 characters): the id
    of a show imported without a ``show_id``, made again from its title at every import (so it never changes), and,
    until 5 December 2026, of a feed's new show (:func:`show_slug` since)."""
    slug = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:60].strip("-")
    return slug or fallback


def show_slug(title: str, fallback: str = "show") -> str:
    """A feed's new show's id: the words of its title in lower case, joined by hyphens (at most 60 characters), with
    the accents of the Latin alphabet folded and a few letters spelled (``Kafferumslöparna`` -> ``kafferumsloparna``,
    ``Straße`` -> ``strasse``) and the letters of other scripts kept as written (``いもほり倶楽部``, half-width kana
    read full-width). A title of ASCII words gets what :func:`slugify` gave it. Until 5 December 2026 every letter
    outside a-z was a separator: the Japanese show was ``show``, ``eMobilität`` ``emobilit-t``. (A show keeps the id
    it was given: the catalog knows it by its feed.)"""
    text = strip_accents(narrow(lower(title))).lower().translate(_SPELLED)
    kept: list[str] = []
    for ch in text:  # letters, digits, and the marks written on a letter (a vowel sign, a virama), else a hyphen
        mark = unicodedata.category(ch)[0] == "M"
        kept.append(ch if ch.isalnum() or mark and kept and kept[-1] != "-" else "-")
    slug = re.sub(r"-+", "-", "".join(kept)).strip("-")[:60].strip("-")
    return unicodedata.normalize("NFC", slug) or fallback


_SPELLED = str.maketrans({"ß": "ss", "ø": "o", "æ": "ae", "œ": "oe", "đ": "d", "ð": "d", "þ": "th", "ł": "l",
                          "ı": "i", "ħ": "h", "ŧ": "t"})


def _local(tag: str) -> tuple[str, str]:
    if tag.startswith("{"):
        ns, _, name = tag[1:].partition("}")
        return ns, name
    return "", tag


def _person(el: ET.Element) -> Person | None:
    name = collapse(el.text or "")
    if not name:
        return None
    return Person(name=name, role=(el.get("role") or "").strip().lower(), group=(el.get("group") or "").strip().lower(),
                  href=safe_url(el.get("href")), img=safe_url(el.get("img")))


def resolve_link(base: str, url: str) -> tuple[str, bool]:
    """Resolve a URL found in a feed against the feed's URL or path.

    Returns (url, local). ``local`` is True only for a relative reference inside a feed read from a local
    file: the one case where a link may name a local file. Absolute paths and ``file:`` URLs written in a
    feed stay as written and are refused when fetched.
    """
    url = url.strip()
    base_is_local = "://" not in base
    has_scheme = bool(re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", url))
    if base_is_local and not has_scheme and not url.startswith(("/", "\\")):
        return str((Path(base).resolve().parent / url).resolve()), True
    if base_is_local:
        return url, False
    return urljoin(base, url), False


# Chapters kept for one episode (inline here, from a file in ``ingest.chapters``), the earliest: real shows have
# tens (the corpus's most is 11). A chapters file of 400,000 entries (8 MB, under max_transcript_bytes) made its
# episode's page 33 MB, 4 s to draw at every view, until 5 December 2026.
MAX_CHAPTERS = 1000


def _psc_chapters(el: ET.Element) -> list[Chapter]:
    """Podlove Simple Chapters (``<psc:chapters><psc:chapter start=... title=.../>``), sorted by start."""
    out = []
    for ch in el:
        if not isinstance(ch.tag, str) or _local(ch.tag) != (PSC_NS, "chapter"):
            continue
        start = parse_time(ch.get("start"))
        if start is None:
            continue
        out.append(Chapter(start=start, title=collapse(ch.get("title") or ""), url=safe_url(ch.get("href")),
                           img=safe_url(ch.get("image"))))
    out.sort(key=lambda c: c.start)
    return out[:MAX_CHAPTERS]  # (as a chapters file's)


def _read_podcast_tags(el: ET.Element, base: str) -> RawItem:
    raw = RawItem()
    for child in el:
        if not isinstance(child.tag, str):
            continue
        ns, name = _local(child.tag)
        if ns == "" and name == "guid":
            raw.guid = collapse(child.text or "")
        if ns == PSC_NS and name == "chapters":
            raw.chapters = _psc_chapters(child)
        if ns == ITUNES_NS and name == "new-feed-url":
            raw.new_feed_url = collapse(child.text or "")
        if ns not in PODCAST_NS_ALIASES:
            continue
        if name == "guid":
            raw.podcast_guid = collapse(child.text or "")
        elif name == "person":
            person = _person(child)
            if person:
                raw.persons.append(person)
        elif name == "transcript":
            url = (child.get("url") or "").strip()
            if url:
                resolved, local = resolve_link(base, url)
                raw.transcripts.append(TranscriptLink(
                    url=resolved, local=local, type=(child.get("type") or "").strip().lower(),
                    language=(child.get("language") or "").strip(), rel=(child.get("rel") or "").strip()))
        elif name == "chapters":
            url = (child.get("url") or "").strip()
            if url:
                raw.chapters_url, raw.chapters_local = resolve_link(base, url)
    return raw


_ITEM_RE = re.compile(rb"<item[\s>].*?</item\s*>", re.S | re.I)
_TAG_RE = re.compile(rb"<podcast:(transcript|person|chapters)\b([^>]*?)(?:/>|>(.*?)</podcast:\1\s*>)", re.S | re.I)
_ATTR_RE = re.compile(rb"""([\w:-]+)\s*=\s*(?:"([^"]*)"|'([^']*)')""")
_GUID_RE = re.compile(rb"<guid\b[^>]*>(.*?)</guid\s*>", re.S | re.I)
_CHANNEL_TAG_RE = re.compile(rb"<(podcast:guid|itunes:new-feed-url)\b[^>]*>(.*?)</\1\s*>", re.S | re.I)


def _scanned_text(raw: bytes) -> str:
    """The text of an element found by a scan (entities resolved, CDATA markers dropped)."""
    return collapse(html.unescape(raw.decode("utf-8", "replace")).replace("<![CDATA[", "").replace("]]>", ""))


def _regex_podcast_tags(data: bytes, base: str) -> tuple[RawItem, list[RawItem]]:
    """Fallback for XML that is not well-formed: the same tags found with a forgiving scan."""
    def scan(chunk: bytes) -> RawItem:
        raw = RawItem()
        m = _GUID_RE.search(chunk)
        if m:
            raw.guid = _scanned_text(m.group(1))
        for tm in _TAG_RE.finditer(chunk):
            kind = tm.group(1).decode().lower()
            attrs = {a.group(1).decode().lower(): html.unescape((a.group(2) or a.group(3) or b"").decode("utf-8", "replace"))
                     for a in _ATTR_RE.finditer(tm.group(2))}
            body = collapse(html.unescape((tm.group(3) or b"").decode("utf-8", "replace")))
            if kind == "transcript" and attrs.get("url"):
                resolved, local = resolve_link(base, attrs["url"])
                raw.transcripts.append(TranscriptLink(url=resolved, local=local,
                                                      type=attrs.get("type", "").lower(),
                                                      language=attrs.get("language", ""), rel=attrs.get("rel", "")))
            elif kind == "person" and body:
                raw.persons.append(Person(name=body, role=attrs.get("role", "").lower(),
                                          group=attrs.get("group", "").lower(), href=safe_url(attrs.get("href")),
                                          img=safe_url(attrs.get("img"))))
            elif kind == "chapters" and attrs.get("url"):
                raw.chapters_url, raw.chapters_local = resolve_link(base, attrs["url"])
        return raw

    items = [m for m in _ITEM_RE.finditer(data)]
    head = data[: items[0].start()] if items else data
    channel = scan(head)
    for m in _CHANNEL_TAG_RE.finditer(head):
        value = _scanned_text(m.group(2))
        if m.group(1).lower() == b"podcast:guid":
            channel.podcast_guid = value
        else:
            channel.new_feed_url = value
    return channel, [scan(m.group(0)) for m in items]


def read_podcast_tags(data: bytes, base: str) -> tuple[RawItem, list[RawItem]]:
    """Channel-level and per-item Podcasting 2.0 tags, in document order."""
    try:
        root = SafeET.fromstring(data, forbid_dtd=False, forbid_entities=True, forbid_external=True)
    except (ET.ParseError, DefusedXmlException, ValueError, LookupError, RecursionError):
        # not well-formed, an unknown encoding ("bogus"), or absurdly deep: scan it forgivingly instead
        return _regex_podcast_tags(data, base)
    channel = root.find("channel")
    if channel is None:
        channel = root
    items = [el for el in channel.iter() if isinstance(el.tag, str) and _local(el.tag)[1] in {"item", "entry"}]
    return _read_podcast_tags(channel, base), [_read_podcast_tags(el, base) for el in items]


def _entry_guid(entry: feedparser.FeedParserDict) -> str:
    return collapse(str(entry.get("id") or entry.get("guid") or ""))


def _entry_link(entry: feedparser.FeedParserDict) -> str:
    """The item's link as written. With no ``<link>``, feedparser gives a guid that is a permalink (``isPermaLink``,
    true by default) as the link: only one that is an absolute http(s) URL is one. Until 5 December 2026
    ``<guid>kitchen-6</guid>`` became the link ``https://host/feeds/kitchen-6`` (resolved against the feed's URL),
    shown on the episode's page and sent to the watches' webhooks."""
    link = str(entry.get("link", "") or "")
    if entry.get("guidislink") and urlsplit(link.strip()).scheme.lower() not in {"http", "https"}:
        return ""
    return link


def _enclosure(entry: feedparser.FeedParserDict) -> tuple[str, str]:
    """The first enclosure; else the first Media RSS ``media:content`` (some feeds carry only that)."""
    for link in entry.get("links", []) or []:
        if link.get("rel") == "enclosure" and (link.get("href") or "").strip():
            return link["href"].strip(), (link.get("type") or "")
    for enc in entry.get("enclosures", []) or []:
        if (enc.get("href") or "").strip():
            return enc["href"].strip(), enc.get("type") or ""
    for media in entry.get("media_content", []) or []:
        if (media.get("url") or "").strip():
            return media["url"].strip(), media.get("type") or ""
    return "", ""


def _absolute(base: str, url: str) -> str:
    """A link from the feed made absolute against the feed's URL (links in a local feed stay as written).

    Only http(s) links are kept: a ``javascript:`` or ``data:`` link would run in the page that shows it.
    """
    url = safe_url(url)
    if not url or "://" not in base:
        return url
    try:
        return urljoin(base, url)
    except ValueError:
        return url


def safe_url(url: str | None) -> str:
    """``url`` stripped, or "" when its scheme is not http(s) (``javascript:``, ``data:``, ``vbscript:``...).

    Relative references (no scheme) are kept. A one-letter scheme is a Windows drive, not a scheme.
    """
    url = (url or "").strip()
    try:
        scheme = urlsplit(url).scheme.lower() if ":" in url else ""
    except ValueError:
        return ""
    if scheme and scheme not in {"http", "https"} and len(scheme) > 1:
        return ""
    return url


def _title(value: str, detail: object) -> str:
    """A title as text. feedparser says whether it holds HTML; plain text is kept as written (``<div>`` too)."""
    if getattr(detail, "get", None) and detail.get("type") == "text/plain":
        return collapse(html.unescape(value or ""))
    return collapse(html_to_text(value or ""))


def _title_from_url(url: str) -> str:
    """'https://x/y/episode-12.mp3' -> 'episode-12' (a title for items that have none, as podcastparser does)."""
    try:
        name = urlsplit(url).path.rstrip("/").rpartition("/")[2]
    except ValueError:
        return ""
    return name.rpartition(".")[0] or name


def episode_id(guid: str, enclosure: str, link: str, title: str, published: str | None) -> str:
    """The item guid; else the enclosure URL; else the link; else a hash of title and date."""
    for candidate in (guid, enclosure, link):
        if candidate and candidate.strip():
            return candidate.strip()
    digest = hashlib.sha1(f"{title}\x00{published or ''}".encode()).hexdigest()[:16]
    return f"sha1:{digest}"


def _description(entry: feedparser.FeedParserDict) -> str:
    contents = entry.get("content") or []
    html_parts = [c.get("value", "") for c in contents if "html" in (c.get("type") or "")]
    if html_parts and len(html_parts[0]) > len(entry.get("summary", "") or ""):
        return html_parts[0]
    return entry.get("summary", "") or entry.get("subtitle", "") or ""


def _categories(d: feedparser.FeedParserDict) -> list[str]:
    out: list[str] = []
    for tag in d.get("tags", []) or []:
        term = collapse(tag.get("term") or "")
        if term and term not in out:
            out.append(term)
    return out


def _episode_language(entry: feedparser.FeedParserDict, channel: str, transcripts: list[TranscriptLink],
                      title: str, notes: str) -> str:
    """The item's language, else the channel's, else that of the transcript fetched first, else detected
    from the title and notes ("" when the detector is unsure; see :func:`_fill_undetected`)."""
    first = pick_order(transcripts)
    return choose(entry.get("language"), channel, first[0].language if first else "",
                  text=lambda: f"{title}\n{notes}")


def _fill_undetected(show: Show, episodes: list[Episode]) -> None:
    """Episodes whose short text did not say their language clearly take the language most of the show's
    episodes were detected in, else the one detected from all of the show's text at once."""
    unsure = [ep for ep in episodes if not ep.language]
    if not unsure:
        return
    fallback = majority((ep.language for ep in episodes), lambda: "\n".join(
        [show.title, show.description] + [f"{ep.title}\n{ep.description_text}" for ep in episodes[:200]]))
    for ep in unsure:
        ep.language = fallback


# A numeric character reference (&#55296; &#xD800;). One naming no character (a surrogate, past U+10FFFF) made
# feedparser raise on the whole feed, every item lost; it is read as U+FFFD, as a decoder reads a bad byte.
_CHAR_REF = re.compile(rb"&#(?:[xX]([0-9a-fA-F]+)|([0-9]+));")


def _no_character(m: re.Match[bytes]) -> bytes:
    digits = m.group(1) if m.group(1) is not None else m.group(2)
    if len(digits.lstrip(b"0")) > 8:  # past any character, however written
        return b"&#xFFFD;"
    code = int(digits, 16) if m.group(1) is not None else int(digits)
    return b"&#xFFFD;" if code > 0x10FFFF or 0xD800 <= code <= 0xDFFF else m.group(0)


# The end of a whole feed: its root element's closing tag, then only white space and comments. A feed read leniently
# without it was cut short: read, its cut last item became an "(untitled)" episode, and the items after the cut were
# marked gone (exit 0).
_CLOSED = re.compile(rb"</(?:[\w.-]+:)?(?:rss|feed|rdf)\s*>\s*(?:<!--.*?-->\s*)*\Z", re.IGNORECASE | re.DOTALL)


def parse_feed(data: bytes, source: str, base_url: str | None = None, show_id: str | None = None,
               content_type: str | None = None) -> ParsedFeed:
    """Parse feed bytes into a Show and its Episodes. Raises FeedError when nothing usable is there."""
    base = base_url or source
    data = _CHAR_REF.sub(_no_character, data) if b"&#" in data else data
    # feedparser flags a missing Content-Type as "not well-formed"; local files have none, so say XML.
    # No Content-Location: feedparser would resolve relative guids and Atom ids against the feed URL, and an
    # id must not change when a feed moves. Links, enclosures and images are made absolute below instead.
    headers = {"content-type": content_type or "application/xml"}
    try:
        parsed = feedparser.parse(data, response_headers=headers, sanitize_html=False, resolve_relative_uris=False)
    except Exception as exc:  # feedparser promises not to raise, but guard the ingest loop anyway
        raise FeedError(f"{source}: feedparser failed: {exc}") from exc
    feed = parsed.get("feed", {}) or {}
    entries = parsed.get("entries", []) or []
    version = parsed.get("version", "")
    if not entries and not feed.get("title") and not version:
        reason = str(parsed.get("bozo_exception") or "no RSS or Atom feed found")
        raise FeedError(f"{source}: not a feed ({reason})")
    if parsed.get("bozo") and not _CLOSED.search(data[-4096:]):
        raise FeedError(f"{source}: the feed is cut short (it ends before its closing </rss> or </feed>: a transfer "
                        f"cut off, or a file still being written); skipped, nothing changed")
    warnings = []
    if parsed.get("bozo"):
        warnings.append(f"{source}: feed is not well-formed ({parsed.get('bozo_exception')}); read leniently")
    if not entries:
        warnings.append(f"{source}: the feed has no episodes")

    channel_raw, raw_items = read_podcast_tags(data, base)
    by_guid: dict[str, RawItem] = {}
    for r in raw_items:
        if r.guid:
            by_guid.setdefault(r.guid, r)  # the first item of a repeated guid, like the episodes below

    title = _title(feed.get("title", ""), feed.get("title_detail")) or source
    language = normalize(feed.get("language", "")) or collapse(feed.get("language", "") or "")
    image = ""
    if feed.get("image"):
        image = _absolute(base, feed["image"].get("href", "") or feed["image"].get("url", "") or "")
    show = Show(
        id=show_id or slugify(title),
        title=title,
        source=source,
        link=_absolute(base, feed.get("link", "") or ""),
        description=html_to_text(feed.get("subtitle", "") or feed.get("summary", "") or ""),
        language=language,
        image=image,
        author=collapse(feed.get("author", "") or feed.get("itunes_author", "") or ""),
        categories=_categories(feed),
        persons=channel_raw.persons,
        guid=channel_raw.podcast_guid,
    )

    episodes: list[Episode] = []
    seen: set[str] = set()
    # A link or enclosure that several items share (often the show's home page) names no one episode: four of five
    # guid-less items whose links were all the show's page were dropped as duplicates of the first.
    links = Counter(_absolute(base, _entry_link(e)) for e in entries)
    links[show.link] += 2
    enclosures = Counter(_absolute(base, _enclosure(e)[0]) for e in entries)
    for position, entry in enumerate(entries):
        guid = _entry_guid(entry)
        raw = by_guid.get(guid) if guid else None
        if raw is None:
            raw = raw_items[position] if position < len(raw_items) and len(raw_items) == len(entries) else RawItem()
        enclosure, enclosure_type = _enclosure(entry)
        enclosure = _absolute(base, enclosure)
        link = _absolute(base, _entry_link(entry))
        ep_title = _title(entry.get("title", ""), entry.get("title_detail")) or _title_from_url(enclosure)
        published = struct_to_iso(entry.get("published_parsed") or entry.get("updated_parsed"))
        eid = episode_id(guid, enclosure if enclosures[enclosure] < 2 else "", link if links[link] < 2 else "",
                         ep_title, published)
        if eid in seen:
            warnings.append(f"{source}: duplicate episode id {eid!r}; kept the first")
            continue
        seen.add(eid)
        description = _description(entry)
        notes = html_to_text(description)
        ep_image = ""
        if entry.get("image"):
            ep_image = _absolute(base, entry["image"].get("href", "")) if hasattr(entry["image"], "get") else ""
        episodes.append(Episode(
            id=eid,
            show_id=show.id,
            title=ep_title or "(untitled)",
            link=link,
            description_html=sanitize_html(description),
            description_text=notes,
            published=published,
            duration=parse_duration(entry.get("itunes_duration")),
            audio_url=enclosure,
            audio_type=enclosure_type,
            image=ep_image or image,
            season=to_int(entry.get("itunes_season")),
            number=to_int(entry.get("itunes_episode")),
            language=_episode_language(entry, language, raw.transcripts, ep_title, notes),
            categories=_categories(entry),
            persons=raw.persons or list(channel_raw.persons),
            transcript_links=raw.transcripts,
            chapters_url=raw.chapters_url,
            chapters_local=raw.chapters_local,
            chapters=list(raw.chapters),
        ))
    _fill_undetected(show, episodes)
    if not episodes and version == "":
        raise FeedError(f"{source}: not a feed (no items and no known format)")
    new_feed_url = _absolute(base, channel_raw.new_feed_url) if "://" in channel_raw.new_feed_url else ""
    return ParsedFeed(show=show, episodes=episodes, warnings=warnings, new_feed_url=new_feed_url)
