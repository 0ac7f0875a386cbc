"""Parse podcast transcripts into :class:`~podsearch.episodes.Segment` lists.

Supported formats (the ``type`` of a ``podcast:transcript`` tag):

* ``application/json`` - Podcasting 2.0 JSON (``{"segments": [{"speaker", "startTime", "endTime", "body"}]}``)
* ``text/vtt`` - WebVTT; ``<v Name>`` voice tags give the speaker
* ``application/x-subrip``, ``application/srt``, ``text/srt`` - SubRip; a leading ``Name: `` label gives the speaker
* ``text/html`` - the namespace style ``<cite>Speaker:</cite> <time>HH:MM:SS</time> <p>text</p>``, or any HTML
* ``text/plain`` - paragraphs separated by blank lines, optional ``Speaker: `` labels, no times (but a paragraph
  that is a clock time alone, ``Speaker 0: 00:11:31``, times the paragraphs after it when the transcript uses such
  times: :func:`_uses_timestamps`)

Caption cues (VTT, SRT) and JSON segments are short; consecutive ones of the same speaker are merged into
segments of at most :data:`MERGE_MAX_SECONDS` / :data:`MERGE_MAX_CHARS`. HTML and plain-text paragraphs are
kept as they are (plain paragraphs longer than :data:`PLAIN_MAX_CHARS` are split at line breaks).
"""

from __future__ import annotations

import codecs
import html
import io
import itertools
import json
import logging
import math
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from html.parser import HTMLParser
from typing import Any, Protocol, TypeVar

from podsearch.episodes import Segment
from podsearch.errors import TranscriptError

log = logging.getLogger(__name__)

JSON = "application/json"
VTT = "text/vtt"
SRT = "application/x-subrip"
HTML = "text/html"
PLAIN = "text/plain"

#: Canonical transcript types, richest first (times, speakers, fine granularity ... plain paragraphs).
RICHNESS: tuple[str, ...] = (JSON, VTT, SRT, HTML, PLAIN)

#: Declared MIME types (lower case, no parameters) mapped to their canonical type.
MIME_ALIASES: dict[str, str] = {
    "application/json": JSON,
    "text/json": JSON,
    "text/vtt": VTT,
    "application/x-subrip": SRT,
    "application/srt": SRT,
    "text/srt": SRT,
    "application/x-srt": SRT,
    "text/x-srt": SRT,
    "text/html": HTML,
    "application/xhtml+xml": HTML,
    "text/plain": PLAIN,
}

_EXTENSIONS: dict[str, str] = {
    ".json": JSON,
    ".vtt": VTT,
    ".webvtt": VTT,
    ".srt": SRT,
    ".html": HTML,
    ".htm": HTML,
    ".txt": PLAIN,
}

_FORMAT_NAMES: dict[str, str] = {
    JSON: "JSON transcript",
    VTT: "WebVTT",
    SRT: "SubRip (SRT)",
    HTML: "HTML",
    PLAIN: "plain text",
}

#: What the parsers give for a file's bytes, as a number: bump it whenever any parser here (or what it calls:
#: decoding, speaker labels, merging, splitting) gives other segments for the same bytes. The catalog keeps it with
#: each transcript it stores (``transcripts.parser``), and a reindex reads a transcript stored by another version
#: again in full, without its validators, and parses it again (``ingest.extras``): a parser fix reaches the
#: transcripts already stored, not only those that change at their source. A change that leaves every segment as it
#: was (speed, messages) does not bump it: each bump reads every stored transcript once more.
#: None (a catalog before schema 8): parsed before the version was kept, older than any.
#: 1: 6 December 2026: a plain-text paragraph that is a clock time alone times the paragraphs after it; Markdown
#:    escapes (``OP\_RETURN``) are the marks they escape.
#: 2: 6 December 2026: a label that says a day, a date or opens with a word no name begins with ("On Wednesday:",
#:    "Friday:", "Here's Mark Rainey:") is no speaker; a time-only plain paragraph is a timestamp only when the
#:    transcript uses them so (:func:`_uses_timestamps`), else text ("Ann: 10:30").
PARSER_VERSION = 2

#: Merged caption segments stop growing past this many seconds (first cue start to last cue end) ...
MERGE_MAX_SECONDS = 30.0
#: ... or past this many characters.
MERGE_MAX_CHARS = 400
#: Plain-text paragraphs longer than this are split at line breaks into pieces of about this size.
PLAIN_MAX_CHARS = 2000

# --------------------------------------------------------------------------------------------- helpers

