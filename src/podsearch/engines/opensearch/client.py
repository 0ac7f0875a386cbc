"""A small OpenSearch HTTP client on urllib3: several node URLs with failover, basic auth, TLS verification,
retries with back-off on overload (429, 502-504) and on lost nodes, and searches retried when a shard failed.

Why not opensearch-py: podsearch needs a dozen endpoints, urllib3 is already a dependency, and the retry
rules below (a search that came back with a failed shard is retried rather than shown half-empty) are ours.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

import urllib3
from urllib3.exceptions import HTTPError as TransportError
from urllib3.exceptions import ReadTimeoutError

from ...errors import ConfigError, EngineRequestError, EngineUnavailable
from ...urls import http_url_problem

log = logging.getLogger(__name__)

RETRY_STATUSES = frozenset({429, 502, 503, 504})
DEAD_FOR = 5.0  # seconds a node that refused a connection is skipped (unless no node is left)
GRACE = 1.0  # seconds past a search's deadline its answer may still take to arrive (the node's timeout is best effort)


@dataclass(frozen=True)
class ClientOptions:
    urls: tuple[str, ...]
    user: str = ""
    password: str = ""
    verify: bool = True  # verify TLS certificates (https URLs)
    ca_certs: str = ""  # a CA bundle to verify them with; empty: the system's
    timeout: float = 30.0
    retries: int = 3  # further tries of a request after an overload answer or a lost node
    backoff: float = 0.25  # seconds before the first retry, doubled each time
    pool: int = 16  # connections kept per node


class OpenSearchClient:
    """Thread-safe. ``request`` answers the decoded JSON body or raises one of the errors above."""

    def __init__(self, options: ClientOptions) -> None:
        if not options.urls:
            raise ConfigError("No OpenSearch URL given (opensearch_url).")
        self.options = options
        self.bases = [u.rstrip("/") for u in options.urls]
        for base in self.bases:
            problem = http_url_problem(base)
            if problem:
                raise ConfigError(f"opensearch_url must be http(s)://host:port, not {base!r}: {problem}.")
        headers: dict[str, str] = {}
        if options.user:
            headers.update(urllib3.make_headers(basic_auth=f"{options.user}:{options.password}"))
        kwargs: dict[str, Any] = {"maxsize": options.pool, "block": False, "headers": headers,
                                  "timeout": urllib3.Timeout(connect=min(5.0, options.timeout), read=options.timeout),
                                  "retries": False}
        if any(b.startswith("https") for b in self.bases):
            kwargs["cert_reqs"] = "CERT_REQUIRED" if options.verify else "CERT_NONE"
            if options.ca_certs:
                kwargs["ca_certs"] = options.ca_certs
        self._http = urllib3.PoolManager(**kwargs)
        self._lock = threading.Lock()
        self._next = 0
        self._dead: dict[str, float] = {}
        self._within = threading.local()

    @contextmanager
    def within(self, deadline: float | None, grace: float = GRACE) -> Iterator[None]:
        """The requests this thread makes in the block wait for an answer until ``deadline`` (``time.monotonic()``)
        plus ``grace`` (:data:`GRACE`) at most, and are not tried again past it: a search's. A hung node (stopped,
        not gone) held each search for 122 s, four tries of the 30 s read timeout, whatever its 1 s deadline."""
        before = getattr(self._within, "deadline", None), getattr(self._within, "grace", GRACE)
        self._within.deadline, self._within.grace = deadline, grace
        try:
            yield
        finally:
            self._within.deadline, self._within.grace = before

    def _left(self) -> float | None:
        """Seconds this thread's requests may still wait (None: no deadline); EngineUnavailable when none."""
        deadline = getattr(self._within, "deadline", None)
        if deadline is None:
            return None
        left = deadline + getattr(self._within, "grace", GRACE) - time.monotonic()
        if left <= 0:
            raise EngineUnavailable(f"OpenSearch at {', '.join(self.bases)} did not answer within the search's "
                                    "deadline; try again in a moment.")
        return left

    # -- nodes -----------------------------------------------------------------------------------
    def _order(self) -> list[str]:
        """The nodes to try, live ones first, rotating the first so that requests spread over the nodes."""
        now = time.monotonic()
        with self._lock:
            start = self._next
            self._next = (self._next + 1) % len(self.bases)
            dead = {b for b, until in self._dead.items() if until > now}
        rotated = self.bases[start:] + self.bases[:start]
        return [b for b in rotated if b not in dead] + [b for b in rotated if b in dead]

    def _mark_dead(self, base: str) -> None:
        with self._lock:
            self._dead[base] = time.monotonic() + DEAD_FOR

    # -- requests --------------------------------------------------------------------------------
    def request(self, method: str, path: str, body: Any = None, params: dict[str, Any] | None = None,
                ndjson: Iterable[Any] | None = None, allow: Iterable[int] = (), timeout: float | None = None) -> Any:
        """One request, retried on another node or after a pause when that can help.

        ``ndjson``: lines for ``_bulk`` (each a dict, or a str already encoded). ``allow``: statuses beyond
        2xx answered as bodies instead of raised (404 when asking whether something exists).
        """
        if ndjson is not None:
            data = "".join((line if isinstance(line, str) else json.dumps(line, ensure_ascii=False)) + "\n"
                           for line in ndjson).encode()
            kind = "application/x-ndjson"
        else:
            data = json.dumps(body, ensure_ascii=False).encode() if body is not None else None
            kind = "application/json"
        query = "?" + urlencode({k: _param(v) for k, v in params.items()}) if params else ""
        allowed = set(allow)
        delay = self.options.backoff
        last = ""
        hung = False  # a node took the request and did not answer in time: no further tries (it is not overload)
        refused = False  # the one node there is refused the connection: no further tries (nothing listens there)
        for attempt in range(self.options.retries + 1):
            for base in self._order():
                wait = timeout or self.options.timeout
                left = self._left()
                if left is not None:
                    wait = min(wait, left)
                try:
                    resp = self._http.request(method, base + path + query, body=data,
                                              headers={"Content-Type": kind, "Accept": "application/json"},
                                              timeout=urllib3.Timeout(connect=min(5.0, wait), read=wait))
                except TransportError as exc:
                    self._mark_dead(base)
                    hung = hung or isinstance(exc, ReadTimeoutError)
                    refused = len(self.bases) == 1 and _refused(exc)
                    last = f"{base}: {_transport_problem(exc, wait)}"
                    log.info("OpenSearch node %s failed (%s); trying another", base, exc)
                    continue
                decoded = _decode(resp.data)
                if 200 <= resp.status < 300 or resp.status in allowed:
                    return decoded
                if blocked(decoded):  # (a 429 too, for a full disk: asking again does not free it)
                    raise EngineRequestError(f"OpenSearch refused {method} {path}: {block_problem(blocked(decoded))}",
                                             resp.status, decoded)
                if _no_manager(decoded):
                    # (it waited the cluster's cluster_manager_timeout, 30 s, for one: four tries of that were 2
                    # minutes before "cluster_manager_not_discovered_exception: None", a reindex's first request
                    # on the three-node walk with the manager node down, until 6 December 2026)
                    raise EngineUnavailable(f"OpenSearch at {base} has no elected cluster manager ({method} {path}: "
                                            f"HTTP {resp.status}: {_reason(decoded)}). {NO_MANAGER_ADVICE}")
                if resp.status in RETRY_STATUSES or (resp.status >= 500 and _node_left(decoded)):
                    last = f"{base}: HTTP {resp.status}: {_reason(decoded)}"
                    break  # overloaded or unavailable: pause, then try again
                raise EngineRequestError(f"OpenSearch refused {method} {path}: HTTP {resp.status}: {_reason(decoded)}",
                                         resp.status, decoded)
            if hung or refused:
                # (a refused connection to the only node was tried 3 times more, 1.75 s of pauses, before the 503: until
                # 6 December 2026. With other nodes the pauses stay: one may take the request, or come back.)
                break
            if attempt < self.options.retries:
                left = self._left()
                if left is not None and left <= delay:
                    break
                time.sleep(delay)
                delay *= 2
        raise EngineUnavailable(f"OpenSearch at {', '.join(self.bases)} is unavailable ({last}).")

    def each(self, path: str, timeout: float) -> dict[str, Any]:
        """``GET path`` asked of every node listed once, without retries: each URL's decoded answer, or what went
        wrong on the way (a str). For saying which nodes answer."""
        found: dict[str, Any] = {}
        for base in self.bases:
            try:
                resp = self._http.request("GET", base + path, headers={"Accept": "application/json"},
                                          timeout=urllib3.Timeout(connect=min(5.0, timeout), read=timeout))
            except TransportError as exc:
                found[base] = _transport_problem(exc, timeout)
                continue
            decoded = _decode(resp.data)
            found[base] = decoded if 200 <= resp.status < 300 else f"HTTP {resp.status}: {_reason(decoded)}"
        return found

    def search(self, index: str, body: dict[str, Any], params: dict[str, Any] | None = None) -> dict[str, Any]:
        """A search whose every shard answered: a search that lost a shard (a node left while it ran: the
        fetch phase is not moved to another copy) is asked again, after the cluster had a moment to notice."""
        delay = self.options.backoff
        attempt = 0
        while True:
            try:
                answer = self.request("POST", f"/{index}/_search", body,
                                      params={"allow_partial_search_results": False, **(params or {})})
                shards = answer.get("_shards", {})
                if not shards.get("failed"):
                    return answer
                problem: Exception = EngineUnavailable(
                    f"OpenSearch answered from {shards.get('successful')} of {shards.get('total')} shards: "
                    f"{_reason({'error': (shards.get('failures') or [{}])[0].get('reason')})}")
            except EngineRequestError as exc:
                # partial results refused when a shard is lost: "search_phase_execution_exception", a 5xx, or a 404
                # when the node that held the query phase's context left before the fetch ("No search context found")
                if exc.status < 500 and not _lost_context(exc):
                    raise
                problem = exc
            left = self._left() if attempt < self.options.retries else 0.0
            if left is not None and left <= delay:
                raise problem
            log.info("OpenSearch search failed (%s); asking again", problem)
            attempt += 1
            time.sleep(delay)
            delay *= 2

    def close(self) -> None:
        self._http.clear()


