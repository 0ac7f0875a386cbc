"""What the model reads of every episode, from the catalog, and the digest of what it was fitted on."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator
from typing import NamedTuple

from ..catalog import Catalog
from ..episodes import names_someone, person_token
from ..progress import no_step, stepped
from .signals import link_tokens

CHUNK = 500  # episodes whose texts a fit holds at once (about 25 MB of transcripts at the bench's sizes)


PRINT_CHARS = 500  # a transcript shorter than this has no print (two short ones may be alike by chance)


def text_print(transcript: str) -> str:
    """A digest of a transcript's words (case and spacing aside), "" when it is short: two episodes with the same
    print are one recording (a "best of" feed's copy, the copy a changed guid left, a re-broadcast), whatever their
    shows, titles or ids."""
    words = " ".join(transcript.lower().split())
    return hashlib.sha1(words.encode("utf-8")).hexdigest()[:16] if len(words) >= PRINT_CHARS else ""


class EpisodeFields(NamedTuple):
    """What the model reads of every episode (position k is episode k)."""

    ids: list[str]
    shows: list[str]
    titles: list[str]
    notes: list[str]
    transcripts: list[str]
    languages: list[str]
    people: list[str]
    links: list[str] | None = None  # link tokens of the notes' hrefs (similar_signals.link_tokens)
    numbers: list[int | None] | None = None  # episode numbers, for "episode 159" mentions
    show_titles: dict[str, str] | None = None  # show id -> title, for "Go Time #145" in another show
    person_names: dict[str, str] | None = None  # person token -> the name as written ("katie_hockman" -> "Katie Hockman")


def episode_chunks(catalog: Catalog, size: int = CHUNK, step: Callable[[], None] = no_step) -> Iterator[EpisodeFields]:
    """:func:`episode_texts` of every episode, ``size`` episodes at a time, in the catalog's order (``step()``
    before each episode read)."""
    show_titles = {s.id: s.title for s in catalog.shows()}
    ids = catalog.episode_ids()
    for start in range(0, len(ids), size):
        yield episode_texts(catalog, ids[start:start + size], show_titles, step)


def episode_texts(catalog: Catalog, only: list[str] | None = None,
                  show_titles: dict[str, str] | None = None, step: Callable[[], None] = no_step) -> EpisodeFields:
    """The fields the model reads, from the catalog (every episode, or the episodes ``only`` in its order)."""
    if show_titles is None:
        show_titles = {s.id: s.title for s in catalog.shows()}
    fields = EpisodeFields([], [], [], [], [], [], [], [], [], show_titles, {})
    ids, shows, titles, notes, transcripts, languages, people, links, numbers, _, person_names = fields
    episodes = catalog.episodes(with_segments=False) if only is None else (
        ep for ep in (catalog.episode(i, with_segments=False) for i in only) if ep is not None)
    for ep in stepped(episodes, step):
        segments = catalog.segments(ep.id)
        links.append(link_tokens(ep.description_html))
        numbers.append(ep.number)
        ids.append(ep.id)
        shows.append(ep.show_id)
        titles.append(ep.title)
        notes.append(ep.description_text)
        # (a segment a line: a section the episode announces is read by its lines, runs.sponsored_sections)
        transcripts.append("\n".join(seg.text for seg in segments))
        languages.append((ep.language or "").lower().split("-")[0])
        names = dict.fromkeys([p.name for p in ep.persons] + [seg.speaker for seg in segments if seg.speaker])
        tokens = {person_token(n): n for n in names}
        tokens = {t: n for t, n in tokens.items() if names_someone(t)}
        people.append(" ".join(tokens))
        for token, name in tokens.items():
            person_names.setdefault(token, name)
    return fields


def hashes_digest(hashes: dict[str, str]) -> str:
    """One digest of {episode id: content hash}: what the saved model was fitted on."""
    h = hashlib.sha256()
    for episode_id, digest in sorted(hashes.items()):
        h.update(episode_id.encode() + b"\0" + digest.encode() + b"\n")
    return h.hexdigest()