_TIME_RE = re.compile(r"^(?:(\d+):)?(\d{1,2}):(\d{1,2})(?:[.,](\d+))?$")
_NUMBER_RE = re.compile(r"^\d+(?:\.\d*)?$|^\.\d+$")
# A markup tag: <p>, </p>, <v.loud Bob>, <c.x>, <br/>, <!-- ... -->, or a VTT timestamp tag <00:00:01.000>.
# "<https://...>" (a Markdown autolink) and "a < b" are not tags.
_TAG_RE = re.compile(
    r"<!--.*?-->|</?[A-Za-z][A-Za-z0-9-]*(?:\.[\w-]+)*(?:\s[^<>]*)?/?>|<\d[\d:.]*>",
    re.DOTALL,
)
_CONTROL_RE = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
_UTF8_MULTIBYTE_RE = re.compile(rb"[\xc2-\xdf][\x80-\xbf]|[\xe0-\xef][\x80-\xbf]{2}|[\xf0-\xf4][\x80-\xbf]{3}")
_SRT_CUE_RE = re.compile(
    r"^\s*\d+\s*\n\s*\d{1,2}:\d{1,2}:\d{1,2}[,.]\d{1,3}\s*-->\s*\d{1,2}:\d{1,2}:\d{1,2}[,.]\d{1,3}",
    re.MULTILINE,
)
_TIMING_LINE_RE = re.compile(r"^\s*(?:\d+:)?\d{1,2}:\d{1,2}[.,]\d{1,3}\s*-->\s*(?:\d+:)?\d{1,2}:\d{1,2}", re.MULTILINE)
_VOICE_RE = re.compile(r"<v(?:\.[^\s>]+)*(?:[ \t]+([^>]*))?>")
# "Name: text" / "**Name:** text" / "Name:" alone. Group 1 = the label, group 2 = the rest.
_LABEL_RE = re.compile(
    r"^[ \t]*(?:\*\*)?([^\s:*<>\[\]#][^:\n*<>\[\]]{0,60}?)[ \t]*(?:\*\*)?:(?:\*\*)?(?:[ \t]+|$)(.*)$", re.DOTALL
)
_NAME_WORD_RE = re.compile(r"^[(\"'“]?(?:[A-Z\u00c0-\u00de]|\d)[\w.'’()\-,]*$")
# a list's number or a bare number ("6. “Information Management: A Proposal”", "2024: the year"), which no name
# starts with: until 5 December 2026 the words before the colon were taken for a speaker, left out of the searchable
# text and given to the paragraphs after it (Changelog News #129 of the site corpus)
_LIST_NUMBER_RE = re.compile(r"^[(\"'“]?\d+[.):]*$")
_PARTICLES = frozenset("de da di del della der den van von la le du bin al st. y and &".split())
_HANDLE_RE = re.compile(r"^[A-Za-z0-9_.\-]{2,30}$")
_LINK_START_RE = re.compile(r"[<(\[]?(?:https?://|www\.)", re.IGNORECASE)  # "Video: <https://...>" names no speaker
_NOT_SPEAKERS = frozenset(
    """
    note notes nb n.b. update edit edited warning caution tip hint example examples source sources link links
    transcript transcription transcribed summary abstract date time tags topic topics title subject location
    venue video audio slides paper website podcast http https mailto yes no so well ok okay and but or also now
    then here there this that these those the a an it its what why how when where who which speakers tl;dr ps
    p.s. i we you my our step part chapter episode season info tweet name agenda
    on in at by for from with after before during until since next last every each today tonight tomorrow
    yesterday here's there's let's it's that's what's
    """.split()
)
# A label that says a day or a date is no speaker: "On Wednesday: our ATO 2023 coverage begins ...", "Friday:",
# "June 5:", "5 June 2024:" (until 6 December 2026 "On Wednesday" and "Friday" were persons of 4 Changelog News
# episodes of the site corpus, and the nearby-episodes model showed them as shared guests). A label of date words only:
# a day alone is a name with another word ("Sunday Adeyemi", "Tuesday Weld"), a month is one ("June") unless a number
# is with it.
_WEEKDAYS = frozenset("monday tuesday wednesday thursday friday saturday sunday".split())
_MONTHS = frozenset(
    "january february march april may june july august september october november december jan feb mar apr jun jul "
    "aug sep sept oct nov dec".split()
)
_DATE_NUMBER_RE = re.compile(r"^\d{1,4}(?:st|nd|rd|th)?,?$")


class _Link(Protocol):
    url: str
    type: str


_L = TypeVar("_L", bound=_Link)


