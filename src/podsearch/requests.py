"""Every request parameter and its limits, declared once for the API, the pages and the CLI.

The declarations are pydantic models: they check what a request asks (``parse``, which turns a refusal into a
:class:`QueryError` that names the parameter and the fix) and they are what the OpenAPI document describes
(``web/openapi.py`` reads their JSON schema), so the spec and the checks cannot drift.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from datetime import time as dtime
from typing import Annotated, Any, ClassVar, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, ValidationError, model_validator

from . import languages
from .engines.base import SORTS, EngineQuery, Filters
from .engines.querytext import period, questions_asked, straight_quotes
from .errors import QueryError

MAX_QUERY_CHARS = 500
MAX_PREFIX_CHARS = 100
MAX_TEXT_CHARS = 20000
MAX_PER_PAGE = 100
MAX_DEPTH = 1000  # page * per_page: deep pages cost a full ranking and are never what a person wants
MAX_K = 50
MAX_MINUTES = 100000
MAX_SHOWS = 50  # show ids a filter may name: the search page links "without this one" for each (n x n)
MAX_ID_CHARS = 1000  # an imported show_id may be longer than a feed's slug (60)
MAX_PARTS = 10000  # parts of a transcript (PART_SEGMENTS each) a request may name: 20 MB of transcript is fewer
DATE_PATTERN = r"^$|^\d{4}(-(0[1-9]|1[0-2])(-(0[1-9]|[12]\d|3[01]))?)?$"
DATE_HINT = "a date like 2024-05-01, 2024-05 or 2024"
DEPTH_MESSAGE = f"Results past the first {MAX_DEPTH:,} are not served; narrow the query."

BROWSE = re.compile(r"\s*(?:\*|\*:\*)?\s*")  # what lists every episode, as an empty query does
_EXPENSIVE = re.compile(r"[*?~\[\]{}]")
EXPENSIVE_WORDS = 12
EXPENSIVE_PAGE = 50  # results per page past which a page costs more than an ordinary one (its snippets and moments)

Sort = Literal[SORTS]  # type: ignore[valid-type]


ShowId = Annotated[str, StringConstraints(max_length=MAX_ID_CHARS)]

class Params(BaseModel):
    """Query-string parameters: unknown ones are ignored, blank ones take their default."""

    model_config = ConfigDict(extra="ignore", frozen=True, populate_by_name=True)


class PageParams(Params):
    page: int = Field(1, ge=1, le=MAX_DEPTH, description=f"Page number, from 1. page * per_page may not exceed {MAX_DEPTH}.")
    per_page: int = Field(10, ge=1, le=MAX_PER_PAGE, description="Results per page.")

    ranked: ClassVar[bool] = True  # pages of a ranking: page * per_page is bounded by MAX_DEPTH

    @model_validator(mode="after")
    def _depth(self) -> PageParams:
        if self.ranked and self.page * self.per_page > MAX_DEPTH:
            raise ValueError(DEPTH_MESSAGE)
        return self


class ShowPageParams(PageParams):
    """A show's episodes, newest first: a listing of the catalog, which reads the whole show whatever the page, so
    any page up to ``MAX_DEPTH`` at any size (until 5 December 2026 the search's depth bound cut a show's list at its
    1,000th episode, "narrow the query")."""

    ranked: ClassVar[bool] = False
    page: int = Field(1, ge=1, le=MAX_DEPTH, description=f"Page number, from 1 (at most {MAX_DEPTH}).")
    per_page: int = Field(50, ge=1, le=MAX_PER_PAGE, description="Episodes per page.")


class SearchParams(PageParams):
    q: str = Field("", max_length=MAX_QUERY_CHARS, description='Search words; "quoted phrases", -excluded, OR, '
                   "field:value. Empty lists everything newest first.")
    show: list[ShowId] = Field([], max_length=MAX_SHOWS, description=(
        f"Only these show ids (comma-separated or repeated; at most {MAX_SHOWS})."))
    person: str = Field("", max_length=MAX_PREFIX_CHARS, description="Only episodes with this person.")
    from_: str = Field("", alias="from", pattern=DATE_PATTERN,
                       description="Published on or after: YYYY, YYYY-MM or YYYY-MM-DD.")
    to: str = Field("", pattern=DATE_PATTERN, description="Published on or before: YYYY, YYYY-MM or YYYY-MM-DD.")
    duration_min: int | None = Field(None, ge=0, le=MAX_MINUTES, description="At least this many minutes long.")
    duration_max: int | None = Field(None, ge=0, le=MAX_MINUTES, description="At most this many minutes long.")
    language: str = Field("", max_length=40, description=(
        "Only episodes in this language (en, de, pt-BR: the region is ignored); the query is analysed for that "
        "language alone. Without it, the query is analysed for every language in the index. Also `lang`."))
    sort: Sort = Field("relevance", description="relevance (best match first), date (newest first) or oldest.")
    correct: bool = Field(True, description=(
        "false: search the words as typed. By default a query whose unknown words have a spelling suggestion that "
        "finds episodes with every word is answered for the suggestion (`corrected` says so)."))


class SimilarParams(Params):
    k: int = Field(10, ge=1, le=MAX_K, description="How many neighbours.")
    same_show: bool = Field(True, description="false: only episodes of other shows.")
    show: list[ShowId] = Field([], max_length=MAX_SHOWS, description=(
        f"Only these show ids (comma-separated or repeated; at most {MAX_SHOWS})."))
    exclude_show: list[ShowId] = Field([], max_length=MAX_SHOWS, description=(
        f"Not these show ids (comma-separated or repeated; at most {MAX_SHOWS})."))
    min_score: float = Field(0.0, ge=0, le=1, allow_inf_nan=False, description="Leave out weaker neighbours.")
    same_language: bool = Field(True, description="Only episodes in the episode's language (or of no known one).")

    def options(self) -> dict[str, Any]:
        """The library's keyword arguments for these neighbour options."""
        return {"k": self.k, "same_show": self.same_show, "shows": self.show or None,
                "exclude_shows": self.exclude_show or None, "min_score": self.min_score,
                "same_language": self.same_language}


