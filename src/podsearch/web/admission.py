"""Fair sharing of the server's workers: searches never take every worker, and the expensive kind (wildcards,
ranges, many words, large pages: ``SearchRequest.expensive``) has a few slots of its own.

With ``threads`` workers, at most ``threads - 1`` searches run at once (one worker stays free for pages,
``/similar`` and the probes) and at most ``expensive_searches`` of them are expensive (default: a quarter of
the workers, at least one). An expensive search that finds its slots taken is answered 503 with Retry-After at
once (shed), without waiting; an ordinary one waits up to :data:`QUEUE_WAIT` seconds for a search slot.
Each search's own work is bounded by the library's deadline, so slots free up within about a second.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from flask import current_app, request

from ..answers import SearchResult
from ..errors import Overloaded, QueryError, TimedOut
from ..requests import EXPENSIVE_PAGE, SearchRequest
from .context import library

QUEUE_WAIT = 2.0  # seconds an ordinary search waits for a slot before 503
EXTENSION = "podsearch_admission"
OUTCOME = "podsearch.outcome"  # the WSGI environ key the access log reads


class Admission:
    def __init__(self, threads: int, expensive: int = 0) -> None:
        self.configure(threads, expensive)

    def configure(self, threads: int, expensive: int = 0) -> None:
        """Size the slots for ``threads`` workers (the server calls this with its own thread count)."""
        self.threads = max(1, threads)
        self.search_slots = max(1, self.threads - 1)
        self.expensive_slots = min(self.search_slots, expensive or max(1, self.threads // 4))
        self._searches = threading.BoundedSemaphore(self.search_slots)
        self._expensive = threading.BoundedSemaphore(self.expensive_slots)
        self._lock = threading.Lock()
        self.running = self.running_expensive = 0

    @contextmanager
    def slot(self, expensive: bool) -> Iterator[None]:
        """Run one search in a slot, or raise Overloaded (503) when there is none for it."""
        if expensive and not self._expensive.acquire(blocking=False):
            raise Overloaded(f"Searches with wildcards, ranges, many words or more than {EXPENSIVE_PAGE} results a page "
                             f"are limited to {self.expensive_slots} at once and all are running; retry in a second, "
                             "or search for plain words.")
        try:
            if not self._searches.acquire(timeout=QUEUE_WAIT):
                raise Overloaded("Every search worker is busy; retry in a second.")
            self._count(1, expensive)
            try:
                yield
            finally:
                self._count(-1, expensive)
                self._searches.release()
        finally:
            if expensive:
                self._expensive.release()

    def _count(self, n: int, expensive: bool) -> None:
        with self._lock:
            self.running += n
            self.running_expensive += n if expensive else 0

    def status(self) -> dict[str, Any]:
        with self._lock:
            return {"searches_running": self.running, "search_slots": self.search_slots,
                    "expensive_running": self.running_expensive, "expensive_slots": self.expensive_slots,
                    "saturated": self.running >= self.search_slots}


def admission() -> Admission:
    return current_app.extensions[EXTENSION]


def run_search(req: SearchRequest, search: Callable[[SearchRequest], SearchResult] | None = None) -> SearchResult:
    """The answer to ``req`` (by ``search``, default the library's), run in a slot: what every search view (API,
    page, feed) calls."""
    lib = library()
    try:
        with admission().slot(req.expensive):
            result = (search or lib.search)(req)
    except TimedOut:
        mark("timed_out")
        raise
    except Overloaded:
        mark("shed")
        lib.load.add("shed")
        raise
    except QueryError:
        mark("refused")
        raise
    if result.timed_out:
        mark("timed_out")
    return result


def mark(outcome: str) -> None:
    """Name what happened to this request in its access-log line."""
    request.environ[OUTCOME] = outcome
