"""Watches: saved searches that POST the new episodes they match to a webhook.

A watch is a query (with the search's filters), a webhook URL and a secret, kept in the catalog. The
catalog lists every episode inserted while a watch exists (a trigger, in the same transaction as the
episode). After a reindex or an import has brought the index up to date, :func:`notify`:

1. runs each watch's search, newest first and without the any-word fallback (:mod:`podsearch.follow`),
   narrowed to the shows (and, when all have one, the dates) of the episodes added since the watch was made,
   and keeps the matches that are among those new episodes: a bounded search and intersect (at most
   ``MATCH_PAGES`` pages of ``MATCH_PAGE``);
2. stores one delivery per watch that matched (JSON: the watch and the new episodes with their best moments;
   one per ``EPISODES_PER_POST`` episodes when a run brings more) and empties the list, in one transaction;
3. POSTs every pending delivery, oldest first, signed with HMAC-SHA256 of the body under the watch's secret
   (``X-Podsearch-Signature: sha256=<hex>``), each within ``webhook_timeout`` seconds (retries with backoff
   included) and all within ``webhook_budget`` seconds, through the fetcher's private-address guard. A
   delivery answered with a 2xx is deleted; any other outcome keeps it for the next run (a watch whose
   delivery failed is not tried again in the same run). Nothing here fails the reindex: failures are counted
   and described in its report.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import secrets
import time
import uuid
from dataclasses import dataclass, field, fields, replace
from typing import Any
from urllib.parse import urlsplit

from . import languages
from .answers import Hit
from .catalog import Catalog
from .config import Config
from .errors import FetchError, NotFound, PodsearchError, QueryError, WatchError
from .follow import best_moment, feed_query, moment_path, plain, standing_search
from .ingest.fetch import Fetcher, FetchLimits, check_address
from .requests import SearchRequest
from .service import Library
from .urls import http_url_problem

log = logging.getLogger(__name__)

MATCH_PAGE = 100  # results read per search when matching a watch against the new episodes
MATCH_PAGES = 10  # pages read at most per watch and run (the newest 1,000 matches in the new episodes' shows)
EPISODES_PER_POST = 100
MIN_SECRET = 16
MAX_URL = 2048
ANSWER_BYTES = 64 * 1024  # a webhook's answer is not read; this only bounds the fetcher
EVENT = "episodes.new"
SIGNATURE_HEADER = "X-Podsearch-Signature"
DELIVERY_HEADER = "X-Podsearch-Delivery"
EVENT_HEADER = "X-Podsearch-Event"
# The search filters a watch may carry: the names of SearchRequest's fields.
FILTERS = ("shows", "person", "published_from", "published_to", "duration_min", "duration_max", "language")


@dataclass
class Watch:
    id: int
    query: str
    filters: dict[str, Any]
    webhook: str
    created: float
    delivered: int = 0
    pending: int = 0
    last_delivered: float | None = None
    last_error: str | None = None
    secret: str = field(default="", repr=False)

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> Watch:
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in row.items() if k in known})

    def request(self, per_page: int = 10) -> SearchRequest:
        return SearchRequest(q=self.query, per_page=per_page, sort="date", **self.filters)

    def feed_path(self) -> str:
        """The path of this watch's search as a feed (``/search.rss?q=...``)."""
        return f"/search.rss?{feed_query(self.request())}"

    def to_dict(self) -> dict[str, Any]:
        """What a person may see of the watch (no secret)."""
        return {"id": self.id, "query": self.query, "filters": self.filters, "webhook": self.webhook,
                "created": _iso(self.created), "feed": self.feed_path(), "delivered": self.delivered,
                "pending": self.pending, "last_delivered": _iso(self.last_delivered) if self.last_delivered else None,
                "last_error": self.last_error}


@dataclass
class Notified:
    """What :func:`notify` did in one run."""

    watches: int = 0
    new: int = 0  # new episodes looked at
    matched: int = 0  # (watch, new episode) matches
    queued: int = 0  # deliveries stored in this run
    delivered: int = 0  # deliveries answered with a 2xx in this run
    failed: int = 0  # deliveries tried in this run that failed (kept)
    pending: int = 0  # deliveries left for the next run (failed, not tried after a failure, or past the budget)
    errors: list[str] = field(default_factory=list)

    def counts(self) -> dict[str, int]:
        return {f.name: getattr(self, f.name) for f in fields(self) if f.name != "errors"}


def sign(secret: str, body: bytes) -> str:
    """The signature header's value: ``sha256=`` and the hex HMAC-SHA256 of ``body`` under ``secret``."""
    return "sha256=" + hmac.new(secret.encode("utf-8"), body, hashlib.sha256).hexdigest()


