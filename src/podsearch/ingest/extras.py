"""An episode's transcript and chapters: fetched when missing, checked again when stored.

An episode whose transcript links did not change keeps the transcript the catalog holds, but that
transcript is asked for again conditionally (``If-None-Match`` / ``If-Modified-Since`` with the validators
it was read with; a local file by its modification time): a 304 costs nothing, and a transcript edited at
an unchanged URL is read again. A transcript whose validators were never recorded (read before catalog
schema 3) is read once in full to learn them; one served without validators is not asked again.

A transcript parsed by another version of the parsers (``transcripts.PARSER_VERSION``, kept with its validators;
none: before catalog schema 8) is read again in full, without its validators, and parsed again, once: a parser
fix reaches the transcripts already stored (until 6 December 2026 only those that changed at their source). It is
fetched as any other (the same fetcher, its per-host limits and the run's deadline, the same workers); one not
reached keeps its stored segments and its old version, and is read next run. One read but refused by the parsers
(edited into something that is not a transcript, or refused by a new parser) keeps its stored segments, is said
once, and is asked for again conditionally: read again when it changes or for another parser version.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from .. import languages
from ..catalog import Catalog
from ..episodes import Episode, TranscriptLink
from ..errors import DeadlinePassed, FetchError, HostSkipped, HostUnreachable, PodsearchError, TranscriptError
from .chapters import parse_chapters
from .fetch import Fetcher, FetchResult
from .transcripts import PARSER_VERSION, decode_bytes, parse_transcript, pick_order

log = logging.getLogger(__name__)

# Transcript links tried for one episode, richest first. Real feeds offer one to five (formats, languages); the
# others are left, with a warning: a feed of 20 items with 50 links each made 1,000 requests per run, to any
# hosts it named (until 5 December 2026).
MAX_TRANSCRIPT_LINKS = 8
T = TypeVar("T")

# A run stopped while it fetches (SIGTERM, Ctrl-C, the server's stop: ``reindex.locked_run``) starts no other fetch,
# shuts the connections of those in flight (Fetcher.abandon) and waits this long for their threads to end, then leaves
# them (daemons: the process does not wait for them) and cleans up. Until 6 December 2026 it waited for every fetch
# the pool had started, each up to fetch_timeout, queued two at a time per host: 18 s after SIGTERM with 4 workers and
# transcripts that took 10 s; then, to 6 December, it left them after this grace with their connections open.
STOP_GRACE = 1.0
POLL = 0.2  # seconds between the checks of a stop while the run waits for a fetch (progress.advance(0))



@dataclass
class Job:
    """What one episode needs: a transcript, a check of its stored one, its chapters."""

    ep: Episode
    transcript: bool = False
    recheck: dict[str, Any] | None = None  # the stored transcript's validators ({}: read it in full)
    reparse: bool = False  # the stored transcript was parsed by another parser version: read it in full again
    chapters: bool = False


@dataclass
class Extras:
    """How one episode's fetches went (counted and reported by the run)."""

    transcript: str = ""  # "fetched", "not_modified", "failed", "empty" or "" (nothing asked, or not reached)
    problems: list[str] = field(default_factory=list)  # reported with the episode
    warnings: list[str] = field(default_factory=list)
    # Links that got no answer, were skipped (their host is down) or were stopped by the run's deadline: the
    # run reports them once per host (or for the deadline); one whose host stayed up, with the episode.
    unreached: list[FetchError] = field(default_factory=list)
    # (url, etag, last_modified, parser version) of the transcript read
    validators: tuple[str, str | None, str | None, int] | None = None
    reparsed: bool = False  # a stored transcript of another parser version was read again and parsed
    refused: bool = False  # a stored transcript read again that the parsers refused (its segments kept)

    @property
    def missing(self) -> bool:
        """Something the episode needs could not be read (the next run must try again)."""
        return bool(self.problems) or self.transcript == "failed"


