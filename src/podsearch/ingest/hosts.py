"""One run's memory of the hosts it could not reach, and the run's deadline.

A reindex fetches thousands of links, often many on one host. When that host is down, every link would
pay for the connection attempts, retries and backoff again (3,565 transcript links on unreachable hosts
took a reindex 25 minutes). The fetcher asks :class:`HostHealth` before each request and tells it how each
attempt went: a name that does not resolve puts its host down at once, and so do a few connection failures
in a row (refused, timed out, no answer, TLS); any HTTP answer resets the count. Links to a host that is
down are skipped for the rest of the run and counted, so that the run reports each such host once.
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass, field

from ..errors import DeadlinePassed, HostSkipped, HostUnreachable

log = logging.getLogger(__name__)

#: Consecutive connection failures after which a host is skipped for the rest of the run.
MAX_FAILURES = 3
#: Causes after which a host is skipped at once (retrying cannot help within one run).
FATAL_CAUSES = frozenset({"name not found"})


@dataclass
class HostState:
    host: str
    failures: int = 0  # connection failures in a row
    down: bool = False
    cause: str = ""  # why it is down ("name not found", "connection refused", ...)
    message: str = ""  # the error that put it down, in full
    failed: list[str] = field(default_factory=list)  # links tried on this host that got no answer
    skipped: list[str] = field(default_factory=list)  # links not tried because the host was down


class HostHealth:
    """Thread-safe; one per run, shared by the run's fetchers."""

    def __init__(self, max_failures: int = MAX_FAILURES, deadline_seconds: float | None = None) -> None:
        self.max_failures = max(1, max_failures)
        self.deadline = None if not deadline_seconds else time.monotonic() + deadline_seconds
        self.deadline_seconds = deadline_seconds
        self._hosts: dict[str, HostState] = {}
        self._lock = threading.Lock()

    def time_left(self) -> float | None:
        """Seconds until the run's deadline (None: no deadline)."""
        return None if self.deadline is None else self.deadline - time.monotonic()

    def check_deadline(self, what: str) -> None:
        left = self.time_left()
        if left is not None and left <= 0:
            raise DeadlinePassed(f"the reindex deadline ({self.deadline_seconds:g} s) passed before {what}")

    def before(self, host: str, url: str) -> None:
        """Raise HostSkipped when ``host`` is down, DeadlinePassed when the run's time is up."""
        self.check_deadline(f"fetching {url}")
        key = host.lower()
        with self._lock:
            state = self._hosts.get(key)
            if state is not None and state.down:
                raise HostSkipped(f"skipped {url}: {host} is unreachable ({state.cause})", host=host)

    def failed(self, exc: HostUnreachable, url: str) -> bool:
        """Count a connection failure (one attempt); True when the host is (now) down: not to be tried again."""
        key = exc.host.lower()
        with self._lock:
            state = self._hosts.setdefault(key, HostState(exc.host))
            if state.down:
                return True
            state.failures += 1
            state.cause = exc.cause
            if exc.cause in FATAL_CAUSES or state.failures >= self.max_failures:
                state.down, state.message = True, str(exc)
                log.info("%s is unreachable (%s): its other links are skipped for the rest of this run",
                         exc.host, exc.cause)
                return True
            return False

    def lost(self, host: str, url: str, skipped: bool) -> None:
        """A link was given up: it got no answer from ``host`` (after its retries), or was skipped."""
        with self._lock:
            state = self._hosts.setdefault(host.lower(), HostState(host))
            if url not in state.failed and url not in state.skipped:
                (state.skipped if skipped else state.failed).append(url)

    def answered(self, host: str) -> None:
        """An HTTP answer came (whatever its status): the host is reachable."""
        with self._lock:
            state = self._hosts.get(host.lower())
            if state is not None and not state.down:
                state.failures = 0

    def is_down(self, host: str) -> bool:
        with self._lock:
            state = self._hosts.get(host.lower())
            return state is not None and state.down

    def down(self) -> list[HostState]:
        """The hosts found unreachable in this run, in the order they went down."""
        with self._lock:
            return [s for s in self._hosts.values() if s.down]