def _refused(exc: Exception) -> bool:
    """Whether the node refused the connection (nothing listens at its address: it is stopped, or not there)."""
    return isinstance(exc, urllib3.exceptions.NewConnectionError) and isinstance(
        exc.__cause__ or exc.__context__, ConnectionRefusedError)


def _transport_problem(exc: Exception, wait: float) -> str:
    """What went wrong on the way to a node, in words (not urllib3's repr of its connection object)."""
    if isinstance(exc, ReadTimeoutError):
        return f"no answer within {wait:.3g} s"
    if _refused(exc):
        return "connection refused: is the node running?"
    if isinstance(exc, urllib3.exceptions.NewConnectionError):
        return "cannot connect"
    return exc.__class__.__name__


# What a node answers for a request that needed a node which has just left, before the cluster noticed (HTTP 500)
NODE_LEFT = ("node_not_connected_exception", "node_disconnected_exception", "node_closed_exception",
             "connect_transport_exception", "send_request_transport_exception", "Node not connected")


def _node_left(body: Any) -> bool:
    """A 5xx because a node the request needed left the cluster: asked again, as an overload answer is. Until 6
    December 2026 it was a refusal: for a few seconds after a node was killed, /readyz answered 500 "OpenSearch refused
    GET /<index>/_count: HTTP 500: search_phase_execution_exception: [node-2][127.0.0.1:9301] Node not connected", and
    a search whose three tries met it answered 500 too."""
    text = json.dumps(body) if isinstance(body, dict) else str(body)
    return any(sign in text for sign in NODE_LEFT)


