"""The Podcasting 2.0 JSON chapters format."""

from __future__ import annotations

import json

from ..episodes import Chapter
from .feeds import MAX_CHAPTERS, safe_url
from .transcripts import parse_time


def parse_chapters(data: bytes) -> list[Chapter]:
    """The Podcasting 2.0 JSON chapters format: {"chapters": [{"startTime", "title", ...}]}."""
    try:
        doc = json.loads(data.decode("utf-8-sig", errors="replace"))
    except json.JSONDecodeError as exc:
        raise ValueError(f"chapters are not JSON ({exc.msg})") from None
    except RecursionError:
        raise ValueError("chapters are nested too deep to read") from None
    out = []
    for ch in (doc.get("chapters") if isinstance(doc, dict) else None) or []:
        if not isinstance(ch, dict) or ch.get("toc") is False:
            continue
        # a time in seconds, finite and not negative (1e309 and "NaN" were kept, and answered as Infinity and NaN,
        # which no JSON parser reads)
        start = parse_time(ch.get("startTime", 0))
        if start is None:
            continue
        end = parse_time(ch.get("endTime"))
        # http(s) links only, as every other link of a feed (a "javascript:" url was served by the API until
        # 5 December 2026)
        out.append(Chapter(start=start, end=end, title=str(ch.get("title") or ""), url=safe_url(str(ch.get("url") or "")),
                           img=safe_url(str(ch.get("img") or ""))))
    out.sort(key=lambda c: c.start)
    return out[:MAX_CHAPTERS]