class EpisodeExtras:
    def __init__(self, catalog: Catalog, fetcher: Fetcher, workers: int) -> None:
        self.catalog = catalog
        self.fetcher = fetcher
        self.workers = max(1, workers)
        # Transcripts this run read again for a new parser: the catalog keeps a version by URL, so another show's
        # episode that links one of them (planned after the first's was stored) is read again too, not asked
        # conditionally (a 304 would keep its old parse).
        self.reparsed: set[str] = set()

    def plan(self, episodes: list[Episode]) -> list[Job]:
        """What the episodes of a feed that was read need; each keeps what the catalog holds meanwhile."""
        jobs = []
        for ep in episodes:
            old = self.catalog.episode(ep.id)
            same = old is not None and old.transcript_links == ep.transcript_links
            if same:
                ep.segments, ep.transcript_source = old.segments, old.transcript_source
            if same and ep.chapters_url and old.chapters_url == ep.chapters_url:
                ep.chapters = old.chapters
            if same and not ep.language and ep.segments:
                # As for a fetched transcript below: a kept one says the language the same way, run after run.
                ep.language = languages.detect_language(ep.transcript_text)
            recheck = self._recheck(ep)
            job = Job(ep, transcript=bool(ep.transcript_links) and not ep.segments, recheck=recheck,
                      reparse=recheck is not None and recheck.get("parser") != PARSER_VERSION,
                      chapters=bool(ep.chapters_url) and not ep.chapters)
            if job.transcript or job.recheck is not None or job.chapters:
                jobs.append(job)
        return jobs

    def plan_rechecks(self, episodes: list[Episode]) -> list[Job]:
        """Checks of the stored transcripts of a feed that did not change (``episodes`` without segments)."""
        jobs = []
        for ep in episodes:
            recheck = self._recheck(ep)
            if recheck is not None:
                jobs.append(Job(ep, recheck=recheck, reparse=recheck.get("parser") != PARSER_VERSION))
        return jobs

    def _recheck(self, ep: Episode) -> dict[str, Any] | None:
        """How to ask for the stored transcript again: its validators (and ``parser``, the version that parsed it);
        without ``etag`` and ``last_modified`` to read it in full (``{}``: nothing recorded; ``{"parser": n}``: parsed
        by another version, ``n``, None before schema 8); None not to ask."""
        if not ep.transcript_source:  # no transcript stored
            return None
        state = self.catalog.transcript_state(ep.transcript_source)
        if state is None:
            return {}  # never recorded: read once to learn its validators (and parsed again: no version was kept)
        if state.get("parser") != PARSER_VERSION:
            # parsed by another version: read in full, unconditionally (a 304 would keep the old parse)
            return {"parser": state.get("parser")}
        if ep.transcript_source in self.reparsed:  # stored by this run for another episode; this one's is older
            return {"parser": None}
        if not state.get("etag") and not state.get("last_modified"):
            return None  # served without validators: there is no cheap way to ask again
        return state

    def run(self, jobs: list[Job], advance: Any = None) -> Iterator[tuple[Job, Extras]]:
        """Fetch in worker threads; yields each job with how it went, in order. While it waits for a fetch it calls
        ``advance(0)`` now and then: a run the server stops raises there (``server.StoppableRun``). Whatever ends the
        loop early (a stop signal, an error) ends the fetching: no other job starts, those in flight are waited for
        no longer (their connections are shut: :meth:`Fetcher.abandon`; their threads waited for up to
        :data:`STOP_GRACE` seconds, then left); what they read is dropped, and nothing of the feed is stored (the run
        stores a feed's episodes once all its fetches are done: the next run fetches them)."""
        if not jobs:
            return
        workers = _Workers(self._do, jobs, min(self.workers, len(jobs)))
        try:
            for n, job in enumerate(jobs):
                extras = workers.result(n, advance)
                if extras.reparsed and extras.validators:
                    self.reparsed.add(extras.validators[0])
                if advance:
                    advance()
                if not job.ep.language and job.ep.segments:
                    # Feeds that declare no language were only guessed from titles and notes; the transcript says more.
                    job.ep.language = languages.detect_language(job.ep.transcript_text)
                yield job, extras
        finally:
            workers.stop(STOP_GRACE, self.fetcher.abandon)

    def _do(self, job: Job) -> Extras:
        extras = Extras()
        if job.transcript:
            self._transcript(job.ep, extras)
        elif job.recheck is not None:
            self._check_again(job.ep, job.recheck, extras)
            extras.reparsed = job.reparse and extras.validators is not None and not extras.refused
        if job.chapters:
            try:
                result = self._read(job.ep.chapters_url, job.ep.chapters_local)
                job.ep.chapters = parse_chapters(result.content)
            except (PodsearchError, ValueError) as exc:
                if not self._not_reached(extras, exc):
                    extras.problems.append(f"chapters {job.ep.chapters_url}: {exc}")
        return extras

    def _read(self, url: str, local: bool, validators: dict[str, Any] | None = None) -> FetchResult:
        validators = validators or {}
        if local:
            return self.fetcher.fetch_any(url, last_modified=validators.get("last_modified"))
        return self.fetcher.fetch(url, trusted=False, etag=validators.get("etag"),
                                  last_modified=validators.get("last_modified"))

    @staticmethod
    def _not_reached(extras: Extras, exc: Exception) -> bool:
        """Keep a failure that is the host's (or the deadline's) for the run to report; False for others."""
        if not isinstance(exc, (HostUnreachable, HostSkipped, DeadlinePassed)):
            return False
        extras.unreached.append(exc)
        return True

    def _parse(self, link: TranscriptLink, result: FetchResult) -> list | None:
        """The transcript's segments; None when the file is blank. Raises TranscriptError."""
        charset = "" if link.local else result.charset or ""
        if not decode_bytes(result.content, charset).strip():
            return None
        # The feed's type names the format; the server's charset says how to read the bytes.
        served = "" if link.local else result.content_type or ""
        mime = (link.type or served) + (f"; charset={charset}" if charset else "")
        return parse_transcript(result.content, mime, url=link.url)

    def _transcript(self, ep: Episode, extras: Extras) -> None:
        """Read the richest transcript link that works; sets ep.segments."""
        tried: list[str] = []
        empty: list[str] = []
        links = pick_order(ep.transcript_links)
        if len(links) > MAX_TRANSCRIPT_LINKS:
            extras.warnings.append(f"the item offers {len(links)} transcript links; only the first "
                                   f"{MAX_TRANSCRIPT_LINKS} (richest first) were tried")
        for link in links[:MAX_TRANSCRIPT_LINKS]:
            try:
                result = self._read(link.url, link.local)
                segments = self._parse(link, result)
            except (FetchError, TranscriptError) as exc:
                if not self._not_reached(extras, exc):
                    tried.append(str(exc))
                continue
            if segments is None:
                empty.append(link.url)
                continue
            ep.segments, ep.transcript_source = segments, link.url
            extras.transcript = "fetched"
            extras.validators = (link.url, result.etag, result.last_modified, PARSER_VERSION)
            return
        if tried or extras.unreached:
            extras.transcript = "failed"
            if tried:  # links whose host is down are said once for the host, not for each episode
                extras.problems.append("no transcript could be read: " + "; ".join(
                    tried + [f"empty transcript ({url})" for url in empty]))
        elif empty:
            extras.transcript = "empty"
            extras.warnings.append("the transcript is empty (" + ", ".join(empty) + "); episode kept without one")

    def _check_again(self, ep: Episode, validators: dict[str, Any], extras: Extras) -> None:
        """Ask for the stored transcript again; an edited one replaces it, a failure keeps it."""
        link = next((t for t in ep.transcript_links if t.url == ep.transcript_source), None)
        if link is None:
            return
        try:
            result = self._read(link.url, link.local, validators)
        except FetchError as exc:
            if not self._not_reached(extras, exc):
                extras.warnings.append(f"the stored transcript was kept: reading it again failed: {exc}")
            return
        if result.not_modified:
            extras.transcript = "not_modified"
            return
        # What was read is this version's answer to these bytes, even a refusal: the next run asks conditionally
        # and reads the file again when it changes (or for another parser). Until 6 December 2026 a file the
        # parsers refused kept its old validators or version, and was read in full and refused again every run.
        extras.validators = (link.url, result.etag, result.last_modified, PARSER_VERSION)
        try:
            segments = self._parse(link, result)
        except TranscriptError as exc:
            extras.refused = True  # (not parsed again: not counted so, nor read again for another episode)
            extras.warnings.append(f"the stored transcript was kept: reading it again failed: {exc}")
            return
        if segments is None:
            extras.warnings.append(f"the stored transcript was kept: {link.url} is now empty")
            return
        # Read again in full: the episode's content hash says whether it changed.
        extras.transcript = "fetched"
        ep.segments = segments


