"""Running the app under waitress: proxy settings, a graceful stop on SIGTERM, and scheduled reindexing.

``podsearch serve`` calls :func:`serve`. On SIGTERM (or SIGINT) the server stops accepting connections,
lets the requests it already has finish (up to ``shutdown_timeout`` seconds), closes idle keep-alive
connections and returns, so the process exits 0. A :class:`ReindexScheduler` thread runs
:func:`podsearch.reindex.reindex` every ``reindex_every``; the reindex lock guarantees that it never
overlaps another reindex (its own or a ``podsearch reindex`` from cron), and the generation swap means
searches keep being answered from the old index until the new one is in place.
"""

from __future__ import annotations

import functools
import ipaddress
import logging
import re
import resource
import signal
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs

from .config import Config, option_value, parse_duration
from .errors import ConfigError, ListenError, PodsearchError, QueryError, ReindexRunning, Terminated
from .progress import Progress
from .requests import search_asked

log = logging.getLogger(__name__)

@dataclass
class ServeOptions:
    host: str
    port: int
    threads: int = 4
    url_prefix: str = ""
    trusted_proxy: str = ""
    trusted_proxy_headers: str = ""
    reindex_every: float | None = None
    shutdown_timeout: float = 30.0
    max_body_bytes: int = 64 * 1024
    client_connections: int = 32
    client_timeout: float = 20.0
    client_searches: int = 0

    @classmethod
    def from_config(cls, config: Config, **overrides: Any) -> ServeOptions:
        # (an option is checked as the setting is in the config file: --threads 0 served nothing, --port 99999
        # another port)
        given = {k: option_value(k, v) for k, v in overrides.items() if v is not None}
        every = given.pop("reindex_every", config.reindex_every)
        return cls(host=given.get("host", config.host), port=given.get("port", config.port),
                   threads=given.get("threads", config.threads),
                   url_prefix=given.get("url_prefix", config.url_prefix),
                   trusted_proxy=given.get("trusted_proxy", config.trusted_proxy),
                   trusted_proxy_headers=given.get("trusted_proxy_headers", config.trusted_proxy_headers),
                   reindex_every=parse_duration(every) if isinstance(every, str) else every,
                   shutdown_timeout=given.get("shutdown_timeout", config.shutdown_timeout),
                   max_body_bytes=config.max_body_bytes, client_connections=config.client_connections,
                   client_timeout=config.client_timeout, client_searches=config.client_searches)


WARM_EVERY = 2.0  # seconds between the warmer's looks for a newly published index generation or model


class Warmer(threading.Thread):
    """Loads what a newly published index generation or model needs (:meth:`Library.warm`: facet values, the
    spelling lexicon, document ids, the date order, the model's reasons) soon after a reindex publishes it, rather
    than in the first searches after it: on the site corpus the lexicon alone took 2.5 s, inside a search whose
    deadline is 1 s, and every search that needed it meanwhile waited for it. A look when nothing changed costs
    under a millisecond."""

    def __init__(self, library: Any, every: float = WARM_EVERY) -> None:
        super().__init__(name="podsearch-warm", daemon=True)
        self.library, self.every = library, every
        self._halt = threading.Event()

    def stop(self) -> None:
        self._halt.set()

    def run(self) -> None:
        while not self._halt.wait(self.every):
            try:
                self.library.warm()
            except Exception:  # the warmer must outlive a bad generation; the search that reads it reports it
                log.exception("warming the new index generation failed")


class StoppableRun(Progress):
    """The progress of a scheduled run, which the server's stop can cut short: once :meth:`stop` is called, the
    run's next step (a feed, a transcript, a document indexed, a stage of the model's fit, a phase) raises
    :class:`Terminated` in the thread running it, and the run cleans up as a ``podsearch reindex`` stopped by
    SIGTERM does (``reindex.locked_run``): the generation it was writing is removed, the lock let go, the run
    recorded ``interrupted (SIGTERM)``."""

    def __init__(self) -> None:
        self.owner: threading.Thread | None = None  # the thread the run is in (steps counted elsewhere go on)
        self._stop = threading.Event()
        self.signum = signal.SIGTERM

    def stop(self, signum: int = signal.SIGTERM) -> None:
        self.signum = signum
        self._stop.set()

    def _check(self) -> None:
        if self._stop.is_set() and threading.current_thread() is self.owner:
            raise Terminated(self.signum)

    def phase(self, name: str, total: int | None = None) -> None:
        self._check()

    def advance(self, n: int = 1) -> None:
        self._check()


