"""The data types that flow from ingest to the catalog, the index and the model."""

from __future__ import annotations

import re
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


_APOSTROPHES = "'’ʼ"  # the straight one, the typographic one feeds write, the letter apostrophe


def person_keys(person: str) -> list[str]:
    """The keys the person filter ``person`` finds: as typed (lower case), and with its apostrophe written each other
    way, as feeds write names ("Russell O’Connor", "Russell O'Connor"): until 5 December 2026 ``person=russell
    o'connor`` found none of the episodes that wrote the name with a typographic apostrophe."""
    key = person.strip().lower()
    if not any(a in key for a in _APOSTROPHES):
        return [key]
    plain = "".join("'" if c in _APOSTROPHES else c for c in key)
    return list(dict.fromkeys([key, *(plain.replace("'", a) for a in _APOSTROPHES)]))


# words that make a speaker label a role, wherever they stand in it ("Audience Member", "New Speaker", "Speaker B")
ROLE_WORDS = {"speaker", "host", "guest", "audience", "unknown", "interviewer", "interviewee", "moderator", "jingle",
              "participant", "narrator", "announcer"}
# labels that are a role or a part of the show only when they are the whole label ("Q", "Voice", "Break"; but "Iron
# Man", "Ask a Question" ...)
GENERIC_SPEAKERS = ROLE_WORDS | {"question", "answer", "q", "a", "man", "woman", "voice", "break", "intro", "outro",
                                 "music", "sponsor", "ad", "advert", "commercial"}


def person_token(name: str) -> str:
    """One token per person ("Katie Hockman" -> "katie_hockman"): a shared guest is a strong topic link."""
    return re.sub(r"[\W_]+", "_", name.lower()).strip("_")


def names_someone(token: str) -> bool:
    """Whether a person token (:func:`person_token`) names someone rather than a role, a part of the show or a
    numbered voice: not "host", "q", "jingle", "break", "questions", "audience_member", "new_speaker", "speaker_b",
    "speaker_1"."""
    return bool(token) and token not in GENERIC_SPEAKERS and token.removesuffix("s") not in GENERIC_SPEAKERS \
        and not any(c.isdigit() for c in token) and not any(part in ROLE_WORDS for part in token.split("_"))


def people_named(ep: Episode) -> list[str]:
    """The episode's people as written: its persons (as the feed names them), then the speakers its transcript
    names that are not among them and name someone (:func:`names_someone`: "Q", "Jingle" and "Break" were people
    of the facet and the typeahead)."""
    persons = [p.name for p in ep.persons]
    return persons + sorted({s.speaker for s in ep.segments if s.speaker and names_someone(person_token(s.speaker))}
                            - set(persons))


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
