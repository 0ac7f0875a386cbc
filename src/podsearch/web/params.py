"""Request parameters to library requests, with clear messages for bad values."""

from __future__ import annotations

from flask import Request

from ..errors import QueryError
from ..search_types import SearchRequest


def _int(request: Request, name: str, default: int | None, lo: int | None = None, hi: int | None = None) -> int | None:
    raw = request.args.get(name, "").strip()
    if raw == "":
        return default
    try:
        value = int(raw)
    except ValueError:
        raise QueryError(f"{name} must be a whole number, not {raw!r}.") from None
    if lo is not None and value < lo or hi is not None and value > hi:
        raise QueryError(f"{name} must be between {lo} and {hi}.")
    return value


def _float(request: Request, name: str, default: float | None) -> float | None:
    raw = request.args.get(name, "").strip()
    if raw == "":
        return default
    try:
        value = float(raw)
    except ValueError:
        raise QueryError(f"{name} must be a number, not {raw!r}.") from None
    if value != value or value in (float("inf"), float("-inf")):
        raise QueryError(f"{name} must be a finite number.")
    return value


def _bool(request: Request, name: str, default: bool) -> bool:
    raw = request.args.get(name, "").strip().lower()
    if raw == "":
        return default
    if raw in {"1", "true", "yes", "on"}:
        return True
    if raw in {"0", "false", "no", "off"}:
        return False
    raise QueryError(f"{name} must be true or false, not {raw!r}.")


def _list(request: Request, name: str) -> list[str]:
    out: list[str] = []
    for value in request.args.getlist(name):
        out.extend(v.strip() for v in value.split(",") if v.strip())
    return out


def search_request(request: Request, default_per_page: int = 10) -> SearchRequest:
    minutes_min = _int(request, "duration_min", None, 0, 100000)
    minutes_max = _int(request, "duration_max", None, 0, 100000)
    return SearchRequest(
        q=request.args.get("q", ""),
        page=_int(request, "page", 1, 1, 1000) or 1,
        per_page=_int(request, "per_page", default_per_page, 1, 100) or default_per_page,
        shows=_list(request, "show"),
        person=request.args.get("person", "").strip(),
        published_from=request.args.get("from", "").strip(),
        published_to=request.args.get("to", "").strip(),
        duration_min=minutes_min * 60 if minutes_min is not None else None,
        duration_max=minutes_max * 60 if minutes_max is not None else None,
        language=request.args.get("language", "").strip(),
        sort=request.args.get("sort", "relevance").strip() or "relevance",
    )


def similar_options(request: Request) -> dict:
    return {
        "k": _int(request, "k", 10, 1, 50) or 10,
        "same_show": _bool(request, "same_show", True),
        "shows": _list(request, "show") or None,
        "exclude_shows": _list(request, "exclude_show") or None,
        "min_score": _float(request, "min_score", 0.0) or 0.0,
    }


def seconds(request: Request, name: str = "t") -> float | None:
    value = _float(request, name, None)
    if value is not None and value < 0:
        raise QueryError(f"{name} must be 0 or more seconds.")
    return value