def parse_time(value: Any) -> float | None:
    """Return a time in seconds, or None when ``value`` is empty or not a time.

    Accepts numbers (``12``, ``12.5``), numeric strings (``"12.5"``), ``"MM:SS"``, ``"HH:MM:SS"``,
    ``"HH:MM:SS.fff"`` and ``"HH:MM:SS,fff"``. Negative, infinite and NaN values give None.
    """
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        seconds = float(value)
        return seconds if math.isfinite(seconds) and seconds >= 0 else None
    if not isinstance(value, str):
        return None
    text = value.strip()
    if not text:
        return None
    if _NUMBER_RE.match(text):
        return float(text)
    match = _TIME_RE.match(text)
    if not match:
        return None
    hours, minutes, secs, fraction = match.groups()
    seconds = int(hours or 0) * 3600 + int(minutes) * 60 + int(secs)
    return seconds + (float("0." + fraction) if fraction else 0.0)


def normalize_mime(mime_type: str | None) -> str:
    """Return the canonical transcript type for a declared MIME type, or the cleaned type if unknown.

    ``"Text/VTT; charset=utf-8"`` -> ``"text/vtt"``; ``"application/srt"`` -> ``"application/x-subrip"``.
    """
    cleaned = (mime_type or "").split(";", 1)[0].strip().lower()
    return MIME_ALIASES.get(cleaned, cleaned)


def richness_rank(mime_type: str | None, url: str = "") -> int:
    """Return the rank of a transcript type in :data:`RICHNESS` (0 = richest); unknown types rank last.

    When the declared type is missing or unknown, the URL's file extension is used, if it names a format.
    """
    canonical = normalize_mime(mime_type)
    if canonical not in RICHNESS:
        path = (url or "").split("?", 1)[0].split("#", 1)[0].lower()
        canonical = next((t for ext, t in _EXTENSIONS.items() if path.endswith(ext)), canonical)
    try:
        return RICHNESS.index(canonical)
    except ValueError:
        return len(RICHNESS)


def pick_order(links: Iterable[_L]) -> list[_L]:
    """Return transcript links sorted richest first: JSON, VTT, SRT, HTML, plain text, unknown.

    Links are objects with ``.type`` and ``.url`` (e.g. :class:`~podsearch.episodes.TranscriptLink`).
    The sort is stable, so links of equal richness keep their feed order.
    """
    return sorted(links, key=lambda link: richness_rank(getattr(link, "type", ""), getattr(link, "url", "")))


def decode_bytes(data: bytes, charset: str = "") -> str:
    """Decode transcript bytes to text without ever failing.

    Order: a byte-order mark (UTF-8/16/32), the declared ``charset`` (if it decodes cleanly), UTF-16
    without BOM (detected from NUL bytes), strict UTF-8, charset-normalizer (if installed), then UTF-8
    with replacement characters when the bytes hold real UTF-8 sequences, else cp1252 / latin-1.
    Newlines are normalised to ``\\n`` and control characters other than tab and newline are removed.
    """
    text = _decode(bytes(data), charset)
    text = text.replace("\r\n", "\n").replace("\r", "\n").lstrip("\ufeff")
    return _CONTROL_RE.sub("", text)


_MIN_SNIFF_BYTES = 1024


def _decode(data: bytes, charset: str) -> str:
    for bom, encoding in (
        (codecs.BOM_UTF32_LE, "utf-32-le"),
        (codecs.BOM_UTF32_BE, "utf-32-be"),
        (codecs.BOM_UTF8, "utf-8"),
        (codecs.BOM_UTF16_LE, "utf-16-le"),
        (codecs.BOM_UTF16_BE, "utf-16-be"),
    ):
        if data.startswith(bom):
            return data[len(bom) :].decode(encoding, errors="replace")
    if charset:
        try:
            return data.decode(codecs.lookup(charset).name)
        except (LookupError, UnicodeDecodeError):
            log.debug("declared charset %r does not decode the transcript; sniffing", charset)
    utf16 = _sniff_utf16(data)
    if utf16:
        return data.decode(utf16, errors="replace")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        pass
    try:
        from charset_normalizer import from_bytes  # optional dependency
    except ImportError:
        from_bytes = None
    # Its guesses on a few hundred bytes are unreliable (short latin-1 reads as cp1250): only trust it on more.
    if from_bytes is not None and len(data) >= _MIN_SNIFF_BYTES:
        best = from_bytes(data).best()
        if best is not None:
            return str(best)
    if _UTF8_MULTIBYTE_RE.search(data):
        lenient = data.decode("utf-8", errors="replace")
        # A few bad bytes in UTF-8 text are damage; many mean another multibyte encoding (a short Shift-JIS
        # or GBK file, below the size where charset-normalizer is trusted): its guess then beats U+FFFD noise.
        if from_bytes is None or lenient.count("\ufffd") * 50 <= len(lenient):
            return lenient
        best = from_bytes(data).best()
        return str(best) if best is not None else lenient
    try:
        return data.decode("cp1252")
    except UnicodeDecodeError:
        return data.decode("latin-1")


