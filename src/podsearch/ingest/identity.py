"""Which known show a feed is, when it is read at an address the catalog does not know.

A feed is the same show as before when (in this order): the catalog already reads it at this address; a
known feed moved here (a permanent redirect or ``itunes:new-feed-url`` recorded the address); its
``podcast:guid`` is a known show's; or most of its episode guids are a known show's episodes and either the
channel is recognisably the same (title or home page) or that show's own feed is no longer read. The last
condition keeps a feed that repeats another show's episodes (a "best of") apart from that show, as before; while
the show's own feed is listed too, only the same title and home page make the feed that show (listed twice).

An item whose id changed is the episode it was (:func:`reconcile`).
"""

from __future__ import annotations

import logging
import math
from collections import Counter
from dataclasses import dataclass
from urllib.parse import urlsplit

from ..catalog import Catalog
from ..episodes import Show
from .feeds import ParsedFeed

log = logging.getLogger(__name__)

#: Share of a feed's episodes that must already belong to a show for the feed to be that show.
MIN_SHARE = 0.5


@dataclass
class Identity:
    show_id: str | None  # None: a show the catalog does not know
    how: str = ""  # how a feed at a new address was recognised ("" when known at this address)


def identify(catalog: Catalog, source: str, parsed: ParsedFeed, read_now: set[str]) -> Identity:
    """The show ``parsed`` (read from ``source``) is; ``read_now``: the sources this run reads."""
    state = catalog.feed_state(source)
    if state and state.get("show_id"):
        return Identity(state["show_id"])
    moved = catalog.feed_at(source)
    if moved and moved.get("show_id"):
        return Identity(moved["show_id"], f"the feed {moved['source']} moved here")
    guid = parsed.show.guid
    if guid:
        same = catalog.shows_with_guid(guid)
        if same:
            return Identity(same[0], f"same podcast:guid {guid}")
    ids = [ep.id for ep in parsed.episodes]
    if not ids:
        return Identity(None)
    counts = Counter(catalog.owners(ids).values())
    like = catalog.shows_like(parsed.show.title, parsed.show.link)
    for show_id in like:
        # Its episodes may carry the show's prefix (their guids were another show's first).
        counts[show_id] += len(catalog.owners(f"{show_id}/{i}" for i in ids))
    needed = max(1, math.ceil(MIN_SHARE * len(ids)))
    for show_id, n in counts.most_common():
        if n < needed:
            break
        known = catalog.show(show_id)
        if known is None or (guid and known.guid and known.guid != guid):
            continue
        listed = [f for f in catalog.feeds_of_show(show_id) if f["source"] in read_now and f["source"] != source]
        if listed:
            # Its own feed is listed too: this is no move. The same show listed twice is the same channel (title,
            # and home page when both have one); a feed that only shares its home page (or has its title but
            # another home page) and repeats the show's episodes is a "best of", a show of its own (until 5
            # December 2026 a "best of" on the main show's home page took the main show over, or was taken over).
            if _same_channel(known, parsed):
                return Identity(show_id, f"{n} of its {len(ids)} episode guids are this show's, and the same title "
                                         "and home page")
            continue
        unread = not any(f["source"] in read_now for f in catalog.feeds_of_show(show_id))
        if show_id in like or unread:
            why = "the same title or home page" if show_id in like else "its old feed is no longer read"
            return Identity(show_id, f"{n} of its {len(ids)} episode guids are this show's, and {why}")
    return Identity(None)


def same_show(catalog: Catalog, show_id: str, parsed: ParsedFeed) -> str:
    """How the feed ``parsed`` is the stored show ``show_id`` ("" when it is not, or nothing says so): the same
    ``podcast:guid`` (another guid: never), or at least half of its episode guids the show's, or the same title and
    home page."""
    known = catalog.show(show_id)
    if known is None:
        return "the show has nothing stored"
    guid = parsed.show.guid
    if guid and known.guid:
        return f"the same podcast:guid {guid}" if guid == known.guid else ""
    ids = [ep.id for ep in parsed.episodes]
    owners = catalog.owners(ids) | catalog.owners(f"{show_id}/{i}" for i in ids)  # (its copies of shared guids)
    n = len({i.removeprefix(f"{show_id}/") for i, owner in owners.items() if owner == show_id})
    if ids and n >= max(1, math.ceil(MIN_SHARE * len(ids))):
        return f"{n} of its {len(ids)} episode guids are this show's"
    same = parsed.show.title.casefold() == known.title.casefold() and known.link and parsed.show.link == known.link
    return "the same title and home page" if same else ""