STOP_WAIT = 10.0  # seconds a scheduled run cut short by the server's stop has to clean up


class ReindexScheduler(threading.Thread):
    """Runs a reindex every ``interval`` seconds (the first one ``interval`` after start)."""

    def __init__(self, config: Config, interval: float) -> None:
        super().__init__(name="podsearch-reindex", daemon=True)
        self.config, self.interval = config, interval
        self._halt = threading.Event()
        self._running = threading.Event()
        self._progress = StoppableRun()
        self.runs = 0
        self.last_outcome = ""
        self.last_finished: float | None = None

    def status(self) -> dict[str, Any]:
        return {"every_seconds": self.interval, "running": self._running.is_set(), "runs": self.runs,
                "last_outcome": self.last_outcome or None,
                "last_finished_age_seconds": None if self.last_finished is None
                else round(time.time() - self.last_finished, 1)}

    def stop(self, timeout: float, signum: int = signal.SIGTERM) -> None:
        """No further runs; wait up to ``timeout`` for a run in progress to finish, then stop it: it cleans up as a
        reindex stopped by ``signum`` does, within :data:`STOP_WAIT` seconds. Until 6 December 2026 a run still
        going then was left to die with the process, and its half-written generation (as big as the index) stayed
        until the next run, which took over the lock."""
        self._halt.set()
        if self._running.is_set():
            log.info("waiting up to %.0f s for the running reindex to finish", timeout)
        self.join(timeout)
        if not self.is_alive():
            return
        log.warning("the scheduled reindex is still running after %.0f s; stopping it (the live index is untouched "
                    "until a reindex completes)", timeout)
        self._progress.stop(signum)
        self.join(STOP_WAIT)
        if self.is_alive():
            log.warning("the scheduled reindex did not stop within %.0f s; stopping without it (the next run removes "
                        "what it half wrote)", STOP_WAIT)

    def run(self) -> None:
        self._progress.owner = threading.current_thread()
        while not self._halt.wait(self.interval):
            self.run_once()

    def run_once(self) -> None:
        from .reindex import reindex

        self._running.set()
        started = time.perf_counter()
        try:
            report = reindex(self.config, wait=False, progress=self._progress)
        except ReindexRunning as exc:
            self.last_outcome = "skipped: another reindex is running"
            log.warning("scheduled reindex skipped: %s", exc)
        except Terminated as exc:  # (the server's stop: the run cleaned up)
            self.last_outcome = f"interrupted ({exc.name})"
            log.warning("scheduled reindex stopped by the server's stop: its half-written index and model were "
                        "removed; the last finished ones are kept")
        except PodsearchError as exc:
            self.last_outcome = f"failed: {exc}"
            log.error("scheduled reindex failed: %s", exc)
        except Exception as exc:  # the scheduler must outlive a bad run; the cause is logged
            self.last_outcome = f"failed: {exc}"
            log.exception("scheduled reindex crashed")
        else:
            self.last_outcome = "failed feeds or transcripts" if report.failed else "ok"
            log.info("scheduled reindex done in %.1f s: %s new, %s updated, %s gone; index %s; model %s%s",
                     time.perf_counter() - started, report.new, report.updated, report.gone, report.index,
                     report.model, f"; {len(report.errors)} errors" if report.errors else "")
            for line in [*report.errors, *report.webhook_errors]:  # what the CLI prints as error: and webhook:
                log.warning("scheduled reindex: %s", line)
        finally:
            self.runs += 1
            self.last_finished = time.time()
            self._running.clear()