def waiting(work: Callable[[], T], poll: Callable[[int], Any] | None,
            abandon: Callable[[list[threading.Thread]], Any] | None = None) -> T:
    """``work()`` in a daemon thread while this one calls ``poll(0)`` every :data:`POLL` s: a feed's fetch, which a
    scheduled run the server stops (``server.StoppableRun``) leaves at once rather than when it ends (up to
    fetch_timeout, 30 s by default, longer than ``server.STOP_WAIT``), its connection shut by ``abandon`` (its
    fetcher's :meth:`~Fetcher.abandon`). Its exception is raised here."""
    workers = _Workers(lambda _item: work(), [None], 1)
    try:
        return workers.result(0, poll)
    finally:
        workers.stop(0.0, abandon)


class _Workers:
    """``work`` done on each of ``items`` in ``count`` daemon threads, in order; :meth:`result` waits for one.

    A ``ThreadPoolExecutor`` (used until 6 December 2026) cannot leave a task it started: its ``shutdown`` and the
    interpreter's exit wait for every one, and a run stopped while it fetched waited for each fetch in flight (up to
    fetch_timeout each) before it could clean up."""

    def __init__(self, work: Callable[[Any], Any], items: Sequence[Any], count: int) -> None:
        self._work, self._items = work, items
        self._results: list[tuple[bool, Any]] = [(False, None)] * len(items)
        self._done = [threading.Event() for _ in items]
        self._next = 0
        self._lock = threading.Lock()
        self._stopped = False
        self._threads = [threading.Thread(target=self._loop, name=f"podsearch-fetch-{n}", daemon=True)
                         for n in range(max(1, count))]
        for thread in self._threads:
            thread.start()

    def _loop(self) -> None:
        while True:
            with self._lock:
                if self._stopped or self._next >= len(self._items):
                    return
                n = self._next
                self._next += 1
            try:
                self._results[n] = (True, self._work(self._items[n]))
            except BaseException as exc:  # (raised in the run's thread by result)
                self._results[n] = (False, exc)
            self._done[n].set()

    def result(self, n: int, poll: Callable[[int], Any] | None = None) -> Any:
        """The ``n``-th item's outcome (its exception raised here); ``poll(0)`` every :data:`POLL` s meanwhile."""
        while not self._done[n].wait(POLL):
            if poll:
                poll(0)
        ok, value = self._results[n]
        if not ok:
            raise value
        return value

    def stop(self, grace: float, abandon: Callable[[list[threading.Thread]], Any] | None = None) -> None:
        """No item starts any more; the threads of those in flight are given to ``abandon`` (which shuts their
        connections), then waited for up to ``grace`` seconds (all of them once all are done)."""
        with self._lock:
            self._stopped = True
        busy = [thread for thread in self._threads if thread.is_alive()]
        if busy and abandon is not None:
            shut = abandon(busy)
            if shut:
                log.info("%d fetches left, their connections shut", shut)
        deadline = time.monotonic() + grace
        for thread in self._threads:
            thread.join(max(0.0, deadline - time.monotonic()))
