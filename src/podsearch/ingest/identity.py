"""Which known show a feed is, when it is read at an address the catalog does not know.

A feed is the same show as before when (in this order): the catalog already reads it at this address; a
known feed moved here (a permanent redirect or ``itunes:new-feed-url`` recorded the address); its
``podcast:guid`` is a known show's; or most of its episode guids are a known show's episodes and either the
channel is recognisably the same (title or home page) or that show's own feed is no longer read. The last
condition keeps a feed that repeats another show's episodes (a "best of") apart from that show, as before.
"""

from __future__ import annotations

import logging
import math
from collections import Counter
from dataclasses import dataclass

from ..catalog import Catalog
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
        unread = not any(f["source"] in read_now for f in catalog.feeds_of_show(show_id))
        if show_id in like or unread:
            why = "the same title or home page" if show_id in like else "its old feed is no longer read"
            return Identity(show_id, f"{n} of its {len(ids)} episode guids are this show's, and {why}")
    return Identity(None)
