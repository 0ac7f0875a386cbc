"""Import episodes from a JSON-lines export, for sites without a feed.

One JSON object per line::

    {"id": "ep-1", "show": "My Show", "title": "...", "description": "<p>notes</p>",
     "published": "2024-05-01", "duration": 1834, "audio_url": "https://...", "link": "https://...",
     "transcript": "plain text"  |  "segments": [{"start": 0, "end": 4.2, "speaker": "Ana", "text": "..."}],
     "persons": ["Ana", {"name": "Bo", "role": "guest"}], "language": "en", "show_id": "my-show"}

Only ``id`` and ``title`` (or some text) are required. ``duration`` takes seconds or ``H:MM:SS``.
"""

from __future__ import annotations

import json
import logging
import math
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..episodes import Episode, Person, Segment, Show
from ..errors import ImportFormatError
from ..languages import choose
from .feeds import slugify
from .text import MAX_NUMBER, html_to_text, parse_duration, parse_iso_date, sanitize_html, to_int

log = logging.getLogger(__name__)


@dataclass
class ImportedLine:
    show: Show
    episode: Episode
    line_no: int = 0


def _text(value: Any, name: str, line_no: int) -> str:
    if value is None:
        return ""
    if isinstance(value, (str, int, float)):
        return str(value)
    raise ImportFormatError(f"line {line_no}: {name} must be text, not {type(value).__name__}")


def _segments(raw: Any, line_no: int) -> list[Segment]:
    if not isinstance(raw, list):
        raise ImportFormatError(f"line {line_no}: segments must be a list")
    out = []
    for n, seg in enumerate(raw, 1):
        if not isinstance(seg, dict):
            raise ImportFormatError(f"line {line_no}: segment {n} must be an object")
        text = _text(seg.get("text", seg.get("body")), "segment text", line_no).strip()
        if not text:
            continue
        try:
            start = float(seg["start"]) if seg.get("start") is not None else None
            end = float(seg["end"]) if seg.get("end") is not None else None
        except (TypeError, ValueError):
            raise ImportFormatError(f"line {line_no}: segment {n} has a start or end that is not a number") from None
        if any(t is not None and not 0 <= t < math.inf for t in (start, end)):  # (JSON's 1e309 is infinite)
            raise ImportFormatError(f"line {line_no}: segment {n} has a start or end that is not a time in seconds "
                                    "(0 or more, finite)")
        out.append(Segment(text=text, start=start, end=end, speaker=_text(seg.get("speaker"), "speaker", line_no)))
    return out


def _number(value: Any, line_no: int) -> int | None:
    """The episode's number (an integer, or digits in a string), None when absent."""
    if value is None or value == "":
        return None
    if isinstance(value, bool) or not (isinstance(value, int) or (isinstance(value, str) and value.strip().isdigit())):
        raise ImportFormatError(f"line {line_no}: number {value!r} is not a whole number")
    number = to_int(value)
    if number is None:
        raise ImportFormatError(f"line {line_no}: number {value!r} is out of range (at most {MAX_NUMBER:,})")
    return number


def parse_line(obj: Any, line_no: int, source: str) -> ImportedLine:
    if not isinstance(obj, dict):
        raise ImportFormatError(f"line {line_no}: expected a JSON object")
    episode_id = _text(obj.get("id"), "id", line_no).strip()
    if not episode_id:
        raise ImportFormatError(f"line {line_no}: missing id")
    show_title = _text(obj.get("show"), "show", line_no).strip() or Path(source).stem
    show_id = _text(obj.get("show_id"), "show_id", line_no).strip() or slugify(show_title, "imported")
    description = _text(obj.get("description"), "description", line_no)
    persons = []
    if not isinstance(obj.get("persons") or [], list):
        raise ImportFormatError(f"line {line_no}: persons must be a list of names or objects")
    for p in obj.get("persons") or []:
        if isinstance(p, str):
            persons.append(Person(name=p))
        elif isinstance(p, dict) and p.get("name"):
            persons.append(Person(name=str(p["name"]), role=str(p.get("role", "")), group=str(p.get("group", "")),
                                  href=str(p.get("href", ""))))
    if "segments" in obj and obj["segments"] is not None:
        segments = _segments(obj["segments"], line_no)
    else:
        text = _text(obj.get("transcript") or obj.get("text"), "transcript", line_no)
        segments = [Segment(text=p.strip()) for p in text.split("\n\n") if p.strip()]
    published_raw = obj.get("published")
    published = parse_iso_date(_text(published_raw, "published", line_no)) if published_raw else None
    if published_raw and published is None:
        raise ImportFormatError(f"line {line_no}: published {published_raw!r} is not an ISO date")
    duration = parse_duration(obj.get("duration")) if obj.get("duration") is not None else None
    title = _text(obj.get("title"), "title", line_no).strip()
    number = _number(obj.get("number"), line_no)
    notes = html_to_text(description)
    # The line's language, else detected from its text ("" when the detector is unsure: English analysis).
    language = choose(_text(obj.get("language"), "language", line_no),
                      text=lambda: "\n".join([title, notes] + [s.text for s in segments[:200]]))
    episode = Episode(
        id=episode_id, show_id=show_id, title=title,
        link=_text(obj.get("link"), "link", line_no), description_html=sanitize_html(description),
        description_text=notes, published=published, duration=duration,
        audio_url=_text(obj.get("audio_url"), "audio_url", line_no), language=language,
        persons=persons, segments=segments, number=number,
    )
    return ImportedLine(show=Show(id=show_id, title=show_title, source=source), episode=episode, line_no=line_no)


def read_jsonl(path: Path | str) -> Iterator[ImportedLine | ImportFormatError]:
    """Each line parsed, or the error for that line (so one bad line does not stop the rest)."""
    path = Path(path)
    with open(path, encoding="utf-8-sig", errors="replace") as fh:
        for line_no, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                obj = _whole_characters(json.loads(line))
            except json.JSONDecodeError as exc:
                yield ImportFormatError(f"{path}: line {line_no}: not JSON ({exc.msg})")
                continue
            except RecursionError:
                yield ImportFormatError(f"{path}: line {line_no}: nested too deep to read")
                continue
            try:
                yield parse_line(obj, line_no, str(path))
            except ImportFormatError as exc:
                yield ImportFormatError(f"{path}: {exc}")
            except (OSError, MemoryError):  # the machine, not the line (a full disk: the language detector unpacks
                raise                       # its model to a temporary file): every line would fail alike
            except Exception as exc:  # a value no rule above foresaw: that line is reported, the others imported
                log.exception("%s: line %d could not be read", path, line_no)
                yield ImportFormatError(f"{path}: line {line_no}: could not be read ({type(exc).__name__}: {exc})")


_SURROGATE = re.compile("[\ud800-\udfff]")


def _whole_characters(value: Any) -> Any:
    """``value`` with every string's lone surrogates (JSON's ``"\\ud800"`` escapes, which no UTF-8 text can hold)
    replaced by U+FFFD, so the catalog and the index can store it."""
    if isinstance(value, str):
        return _SURROGATE.sub("\ufffd", value)
    if isinstance(value, list):
        return [_whole_characters(v) for v in value]
    if isinstance(value, dict):
        return {_whole_characters(k): _whole_characters(v) for k, v in value.items()}
    return value