SEARCHES = "podsearch_search_paths"  # the app's extension naming the paths that search (web/limits.py)
CONNECTION_LIMIT = 1000  # connections open at once (waitress's default, 100, one client could fill)
WARN_EVERY = 60.0  # seconds between two warnings about one client


def connection_limit() -> int:
    """Connections the server holds open at once: CONNECTION_LIMIT, or half the files the process may open."""
    try:
        soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    except (OSError, ValueError):
        return 100
    return CONNECTION_LIMIT if soft == resource.RLIM_INFINITY else max(100, min(CONNECTION_LIMIT, soft // 2))


def _address(addr: Any) -> str:
    return str(addr[0]) if isinstance(addr, tuple) and addr else str(addr)


def client_of(address: str) -> str:
    """Who a connection counts against: its IPv4 address, or its IPv6 address's /64 (one subscriber's prefix:
    whoever holds one holds all its 2^64 addresses). An IPv4 address written as IPv6 is the IPv4 address."""
    if ":" not in address:
        return address
    try:
        ip = ipaddress.IPv6Address(address.split("%", 1)[0])
    except ValueError:
        return address
    if ip.ipv4_mapped is not None:
        return str(ip.ipv4_mapped)
    return str(ipaddress.IPv6Network((int(ip) >> 64 << 64, 64)))


class ConnectionGuard:
    """What one client may hold of the server, and for how long. Waitress hands a worker only a whole request,
    so a slow client holds no worker; but it holds a connection, and past waitress's connection limit the server
    stops accepting: one client that opened 120 connections and sent half a request head on each (or nothing)
    kept every other client out for as long as it trickled a byte every two minutes. Now a client address may
    hold ``per_client`` connections (an IPv6 client: its /64; more are closed as they open; the trusted proxy,
    which speaks for every client behind it, is exempt), and a connection has ``timeout`` seconds to send a
    whole request, from when it opened or its last answer was sent, whatever it trickles (an idle keep-alive
    connection is closed as late).
    Runs in the server's loop thread: the channels are created, swept and closed there."""

    def __init__(self, per_client: int, timeout: float, exempt: str = "") -> None:
        self.per_client, self.timeout, self.exempt = per_client, timeout, exempt
        self.open: Counter[str] = Counter()
        self.total = self.refused = self.timed_out = 0
        self._warned: dict[str, float] = {}

    def status(self) -> dict[str, int]:
        """For ``/readyz`` (another thread: plain numbers only, read once each)."""
        return {"open": self.total, "clients": len(self.open), "refused": self.refused,
                "timed_out": self.timed_out}

    def opened(self, channel: Any) -> None:
        address = _address(channel.addr)
        client = channel.podsearch_client = client_of(address)
        channel.podsearch_waiting = channel.creation_time
        self.open[client] += 1
        self.total += 1
        if self.per_client and self.exempt not in {"*", address} and self.open[client] > self.per_client:
            channel.will_close = True
            self.refused += 1
            now = time.monotonic()
            if now - self._warned.get(client, -WARN_EVERY) >= WARN_EVERY:
                self._warned[client] = now
                log.warning("client %s holds %d connections (client_connections); closing more as they open",
                            client, self.per_client)

    def gone(self, channel: Any) -> None:
        client = channel.__dict__.pop("podsearch_client", None)
        if client is not None:
            self.total -= 1
            self.open[client] -= 1
            if self.open[client] <= 0:
                del self.open[client]

    def sweep(self, channels: list[Any], now: float) -> None:
        """Close the connections that have waited too long to send a whole request. A connection's time starts
        when it opens and again when a request of it has been answered (``service``, in a worker thread), or when
        the sweep finds it answered; seeing it idle between two requests of a steady stream must not count.

        And close those that do not take their answers (``stalled``)."""
        for channel in channels:
            if self.stalled(channel, now):
                channel.handle_close()  # (its worker, waiting for room, is woken and told the client left)
                self.timed_out += 1
            elif channel.requests or channel.total_outbufs_len or channel.will_close or channel.close_when_flushed:
                channel.podsearch_waiting = None  # being answered: its next request's time starts after
            elif channel.podsearch_waiting is None:
                channel.podsearch_waiting = now
            elif now - channel.podsearch_waiting > self.timeout:
                channel.will_close = True
                self.timed_out += 1

    def stalled(self, channel: Any, now: float) -> bool:
        """Whether a connection has not taken its answers for ``timeout`` seconds: nothing of them sent for that
        long, or its output at waitress's high-water mark (its worker waits for room) all that time. Four
        connections that pipelined 200 requests each and read nothing held all four workers for as long as they
        stayed open (each worker waits for its client to read, and the client never does), and no other client
        was answered, not even ``/healthz``; a client reading a byte now and then would do the same."""
        pending = channel.total_outbufs_len
        if not pending:
            channel.podsearch_full = None
            return False
        if pending < channel.adj.outbuf_high_watermark:
            channel.podsearch_full = None
        elif channel.podsearch_full is None:
            channel.podsearch_full = now
        full_for = now - channel.podsearch_full if channel.podsearch_full is not None else 0.0
        return max(now - channel.last_activity, full_for) > self.timeout


@functools.cache
def keep_alive_task() -> type:
    """Waitress's task for a request, that keeps the connection open after an answer with no body (a 204, a 304).

    Waitress closes an HTTP/1.1 connection after any answer without a Content-Length, and a 204 or a 304 never
    has one (nor needs one: it ends with its head). So every revalidation of a cached answer (``If-None-Match`` ->
    304) and every CORS preflight (204) cost the browser a new connection (until 5 December 2026). The close is
    still sent when the client asks for it, for HTTP/1.0, and for the other reasons waitress has."""
    from waitress.task import WSGITask

    class KeepAliveTask(WSGITask):
        podsearch_heading = False

        def build_response_header(self) -> bytes:
            self.podsearch_heading = True
            try:
                return super().build_response_header()
            finally:
                self.podsearch_heading = False

        def set_close_on_finish(self) -> None:
            if (self.podsearch_heading and not self.has_body and self.version == "1.1"
                    and self.request.headers.get("CONNECTION", "").lower() != "close"):
                return  # (waitress's only other reason while building the head: an answer it must chunk)
            super().set_close_on_finish()

    return KeepAliveTask


@functools.cache
def guarded_channel() -> type:
    """Waitress's connection class, its connections counted and timed by the server's ConnectionGuard (made on
    first use: waitress is imported when a server starts, not with this module)."""
    from waitress.channel import HTTPChannel

    class GuardedChannel(HTTPChannel):
        task_class = keep_alive_task()
        podsearch_waiting: float | None = None
        podsearch_full: float | None = None  # since when its output is at the high-water mark

        def __init__(self, server: Any, sock: Any, addr: Any, adj: Any, map: Any = None) -> None:  # noqa: A002
            super().__init__(server, sock, addr, adj, map)
            server.podsearch_guard.opened(self)

        def del_channel(self, map: Any = None) -> None:  # noqa: A002
            super().del_channel(map)
            self.server.podsearch_guard.gone(self)

        def service(self) -> None:  # a worker thread, once a whole request has come
            dispatcher = self.server.task_dispatcher
            if hasattr(dispatcher, "started"):
                dispatcher.started(self)
            began = time.monotonic()
            try:
                super().service()
            finally:
                self.podsearch_waiting = None  # answered: the next request's time starts now
                if hasattr(dispatcher, "finished"):
                    dispatcher.finished(self, time.monotonic() - began)

    return GuardedChannel


def forwarded_client(headers: dict[str, str]) -> str | None:
    """The client a trusted proxy forwards a request for: the last address of its X-Forwarded-For (the one the
    proxy added), or of its Forwarded header's ``for=``; None when it names none."""
    forwarded = headers.get("X_FORWARDED_FOR", "").rsplit(",", 1)[-1].strip()
    if not forwarded:
        fors = re.findall(r'for="?\[?([^\]";,]+)', headers.get("FORWARDED", ""), flags=re.IGNORECASE)
        forwarded = fors[-1].strip() if fors else ""
    return client_of(forwarded) if forwarded else None


# What a request is expected to cost, in seconds of a worker, when it is queued (fair_dispatcher, queue_cost); once
# answered, its client is charged what it took.
SEARCH_COST = 0.25  # an expensive search (wildcards, ranges, many words, a large page)
ORDINARY_COST = 0.05  # an ordinary search (a few words, a page of 10)
CHEAP_COST = 0.01  # anything else: a page, /similar, /healthz


def queue_cost(request: Any, searches: Mapping[str, Mapping[str, str]]) -> float:
    """What a request waitress has read is expected to cost in the fair queue: a search (its path one of
    ``searches``, each with its defaults) by its query string, read as the view reads it (``search_asked``), the
    kind the admission control and the rate limit call expensive (``SearchRequest.expensive``: a wildcard, fuzzy or
    range part, many words, a large page) :data:`SEARCH_COST`, an ordinary one :data:`ORDINARY_COST`; anything
    else, and a search the parser refuses (a 400, answered before any search), :data:`CHEAP_COST`. Until 6
    December 2026 the queue read ``q`` and ``per_page`` alone, and took a query string it could not read as an
    expensive search (``per_page=1000``, refused at once, and the rate limit counting it as one request)."""
    defaults = searches.get(getattr(request, "path", ""))
    if defaults is None:
        return CHEAP_COST
    try:
        args = parse_qs(getattr(request, "query", "") or "", keep_blank_values=True, errors="strict")
        asked = search_asked(args, defaults)
    except (QueryError, ValueError):  # (ValueError: not UTF-8, which the app refuses too)
        return CHEAP_COST
    return SEARCH_COST if asked.expensive else ORDINARY_COST


@functools.cache
def fair_dispatcher() -> type:
    """Waitress's task queue, made fair (made on first use, as :func:`guarded_channel`). Waitress serves requests
    first come, first served: eight connections from one client sending costly searches queued ahead of every other
    client's request, and a `/healthz` waited 0.47 s (median) behind them, another client's ordinary search 0.55 s.

    Here requests are served in the order of their clients' use of the workers (fair queuing, in seconds of a
    worker): a request starts at its client's previous finish, or at the start of the request now being served if
    that is later, and finishes at its start plus what it is expected to cost (:func:`queue_cost`); requests are
    served by their finish, those that do not search first among equals, then as they came. When a request has
    been answered its client is charged what it took instead. So a client whose searches take a second each is a
    second further on each time, and one not busy (a load balancer's `/healthz`, a reader's ordinary search, an
    episode page) goes ahead of their queued searches. Until 5 December 2026 each request was its client's previous
    one plus a whole round whatever it cost, so a client not busy still waited behind a round of every busy
    client's search each time (`/healthz` 10-17 s with 50 clients sending costly searches)."""
    from waitress.task import ThreadedTaskDispatcher

    class FairDispatcher(ThreadedTaskDispatcher):
        def __init__(self, searches: Mapping[str, Mapping[str, str]] | Collection[str], proxy: str,
                     per_client: int = 0) -> None:
            super().__init__()
            # (the paths that search, each with its defaults; a collection of paths: none)
            self.searches = dict(searches) if isinstance(searches, Mapping) else {path: {} for path in searches}
            self.proxy, self.per_client = proxy, per_client
            self.now = 0.0  # the start of the request that last started
            self.last: dict[str, float] = {}  # each client's last finish
            self.searching_by: Counter[str] = Counter()  # each client's searches being served

        def asks(self, task: Any) -> tuple[str, float]:
            """``(client, expected cost)`` of a channel's next request, read from the request alone (outside the
            lock: the query string is parsed for the cost). A request waitress could not read (a bad request line
            or header: its answer is an error) has no path."""
            request = task.requests[0] if getattr(task, "requests", None) else None
            client = getattr(task, "podsearch_client", "")
            task.podsearch_many = False  # the trusted proxy, naming no client: every client behind it
            if request is not None and self.proxy and self.proxy in {"*", _address(task.addr)}:
                forwarded = forwarded_client(getattr(request, "headers", None) or {})
                client, task.podsearch_many = forwarded or client, forwarded is None
            return client, queue_cost(request, self.searches)

        def rank(self, task: Any, client: str, cost: float) -> tuple[float, int]:
            """``(finish, 1 for a search)`` of the request; called with the lock held."""
            start = max(self.now, self.last.get(client, 0.0))
            finish = self.last[client] = start + cost
            task.podsearch_start, task.podsearch_charge = start, (client, cost)
            if len(self.last) > 4 * CONNECTION_LIMIT:  # forget the clients whose requests are all served
                self.last = {c: f for c, f in self.last.items() if f > self.now}
            return finish, int(cost > CHEAP_COST)

        def add_task(self, task: Any) -> None:
            try:
                client, cost = self.asks(task)
            except Exception:  # (never leave a channel unqueued: its connection would stay open for good)
                log.exception("fair queue: reading a request failed; it goes as a search")
                client, cost = "", SEARCH_COST
            with self.lock:
                rank = task.podsearch_rank = self.rank(task, client, cost)
                at = next((i for i, queued in enumerate(self.queue)
                           if getattr(queued, "podsearch_rank", rank) > rank), len(self.queue))
                self.queue.insert(at, task)
                self.queue_cv.notify()

        searching = 0  # workers serving a search

        def search_cap(self, free: int) -> int:
            """Searches one client may have served at once: ``per_client`` (``client_searches``), or half the
            ``free`` search workers, rounded up."""
            return self.per_client or max(1, (free + 1) // 2)

        def next_task(self) -> Any:
            """The first queued request a worker may take now (None: none), with the lock held: a search only while
            fewer than all the workers but one serve searches, so that one stays free for the requests that do not
            search (the probes, the pages, /similar), and only while its client has fewer than :meth:`search_cap`
            searches served (not the trusted proxy's requests that name no client: they are every client behind
            it), so that another client's search finds a worker; a search waits in this queue, in its
            client's turn, not in a worker. Until 6 December 2026 a search waited for a search slot
            (``web/admission.py``) in a worker: eight connections of one client sending ordinary searches (twelve
            words, 50 a page) took every worker of four, and another client's ``/healthz`` waited 0.27 / 0.42 s
            (p50 / p90) for one, its one-word search 0.31 / 0.42 s; then, that day, the one-word search still waited
            for one of the three searches of that client to end (0.36 / 0.60 s)."""
            free = max(1, len(self.threads) - self.stop_count - 1)
            cap = self.search_cap(free)
            for task in self.queue:
                if not getattr(task, "podsearch_rank", (0.0, 0))[1]:
                    return task
                if self.searching < free and (self.searching_by[self.client_of(task)] < cap
                                              or getattr(task, "podsearch_many", False)):
                    return task
            return None

        @staticmethod
        def client_of(task: Any) -> str:
            return str(getattr(task, "podsearch_charge", ("",))[0])

        def handler_thread(self, thread_no: int) -> None:
            """Waitress's worker loop, taking :meth:`next_task` rather than the first queued."""
            while True:
                with self.lock:
                    task = None
                    while self.stop_count == 0 and (task := self.next_task()) is None:
                        self.active_count -= 1  # (idle while it waits, as waitress counts)
                        self.queue_cv.wait()
                        self.active_count += 1
                    if self.stop_count > 0:
                        self.active_count -= 1
                        self.stop_count -= 1
                        self.threads.discard(thread_no)
                        self.thread_exit_cv.notify()
                        break
                    self.queue.remove(task)
                    search = bool(getattr(task, "podsearch_rank", (0.0, 0))[1])
                    client = self.client_of(task)
                    if search:
                        self.searching += 1
                        self.searching_by[client] += 1
                try:
                    task.service()
                except BaseException:
                    self.logger.exception("Exception when servicing %r", task)
                finally:
                    if search:
                        with self.lock:
                            self.searching -= 1
                            self.searching_by[client] -= 1
                            if self.searching_by[client] <= 0:
                                del self.searching_by[client]
                            self.queue_cv.notify_all()  # (a search queued may go now)

        def started(self, task: Any) -> None:
            """A worker took ``task`` (a channel, in its ``service``)."""
            with self.lock:
                self.now = max(self.now, getattr(task, "podsearch_start", 0.0))

        def finished(self, task: Any, seconds: float) -> None:
            """``task`` was answered in ``seconds``: its client is charged that rather than the cost expected."""
            client, expected = getattr(task, "podsearch_charge", ("", seconds))
            with self.lock:
                if client in self.last:
                    self.last[client] += max(0.0, seconds - expected)

    return FairDispatcher


class GracefulServer:
    """A waitress server whose main loop can be asked to stop, and which then drains before returning."""

    def __init__(self, app: Any, options: ServeOptions) -> None:
        from waitress.server import create_server

        kwargs: dict[str, Any] = dict(host=options.host, port=options.port, threads=options.threads,
                                      ident="podsearch", url_prefix=options.url_prefix.rstrip("/"),
                                      # (twice the app's limit: a body just over it is answered by the app, 413 in
                                      # JSON saying the limit; waitress refuses a larger one, in plain text, by its
                                      # Content-Length, before reading it)
                                      max_request_body_size=2 * options.max_body_bytes,
                                      clear_untrusted_proxy_headers=True,
                                      connection_limit=connection_limit())
        if options.trusted_proxy:
            kwargs.update(trusted_proxy=options.trusted_proxy,
                          trusted_proxy_headers=options.trusted_proxy_headers.split())
        # (the paths as a request names them, before waitress takes the prefix off)
        paths = getattr(app, "extensions", {}).get(SEARCHES, {})
        searches = {kwargs["url_prefix"] + path: paths[path] if isinstance(paths, Mapping) else {} for path in paths}
        dispatcher = fair_dispatcher()(searches, options.trusted_proxy, options.client_searches)
        try:
            self.server = create_server(app, _dispatcher=dispatcher, **kwargs)
        except OSError as exc:  # (the port taken, an address this machine does not have, a port below 1024)
            raise ListenError(f"Cannot listen on {options.host}:{options.port}: {exc.strerror or exc}.") from None
        except ValueError as exc:  # (waitress's refusal of a host it cannot read, 'bad host!', or of a
            raise ConfigError(f"host or trusted_proxy_headers: {exc}") from None  # proxy header it does not know)
        dispatcher.set_thread_count(options.threads)  # (waitress starts the threads of a dispatcher it makes only)
        self.guard = ConnectionGuard(options.client_connections, options.client_timeout, options.trusted_proxy)
        self.server.podsearch_guard = self.guard
        self.server.channel_class = guarded_channel()
        self.options = options
        self._next_sweep = 0.0
        self._stopping = threading.Event()

    @property
    def port(self) -> int:
        return int(self.server.effective_port)

    stop_signal: int = signal.SIGTERM  # the signal that stopped it

    def request_stop(self, signum: int = signal.SIGTERM, *_args: Any) -> None:
        """Signal-safe: only sets a flag; the loop notices within a fraction of a second."""
        self.stop_signal = signum
        self._stopping.set()

    def stop_requested(self) -> bool:
        return self._stopping.is_set()

    def run(self) -> None:
        from waitress import wasyncore

        server = self.server
        while not self._stopping.is_set():
            wasyncore.loop(timeout=0.2, map=server._map, use_poll=True, count=1)
            self._sweep()
        log.info("stopping: no new connections; letting requests in flight finish")
        wasyncore.dispatcher.close(server)  # the listening socket only; the trigger stays for the workers
        deadline = time.monotonic() + self.options.shutdown_timeout
        # One pass first, so requests already sent (waiting in socket buffers) are read and count as busy.
        wasyncore.loop(timeout=0.05, map=server._map, use_poll=True, count=1)
        while time.monotonic() < deadline and self._busy():
            wasyncore.loop(timeout=0.05, map=server._map, use_poll=True, count=1)
            self._sweep()
        if self._busy():
            log.warning("shutdown timeout (%.0f s) reached with requests still running", self.options.shutdown_timeout)
        server.task_dispatcher.shutdown(cancel_pending=True, timeout=1)
        wasyncore.close_all(server._map)

    def _sweep(self) -> None:
        now = time.time()  # waitress's clock (a channel's creation_time)
        if now >= self._next_sweep:
            self._next_sweep = now + min(1.0, self.options.client_timeout / 4)
            self.guard.sweep(list(self.server.active_channels.values()), now)

    def _busy(self) -> bool:
        """Whether any connection has a request in progress or unsent output; idle ones are closed."""
        busy = False
        for channel in list(self.server.active_channels.values()):
            if channel.requests or channel.total_outbufs_len or channel.request is not None:
                busy = True
            elif not channel.will_close:
                channel.will_close = True  # an idle keep-alive connection: close it now
                busy = True  # until the loop has actually closed it
        return busy


def links_warning(config: Config, host: str) -> str | None:
    """What ``serve`` says at start when it listens beyond this machine and absolute links follow each request's
    Host header (web/links.py)."""
    if config.public_url:
        return None
    try:
        if ipaddress.ip_address(host.strip("[]")).is_loopback:
            return None
    except ValueError:
        if host == "localhost":
            return None
    return ("public_url is not set: the links in /search.rss, /opensearch.xml and the widget follow each "
            "request's Host header, which any client sets; set it to the site's public address (docs/operations.md)")


def serve(app: Any, options: ServeOptions, config: Config, announce: Callable[[str], None] | None = None) -> int:
    """Serve until SIGTERM/SIGINT; returns the exit status (0 after a clean stop).

    ``announce`` is called once with the address served, when the socket is listening.
    """
    scheduler = ReindexScheduler(config, options.reindex_every) if options.reindex_every else None
    if scheduler is not None:
        app.extensions["podsearch_scheduler"] = scheduler
    library = app.extensions.get("podsearch")
    warmer = None
    if library is not None:
        library.warm()
        warmer = Warmer(library)
    admission = app.extensions.get("podsearch_admission")
    if admission is not None:  # the slots are shared among the threads this server really has
        admission.configure(options.threads, int(config.expensive_searches))
    server = GracefulServer(app, options)
    app.extensions["podsearch_connections"] = server.guard
    warning = links_warning(config, options.host)
    if warning:
        log.warning("%s", warning)
    previous = {sig: signal.signal(sig, server.request_stop) for sig in (signal.SIGTERM, signal.SIGINT)}
    if announce:
        prefix = options.url_prefix.rstrip("/")
        extra = f"; reindexing every {options.reindex_every:g} s" if scheduler else ""
        announce(f"podsearch serving {config.data_dir} on http://{options.host}:{server.port}{prefix}/{extra} "
                 "(Ctrl-C to stop)")
    if scheduler is not None:
        scheduler.start()
    if warmer is not None:
        warmer.start()
    try:
        server.run()
    finally:
        if warmer is not None:
            warmer.stop()
        if scheduler is not None:
            scheduler.stop(options.shutdown_timeout, server.stop_signal)
        for sig, handler in previous.items():
            # Stopped by a signal, the process is on its way out: a second SIGTERM then (a supervisor repeating
            # itself) must not turn the clean stop's status 0 into death by the signal's default action.
            if handler is signal.SIG_DFL and server.stop_requested():
                handler = signal.SIG_IGN
            signal.signal(sig, handler)
    log.info("stopped")
    return 0


def configure_access_log(enabled: bool) -> None:
    """Access lines go to stderr on their own handler, whatever level the rest of the logging is at."""
    access = logging.getLogger("podsearch.access")
    access.propagate = False
    access.handlers.clear()
    if enabled:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("%(asctime)s %(message)s"))
        access.addHandler(handler)
        access.setLevel(logging.INFO)
    else:
        access.setLevel(logging.CRITICAL + 1)