# -- managing watches ------------------------------------------------------------------------------
def add_watch(config: Config, query: str, webhook: str, secret: str | None = None,
              **filters: Any) -> tuple[Watch, str]:
    """Check and store a watch; returns it and its secret (made here when none is given).

    Raises WatchError for an empty or unusable query, a bad webhook URL or a short secret; IndexMissing when
    there is no index yet to check the query against.
    """
    query = query.strip()
    if not query:
        raise WatchError("The query is empty: a watch follows some words, e.g. 'podsearch watch add kubernetes ...'.")
    unknown = set(filters) - set(FILTERS)
    if unknown:
        raise TypeError(f"unknown watch filters: {sorted(unknown)}")
    kept = {k: v for k, v in filters.items() if v not in (None, "", [], ())}
    if "shows" in kept:
        kept["shows"] = list(kept["shows"])
    if "language" in kept:
        tag = languages.normalize(str(kept["language"])[:40])
        if not tag:
            raise WatchError(f"The language must be a code such as en, de or pt-BR, not {kept['language']!r}.")
        kept["language"] = tag
    if secret is None:
        secret = secrets.token_hex(32)
    elif len(secret) < MIN_SECRET:
        raise WatchError(f"The secret must be at least {MIN_SECRET} characters long (leave --secret out and one is made).")
    draft = Watch(id=0, query=query, filters=kept, webhook=webhook, created=time.time())
    lib = Library(config.data_dir)
    try:
        standing_search(lib, draft.request(per_page=1))  # the search's own checks: syntax, dates, durations...
    except QueryError as exc:
        raise WatchError(f"The query cannot be used: {exc}") from None
    finally:
        lib.close()
    # last: it may look the host up (the query and the secret were said wrong only once the webhook's host was
    # found, and a host that does not resolve hid them)
    check_webhook(webhook, allow_private=bool(config.allow_private_hosts))
    with Catalog.in_dir(config.data_dir) as catalog:
        watch_id = catalog.add_watch(query, kept, webhook, secret)
        return next(w for w in _watches(catalog) if w.id == watch_id), secret


def check_webhook(url: str, *, allow_private: bool) -> None:
    """Raise WatchError unless ``url`` is an http(s) URL with a host that may be reached (see fetch.py's guard)."""
    if len(url) > MAX_URL:
        raise WatchError(f"The webhook URL is {len(url)} characters long; the limit is {MAX_URL}.")
    problem = http_url_problem(url)
    if problem:
        raise WatchError(f"The webhook URL {url!r} cannot be used: {problem}.")
    parts = urlsplit(url)
    if not allow_private:
        try:
            check_address(parts.hostname or "", url=url, port=parts.port or (443 if parts.scheme.lower() == "https" else 80))
        except FetchError as exc:
            raise WatchError(f"The webhook cannot be used: {exc}") from None


def list_watches(config: Config) -> list[Watch]:
    with Catalog.existing(config.data_dir) as catalog:
        return _watches(catalog)


def remove_watch(config: Config, watch_id: int) -> None:
    """Remove a watch and its pending deliveries; NotFound when there is none with that id (the CLI's exit 1, as
    an episode id not found: until 5 December 2026 it was misuse, exit 2)."""
    with Catalog.existing(config.data_dir) as catalog:
        if not catalog.remove_watch(watch_id):
            raise NotFound(f"No watch with id {watch_id} (see 'podsearch watch list').")


def _watches(catalog: Catalog) -> list[Watch]:
    return [Watch.from_row(row) for row in catalog.watches()]


# -- after a reindex or import --------------------------------------------------------------------
def notify(config: Config, catalog: Catalog) -> Notified | None:
    """Match the watches against the episodes added since they last ran, store and POST the deliveries.

    Returns None when there is no watch. Call it with the reindex lock held and the index up to date.
    """
    watches = _watches(catalog)
    if not watches:
        return None
    outcome = Notified(watches=len(watches))
    inbox = catalog.watch_inbox()
    if inbox:
        outcome.new = len(inbox)
        _queue(config, catalog, watches, inbox, outcome)
    deliver(config, catalog, outcome)
    return outcome


