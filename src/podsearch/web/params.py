"""Request parameters to library requests, with clear messages for bad values."""

from __future__ import annotations

from flask import Request

from ..errors import QueryError
from ..languages import normalize
from ..search_types import SearchRequest

# Limits of what one request may ask for; the OpenAPI document (openapi.py) states the same numbers.
MAX_QUERY_CHARS = 500
MAX_PREFIX_CHARS = 100
MAX_TEXT_CHARS = 20000
MAX_PER_PAGE = 100
MAX_DEPTH = 1000  # page * per_page: deep pages cost a full ranking and are never what a person wants


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


def _text(request: Request, name: str, limit: int) -> str:
    value = request.args.get(name, "")
    if len(value) > limit:
        raise QueryError(f"{name} is {len(value)} characters long; the limit is {limit}.")
    return value


def page_window(request: Request, default_per_page: int = 10) -> tuple[int, int]:
    """``page`` and ``per_page``, refusing pages past the first MAX_DEPTH results."""
    per_page = _int(request, "per_page", default_per_page, 1, MAX_PER_PAGE) or default_per_page
    page = _int(request, "page", 1, 1, MAX_DEPTH) or 1
    if page * per_page > MAX_DEPTH:
        raise QueryError(f"Results past the first {MAX_DEPTH:,} are not served; narrow the query.")
    return page, per_page


def search_request(request: Request, default_per_page: int = 10) -> SearchRequest:
    minutes_min = _int(request, "duration_min", None, 0, 100000)
    minutes_max = _int(request, "duration_max", None, 0, 100000)
    page, per_page = page_window(request, default_per_page)
    return SearchRequest(
        q=_text(request, "q", MAX_QUERY_CHARS),
        page=page,
        per_page=per_page,
        shows=_list(request, "show"),
        person=_text(request, "person", MAX_PREFIX_CHARS).strip(),
        published_from=request.args.get("from", "").strip(),
        published_to=request.args.get("to", "").strip(),
        duration_min=minutes_min * 60 if minutes_min is not None else None,
        duration_max=minutes_max * 60 if minutes_max is not None else None,
        language=language(request),
        sort=request.args.get("sort", "relevance").strip() or "relevance",
    )


def language(request: Request) -> str:
    """``lang`` or ``language``: a language tag (``de``, ``pt-BR``), normalised; "" for any language."""
    raw = (request.args.get("lang", "") or request.args.get("language", "")).strip()
    if not raw:
        return ""
    tag = normalize(raw[:40])
    if not tag:
        raise QueryError(f"lang must be a language code such as en, de or pt-BR, not {raw[:40]!r}.")
    return tag


def suggest_prefix(request: Request) -> str:
    return _text(request, "q", MAX_PREFIX_CHARS)


def similar_options(request: Request) -> dict:
    return {
        "k": _int(request, "k", 10, 1, 50) or 10,
        "same_show": _bool(request, "same_show", True),
        "shows": _list(request, "show") or None,
        "exclude_shows": _list(request, "exclude_show") or None,
        "min_score": _float(request, "min_score", 0.0) or 0.0,
        "same_language": _bool(request, "same_language", True),
    }


def seconds(request: Request, name: str = "t") -> float | None:
    value = _float(request, name, None)
    if value is not None and value < 0:
        raise QueryError(f"{name} must be 0 or more seconds.")
    return value
