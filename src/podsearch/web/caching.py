"""Conditional GET for the JSON API.

The answer to a GET depends only on the request and on the data it reads, so its validator is known
before any work is done: a weak ETag made of the data version (index generation, model generation,
last finished reindex, podsearch version) and the request path with its query. A matching
``If-None-Match`` (or an ``If-Modified-Since`` not older than the data) gets 304 straight away.
The ETag is weak because two equal answers may differ in bytes (``took_ms``).

Views marked ``stored`` (``/similar/<id>``: every episode page asks it, and ``/api/search``: a site's popular
queries repeat; both answers change only with the data) also keep their encoded answers in memory, keyed by
that ETag: a repeated question is answered from there without running the view. A new data version makes new
keys; the least recently used answers are dropped beyond the ``answer_store`` setting (0: nothing kept) or beyond
64 MB of them together (4,096 answers of 60 KB, which any client can ask for by varying the query, held 250 MB).
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable
from email.utils import formatdate
from typing import Any, TypeVar

from flask import Flask, Response, current_app, g, request

from .. import __version__
from ..errors import EngineUnavailable, PodsearchError
from ..lru import LRU
from ..service import Library
from .admission import OUTCOME

F = TypeVar("F", bound=Callable[..., Any])


STORE_MAX_BYTES = 64 << 10  # bigger answers are not kept
STORE_TOTAL_BYTES = 64 << 20  # the answers kept, together: any client can ask 4,096 different 60 KB answers


def cacheable(view: F) -> F:
    """Mark a view whose GET answers may be cached and revalidated with ETag / Last-Modified."""
    view._podsearch_cacheable = True  # type: ignore[attr-defined]
    return view


def stored(view: F) -> F:
    """Mark a cacheable view whose answers are also kept in the server's memory (see the module doc)."""
    view._podsearch_stored = True  # type: ignore[attr-defined]
    return cacheable(view)


class AnswerStore:
    """Encoded 200 answers (body, mimetype) by ETag, least recently used dropped first; thread-safe."""

    def __init__(self, entries: int) -> None:
        self._answers: LRU[str, tuple[bytes, str]] | None = (
            LRU(entries, STORE_TOTAL_BYTES, lambda answer: len(answer[0])) if entries > 0 else None)

    @property
    def hits(self) -> int:
        return self._answers.hits if self._answers is not None else 0

    def get(self, key: str) -> tuple[bytes, str] | None:
        return self._answers.get(key) if self._answers is not None else None

    def put(self, key: str, body: bytes, mimetype: str) -> None:
        if self._answers is not None and len(body) <= STORE_MAX_BYTES:
            self._answers.put(key, (body, mimetype))


def data_version(lib: Library) -> tuple[str, float]:
    """A short token that changes whenever the served data may have changed, and when that was."""
    try:
        index_stamp = lib.engine.stamp()
    except EngineUnavailable:  # (the search cluster is down or hung: what does not need it, the episodes, their
        index_stamp = ("unavailable", 0.0)  # nearby episodes, is still answered; a search says 503 itself)
    model_stamp = lib.model_generations.stamp()
    try:
        last = lib.catalog.last_run()
    except PodsearchError:
        last = None
    finished = float(last["finished"]) if last else 0.0
    token = f"{__version__}|{index_stamp}|{model_stamp}|{finished}"
    return hashlib.sha256(token.encode()).hexdigest()[:20], max(index_stamp[1], model_stamp[1], finished)


def request_etag(version: str) -> str:
    target = request.full_path if request.query_string else request.path
    return hashlib.sha256(f"{version}|{target}".encode()).hexdigest()[:24]


def _view_flag(flag: str) -> bool:
    if request.method not in {"GET", "HEAD"} or request.endpoint is None:
        return False
    view = current_app.view_functions.get(request.endpoint)
    return bool(getattr(view, flag, False))


def register(app: Flask, library: Callable[[], Library]) -> None:
    max_age = int(app.config["PODSEARCH"].cache_max_age)
    store = app.extensions["podsearch_answers"] = AnswerStore(int(app.config["PODSEARCH"].answer_store))

    @app.before_request
    def _conditional() -> Response | None:
        if not _view_flag("_podsearch_cacheable"):
            return None
        version, modified = data_version(library())
        g.podsearch_etag, g.podsearch_modified = request_etag(version), modified
        since = request.if_modified_since.timestamp() if request.if_modified_since else None
        if since is not None and since > time.time():  # a date the server cannot have sent: ignored (RFC 9110)
            since = None
        not_modified = (request.if_none_match.contains_weak(g.podsearch_etag) if request.if_none_match
                        else bool(since is not None and modified and int(modified) <= since))
        if not_modified:
            response = Response(status=304)
            _validators(response, max_age)
            return response
        if _view_flag("_podsearch_stored"):
            g.podsearch_store = True
            found = store.get(g.podsearch_etag)
            if found is not None:
                g.podsearch_store = False  # kept already
                return Response(found[0], mimetype=found[1])
        return None

    @app.after_request
    def _headers(response: Response) -> Response:
        if request.environ.get(OUTCOME) == "timed_out":  # a partial answer: neither kept nor validated (a cache
            response.headers["Cache-Control"] = "no-store"  # kept it, and a 304 confirmed it, as if it were whole)
            response.headers.pop("ETag", None)
        elif "podsearch_etag" in g and response.status_code == 200:
            if g.get("podsearch_store") and not response.is_streamed:
                store.put(g.podsearch_etag, response.get_data(), response.mimetype or "application/json")
            _validators(response, max_age)
        elif response.status_code != 304 and response.mimetype == "application/json":
            response.headers["Cache-Control"] = "no-store"
        return response


def _validators(response: Response, max_age: int) -> None:
    response.set_etag(g.podsearch_etag, weak=True)
    if g.podsearch_modified:
        response.headers["Last-Modified"] = formatdate(g.podsearch_modified, usegmt=True)
    response.headers["Cache-Control"] = f"public, max-age={max_age}" if max_age > 0 else "no-cache"
