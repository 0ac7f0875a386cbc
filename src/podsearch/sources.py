"""The feeds a data folder reads: those its config file lists and those registered with ``podsearch add``."""

from __future__ import annotations

import logging
import re
from pathlib import Path

from .catalog import Catalog
from .config import Config
from .errors import InputError

log = logging.getLogger(__name__)


def normalize_source(source: str) -> str:
    """An http(s) URL as given, or a local feed file as an absolute path; anything else is refused."""
    if "://" not in source:
        path = Path(source).expanduser()
        if not path.is_file():
            raise InputError(f"{source} is neither an http(s) URL nor a file")
        return str(path.resolve())
    if not re.match(r"^https?://", source, re.I):
        raise InputError(f"{source}: only http(s) URLs and local paths can be added")
    return source


def add_feed(config: Config, source: str) -> str:
    """Register a feed for the next reindex; returns the source as stored."""
    source = normalize_source(source)
    with Catalog.in_dir(config.data_dir) as cat:
        cat.set_feed_state(source)
    return source


def all_sources(config: Config, catalog: Catalog) -> list[str]:
    """Feeds from the config, then feeds registered with ``podsearch add``, without repeats."""
    sources = list(config.feeds)
    for row in catalog.feeds():
        if row["source"] not in sources and not row["source"].startswith("import:"):
            sources.append(row["source"])
    return sources


def require_feeds(config: Config) -> None:
    """Raise InputError when a reindex would have no feed to read."""
    if config.feeds:
        return
    with Catalog.in_dir(config.data_dir) as cat:
        sources = all_sources(config, cat)
    if not sources:
        raise InputError("No feeds: list them in a config file (feeds = [...]) or run "
                         "'podsearch add URL_OR_PATH' first.")
