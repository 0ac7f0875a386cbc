"""The feeds a data folder reads: those its config file lists and those registered with ``podsearch add``.

The config file is the source of truth for the feeds it lists: a feed it no longer lists is dropped at
the next reindex (no longer read; its episodes kept and marked gone, or deleted with ``--prune``). Feeds
registered with ``podsearch add`` are read until ``podsearch remove`` drops them. Each feed row records
where it came from (``origin``: ``config`` or ``add``). A run given no feeds by its config (no config file,
or one without ``feeds``) reads every feed the folder knows and drops none: forgetting ``--config`` must
not drop a site's feeds. Rows written before origins were recorded (catalog schema 1 or 2) have none: with a
config that lists feeds, a row it does not list is dropped, but its episodes are only marked, never pruned
(it may have been added by hand).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from .catalog import Catalog
from .config import Config
from .errors import IndexMissing, InputError, NotFound
from .urls import http_url_problem

log = logging.getLogger(__name__)

CONFIG = "config"
ADDED = "add"


def normalize_source(source: str) -> str:
    """An http(s) URL as given, or a local feed file as an absolute path; anything else is refused (``add http://``
    was taken, and every later reindex failed on it; ``add ''`` was refused naming nothing)."""
    if not source.strip():
        raise InputError("No feed given: name an http(s) URL or a feed file.")
    if "://" not in source:
        path = Path(source).expanduser()
        if not path.is_file():
            raise InputError(f"{source} is neither an http(s) URL nor a file")
        return str(path.resolve())
    problem = http_url_problem(source)  # (the one check of an http(s) address: scheme, host, port)
    if problem:
        raise InputError(f"{source} is no feed address: {problem}; only http(s) URLs and local paths can be added")
    return canonical_url(source)


def canonical_url(url: str) -> str:
    """One spelling of an http(s) address: scheme and host in lower case, no default port, no ``.`` or ``..`` in
    the path, no fragment (``HTTP://Example.org:80/a/../feed.xml#x`` is ``http://example.org/feed.xml``). Until 5
    December 2026 each spelling was added as a feed of its own, and ``remove`` of another spelling found none."""
    parts = urlsplit(url.strip())
    scheme, host = parts.scheme.lower(), (parts.hostname or "")
    if ":" in host:  # an IPv6 address
        host = f"[{host}]"
    port = parts.port
    netloc = host if port is None or (scheme, port) in {("http", 80), ("https", 443)} else f"{host}:{port}"
    if parts.username is not None:
        netloc = f"{parts.username}{':' + parts.password if parts.password is not None else ''}@{netloc}"
    return urlunsplit((scheme, netloc, _without_dots(parts.path) or "/", parts.query, ""))


def _without_dots(path: str) -> str:
    """``path`` with its ``.`` and ``..`` segments taken out (RFC 3986, 5.2.4)."""
    segments = path.split("/")
    out: list[str] = []
    for i, segment in enumerate(segments):
        last = i == len(segments) - 1
        if segment in {".", ".."}:
            if segment == ".." and len(out) > 1:
                out.pop()
            if last:
                out.append("")
            continue
        out.append(segment)
    return "/".join(out)


def add_feed(config: Config, source: str) -> tuple[str, bool]:
    """Register a feed for the next reindex; returns the source as stored and whether it is new (not added
    before)."""
    source = normalize_source(source)
    if source in config.feeds:
        raise InputError(f"{source} is already listed in the config file {config.path}")
    with Catalog.in_dir(config.data_dir) as cat:
        state = cat.feed_state(source)
        known = state is not None and state["origin"] == ADDED
        if not known:
            cat.set_feed_state(source, origin=ADDED)
    return source, not known


def _counts_as_added(row: dict[str, Any], config: Config) -> bool:
    """Read whatever the config says: added with ``podsearch add``, or the config lists no feeds at all."""
    return row["origin"] == ADDED or not config.feeds


def all_sources(config: Config, catalog: Catalog) -> list[str]:
    """Feeds from the config, then feeds registered with ``podsearch add``, without repeats."""
    return _sources(config, catalog.feeds())


def _sources(config: Config, rows: Iterable[dict[str, Any]]) -> list[str]:
    sources = list(config.feeds)
    for row in rows:
        if row["source"] not in sources and _counts_as_added(row, config):
            sources.append(row["source"])
    return sources


def require_feeds(config: Config) -> None:
    """Raise InputError when a reindex would have no feed to read."""
    if config.feeds:
        return
    try:  # (only a catalog that is there: asking must not make a folder and a catalog)
        with Catalog.existing(config.data_dir) as cat:
            sources = all_sources(config, cat)
    except IndexMissing:
        sources = []
    if not sources:
        raise InputError("No feeds: list them in a config file (feeds = [...]) or run "
                         "'podsearch add URL_OR_PATH' first.")


def record_origins(config: Config, catalog: Catalog) -> None:
    """Mark the config's feeds as coming from the config (and old rows without an origin, as added)."""
    with catalog.transaction():
        for source in config.feeds:
            catalog.set_feed_state(source, origin=CONFIG)
        if not config.feeds:
            catalog.db.execute("UPDATE feeds SET origin = ? WHERE origin IS NULL", (ADDED,))


def unlisted(config: Config, catalog: Catalog) -> list[dict[str, Any]]:
    """Feed rows that came from the config file (or from nowhere known) and that it no longer lists."""
    listed = set(config.feeds)
    return [row for row in catalog.feeds() if row["source"] not in listed and not _counts_as_added(row, config)]


def drop_feed(catalog: Catalog, row: dict[str, Any], *, prune: bool, read_now: set[str]) -> str:
    """Stop reading a feed: its row goes; its show's episodes are marked gone (deleted with ``prune``) unless
    the show is still read from another feed (it moved). ``read_now``: show ids read in this run.
    Returns a sentence saying what happened (for the run's report)."""
    source, show_id = row["source"], row["show_id"]
    with catalog.transaction():
        catalog.delete_feed(source)
        if not show_id:
            return f"{source}: dropped (it was never read)"
        others = [f["source"] for f in catalog.feeds_of_show(show_id)]
        if show_id in read_now or others:
            where = f" from {others[0]}" if others else ""
            return f"{source}: dropped; its show {show_id!r} is read{where} now"
        changed = catalog.mark_gone(show_id, [], prune=prune)
        if prune:
            catalog.delete_show_if_empty(show_id)
            return f"{source}: dropped; {changed} episodes of {show_id!r} deleted (--prune)"
        return f"{source}: dropped; {changed} episodes of {show_id!r} kept, marked gone"


def find_feed(catalog: Catalog, source: str) -> dict[str, Any]:
    """The feed row for ``source`` as listed or added, or at the address it moved to."""
    row = catalog.feed_state(source) or catalog.feed_at(source)
    if row is None and "://" in source and not http_url_problem(source):  # (another spelling of an added address)
        row = catalog.feed_state(canonical_url(source)) or catalog.feed_at(canonical_url(source))
    if row is None and "://" not in source:
        row = catalog.feed_state(str(Path(source).expanduser().resolve()))
    if row is None:
        raise NotFound(f"No feed {source} in {catalog.path.parent}; 'podsearch feeds' lists them.")
    return row


def check_removable(config: Config, row: dict[str, Any]) -> None:
    if row["source"] in config.feeds:
        raise InputError(f"{row['source']} is listed in the config file {config.path}: remove it there "
                         "(the next reindex stops reading it)")


@dataclass
class FeedInfo:
    source: str
    origin: str  # "config" or "add"
    address: str  # where it is read now (the source unless it moved)
    show_id: str | None
    show: str  # the show's title
    status: str  # "ok", "failed", "duplicate", or "not read yet"
    error: str | None
    last_fetch: str | None  # ISO time of the last attempt
    episodes: int
    gone: int

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def list_feeds(config: Config) -> list[FeedInfo]:
    """Every feed of the data folder: the config's (read or not yet), then those added, with their state. Without
    a catalog, the config's feeds as not read yet (none: IndexMissing); none is made."""
    if not (config.data_dir / Catalog.FILENAME).exists() and config.feeds:
        rows, counts, titles = {}, {}, {}
    else:
        with Catalog.existing(config.data_dir) as cat:
            rows = {row["source"]: row for row in cat.feeds()}
            counts = cat.episode_counts()
            titles = {show.id: show.title for show in cat.shows()}
    out = []
    for source in _sources(config, rows.values()):
        row = rows.get(source) or {}
        show_id = row.get("show_id")
        episodes, gone = counts.get(show_id or "", (0, 0))
        last = row.get("last_fetch")
        out.append(FeedInfo(
            source=source, origin=CONFIG if source in config.feeds else row.get("origin") or ADDED,
            address=row.get("url") or source,
            show_id=show_id, show=titles.get(show_id or "", ""), status=row.get("last_status") or "not read yet",
            error=row.get("last_error"), last_fetch=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(last)) if last else None,
            episodes=episodes, gone=gone))
    return out