NO_MANAGER_ADVICE = ("Writing an index needs one, so a reindex writes nothing meanwhile; searches go on from the served "
                     "index, unchanged. Start the cluster-manager-eligible nodes (a majority of them elects one; GET "
                     "/_cluster/health?local=true on a node says discovered_cluster_manager), then run the reindex "
                     "again.")


def _no_manager(body: Any) -> bool:
    """An answer that says the cluster has no elected cluster manager (the node asked waited for one and none came)."""
    error = body.get("error") if isinstance(body, dict) else None
    return isinstance(error, dict) and error.get("type") in ("cluster_manager_not_discovered_exception",
                                                             "master_not_discovered_exception")


def _shards_missing(body: Any) -> bool:
    """A search refused because no running node holds a copy of a shard of the index (a red index: the node that held
    it left, and no replica was placed elsewhere). OpenSearch says "search_phase_execution_exception: " with an empty
    reason (the reason is in ``caused_by``: "Search rejected due to missing shards ... Consider using
    allow_partial_search_results"), or "all shards failed"."""
    error = body.get("error") if isinstance(body, dict) else None
    if not (isinstance(error, dict) and error.get("type") == "search_phase_execution_exception"):
        return False
    if error.get("root_cause") or error.get("failed_shards"):
        return False
    return "missing shards" in json.dumps(error) or error.get("reason") == "all shards failed"