def _sniff_utf16(data: bytes) -> str:
    """Return "utf-16-le"/"utf-16-be" when the bytes look like BOM-less UTF-16 text, else ""."""
    sample = data[:4000]
    if len(sample) < 4 or b"\x00" not in sample:
        return ""
    half = len(sample) // 2
    even_nuls = sample[0::2].count(0)
    odd_nuls = sample[1::2].count(0)
    if odd_nuls > 0.4 * half and even_nuls < 0.05 * half:
        return "utf-16-le"
    if even_nuls > 0.4 * half and odd_nuls < 0.05 * half:
        return "utf-16-be"
    return ""


def clean_text(text: str, unescape: bool = True) -> str:
    """Strip markup tags, resolve HTML entities and collapse whitespace."""
    if "<" in text:
        text = _TAG_RE.sub("", text)
    if unescape and "&" in text:
        text = html.unescape(text)
    return " ".join(text.split())


def sniff_format(text: str) -> str:
    """Guess the canonical transcript type of decoded text (used when the declared type is unknown)."""
    head = text.lstrip()
    if head.startswith("WEBVTT"):
        return VTT
    if head.startswith("{"):
        return JSON
    if _SRT_CUE_RE.match(head[:1000]):
        return SRT
    if _TIMING_LINE_RE.match(head[:1000]):
        # cues without a WEBVTT header or SRT numbers: "." is the VTT decimal mark, "," the SRT one
        return VTT if "." in head.split("-->", 1)[0] else SRT
    if head.startswith("<"):
        return HTML
    return PLAIN


def _looks_like(text: str) -> str:
    """Return the name of another format that ``text`` clearly is, or ""."""
    head = text.lstrip()[:1000]
    if head.startswith("WEBVTT"):
        return "WebVTT"
    if _SRT_CUE_RE.match(head):
        return "SubRip (SRT)"
    if head.startswith("{") and '"segments"' in text[:20000]:
        try:
            if isinstance(json.loads(text, strict=False), dict):
                return "JSON"
        except (ValueError, RecursionError):
            pass
    lowered = head[:200].lower()
    if head.startswith("<") and (
        lowered.startswith(("<!doctype", "<html", "<?xml")) or re.match(r"<[a-z][a-z0-9]*[\s>/]", lowered)
    ):
        return "HTML"
    return ""


# ------------------------------------------------------------------------------------ speaker labels


def _is_name_label(label: str) -> bool:
    """True when ``label`` is a short capitalised name of at most 4 words ("Erik St. Martin", "Speaker 1")."""
    words = label.split()
    if not 1 <= len(words) <= 4 or len(label) > 50:
        return False
    first = words[0].lower().strip("(\"'“").replace("’", "'")
    if first in _NOT_SPEAKERS or label.lower() in _NOT_SPEAKERS or _says_a_date(words):
        return False
    if len(first) > 4 and first.endswith("s") and first[:-1] in _NOT_SPEAKERS:  # "Transcripts:", "Slides:"
        return False
    if not _NAME_WORD_RE.match(words[0]) or _LIST_NUMBER_RE.match(words[0]):
        return False
    return all(_NAME_WORD_RE.match(w) or w.lower() in _PARTICLES for w in words[1:])


def _says_a_date(words: Sequence[str]) -> bool:
    """True when a label's words are a date's only and say a day of the week ("Wednesday", "Fridays", "Monday 5
    June") or a month with a number ("June 5", "5 June 2024"); "Sunday Adeyemi" and "June" are names."""
    folded = [w.lower().strip("(),.\"'“”") for w in words]
    days = sum(w in _WEEKDAYS or (w.endswith("s") and w[:-1] in _WEEKDAYS) for w in folded)
    months = sum(w in _MONTHS for w in folded)
    numbers = sum(bool(_DATE_NUMBER_RE.match(w)) for w in folded)
    return days + months + numbers == len(folded) and (days > 0 or (months > 0 and numbers > 0))


def _known_handles(lines: Iterable[str]) -> frozenset[str]:
    """Single-word labels that are not capitalised ("roasbeef:") but open at least 3 lines: speaker handles."""
    counts: Counter[str] = Counter()
    for line in lines:
        match = _LABEL_RE.match(line)
        if match and _HANDLE_RE.match(match.group(1)) and not _is_name_label(match.group(1)):
            counts[match.group(1)] += 1
    return frozenset(label for label, n in counts.items() if n >= 3 and label.lower() not in _NOT_SPEAKERS)