def _same_channel(known: Show, parsed: ParsedFeed) -> bool:
    """The feed's channel is the known show's: the same title, and the same home page unless either has none."""
    title, link = parsed.show.title, parsed.show.link
    return title.casefold() == known.title.casefold() and (not link or not known.link or link == known.link)


# -- episodes whose id changed ------------------------------------------------------------------------------------
# An item's id is its guid, else its enclosure, else its link, else a hash of its title and date (feeds.episode_id).
# When a feed changes its guids (a new scheme, guids added where there were none) or, without guids, its enclosure
# host, its links or a title, the item's id changes: without this each such episode was stored a second time under
# the new id and the old one marked gone, and both were found (found 5 December 2026).

#: Fields of which one equal value, besides the date, recognises an episode (the title only with its date).
_PER_EPISODE = ("audio_url", "file", "transcripts", "link")


@dataclass
class Renamed:
    item_id: str  # the id the feed's item has now
    episode_id: str  # the episode it is (the id it keeps)
    how: str  # what recognised it (or "recorded": an alias found before)


def _file(url: str) -> str:
    try:
        return urlsplit(url).path.rstrip("/").rpartition("/")[2]
    except ValueError:
        return ""


def _keys(ep: dict, show_links: set[str]) -> dict[str, set[str]]:
    """The values that may recognise an episode: per field, besides its date. A link that is the show's own page
    names no episode."""
    title = " ".join((ep["title"] or "").split()).casefold()
    link = ep["link"] if ep["link"] not in show_links else ""
    keys = {"title": {title} if title and title != "(untitled)" else set(), "audio_url": {ep["audio_url"]},
            "file": {_file(ep["audio_url"])}, "transcripts": set(ep["transcripts"]), "link": {link}}
    return {kind: {v for v in values if v} for kind, values in keys.items()}


def _unique(rows: list[dict], keys: list[dict[str, set[str]]]) -> set[tuple]:
    """The evidence that names one row only: (field, value) of a per-episode field, (date, title) of a title."""
    seen: Counter[tuple] = Counter()
    for row, k in zip(rows, keys):
        for kind, values in k.items():
            for value in values:
                seen[(kind, row["published"], value) if kind == "title" else (kind, value)] += 1
    return {key for key, n in seen.items() if n == 1}


def _contradictions(ka: dict[str, set[str]], kb: dict[str, set[str]]) -> int:
    """How many of what names an episode both ``a`` and ``b`` have, and differ in: the enclosure (its file name: a
    host that moved is no difference), the transcripts, the link, the title."""
    def differ(kind: str) -> bool:
        return bool(ka[kind]) and bool(kb[kind]) and not ka[kind] & kb[kind]

    enclosure = differ("file") if ka["file"] and kb["file"] else differ("audio_url")
    return enclosure + differ("transcripts") + differ("link") + differ("title")


def _evidence(a: dict, ka: dict[str, set[str]], b: dict, kb: dict[str, set[str]], unique: set[tuple]) -> str:
    """What says ``a`` and ``b`` are one episode ("" when nothing does): the same publication date and the same
    enclosure URL, enclosure file name, transcript URL, link or title, each naming one episode on either side, and
    at most one of the others different (the one that gave the item its new id: a link, an edited title). An episode
    deleted and another of the same title and date added in its place differ in their enclosure, link and transcript:
    until the evening of 5 December 2026 the title and date made them one."""
    if not a["published"] or a["published"] != b["published"] or _contradictions(ka, kb) > 1:
        return ""
    for kind in (*_PER_EPISODE, "title"):
        for value in sorted(ka[kind] & kb[kind]):
            key = (kind, a["published"], value) if kind == "title" else (kind, value)
            if key in unique:
                return {"audio_url": "enclosure URL", "file": "enclosure file name", "transcripts": "transcript URL",
                        "link": "link", "title": "title"}[kind]
    return ""