class PartParams(Params):
    part: int | None = Field(None, ge=1, le=MAX_PARTS,
                             description="Part of the transcript, from 1 (each part holds 2,000 segments).")


class SeekParams(PartParams):
    """An episode page: the part of the transcript asked for, else the one playing at ``t``, else the first."""

    t: float | None = Field(None, ge=0, allow_inf_nan=False, description="Seconds into the episode.")


class MomentParams(SimilarParams):
    t: float | None = Field(None, ge=0, allow_inf_nan=False,
                            description="Seconds into the episode: neighbours of the two minutes around it.")


class SimilarTextParams(SimilarParams):
    text: str = Field("", max_length=MAX_TEXT_CHARS, description="Free text to find episodes near in topic.")


class SuggestParams(Params):
    q: str = Field("", max_length=MAX_PREFIX_CHARS, description="What was typed so far.")


P = TypeVar("P", bound=Params)

ALIASES = {"lang": "language"}  # other names a parameter is known by


def parse(model: type[P], args: Mapping[str, Any]) -> P:
    """``args`` (a query string's MultiDict, or a dict) checked against ``model``; QueryError names what is wrong."""
    raw: dict[str, Any] = {}
    for name, info in model.model_fields.items():
        key = info.alias or name
        names = [key] + [a for a, target in ALIASES.items() if target == key]
        if _is_list(info.annotation):
            values = [v for n in names for v in _getlist(args, n)]
            items = [part.strip() for v in values for part in str(v).split(",") if part.strip()]
            if items:
                raw[key] = items
            continue
        for n in names:
            found = _getlist(args, n)
            value = found[0] if found else None
            if value is not None and str(value).strip() != "":
                raw[key] = value.strip() if isinstance(value, str) and key not in {"q", "text"} else value
                break
    try:
        return model.model_validate(raw)
    except ValidationError as exc:
        raise QueryError(_message(model, exc, raw)) from None


