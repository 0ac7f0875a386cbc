"""One run's ingest: feeds and their transcripts and chapters read into the catalog.

Nothing here touches the index or the model (:mod:`podsearch.reindex` brings them in line afterwards).
A feed is read at the address it was last seen at (it follows permanent redirects and
``itunes:new-feed-url``); a feed at an address the catalog does not know may be a known show that moved
(:mod:`.identity`); a show is read once per run, whatever the number of addresses listing it. Hosts that
cannot be reached are skipped after a few failures and reported once each (:mod:`.hosts`).
"""

from __future__ import annotations

import logging
import time
from pathlib import Path
from urllib.parse import parse_qsl, unquote, urldefrag, urlsplit

from .. import sources as feed_sources
from ..catalog import Catalog
from ..config import Config
from ..episodes import Episode
from ..errors import BlockedAddress, DeadlinePassed, FeedError, HostUnreachable, PodsearchError, StatusError
from ..progress import Progress
from ..report import Report
from .extras import EpisodeExtras, Extras, Job, waiting
from .feeds import ParsedFeed, parse_feed, show_slug
from .fetch import Fetcher, FetchLimits, FetchResult
from .hosts import HostHealth
from .identity import identify, reconcile, same_show
from .transcripts import PARSER_VERSION

log = logging.getLogger(__name__)

#: What a feed's recorded new address may answer for the feed to be read at its listed address that run: gone, not
#: found (a 5xx or no answer is a failure there: the listed address may hold a stale copy).
GONE_STATUSES = frozenset({404, 410})
MAX_MOVES = 5  # itunes:new-feed-url addresses followed in one run (a chain of moves; the rest is followed next run)


def _is_url(source: str) -> bool:
    return urlsplit(source).scheme.lower() in {"http", "https"}


def _feed_key(address: str) -> tuple[tuple[str, int | None, str], frozenset[tuple[str, str]]] | None:
    """What says two http(s) addresses are one feed: (host, port, path) in one spelling (``sources.canonical_url``;
    http or https alike, percent-escapes decoded, no trailing ``/``), and the query's name=value pairs; None for a
    file or an address that cannot be read."""
    if not _is_url(address):
        return None
    try:
        parts = urlsplit(feed_sources.canonical_url(address))
        port = parts.port
    except ValueError:  # (a port that is no number)
        return None
    if port in {80, 443}:
        port = None
    path = unquote(parts.path).rstrip("/") or "/"
    return ((parts.hostname or "").rstrip("."), port, path), frozenset(parse_qsl(parts.query, keep_blank_values=True))


def _same_feed(target: str, registered: str) -> int | None:
    """Whether ``target`` (where a feed leads) is the feed registered at ``registered``: the same address written
    another way (``HTTP://``, a default port, ``x/../``, ``https`` for ``http``, a trailing ``/``), also with more in
    its query (``B?src=moved``: a query a redirect adds to B is still B; B's own query must all be there, so
    ``feed.php?id=1`` is not ``feed.php?id=2``). Returns how many of the query's pairs ``registered`` has (the more,
    the closer: ``feed.php`` and ``feed.php?id=1`` both match ``feed.php?id=1&x=2``, the second closer), None when
    it is another address."""
    a, b = _feed_key(target), _feed_key(registered)
    if a is None or b is None or a[0] != b[0] or not b[1] <= a[1]:
        return None
    return len(b[1])


