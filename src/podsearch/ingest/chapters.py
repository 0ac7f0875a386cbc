"""The Podcasting 2.0 JSON chapters format."""

from __future__ import annotations

import json

from ..episodes import Chapter


def parse_chapters(data: bytes) -> list[Chapter]:
    """The Podcasting 2.0 JSON chapters format: {"chapters": [{"startTime", "title", ...}]}."""
    try:
        doc = json.loads(data.decode("utf-8-sig", errors="replace"))
    except json.JSONDecodeError as exc:
        raise ValueError(f"chapters are not JSON ({exc.msg})") from None
    out = []
    for ch in (doc.get("chapters") if isinstance(doc, dict) else None) or []:
        if not isinstance(ch, dict) or ch.get("toc") is False:
            continue
        try:
            start = float(ch.get("startTime", 0))
        except (TypeError, ValueError):
            continue
        end = ch.get("endTime")
        try:
            end = float(end) if end is not None else None
        except (TypeError, ValueError):
            end = None
        out.append(Chapter(start=start, end=end, title=str(ch.get("title") or ""), url=str(ch.get("url") or ""),
                           img=str(ch.get("img") or "")))
    out.sort(key=lambda c: c.start)
    return out