def reconcile(catalog: Catalog, show_id: str, items: list[dict]) -> list[Renamed]:
    """The feed's items (``items``: id, title, published, audio_url, link, transcripts, notes) whose id the catalog
    does not know and that are an episode of the show stored under another id, which they keep.

    An item is such an episode when the catalog recorded that (an alias, from an earlier run), or when exactly one
    of the show's stored episodes that the feed no longer carries (gone, or about to be marked gone) has the same
    publication date and the same enclosure URL, enclosure file name, transcript URL or link (a value no other
    episode of the show, and no other item of the feed, has), or the same title (no other item or episode has that
    title on that date), and that episode is recognised in no other item of the feed. An item without a date is
    never recognised: two episodes of one show published at the same second, one leaving the feed and the other
    coming in the same run, are the only case in which two different episodes could be taken for one. An item of a
    title and date alone (``sha1:``) whose date was corrected is recognised by its title (:func:`_redated`).
    """
    if not items:
        return []
    ids = {item["id"] for item in items}
    owners = catalog.owners(ids)
    unknown = [item for item in items if item["id"] not in owners]
    if not unknown:
        return []
    found: list[Renamed] = []
    taken: set[str] = set()
    recorded = catalog.aliases(show_id, [item["id"] for item in unknown])
    for item in unknown:
        target = recorded.get(item["id"])
        if target and target not in ids and target not in taken and catalog.episode_owner(target) == show_id:
            found.append(Renamed(item["id"], target, "recorded"))
            taken.add(target)
    left = [item for item in unknown if item["id"] not in {r.item_id for r in found}]
    if not left:
        return found
    stored = catalog.episode_keys(show_id)
    known = catalog.show(show_id)
    links = {known.link} if known and known.link else set()  # the show's own page (as stored) names no episode
    item_keys = [_keys(item, links) for item in items]
    stored_keys = [_keys(ep, links) for ep in stored]
    unique = _unique(items, item_keys) & _unique(stored, stored_keys)
    keys_of = {item["id"]: k for item, k in zip(items, item_keys)}
    for item in left:
        k = keys_of[item["id"]]
        matches = [(ep, ek, how) for ep, ek in zip(stored, stored_keys)
                   if (how := _evidence(item, k, ep, ek, unique))]
        if len(matches) != 1:
            continue
        ep, ek, how = matches[0]
        if ep["id"] in ids or ep["id"] in taken:
            continue
        if sum(1 for other, ok in zip(items, item_keys) if _evidence(other, ok, ep, ek, unique)) != 1:
            continue
        found.append(Renamed(item["id"], ep["id"], f"the same date and {how}"))
        taken.add(ep["id"])
    unknown_ids = {item["id"] for item in left} - {r.item_id for r in found}
    found += _redated(show_id, items, item_keys, stored, stored_keys, ids, taken, unknown_ids)
    return found


def _redated(show_id: str, items: list[dict], item_keys: list[dict[str, set[str]]], stored: list[dict],
             stored_keys: list[dict[str, set[str]]], ids: set[str], taken: set[str],
             unknown: set[str]) -> list[Renamed]:
    """Items of a title and date alone (no guid, enclosure or link: the id ``sha1:`` of both) whose date was
    corrected (or added): the item, which has a date, is the episode when that episode's id was made the same way,
    it leaves the feed in this run (it was in the feed last run and is not now), the title names no other item of
    the feed and no other episode of the show, and nothing else differs (the show notes, the transcripts where both
    have them). Until 5 December 2026 such an item became a new episode and the old one was marked gone. A second
    episode of the title ("Trailer"), an episode gone before this run, other notes or another transcript: not
    recognised."""
    def title(k: dict[str, set[str]]) -> str:
        return next(iter(k["title"]), "")

    in_feed = Counter(title(k) for k in item_keys)
    in_show = Counter(title(k) for k in stored_keys)
    by_title = {title(k): (ep, k) for ep, k in zip(stored, stored_keys) if in_show[title(k)] == 1}
    found: list[Renamed] = []
    for item, k in zip(items, item_keys):
        t = title(k)
        if (item["id"] not in unknown or not item["id"].removeprefix(f"{show_id}/").startswith("sha1:") or not t
                or not item["published"] or in_feed[t] != 1 or t not in by_title):
            continue
        ep, ek = by_title[t]
        if (not ep["id"].removeprefix(f"{show_id}/").startswith("sha1:") or ep["id"] in ids or ep["id"] in taken
                or ep["gone"] or ep["published"] == item["published"] or _contradictions(k, ek)
                or " ".join(item.get("notes", "").split()) != " ".join(ep["notes"].split())):
            continue
        found.append(Renamed(item["id"], ep["id"], f"the same title, its date corrected (was {ep['published']})"))
        taken.add(ep["id"])
    return found