class FeedIngest:
    """One reindex's ingest of feeds into the catalog."""

    def __init__(self, config: Config, catalog: Catalog, report: Report, progress: Progress,
                 prune: bool = False) -> None:
        self.config = config
        self.catalog = catalog
        self.report = report
        self.progress = progress
        self.prune = prune
        # fetch_timeout bounds one download from its first request to its last byte, retries and redirects included
        # (until 5 December 2026 the whole was twice it: a feed that never answered was given up after 2 x).
        timeout = float(config.fetch_timeout)
        base = dict(connect_timeout=min(10.0, timeout), read_timeout=timeout, total_timeout=timeout,
                    allow_private=bool(config.allow_private_hosts))
        self.health = HostHealth(deadline_seconds=float(config.reindex_deadline) or None)
        self.feed_fetcher = Fetcher(FetchLimits(max_bytes=int(config.max_feed_bytes), **base), health=self.health)
        self.item_fetcher = Fetcher(FetchLimits(max_bytes=int(config.max_transcript_bytes), **base), health=self.health)
        self.extras = EpisodeExtras(catalog, self.item_fetcher, int(config.fetch_workers))
        self.read: dict[str, str] = {}  # show id -> the source it was read from in this run
        self.sources: set[str] = set()
        self.unread: list[str] = []  # feeds the deadline left unread
        self.deadline_links = 0  # transcript and chapters links the deadline left unread
        # (what, failure, a stored transcript checked again?): reported by itself unless its host went down
        self.no_answer: list[tuple[str, HostUnreachable, bool]] = []
        # What the feed being read changes besides its episodes (where it is read, the items' new ids), written in
        # the transaction that stores its episodes: until 5 December 2026 they were written at once, and a reindex
        # killed in between left a move recorded whose feed was never stored there, asked next run with the old
        # address's validators (a 304 there, from a server comparing dates, and the feed was not read again).
        self.moved_to: dict[str, str | None] = {}  # {"url": the address to read the feed at (None: its source)}
        self.aliases: list[tuple[str, str, str]] = []  # (show id, item id, episode id)

    def close(self) -> None:
        self.feed_fetcher.close()
        self.item_fetcher.close()

    def run(self, sources: list[str]) -> None:
        self.sources = set(sources)
        self.progress.phase("feeds", len(sources))
        for n, source in enumerate(sources):
            left = self.health.time_left()
            if left is not None and left <= 0:
                self.unread = sources[n:]
                break
            self.report.feeds += 1
            try:
                self.feed(source)
            except PodsearchError as exc:
                self.report.feeds_failed += 1
                self.report.errors.append(f"feed {source}: {exc}")
                log.info("feed %s failed: %s", source, exc)  # (the report says it: "error: feed ...")
                self.catalog.set_feed_state(source, last_fetch=time.time(), last_status="failed", last_error=str(exc))
            self.progress.advance()
        self._report_hosts()
        self._report_deadline()
        self._report_reparsed()

    def drop(self, rows: list[dict]) -> None:
        """Stop reading feeds the config no longer lists (after the run: a show they fed may have moved)."""
        for row in rows:
            # A row from before origins were recorded may have been added by hand: never prune it.
            note = feed_sources.drop_feed(self.catalog, row, prune=self.prune and row["origin"] is not None,
                                          read_now=set(self.read))
            self.report.feeds_dropped.append(row["source"])
            self.report.notes.append(f"no longer in the config: {note}")
            log.info("feed %s", note)

    # -- one feed -----------------------------------------------------------------------------------
    def feed(self, source: str) -> None:
        self.moved_to, self.aliases = {}, []
        state = self.catalog.feed_state(source) or {}
        address = state.get("url") or source
        gone: tuple[str, StatusError] | None = None  # where it moved, and its 404 or 410: read at the source instead
        try:
            result = self._fetch(source, address, etag=state.get("etag"), last_modified=state.get("last_modified"))
        except BlockedAddress as exc:
            if address == source:
                raise
            # A move recorded before its address was checked (until 5 December 2026): forget it.
            message = f"feed {source} was read at {address}, where it moved, which is refused now ({exc})"
            self.report.warnings.append(message + f"; read at {source} again")
            log.info("%s; read at %s again", message, source)
            self.catalog.set_feed_state(source, url=None, etag=None, last_modified=None)
            address, result = source, self._fetch(source, source)
        except StatusError as exc:
            if address == source or exc.status not in GONE_STATUSES:
                raise  # (a 5xx or no answer where it moved is a failure there: the old address may hold a stale copy)
            gone, address, result = (address, exc), source, self._fetch_listed(source, address, exc)
        self._not_another_feed(source, address, result.moved_to, result.url)
        if result.not_modified and not result.moved_to and state.get("show_id") and state.get("last_status") == "ok":
            if not self._duplicate(source, state["show_id"]):
                self._unchanged(source, state["show_id"])
            return
        if result.not_modified:  # the last run failed after fetching, or the 304 came from where it was redirected:
            result = self._fetch(source, address)  # read it again in full
            self._not_another_feed(source, address, result.moved_to, result.url)
        parsed = self._parse(source, result, address)
        if gone:
            self._back_home(source, state.get("show_id"), parsed, *gone)
        # A move is recorded once its new address gave a feed: until 5 December 2026 it was recorded first, and a 301
        # to a page that is no feed (a maintenance page, a home page) made the feed read there, and fail, for good.
        address = self._moved(source, address, result.moved_to, "a permanent redirect")
        unfollowed = False  # a new address named and not followed: the next run reads the feed in full to try again
        if parsed.new_feed_url and _is_url(result.url) and parsed.new_feed_url not in {source, address, result.url}:
            result, parsed, address, unfollowed = self._follow(source, address, result, parsed)
        identity = identify(self.catalog, source, parsed, self.sources)
        show_id = identity.show_id or self._new_show_id(source, parsed.show.title)
        if self._duplicate(source, show_id):
            return
        if identity.how:
            self.report.moves.append({"source": source, "show_id": show_id, "how": identity.how})
            self.report.notes.append(f"{source} is the known show {show_id!r}: {identity.how}")
            log.info("feed %s is the known show %r: %s", source, show_id, identity.how)
        parsed.assign(show_id)
        self.report.warnings.extend(parsed.warnings)
        episodes = self._qualify_ids(parsed.episodes, show_id)
        done = self._fetch_extras(source, self.extras.plan(episodes))
        # A transcript or chapters that failed are tried again next time, and so is a new-feed-url not followed, so
        # the next run must not be answered "304 Not Modified" and skip the feed: keep no validators until everything
        # was read (until 5 December 2026 a feed kept them, and a move it named was never tried again).
        complete = not unfollowed and not any(extras.missing for _, extras in done)
        etag, last_modified = (result.etag, result.last_modified) if complete else (None, None)
        with self.catalog.transaction():
            self.catalog.upsert_show(parsed.show)
            for ep in episodes:
                self._count(self.catalog.upsert_episode(ep))
            for alias in self.aliases:
                self.catalog.add_alias(*alias)
            self._store_validators(done)
            self.report.gone += self.catalog.mark_gone(show_id, [e.id for e in episodes], prune=self.prune)
            self.catalog.set_feed_state(source, show_id=show_id, etag=etag, last_modified=last_modified,
                                        last_fetch=time.time(), last_status="ok", last_error=None, **self.moved_to)

    def _fetch_listed(self, source: str, moved: str, exc: StatusError) -> FetchResult:
        """The feed at its listed address ``source``, its recorded new address ``moved`` having answered 404 or 410
        (``exc``); FeedError naming both when it cannot be read there either (the move is kept)."""
        try:
            return self._fetch(source, source)
        except PodsearchError as again:
            raise FeedError(f"{moved}, where it moved, answers HTTP {exc.status}, and {source}, its listed address: "
                            f"{again}; list the feed's address now in the config (or remove the feed)") from again

    def _back_home(self, source: str, show_id: str | None, parsed: ParsedFeed, moved: str, exc: StatusError) -> None:
        """The feed answered at its listed address ``source`` where it moved (``moved``) answers 404 or 410: if it is
        the show it was (:func:`same_show`), the move is forgotten (a note); if not, FeedError (the move is kept)."""
        how = same_show(self.catalog, show_id, parsed) if show_id else "no show was read from it yet"
        said = f"{moved}, where it moved, answers HTTP {exc.status}"
        if not how:
            raise FeedError(f"{said}, and {source}, its listed address, serves another show ({parsed.show.title!r}, "
                            f"not {show_id!r}): not read; list the feed's address now in the config (or remove the "
                            "feed)")
        message = f"feed {source}: {said}: read at {source} again, where the same show answers ({how}); the move is " \
                  "forgotten"
        self.report.notes.append(message)
        log.info("%s", message)
        self.moved_to["url"] = None  # (with the episodes read here)

    def _fetch(self, source: str, address: str, **validators: str | None) -> FetchResult:
        """The feed ``source`` fetched at ``address``. The operator chose the source: its host (its origin: scheme,
        host and port) is not checked; anywhere else the feed leads (a redirect, an address it moved to) is the feed's
        choice and is refused when private or loopback, as a transcript link is, unless allow_private_hosts."""
        trusted = source if _is_url(source) else None
        return waiting(lambda: self.feed_fetcher.fetch_any(address, trusted_url=trusted, **validators),
                       self.progress.advance, self.feed_fetcher.abandon)

    def _parse(self, source: str, result: FetchResult, asked: str) -> ParsedFeed:
        """The feed read (``asked`` for at its address, ``result`` what answered); FeedError (the feed reported and
        skipped, the run goes on) for anything its content makes the reading raise (a value no rule here foresaw must
        not end the reindex of every other feed). The error names the address read when it is not the source."""
        base = result.url if _is_url(result.url) else str(Path(result.url).expanduser())
        where = ""
        if _is_url(result.url) and result.url != urldefrag(asked.strip())[0]:
            where = f" (read at {result.url}, where {asked} redirects)"
        elif asked != source:
            where = f" (read at {asked}, where it moved)"
        try:
            return parse_feed(result.content, source, base_url=base, content_type=result.content_type)
        except PodsearchError as exc:
            if not where:
                raise
            raise FeedError(f"{exc}{where}") from exc
        except Exception as exc:
            log.exception("reading feed %s failed", source)
            raise FeedError(f"{source}: could not be read ({type(exc).__name__}: {exc}){where}") from exc

    def _follow(self, source: str, address: str, result: FetchResult,
                parsed: ParsedFeed) -> tuple[FetchResult, ParsedFeed, str, bool]:
        """The publisher says the feed lives elsewhere now (itunes:new-feed-url): read it there, this once and
        from now on, and where that one says it moved, up to ``MAX_MOVES`` addresses (a chain that comes back to an
        address it passed is not followed at all). If an address cannot be read, the feed as read at the address
        before serves, with a warning. (A feed read from a local file is not followed: the file is what the operator
        chose.) Returns what was read, where, and whether a new address was left unfollowed: then the feed keeps no
        validators, so that the next run reads it in full and tries again (a 304 has no new-feed-url to read)."""
        hops: list[tuple[str, str | None]] = []  # each address moved to, and where its permanent redirects led
        seen = {source, address, result.url}
        at, at_result, at_parsed = address, result, parsed
        while (target := at_parsed.new_feed_url) and target not in {at, at_result.url}:
            said = f"feed {source} says it moved to {target} (itunes:new-feed-url{'' if at == address else ' at ' + at})"
            where = "its old address" if at == address else at
            if target in seen:
                message = f"{said}, an address the chain of its moves passed already: not followed"
                self.report.warnings.append(message + "; read at its old address")
                log.info("%s; read at its old address", message)
                return result, parsed, address, True
            if len(hops) == MAX_MOVES:
                message = f"{said}: more than {MAX_MOVES} moves in one run; the rest is followed next run"
                self.report.warnings.append(message + f"; read at {where}")
                log.info("%s; read at %s", message, where)
                break
            other = self._read_there(source, target)
            if other:  # another registered feed's address: that show is read from there
                message = f"{said}, which is where the feed {other} is read; not followed (list only one of them)"
                self.report.warnings.append(message + f"; read at {where}")
                log.info("%s; read at %s", message, where)
                break
            try:
                moved = waiting(lambda: self.feed_fetcher.fetch(target, trusted_url=source),  # (no file: http(s))
                                self.progress.advance, self.feed_fetcher.abandon)
                self._not_another_feed(source, target, moved.moved_to, moved.url)
                moved_parsed = self._parse(source, moved, target)
            except PodsearchError as exc:
                message = f"{said}, but it cannot be read there: {exc}"
                self.report.warnings.append(message + f"; read at {where}")
                log.info("%s; read at %s", message, where)
                break
            hops.append((target, moved.moved_to))
            seen |= {target, moved.url}
            at, at_result, at_parsed = moved.moved_to or target, moved, moved_parsed
        pending = bool(at_parsed.new_feed_url) and at_parsed.new_feed_url not in {at, at_result.url}
        for target, redirected in hops:
            address = self._moved(source, address, target, "itunes:new-feed-url")
            address = self._moved(source, address, redirected, "a permanent redirect")
        return at_result, at_parsed, address, pending

    def _read_there(self, source: str, target: str) -> str | None:
        """The other registered feed read at ``target`` (its source, or where it moved), if any; an address written
        another way (``HTTP://``, a default port, ``a/../``, https for http, a trailing ``/``) or with more in its
        query (``B?src=moved``) is that feed's address (:func:`_same_feed`: until 5 December 2026 a redirect to
        ``B?src=moved`` was followed, and B's episodes taken for this feed's show)."""
        other = self.catalog.feed_state(target) or self.catalog.feed_at(target)
        if other is None and _is_url(target):
            # The registered address closest to the target (the feed's own first, on a tie): a redirect of
            # ``feed.php?id=1`` to ``feed.php?id=1&x=2`` is its own, though ``feed.php`` is registered too.
            best: tuple[int, int, dict] | None = None
            for row in self.catalog.feeds():
                for at in (row["source"], row.get("url")):
                    n = _same_feed(target, at) if at else None
                    if n is not None and (best is None or (n, row["source"] == source) > best[:2]):
                        best = (n, row["source"] == source, row)
            other = best[2] if best else None
        return other["source"] if other and other["source"] != source else None

    def _not_another_feed(self, source: str, address: str, *targets: str | None) -> None:
        """Raise FeedError when redirects from ``address`` led where another registered feed is read (``targets``:
        where the permanent ones led, and where all of them did): that is another show, and following it stored that
        show's episodes a second time under this show's ids and marked this show's episodes gone (found 5 December
        2026; a temporary redirect, or the address written another way, since the evening). The feed cannot be read
        at its address: it fails, nothing is recorded, and it is asked again next run."""
        for target in dict.fromkeys(t for t in targets if t and t != address):
            other = self._read_there(source, target)
            if other:
                raise FeedError(f"{address} redirects to {target}, which is where the feed {other} is read; "
                                "not followed (list only one of them)")

    def _moved(self, source: str, address: str, target: str | None, why: str) -> str:
        """Record that ``source`` is read at ``target`` from now on; returns the address to read it at."""
        if not target or target == address:
            return address
        self.moved_to["url"] = None if target == source else target  # (with the episodes read there)
        self.report.notes.append(f"{source} moved to {target} ({why}): read there from now on")
        # (in moves too, where stats and reindex --json list them: until 5 December 2026 a note alone)
        self.report.moves.append({"source": source, "to": target, "how": why})
        log.info("feed %s moved to %s (%s): read there from now on", source, target, why)
        return target

    def _unchanged(self, source: str, show_id: str) -> None:
        """The feed answered 304 (or the same file): its stored transcripts are still checked again."""
        self.report.feeds_unchanged += 1
        total = self.catalog.episode_count(show_id)
        done = self._fetch_extras(source, self.extras.plan_rechecks(list(self.catalog.episodes(show_id, include_gone=False))))
        read_again = [job.ep for job, extras in done if extras.transcript == "fetched"]
        with self.catalog.transaction():
            for ep in read_again:
                self._count(self.catalog.upsert_episode(ep))
            self._store_validators(done)
            if self.prune:  # the episodes marked gone by earlier runs go too (only a changed feed's went)
                self.report.gone += self.catalog.prune_gone(show_id)
            self.catalog.set_feed_state(source, last_fetch=time.time())
        self.report.unchanged += total - len(read_again)

    def _duplicate(self, source: str, show_id: str) -> bool:
        """True when this run has read the show from another source already (listed twice, or moved)."""
        first = self.read.setdefault(show_id, source)
        if first == source:
            return False
        message = f"{source} is the same show as {first} ({show_id!r}); read once: list only one of them"
        self.report.warnings.append(message)
        log.info("%s", message)
        # (a move is recorded, without the old address's validators: nothing of the feed is stored)
        moved = dict(self.moved_to, etag=None, last_modified=None) if self.moved_to else {}
        self.catalog.set_feed_state(source, show_id=show_id, last_fetch=time.time(), last_status="duplicate",
                                    last_error=f"the same show as {first}", **moved)
        return True

    def _new_show_id(self, source: str, title: str) -> str:
        """A new show's id: its title's (:func:`show_slug`), or with ``-2``, ``-3`` ... when another show has it."""
        candidate = slug = show_slug(title)
        n = 2
        while self.catalog.show_id_taken(candidate, source):
            candidate = f"{slug}-{n}"
            n += 1
        return candidate

    def _qualify_ids(self, episodes: list[Episode], show_id: str) -> list[Episode]:
        """An id already owned by another show (one guid in two feeds) is qualified with this show's id; an item
        whose id changed and that is an episode the show has under its old id keeps that id (:func:`reconcile`)."""
        owners = self.catalog.owners(ep.id for ep in episodes)
        for ep in episodes:
            owner = owners.get(ep.id)
            if owner is not None and owner != show_id:
                ep.id = f"{show_id}/{ep.id}"
        self._keep_ids(episodes, show_id)
        return episodes

    def _keep_ids(self, episodes: list[Episode], show_id: str) -> None:
        """Items whose id changed (new guids, guids added, a moved enclosure, an edited title or date) keep the id of the
        episode they are: that episode is updated, nothing is stored twice or marked gone; the new id is recorded
        so that the item keeps it however it changes later."""
        items = [{"id": ep.id, "title": ep.title, "published": ep.published, "audio_url": ep.audio_url,
                  "link": ep.link, "transcripts": [t.url for t in ep.transcript_links], "notes": ep.description_text}
                 for ep in episodes]
        renamed = reconcile(self.catalog, show_id, items)
        if not renamed:
            return
        by_id = {r.item_id: r for r in renamed}
        for ep in episodes:
            r = by_id.get(ep.id)
            if r is not None:
                ep.id = r.episode_id
                self.aliases.append((show_id, r.item_id, r.episode_id))  # (with the episodes)
        source = self.read.get(show_id, show_id)
        first = renamed[0]
        message = (f"feed {source}: {len(renamed)} items with a new id are episodes the show has; they keep their ids "
                   f"(e.g. {first.item_id!r} is {first.episode_id!r}: {first.how})")
        self.report.notes.append(message)
        log.info("%s", message)

    # -- transcripts and chapters -----------------------------------------------------------------
    def _fetch_extras(self, source: str, jobs: list[Job]) -> list[tuple[Job, Extras]]:
        if not jobs:
            return []
        self.progress.phase(f"transcripts of {source}", len(jobs))
        done = []
        for job, extras in self.extras.run(jobs, self.progress.advance):
            if extras.transcript:
                name = f"transcripts_{extras.transcript}"
                setattr(self.report, name, getattr(self.report, name) + 1)
            self.report.transcripts_reparsed += extras.reparsed
            self.report.errors.extend(f"feed {source}: episode {job.ep.id!r}: {p}" for p in extras.problems)
            self.report.warnings.extend(f"feed {source}: episode {job.ep.id!r}: {w}" for w in extras.warnings)
            for exc in extras.unreached:
                if isinstance(exc, DeadlinePassed):
                    self.deadline_links += 1
                elif isinstance(exc, HostUnreachable):
                    self.no_answer.append((f"feed {source}: episode {job.ep.id!r}", exc, job.recheck is not None))
            done.append((job, extras))
        return done

    def _store_validators(self, done: list[tuple[Job, Extras]]) -> None:
        for _, extras in done:
            if extras.validators is not None:
                self.catalog.set_transcript_state(*extras.validators)

    def _count(self, outcome: str) -> None:
        setattr(self.report, outcome, getattr(self.report, outcome) + 1)

    # -- the run's summary ---------------------------------------------------------------------------
    def _report_hosts(self) -> None:
        """Each host that went down once; a link that got no answer from a host that did not, by itself."""
        for what, exc, recheck in self.no_answer:
            if self.health.is_down(exc.host):
                continue
            if recheck:  # the stored transcript was kept
                self.report.warnings.append(f"{what}: the stored transcript was kept: reading it again failed: {exc}")
            else:
                self.report.errors.append(f"{what}: {exc}")
        for state in self.health.down():
            failed, skipped = len(state.failed), len(state.skipped)
            entry = {"host": state.host, "cause": state.cause, "message": state.message, "failed": failed,
                     "skipped": skipped}
            self.report.unreachable_hosts.append(entry)
            self.report.errors.append(
                f"{state.host} is unreachable ({state.cause}): {failed + skipped} links not read "
                f"({failed} without an answer, {skipped} skipped); {state.message}")

    def _report_reparsed(self) -> None:
        if not self.report.transcripts_reparsed:
            return
        n = self.report.transcripts_reparsed
        message = (f"{n} stored transcript{' was' if n == 1 else 's were'} read again in full and parsed again: "
                   f"parsed by another version of the parsers (version {PARSER_VERSION} now)")
        self.report.notes.append(message)
        log.info("%s", message)

    def _report_deadline(self) -> None:
        if not self.unread and not self.deadline_links:
            return
        self.report.deadline_passed = True
        unread = ", ".join(self.unread[:5]) + (", ..." if len(self.unread) > 5 else "")
        self.report.errors.append(
            f"the reindex deadline ({float(self.config.reindex_deadline):g} s) passed: {len(self.unread)} feeds "
            f"not read{': ' + unread if unread else ''}; {self.deadline_links} transcript or chapters links not "
            "read; what was read is stored and indexed")


def ingest(config: Config, catalog: Catalog, sources: list[str] | None = None, *, prune: bool = False,
           progress: Progress | None = None, report: Report | None = None) -> Report:
    """Read feeds (default: the config's and those added) and their transcripts into ``catalog``; nothing else.

Without ``sources``, feeds the config no longer lists are dropped after the run.

    The index and the model are left alone (:func:`reindex` brings them in line afterwards).
    """
    progress = progress or Progress()
    report = report or Report()
    started = time.perf_counter()
    worker = FeedIngest(config, catalog, report, progress, prune=prune)
    from_config = sources is None
    if from_config:
        feed_sources.record_origins(config, catalog)
        sources = feed_sources.all_sources(config, catalog)
    log.info("reindex: reading %d feeds", len(sources))
    try:
        worker.run(sources)
        if from_config:
            worker.drop(feed_sources.unlisted(config, catalog))
            if prune:  # (a feed dropped by an earlier run is no longer read: its show's gone episodes went nowhere)
                report.gone += catalog.prune_unfed()
    finally:
        worker.close()
    report.seconds["ingest"] = round(time.perf_counter() - started, 3)
    return report