def _split_label(line: str, handles: frozenset[str] = frozenset()) -> tuple[str | None, str]:
    """Split ``"Name: text"`` into ``("Name", "text")``; ``(None, line)`` when the line has no speaker label."""
    match = _LABEL_RE.match(line)
    if match:
        label = match.group(1).strip()
        if (_is_name_label(label) or label in handles) and not _LINK_START_RE.match(match.group(2)):
            return label, match.group(2)
    return None, line


def _labelled_pieces(lines: Sequence[str], handles: frozenset[str]) -> list[tuple[str | None, list[str]]]:
    """Group lines into pieces that each start at a line with a speaker label (or at the first line)."""
    pieces: list[tuple[str | None, list[str]]] = []
    for line in lines:
        speaker, rest = _split_label(line, handles)
        if speaker is not None or not pieces:
            pieces.append((speaker, [rest]))
        else:
            pieces[-1][1].append(line)
    return pieces


# ------------------------------------------------------------------------------------------- merging


def _merge(
    cues: Iterable[Segment], max_seconds: float = MERGE_MAX_SECONDS, max_chars: int = MERGE_MAX_CHARS
) -> list[Segment]:
    """Merge consecutive cues of the same speaker into segments of at most ``max_seconds`` / ``max_chars``.

    A merged segment keeps the start of its first cue and the end of its last. Empty cues are dropped.
    """
    out: list[Segment] = []
    current: Segment | None = None
    for cue in cues:
        if not cue.text:
            continue
        if current is not None and cue.speaker == current.speaker and _fits(current, cue, max_seconds, max_chars):
            current.text = f"{current.text} {cue.text}"
            if current.start is None:
                current.start = cue.start
            if cue.end is not None:
                current.end = cue.end
            continue
        current = Segment(text=cue.text, start=cue.start, end=cue.end, speaker=cue.speaker)
        out.append(current)
    return out


def _fits(current: Segment, cue: Segment, max_seconds: float, max_chars: int) -> bool:
    if len(current.text) + 1 + len(cue.text) > max_chars:
        return False
    if current.start is None:
        return True
    if cue.start is not None and cue.start < current.start:
        return False  # time went backwards: keep the pieces apart
    last = cue.end if cue.end is not None else cue.start
    return last is None or last - current.start <= max_seconds


# -------------------------------------------------------------------------------------------- parsers


def _fail(fmt: str, problem: str, url: str) -> TranscriptError:
    where = f" ({url})" if url else ""
    return TranscriptError(f"not {_FORMAT_NAMES.get(fmt, fmt)}: {problem}{where}")


def _parse_json(text: str, url: str) -> list[Segment]:
    """Podcasting 2.0 JSON. Missing fields are tolerated; times may be numbers or strings."""
    try:
        doc = json.loads(text, strict=False)
    except ValueError as exc:
        msg = getattr(exc, "msg", str(exc))
        # (": line", as Python says it: " at line" read "Unterminated string starting at at line 1 column 61")
        pos = f": line {exc.lineno} column {exc.colno}" if isinstance(exc, json.JSONDecodeError) else ""
        raise _fail(JSON, f"invalid JSON ({msg}{pos})", url) from None
    except RecursionError:
        # (a 400 KB file of "[" crashed the whole reindex, every feed, at every run, until 5 December 2026)
        raise _fail(JSON, "nested too deep to read", url) from None
    items = doc.get("segments") if isinstance(doc, dict) else doc
    if not isinstance(items, list):
        raise _fail(JSON, 'no "segments" list', url)
    cues: list[Segment] = []
    for item in items:
        if not isinstance(item, dict):
            continue
        body = item.get("body", item.get("text"))
        if isinstance(body, (int, float)) and not isinstance(body, bool):
            body = str(body)
        if not isinstance(body, str):
            continue
        speaker = item.get("speaker")
        cues.append(
            Segment(
                text=clean_text(body),
                start=parse_time(item.get("startTime", item.get("start"))),
                end=parse_time(item.get("endTime", item.get("end"))),
                speaker=clean_text(str(speaker)) if speaker not in (None, "") else "",
            )
        )
    return _merge(cues)


