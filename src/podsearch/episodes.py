"""The data types that flow from ingest to the catalog, the index and the model."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass
class Person:
    name: str
    role: str = ""
    group: str = ""
    href: str = ""
    img: str = ""


def person_key(name: str) -> str:
    """A person's key: the person filter's and facet's value, and what a shown name is looked up by (the
    catalog's ``people``). Lower case: "Ian McAllister" and "ian mcallister" are one person."""
    return name.strip().lower().replace(",", " ")


def people_named(ep: Episode) -> list[str]:
    """The episode's people as written: its persons (as the feed names them), then the speakers its transcript
    names that are not among them."""
    persons = [p.name for p in ep.persons]
    return persons + sorted({s.speaker for s in ep.segments if s.speaker} - set(persons))


@dataclass
class Segment:
    """One time-coded piece of a transcript. start/end are seconds (None when the format has no times)."""

    text: str
    start: float | None = None
    end: float | None = None
    speaker: str = ""


@dataclass
class TranscriptLink:
    url: str
    type: str = ""
    language: str = ""
    rel: str = ""
    local: bool = False  # a path relative to a local feed file (the only local files a feed may name)


@dataclass
class Chapter:
    start: float
    title: str
    end: float | None = None
    url: str = ""
    img: str = ""


@dataclass
class Show:
    id: str
    title: str
    source: str = ""  # the feed URL or path it came from
    link: str = ""
    description: str = ""
    language: str = ""
    image: str = ""
    author: str = ""
    categories: list[str] = field(default_factory=list)
    persons: list[Person] = field(default_factory=list)
    guid: str = ""  # the show's podcast:guid (Podcasting 2.0), when its feed gives one: its identity across moves

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Episode:
    id: str
    show_id: str
    title: str
    link: str = ""
    description_html: str = ""  # sanitized, safe to show
    description_text: str = ""  # plain text, for indexing
    published: str | None = None  # ISO 8601 UTC, e.g. 2024-05-01T12:00:00Z
    duration: int | None = None  # seconds
    audio_url: str = ""
    audio_type: str = ""
    image: str = ""
    season: int | None = None
    number: int | None = None
    language: str = ""
    categories: list[str] = field(default_factory=list)
    persons: list[Person] = field(default_factory=list)
    transcript_links: list[TranscriptLink] = field(default_factory=list)
    chapters_url: str = ""
    chapters_local: bool = False
    chapters: list[Chapter] = field(default_factory=list)
    segments: list[Segment] = field(default_factory=list)
    transcript_source: str = ""  # the URL of the transcript the segments came from

    @property
    def transcript_text(self) -> str:
        return "\n".join(s.text for s in self.segments if s.text)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)
