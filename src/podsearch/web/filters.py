"""Template filters: how times, dates and queries read on the pages (and in feeds)."""

from __future__ import annotations

from datetime import datetime

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
