"""Episodes as engines index them: the catalog's episodes turned into :class:`engines.base.Document` s."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from datetime import datetime

from . import languages
from .catalog import Catalog
from .engines.base import Document
from .episodes import Episode, people_named


def parse_datetime(value: str | None) -> datetime | None:
    """An ISO 8601 timestamp of the catalog (``2024-05-01T12:00:00Z``) as a naive UTC datetime."""
    if not value:
        return None
    try:
        return datetime.strptime(value[:19], "%Y-%m-%dT%H:%M:%S")
    except ValueError:
        return None


def episode_document(ep: Episode, show_title: str, content_hash: str) -> Document:
    persons = [p.name for p in ep.persons]
    return Document(
        id=ep.id, show_id=ep.show_id, show=show_title, title=ep.title, persons=persons,
        speakers=people_named(ep)[len(persons):],
        notes=ep.description_text, transcript=ep.transcript_text, published=parse_datetime(ep.published),
        duration=ep.duration, language=languages.primary(ep.language), link=ep.link, audio_url=ep.audio_url,
        content_hash=content_hash, segments=tuple(s.text for s in ep.segments), number=ep.number)


class CatalogDocuments:
    """The catalog as an engine's document source (``hashes``: the catalog's, when the caller has read them)."""

    def __init__(self, catalog: Catalog, hashes: dict[str, str] | None = None) -> None:
        self.catalog = catalog
        self._hashes = hashes

    def hashes(self) -> dict[str, str]:
        if self._hashes is None:
            self._hashes = self.catalog.hashes()
        return self._hashes

    def documents(self, ids: Iterable[str]) -> Iterator[Document]:
        hashes = self.hashes()
        shows = {s.id: s.title for s in self.catalog.shows()}
        for episode_id in ids:
            ep = self.catalog.episode(episode_id)
            if ep is not None:
                yield episode_document(ep, shows.get(ep.show_id, ep.show_id), hashes[episode_id])
