"""Small text helpers shared by the ingest parsers: HTML to text, sanitizing, durations, dates."""

from __future__ import annotations

import html
import re
import time
from datetime import UTC, datetime
from html.parser import HTMLParser

import nh3

_WS = re.compile(r"\s+")
_BLOCK_TAGS = {"p", "br", "li", "div", "h1", "h2", "h3", "h4", "h5", "h6", "tr", "blockquote", "pre", "ul", "ol"}

ALLOWED_TAGS = {"a", "p", "br", "ul", "ol", "li", "strong", "b", "em", "i", "code", "pre", "blockquote",
                "h2", "h3", "h4", "h5", "h6", "hr", "span", "sub", "sup", "table", "thead", "tbody", "tr",
                "td", "th"}
ALLOWED_ATTRIBUTES = {"a": {"href", "title"}}


def collapse(text: str) -> str:
    return _WS.sub(" ", text).strip()


class _TextExtractor(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self._skip = 0

    def handle_starttag(self, tag: str, attrs: list) -> None:
        if tag in {"script", "style"}:
            self._skip += 1
        elif tag in _BLOCK_TAGS:
            self.parts.append("\n")

    def handle_endtag(self, tag: str) -> None:
        if tag in {"script", "style"} and self._skip:
            self._skip -= 1
        elif tag in _BLOCK_TAGS:
            self.parts.append("\n")

    def handle_data(self, data: str) -> None:
        if not self._skip:
            self.parts.append(data)


def html_to_text(fragment: str) -> str:
    """Plain text of an HTML fragment, for indexing: tags dropped, entities decoded, paragraphs kept."""
    if not fragment:
        return ""
    if "<" not in fragment and "&" not in fragment:
        return collapse(fragment)
    parser = _TextExtractor()
    try:
        parser.feed(fragment)
        parser.close()
    except Exception:  # html.parser is lenient; this is a last resort on pathological input
        return collapse(re.sub(r"<[^>]*>", " ", html.unescape(fragment)))
    lines = (collapse(line) for line in "".join(parser.parts).split("\n"))
    return "\n".join(line for line in lines if line)


def sanitize_html(fragment: str) -> str:
    """Show notes made safe to display: a small allow-list of tags, links with rel=nofollow noopener."""
    if not fragment:
        return ""
    if "<" not in fragment:
        return "<p>" + html.escape(html.unescape(fragment)) + "</p>"
    return nh3.clean(fragment, tags=ALLOWED_TAGS, attributes=ALLOWED_ATTRIBUTES,
                     url_schemes={"http", "https", "mailto"}, link_rel="nofollow noopener noreferrer")


_ISO_DURATION = re.compile(
    r"^P(?:(?P<d>\d+(?:\.\d+)?)D)?(?:T(?:(?P<h>\d+(?:\.\d+)?)H)?(?:(?P<m>\d+(?:\.\d+)?)M)?(?:(?P<s>\d+(?:\.\d+)?)S)?)?$",
    re.I,
)


MAX_DURATION = 366 * 86400  # seconds: a longer "duration" is a mistake or a trap (1e309, P99999999999999999999D)
MAX_NUMBER = 2**31 - 1  # an episode or season number beyond it is no number (and SQLite's integers end at 2**63)


def parse_duration(value: object) -> int | None:
    """``itunes:duration`` as seconds: '1834', '30:34', '1:02:03', 'PT2M37S'; None when unreadable, not finite,
    negative or longer than :data:`MAX_DURATION`."""
    seconds = _seconds(value)
    if seconds is None or not 0 <= seconds <= MAX_DURATION:  # (a NaN is neither)
        return None
    return int(round(seconds))


def _seconds(value: object) -> float | None:
    if value is None:
        return None
    text = str(value).strip()
    if not text:
        return None
    m = _ISO_DURATION.match(text)
    if m and any(m.groupdict().values()):
        parts = {k: float(v) if v else 0.0 for k, v in m.groupdict().items()}
        return parts["d"] * 86400 + parts["h"] * 3600 + parts["m"] * 60 + parts["s"]
    pieces = text.split(":")
    if 1 <= len(pieces) <= 3:
        try:
            numbers = [float(p) for p in pieces]
        except ValueError:
            return None
        if any(n < 0 for n in numbers):
            return None
        total = 0.0
        for n in numbers:
            total = total * 60 + n
        return total
    return None


def struct_to_iso(value: time.struct_time | None) -> str | None:
    """feedparser's *_parsed (UTC) as ISO 8601 'YYYY-MM-DDTHH:MM:SSZ'."""
    if not value:
        return None
    try:
        dt = datetime(*value[:6], tzinfo=UTC)
    except (TypeError, ValueError):
        return None
    return dt.strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_iso_date(text: str | None) -> str | None:
    """An ISO-ish date string ('2024-05-01', '2024-05-01T10:00:00+02:00') normalised to UTC ISO, or None."""
    if not text:
        return None
    raw = str(text).strip().replace("Z", "+00:00")
    try:
        dt = datetime.fromisoformat(raw)
    except ValueError:
        return None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    return dt.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def to_int(value: object) -> int | None:
    """A whole number as a feed writes one (``itunes:episode``), None when it is none or beyond
    :data:`MAX_NUMBER` either way."""
    try:
        number = int(str(value).strip())
    except (TypeError, ValueError):
        return None
    return number if abs(number) <= MAX_NUMBER else None