def _getlist(args: Mapping[str, Any], name: str) -> list[Any]:
    if hasattr(args, "getlist"):
        return list(args.getlist(name))
    value = args.get(name)
    if value is None:
        return []
    return list(value) if isinstance(value, list | tuple) else [value]


def _is_list(annotation: Any) -> bool:
    return getattr(annotation, "__origin__", None) is list


def _message(model: type[Params], exc: ValidationError, raw: dict[str, Any]) -> str:
    """One sentence for the first thing wrong, in the words of the parameter's declaration."""
    err = exc.errors(include_url=False)[0]
    if not err["loc"]:  # a rule over several parameters
        return str(err.get("ctx", {}).get("error", err["msg"])).removeprefix("Value error, ")
    name = str(err["loc"][0])
    value = raw.get(name)
    info = next((f for n, f in model.model_fields.items() if (f.alias or n) == name), None)
    bounds = {k: getattr(m, k) for m in (info.metadata if info else []) for k in ("ge", "le") if hasattr(m, k)}
    kind = err["type"]
    if kind in {"int_parsing", "int_from_float"}:
        return f"{name} must be a whole number, not {value!r}."
    if kind in {"greater_than_equal", "less_than_equal"} and {"ge", "le"} <= bounds.keys():
        return f"{name} must be between {bounds['ge']:g} and {bounds['le']:g}."
    if kind in {"greater_than_equal"}:
        return f"{name} must be {bounds.get('ge', 0):g} or more."
    if kind in {"float_parsing", "finite_number"}:
        return f"{name} must be a finite number, not {value!r}."
    if kind == "bool_parsing":
        return f"{name} must be true or false, not {value!r}."
    if kind == "string_too_long" and len(err["loc"]) > 1:  # an item of a list
        item = value[err["loc"][1]] if isinstance(value, list) else value
        return f"{name} {str(item)[:40]!r}... is {len(str(item))} characters long; the limit is {err['ctx']['max_length']}."
    if kind == "string_too_long":
        return f"{name} is {len(str(value))} characters long; the limit is {err['ctx']['max_length']}."
    if kind == "too_long":
        return f"{name} names {len(value or [])} values; the limit is {err['ctx']['max_length']}."
    if kind == "string_pattern_mismatch":
        return f"{name} must be {DATE_HINT}, not {value!r}."
    if kind == "literal_error":
        choices = getattr(info.annotation, "__args__", ()) if info else ()
        return f"{name} must be one of {', '.join(map(str, choices))}, not {value!r}."
    return f"{name}: {err['msg']}."


