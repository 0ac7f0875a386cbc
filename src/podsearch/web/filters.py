"""Template filters: how times, dates and queries read on the pages (and in feeds)."""

from __future__ import annotations

from datetime import datetime

from ..answers import transcript_part
from ..requests import holds_quotes


def clock(seconds: float | int | None) -> str:
    """Seconds as H:MM:SS or M:SS."""
    if seconds is None:
        return ""
    total = int(seconds)
    h, rest = divmod(total, 3600)
    m, s = divmod(rest, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m}:{s:02d}"


def date(value: str | None) -> str:
    """An ISO timestamp as '1 May 2024'."""
    if not value:
        return ""
    try:
        dt = datetime.strptime(value[:10], "%Y-%m-%d")
    except ValueError:
        return value
    return f"{dt.day} {dt.strftime('%b %Y')}"


def quoted(query: str) -> str:
    """A query as the page names it: “in quotes”, unless it holds double quotes of its own (a phrase), which
    then delimit it as typed (“"waggle dance"” reads as a stutter)."""
    return query if holds_quotes(query) else f"“{query}”"


def part(place: int | None) -> int | None:
    """The part of the episode page (``?part=``) that holds the transcript paragraph at ``place``; None for the
    first (its links need no ``part``)."""
    n = transcript_part(place) if place is not None else 1
    return n if n > 1 else None


def part_numbers(part: int, parts: int) -> list[int | None]:
    """The parts to link around ``part``: the first, the last and two either side; None marks a gap."""
    out: list[int | None] = []
    for n in sorted({1, parts, *range(max(1, part - 2), min(parts, part + 2) + 1)}):
        if out and n - (out[-1] or 0) > 1:
            out.append(None)
        out.append(n)
    return out
