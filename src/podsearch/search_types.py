"""The request and result objects of a search: one result object renders as HTML and as JSON."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

SORTS = ("relevance", "date", "oldest")


@dataclass
class SearchRequest:
    q: str
    page: int = 1
    per_page: int = 10
    shows: list[str] = field(default_factory=list)
    person: str = ""
    published_from: str = ""  # YYYY-MM-DD
    published_to: str = ""
    duration_min: int | None = None  # seconds
    duration_max: int | None = None
    language: str = ""
    sort: str = "relevance"


@dataclass
class Moment:
    start: float | None
    speaker: str
    text: str  # highlighted HTML (escaped, matches in <mark>)
    chapter: str = ""


@dataclass
class Hit:
    id: str
    title: str
    show: str
    show_id: str
    published: str | None
    url: str
    audio_url: str
    duration: int | None
    score: float
    snippet: str  # highlighted HTML (escaped, matches in <mark>)
    title_html: str
    moments: list[Moment] = field(default_factory=list)
    language: str = ""


@dataclass
class SearchResult:
    query: str
    total: int
    page: int
    per_page: int
    hits: list[Hit]
    facets: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    suggestion: str = ""
    relaxed: bool = False  # all-words matching found too little; any-word matching was used
    took_ms: float = 0.0

    @property
    def pages(self) -> int:
        return max(1, -(-self.total // self.per_page))

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["pages"] = self.pages
        return d