def _parse_vtt(text: str, url: str) -> list[Segment]:
    """WebVTT via webvtt-py. ``<v Name>`` voice tags give the speaker; other tags are stripped."""
    import webvtt  # imported here: no work at import time, and only VTT needs it
    from webvtt.errors import MalformedCaptionError, MalformedFileError

    body = original = text.lstrip()
    if not body.startswith("WEBVTT"):
        other = _looks_like(body)
        if other and other != "SubRip (SRT)":
            raise _fail(VTT, f"no WEBVTT header, looks like {other}", url)
        if not _TIMING_LINE_RE.search(body):
            raise _fail(VTT, "no WEBVTT header and no cues found", url)
        log.debug("WebVTT without a WEBVTT header%s; adding one", f" ({url})" if url else "")
        body = "WEBVTT\n\n" + body
    try:
        captions = webvtt.from_buffer(io.StringIO(body)).captions
    except (MalformedFileError, MalformedCaptionError) as exc:
        log.debug("webvtt-py rejected %s (%s); trying the lenient SRT reader", url or "a transcript", exc)
        captions = []
    if not captions:
        if _TIMING_LINE_RE.search(body):
            segments = _parse_srt(original, url)
            if segments:
                return segments
        raise _fail(VTT, "no cues found", url)
    cues: list[Segment] = []
    for caption in captions:
        start = caption.start_time.in_milliseconds() / 1000
        end = caption.end_time.in_milliseconds() / 1000
        parts = _VOICE_RE.split(caption.raw_text)
        # parts = [before the first voice tag, name1, text1, name2, text2, ...]
        pieces = [("", parts[0])] + [((parts[i] or "").strip(), parts[i + 1]) for i in range(1, len(parts) - 1, 2)]
        for speaker, raw in pieces:
            cleaned = clean_text(raw)
            if cleaned:
                cues.append(Segment(text=cleaned, start=start, end=end, speaker=clean_text(speaker)))
    return _merge(cues)


def _parse_srt(text: str, url: str) -> list[Segment]:
    """SubRip via the ``srt`` package (lenient). A leading ``Name: `` label names the speaker of that cue
    and of the following unlabelled cues."""
    import srt  # imported here: no work at import time

    other = _looks_like(text)
    if other in ("HTML", "JSON"):
        raise _fail(SRT, f"looks like {other}", url)
    try:
        subtitles = list(srt.parse(text, ignore_errors=True))
    except (srt.SRTParseError, ValueError) as exc:  # pragma: no cover - ignore_errors should prevent this
        raise _fail(SRT, str(exc), url) from None
    if not subtitles:
        raise _fail(SRT, "no cues found", url)
    lines_by_cue = [[clean_text(line) for line in sub.content.split("\n")] for sub in subtitles]
    handles = _known_handles(line for lines in lines_by_cue for line in lines)
    cues: list[Segment] = []
    speaker = ""
    for sub, lines in zip(subtitles, lines_by_cue, strict=True):
        start = sub.start.total_seconds()
        end = sub.end.total_seconds()
        for label, piece_lines in _labelled_pieces(lines, handles):
            if label is not None:
                speaker = label
            cleaned = " ".join(" ".join(piece_lines).split())  # lines are clean already
            if cleaned:
                cues.append(Segment(text=cleaned, start=max(start, 0.0), end=max(end, 0.0), speaker=speaker))
    return _merge(cues)


class _TranscriptHTMLParser(HTMLParser):
    """Collects block-level text with the speaker of the last ``<cite>`` and the time of the last ``<time>``."""

    BLOCKS = frozenset(
        """
        p div li ul ol dl dd dt section article main aside blockquote pre h1 h2 h3 h4 h5 h6 table tr td th
        br hr body html header footer figure figcaption details summary
        """.split()
    )
    SKIP = frozenset({"script", "style", "title", "noscript", "template", "svg", "nav", "button", "select"})

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.segments: list[Segment] = []
        self.speaker = ""
        self.time: float | None = None
        self.saw_cite = False
        self._buf: list[str] = []
        self._skip = 0
        self._cite: list[str] | None = None
        self._time_text: list[str] | None = None
        self._time_attr: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in self.SKIP:
            self._skip += 1
        elif self._skip:
            return
        elif tag == "cite":
            self.flush()
            self._cite = []
        elif tag == "time":
            self.flush()
            self._time_text = []
            self._time_attr = dict(attrs).get("datetime")
        elif tag in self.BLOCKS:
            self.flush()

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if not self._skip and tag in self.BLOCKS:
            self.flush()

    def handle_endtag(self, tag: str) -> None:
        if tag in self.SKIP:
            self._skip = max(0, self._skip - 1)
        elif self._skip:
            return
        elif tag == "cite" and self._cite is not None:
            name = clean_text("".join(self._cite), unescape=False).rstrip(":").strip()
            self._cite = None
            self.saw_cite = True
            self.speaker = name
        elif tag == "time" and self._time_text is not None:
            value = parse_time(self._time_attr) if self._time_attr else None
            if value is None:
                value = parse_time(clean_text("".join(self._time_text), unescape=False))
            if value is not None:
                self.time = value
            self._time_text = None
            self._time_attr = None
        elif tag in self.BLOCKS:
            self.flush()

    def handle_data(self, data: str) -> None:
        if self._skip:
            return
        if self._cite is not None:
            self._cite.append(data)
        elif self._time_text is not None:
            self._time_text.append(data)
        else:
            self._buf.append(data)

    def flush(self) -> None:
        """Turn the text collected since the last block boundary into a segment."""
        text = clean_text("".join(self._buf), unescape=False)
        self._buf = []
        if not text:
            return
        if not self.saw_cite:
            label, rest = _split_label(text)
            if label is not None:
                self.speaker = label
                text = rest.strip()
                if not text:
                    return
        self.segments.append(Segment(text=text, start=self.time, speaker=self.speaker))