def _queue(config: Config, catalog: Catalog, watches: list[Watch], inbox: list[dict[str, Any]],
           outcome: Notified) -> None:
    base = str(config.public_url).rstrip("/")
    queued: list[tuple[int, str, bytes]] = []
    lib = Library(config.data_dir)
    try:
        for watch in watches:
            candidates = [c for c in inbox if c["added"] >= watch.created]
            if not candidates:
                continue
            try:
                hits, unchecked = matches(lib, watch, candidates)
            except PodsearchError as exc:
                outcome.errors.append(f"watch {watch.id}: its query could not be run: {exc}")
                log.info("watch %s: its query could not be run: %s", watch.id, exc)  # (in the report's errors)
                continue
            if unchecked:
                outcome.errors.append(f"watch {watch.id}: {unchecked} of {len(candidates)} new episodes were not "
                                      f"checked (only the newest {MATCH_PAGE * MATCH_PAGES:,} matches are read)")
            outcome.matched += len(hits)
            parts = [hits[i:i + EPISODES_PER_POST] for i in range(0, len(hits), EPISODES_PER_POST)]
            for n, part in enumerate(parts, 1):
                uid = uuid.uuid4().hex
                queued.append((watch.id, uid, payload(watch, part, base, uid, part=n, parts=len(parts))))
    finally:
        lib.close()
    catalog.queue_deliveries(queued, [c["id"] for c in inbox])
    outcome.queued = len(queued)


def matches(lib: Library, watch: Watch, candidates: list[dict[str, Any]]) -> tuple[list[Hit], int]:
    """The candidates (new episodes: id, show_id, published) the watch's search matches, newest first, and how
    many candidates were left unchecked because the bound was reached."""
    wanted = {c["id"] for c in candidates}
    req = watch.request(per_page=MATCH_PAGE)
    shows = {c["show_id"] for c in candidates}
    req.shows = [s for s in req.shows if s in shows] if req.shows else sorted(shows)
    if not req.shows:
        return [], 0
    days = [c["published"][:10] for c in candidates if c["published"]]
    if len(days) == len(candidates) and not req.published_from and not req.published_to:
        req.published_from, req.published_to = min(days), max(days)
    found: list[Hit] = []
    seen: set[str] = set()
    for page in range(1, MATCH_PAGES + 1):
        result = standing_search(lib, replace(req, page=page))
        for hit in result.hits:
            if hit.id in wanted and hit.id not in seen:
                seen.add(hit.id)
                found.append(hit)
        if len(seen) == len(wanted) or page >= result.pages:
            return found, 0
    return found, len(wanted) - len(seen)


def payload(watch: Watch, hits: list[Hit], base: str, uid: str, part: int = 1, parts: int = 1) -> bytes:
    """The JSON body of one delivery (docs/alerts.md describes it)."""
    doc = {
        "event": EVENT,
        "delivery": uid,
        "created": _iso(time.time()),
        "watch": {"id": watch.id, "query": watch.query, "filters": watch.filters, "feed": base + watch.feed_path()},
        "part": part,
        "parts": parts,
        "episodes": [_episode(hit, base) for hit in hits],
    }
    return json.dumps(doc, ensure_ascii=False).encode("utf-8")


def _episode(hit: Hit, base: str) -> dict[str, Any]:
    moment = best_moment(hit)
    return {
        "id": hit.id, "title": hit.title, "show": hit.show, "show_id": hit.show_id, "published": hit.published,
        "link": base + moment_path(hit), "url": hit.url, "audio_url": hit.audio_url,
        "moment": None if moment is None else {"start": moment.start, "speaker": moment.speaker,
                                               "text": plain(moment.text), "chapter": moment.chapter},
    }


def deliver(config: Config, catalog: Catalog, outcome: Notified) -> None:
    """POST the pending deliveries (see the module doc)."""
    pending = catalog.pending_deliveries()
    if not pending:
        return
    timeout = float(config.webhook_timeout)
    limits = FetchLimits(connect_timeout=min(5.0, timeout), read_timeout=timeout, total_timeout=timeout,
                         max_bytes=ANSWER_BYTES, allow_private=bool(config.allow_private_hosts))
    stop_at = time.monotonic() + float(config.webhook_budget)
    broken: set[int] = set()
    with Fetcher(limits) as fetcher:
        for d in pending:
            if d["watch_id"] in broken or time.monotonic() >= stop_at:
                outcome.pending += 1
                continue
            body = bytes(d["body"])
            headers = {"Content-Type": "application/json; charset=utf-8", SIGNATURE_HEADER: sign(d["secret"], body),
                       DELIVERY_HEADER: d["uid"], EVENT_HEADER: EVENT}
            try:
                fetcher.post(d["webhook"], body, headers)
            except FetchError as exc:
                catalog.delivery_failed(d["id"], d["watch_id"], str(exc))
                broken.add(d["watch_id"])
                outcome.failed += 1
                outcome.pending += 1
                outcome.errors.append(f"watch {d['watch_id']}: delivery {d['uid']} failed (kept for the next run, "
                                      f"attempt {d['attempts'] + 1}): {exc}")
                log.info("watch %s: delivery %s to %s failed: %s", d["watch_id"], d["uid"], d["webhook"], exc)
            else:
                catalog.delivery_done(d["id"], d["watch_id"])
                outcome.delivered += 1


def _iso(when: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(when))