# -- the library's requests ---------------------------------------------------------------------------
@dataclass
class SearchRequest:
    """A search as the library runs it (durations in seconds, dates as typed)."""

    q: str
    page: int = 1
    per_page: int = 10
    shows: list[str] = field(default_factory=list)
    person: str = ""
    published_from: str = ""  # YYYY, YYYY-MM or YYYY-MM-DD
    published_to: str = ""
    duration_min: int | None = None  # seconds
    duration_max: int | None = None
    language: str = ""
    sort: str = "relevance"
    correct: bool = True  # a query with unknown words answered for its spelling suggestion (service.Library)

    @property
    def expensive(self) -> bool:
        """Whether the query may cost more than an ordinary search: a wildcard, fuzzy or range part, a phrase's slop
        (``~`` marks both), many words, or more than ``EXPENSIVE_PAGE`` results a page. Such searches share fewer
        workers (``web/admission.py``)."""
        text = questions_asked(self.q)
        return (bool(_EXPENSIVE.search(text)) or len(text.split()) > EXPENSIVE_WORDS
                or self.per_page > EXPENSIVE_PAGE)

    def engine_query(self, deadline: float | None = None) -> EngineQuery:
        """The engine's question; QueryError when a value is out of bounds (for requests not built by
        :func:`search_request`, which checks them all first)."""
        checked = parse(SearchParams, {"q": self.q, "page": self.page, "per_page": self.per_page, "sort": self.sort,
                                       "person": self.person, "from": self.published_from, "to": self.published_to})
        for name in ("duration_min", "duration_max"):
            value = getattr(self, name)
            if value is not None and value < 0:
                raise QueryError(f"{name} must be 0 or more seconds.")
        lang = ""
        if self.language:
            lang = languages.primary(languages.normalize(self.language[:40]))
            if not lang:
                raise QueryError(f"language must be a language code such as en, de or pt-BR, not {self.language!r}.")
        start, end = parse_date(self.published_from, "from"), parse_date(self.published_to, "to", end=True)
        if start and end and end < start:  # written backwards (from=2025&to=2023), as published:[2025 TO 2023] is
            start, end = parse_date(self.published_to, "to"), parse_date(self.published_from, "from", end=True)
        shortest, longest = self.duration_min, self.duration_max
        if shortest is not None and longest is not None and longest < shortest:  # written backwards, as the dates
            shortest, longest = longest, shortest  # (found nothing until 5 December 2026)
        filters = Filters(shows=tuple(self.shows), person=self.person.strip().lower(),
                          published_from=start, published_to=end,
                          duration_min=shortest, duration_max=longest, language=lang)
        # "*" alone: every episode; “typographic quotes” are the phrase's quotes
        text = "" if BROWSE.fullmatch(checked.q) else questions_asked(straight_quotes(checked.q))
        return EngineQuery(text=text, filters=filters, sort=checked.sort, page=checked.page,
                           per_page=checked.per_page, deadline=deadline)


def holds_quotes(q: str) -> bool:
    """Whether a query holds double quotes of its own, straight or typographic (a phrase)."""
    return '"' in straight_quotes(q)


def search_request(args: Mapping[str, Any]) -> SearchRequest:
    """The search a query string (or the CLI's options, by the same names) asks for."""
    p = parse(SearchParams, args)
    return SearchRequest(
        q=p.q, page=p.page, per_page=p.per_page, shows=list(p.show), person=p.person.strip(),
        published_from=p.from_, published_to=p.to,
        duration_min=p.duration_min * 60 if p.duration_min is not None else None,
        duration_max=p.duration_max * 60 if p.duration_max is not None else None,
        language=_language(p.language), sort=p.sort, correct=p.correct)


def search_asked(args: Mapping[str, Any], defaults: Mapping[str, str] | None = None) -> SearchRequest:
    """The search a route's query string asks for, its ``defaults`` (the route's own: the search feed's longer page)
    in place of what it does not say; QueryError (a 400) when the parser refuses it. The one reading of a search's
    query string: the view runs it, and the rate limit (``web/limits.request_cost``) and the server's fair queue
    (``server.queue_cost``) weigh it by it (:attr:`SearchRequest.expensive`; a refused one as no search)."""
    if defaults:
        if hasattr(args, "getlist"):  # (a MultiDict)
            args = args.copy()
            for name, value in defaults.items():
                args.setdefault(name, value)
        else:
            args = {**defaults, **args}
    return search_request(args)


def _language(raw: str) -> str:
    """A language tag (``de``, ``pt-BR``), normalised; "" for any language."""
    if not raw:
        return ""
    tag = languages.normalize(raw[:40])
    if not tag:
        raise QueryError(f"lang (or language) must be a language code such as en, de or pt-BR, not {raw[:40]!r}.")
    return tag


def parse_date(value: str, name: str, end: bool = False) -> datetime | None:
    """``2024``, ``2024-05`` or ``2024-05-01`` as the first (or with ``end`` the last) second it covers; read as
    ``published:`` reads it (``querytext.period``: ``to=9999-12`` was a 500, ``to=9999`` taken where
    ``published:9999`` was refused)."""
    if not value:
        return None
    try:
        first, last = period(value)
    except ValueError:
        raise QueryError(f"{name} must be {DATE_HINT}, not {value!r}.") from None
    return datetime.combine(last, dtime(23, 59, 59)) if end else datetime.combine(first, dtime())