def _parse_html(text: str, url: str) -> list[Segment]:
    """HTML: namespace-style ``<cite>``/``<time>``/``<p>`` fragments or any HTML page (stdlib parser)."""
    other = _looks_like(text)
    if other and other != "HTML":
        raise _fail(HTML, f"looks like {other}", url)
    if "<" not in text:
        log.debug("HTML transcript without markup%s; reading it as plain text", f" ({url})" if url else "")
        return _parse_plain(text, url)
    parser = _TranscriptHTMLParser()
    parser.feed(text)
    parser.close()
    parser.flush()
    return parser.segments


# a plain paragraph (after its label) that is a clock time alone: ``Speaker 0: 00:11:31``, ``[12:05]``
_PLAIN_TIME = re.compile(r"\[?((?:\d+:)?\d{1,2}:\d{2}(?:[.,]\d+)?)\]?")
_PLAIN_HMS = re.compile(r"\d\d:\d\d:\d\d(?:[.,]\d+)?")
#: Time-only plain paragraphs that are no ``hh:mm:ss`` are timestamps when there are at least this many, in order.
PLAIN_CLOCKS_MIN = 3
# Markdown's backslash before a punctuation mark, which shows the mark as written ("OP\_RETURN", "\@lightcoin",
# "C\#"): plain-text transcripts are often Markdown, and the backslash stayed, split the word ("OP\_RETURN" was
# indexed as "op" and "return": OP_RETURN missed the 10 site episodes that write it only so) and was shown
_MARKDOWN_ESCAPE = re.compile(r"\\([!-/:-@\[-`{-~])")


def _parse_plain(text: str, url: str) -> list[Segment]:
    """Plain text: paragraphs separated by blank lines; a leading ``Speaker: `` label names the speaker
    of that paragraph and of the following unlabelled ones. A paragraph that is a clock time alone, after a
    label or not (``Speaker 0: 00:11:31``, as transcription services export it), is the time of the paragraphs
    that follow until the next one: until 6 December 2026 it was a paragraph of its own, searched and shown as a
    moment ("00:11:31"; 12,810 of them in 101 episodes of the site corpus), and the text had no times. That is so
    when the transcript uses such times (:func:`_uses_timestamps`); else a time alone is a speaker's words
    ("Bob: 10:30"). Else no times. Markdown's escapes are read as the marks they escape (``OP\\_RETURN`` is ``OP_RETURN``)."""
    other = _looks_like(text)
    if other in ("WebVTT", "JSON"):  # HTML-looking text is fine: Markdown may embed HTML
        raise _fail(PLAIN, f"looks like {other}", url)
    handles = _known_handles(text.split("\n"))
    pieces = [
        piece
        for paragraph in re.split(r"\n[ \t]*\n", text)
        if (para_lines := [line for line in paragraph.split("\n") if line.strip()])
        for piece in _labelled_pieces(para_lines, handles)
    ]
    clocks = [_PLAIN_TIME.fullmatch(" ".join(lines).strip()) for _, lines in pieces]
    timed = _uses_timestamps([clock.group(1) for clock in clocks if clock])
    segments: list[Segment] = []
    speaker = ""
    start: float | None = None
    for (label, piece_lines), clock in zip(pieces, clocks, strict=True):
        if label is not None:
            speaker = label
        if timed and clock and (at := parse_time(clock.group(1))) is not None:
            start = at
            continue
        for chunk in _chunk_lines(piece_lines, PLAIN_MAX_CHARS):
            cleaned = clean_text(_MARKDOWN_ESCAPE.sub(r"\1", chunk))
            if cleaned:
                segments.append(Segment(text=cleaned, speaker=speaker, start=start))
    return segments