def _lost_context(exc: EngineRequestError) -> bool:
    """A search whose fetch phase found its shard's search context gone (the node stopped between the phases)."""
    error = exc.body.get("error") if isinstance(exc.body, dict) else None
    return (exc.status == 404 and isinstance(error, dict) and error.get("type") == "search_phase_execution_exception"
            and "search context" in json.dumps(error))


def blocked(body: Any) -> str:
    """The reason of a refusal for a block on the index or the cluster (``cluster_block_exception``; a new index's,
    ``index_create_block_exception``), "" for anything else: an answer's body, or a ``_bulk`` item's ``error``."""
    error = body.get("error", body) if isinstance(body, dict) else None
    if not isinstance(error, dict):
        return ""
    causes = [error, *(c for c in error.get("root_cause") or [] if isinstance(c, dict))]
    for cause in causes:
        if cause.get("type") in ("cluster_block_exception", "index_create_block_exception"):
            return str(cause.get("reason", ""))
    return ""


def block_problem(reason: str) -> str:
    """What a block means to the operator, and what to do. A disk past the flood-stage watermark makes its indexes
    read-only (``read_only_allow_delete``) and OpenSearch answers 429, which was taken for overload: a sync sent its
    documents 6 times over 30 s, then said "OpenSearch stayed too busy", and a rebuild said "unavailable"."""
    if "flood-stage" in reason or "read-only-allow-delete" in reason or "read_only_allow_delete" in reason:
        return (f"the index is read-only because a node's disk is nearly full ({reason.strip()}). Free disk space "
                "on the cluster's nodes (or add nodes): OpenSearch lifts the block once the disk is below its high "
                "watermark, and the next reindex sends what this one could not. Searches go on from the index as "
                "it is.")
    if "no cluster-manager" in reason or "no master" in reason:
        return f"the cluster has no elected cluster manager ({reason.strip()}). {NO_MANAGER_ADVICE}"
    if "create-index" in reason:
        return (f"the cluster takes no new index ({reason.strip()}): OpenSearch sets this block when every node's "
                "disk passed its flood-stage watermark. Free disk space on the cluster's nodes (or add nodes): "
                "OpenSearch lifts it once a disk is below its high watermark (or lift it yourself: PUT "
                "_cluster/settings {\"persistent\": {\"cluster.blocks.create_index\": null}}).")
    return f"the index or the cluster is blocked ({reason.strip()}); nothing can be written until the block is lifted."


def _param(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _decode(raw: bytes) -> Any:
    if not raw:
        return None
    try:
        return json.loads(raw)
    except ValueError:
        return raw.decode("utf-8", "replace")


def refusal(exc: EngineRequestError) -> str:
    """What OpenSearch said was wrong with a request, without the transport's details (the index, the status):
    its root cause's reason (``Failed to parse query [go AND]``)."""
    return str(_root_reason(exc.body) or exc)[:300]


def _reason(body: Any) -> str:
    """The useful part of an OpenSearch error body."""
    if _shards_missing(body):
        return ("no running node holds a copy of some of the index's shards (a node that held them left and no "
                "replica was on another node: the cluster's health is red until it is back)")
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        return f"{body['error'].get('type', '')}: {_root_reason(body)}"[:500]
    return str(body)[:500]


def _root_reason(body: Any) -> str:
    """An error body's root cause's reason (else the error's own), "" for a body that is not an error."""
    if not (isinstance(body, dict) and isinstance(body.get("error"), dict)):
        return ""
    error = body["error"]
    root = (error.get("root_cause") or [{}])[0]
    return str(root.get("reason") or error.get("reason", ""))