def _uses_timestamps(clocks: Sequence[str]) -> bool:
    """Whether a plain transcript's time-only paragraphs (``clocks``, in order) are its timestamps, not answers.

    They are when one is written hours, minutes and seconds with leading zeros (``00:11:31``, as transcription
    services export them), or when there are at least :data:`PLAIN_CLOCKS_MIN` of them, each at or after the one
    before it for at least 3 steps in 4. Else a time alone is what a speaker said ("Ann: 10:30", answering "when does
    it start?") and stays text: with parser 1 (6 December 2026) it was taken for a time and its
    text left the transcript.
    """
    if any(_PLAIN_HMS.fullmatch(clock) for clock in clocks):
        return True
    if len(clocks) < PLAIN_CLOCKS_MIN:
        return False
    seconds = [parse_time(clock) or 0.0 for clock in clocks]
    onwards = sum(b >= a for a, b in itertools.pairwise(seconds))
    return onwards * 4 >= (len(seconds) - 1) * 3


def _chunk_lines(lines: Sequence[str], max_chars: int) -> list[str]:
    """Join lines into chunks of about ``max_chars`` (a single longer line stays whole)."""
    chunks: list[str] = []
    current: list[str] = []
    size = 0
    for line in lines:
        if current and size + len(line) > max_chars:
            chunks.append("\n".join(current))
            current, size = [], 0
        current.append(line)
        size += len(line) + 1
    if current:
        chunks.append("\n".join(current))
    return chunks


_PARSERS = {JSON: _parse_json, VTT: _parse_vtt, SRT: _parse_srt, HTML: _parse_html, PLAIN: _parse_plain}


# Files that are no text, by how they begin: a PDF, a gzip file served as text/plain without Content-Encoding, and
# random bytes were each read as a transcript of garbled text, indexed and shown (found 5 December 2026).
_MAGIC = ((b"%PDF-", "a PDF file"), (b"\x1f\x8b", "a gzip file"), (b"PK\x03\x04", "a zip file"),
          (b"BZh", "a bzip2 file"), (b"\xfd7zXZ\x00", "an xz file"), (b"7z\xbc\xaf", "a 7z file"),
          (b"\x89PNG", "a PNG image"), (b"\xff\xd8\xff", "a JPEG image"), (b"GIF8", "a GIF image"),
          (b"ID3", "an MP3 file"), (b"OggS", "an Ogg file"), (b"fLaC", "a FLAC file"), (b"RIFF", "a RIFF file"),
          (b"\xd0\xcf\x11\xe0", "an Office file"))
BINARY_SHARE = 0.05  # of the first 4 KiB: more control bytes than this is no text (text has none but tab and newline)


def binary_kind(data: bytes) -> str:
    """What ``data`` is if it is not text (``"a PDF file"``, ``"binary data"``), else ""."""
    for magic, kind in _MAGIC:
        if data.startswith(magic):
            return kind
    if data[4:8] == b"ftyp":
        return "an MP4 file"
    head = data[:4096]
    if not head or head.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):  # (UTF-32's BOM begins as UTF-16's)
        return ""
    if head.count(0) > len(head) // 4:  # UTF-16 or UTF-32 without a byte-order mark: every other (or 3 of 4) zero
        return ""
    controls = sum(1 for b in head if b < 32 and b not in (9, 10, 12, 13)) + head.count(0x7F)
    return "binary data" if controls > BINARY_SHARE * len(head) else ""


def parse_transcript(data: bytes | str, mime_type: str, url: str = "") -> list[Segment]:
    """Parse a transcript into segments.

    ``mime_type`` is the declared type (parameters such as ``charset`` are honoured for decoding); when it
    is empty or unknown, the format is sniffed from the content. ``url`` is only used in messages.

    Raises :class:`~podsearch.errors.TranscriptError` when the content is empty, holds no text, or clearly is
    not the declared format (e.g. HTML served as ``text/vtt``, or JSON that does not parse).
    """
    where = f" ({url})" if url else ""
    if isinstance(data, str):
        text = decode_bytes(data.encode("utf-8"))
    else:
        kind = binary_kind(data)
        if kind:
            raise TranscriptError(f"not a transcript: {kind}{where}")
        charset = re.search(r";\s*charset\s*=\s*\"?([\w.:-]+)", mime_type or "", re.IGNORECASE)
        text = decode_bytes(data, charset.group(1) if charset else "")
    if not text.strip():
        raise TranscriptError(f"empty transcript{where}")
    declared = normalize_mime(mime_type)
    fmt = declared if declared in _PARSERS else sniff_format(text)
    if fmt != declared:
        log.debug("transcript type %r unknown%s; content looks like %s", mime_type, where, fmt)
    segments = [s for s in _PARSERS[fmt](text, url) if s.text]
    if not segments:
        raise TranscriptError(f"{_FORMAT_NAMES[fmt]} transcript has no text{where}")
    return segments
