"""Request limits applied before any view runs: body size (413) and a per-client rate limit (429).

The rate limit is Flask-Limiter's (in-memory, per client address as waitress or the trusted proxy gives it):
``rate_burst`` requests per ``rate_burst / rate_limit`` seconds in a moving window (exact: every hit is timed), one
counter per client across every route (Flask-Limiter's application limits; its default limits count each route
apart), where a request costs what it may cost the server: an expensive search (wildcards, ranges, many words, more
than 50 results a page: ``SearchRequest.expensive`` of the request the view then runs, read once:
``context.asked_search``) counts :data:`EXPENSIVE_COST` requests; one the parser refuses (a 400) counts one.
Probes and CORS preflights are never limited.
"""

from __future__ import annotations

import math
import time
from urllib.parse import unquote_to_bytes

from flask import Flask, request
from flask_limiter import Limiter, RequestLimit
from werkzeug.exceptions import RequestEntityTooLarge, TooManyRequests

from ..errors import QueryError
from .context import FEED_PATH, asked_search

# Probes must answer even when a load balancer polls faster than the rate limit allows.
UNLIMITED_PATHS = frozenset({"/healthz", "/readyz"})
EXPENSIVE_COST = 5
SEARCH_PATHS = ("/search", "/api/search", "/api/v1/search", FEED_PATH)


def request_cost() -> int:
    """What this request counts against its client's limit."""
    if request.path not in SEARCH_PATHS:
        return 1
    try:
        asked = asked_search()  # read once: what the view will run
    except QueryError:
        return 1  # refused (400) before any search runs
    return EXPENSIVE_COST if asked.expensive else 1


def _exempt() -> bool:
    return request.path in UNLIMITED_PATHS or request.method == "OPTIONS"


def _client() -> str:
    return request.remote_addr or "-"


def register(app: Flask) -> None:
    config = app.config["PODSEARCH"]
    max_body = int(config.max_body_bytes)
    app.config["MAX_CONTENT_LENGTH"] = max_body  # also caps bodies sent without a Content-Length

    @app.before_request
    def _query_string() -> None:
        """A query string whose percent-escapes are no UTF-8 (``q=%ED%A0%80``, ``%FF``) was searched as its escapes
        written out ("%ED%A0%80": 422 episodes): it is a 400. So is such a path (``/api/v1/episodes/%ff`` was a 404
        for the id "\ufffd", Werkzeug's stand-in for what it could not read)."""
        try:
            unquote_to_bytes(request.query_string.replace(b"+", b" ")).decode("utf-8")
        except UnicodeDecodeError:
            raise QueryError("The query string is not UTF-8: a percent-escape (%XX) names no character. "
                             "Encode the text as UTF-8.") from None
        raw = request.environ.get("REQUEST_URI") or request.environ.get("RAW_URI")  # (waitress's; the path as sent)
        try:
            if raw:
                unquote_to_bytes(raw.partition("?")[0]).decode("utf-8")
            else:  # PATH_INFO: the path's bytes, unescaped, as Latin-1 text (PEP 3333)
                request.environ.get("PATH_INFO", "").encode("latin-1").decode("utf-8")
        except UnicodeError:
            raise QueryError("The path is not UTF-8: a percent-escape (%XX) names no character. "
                             "Encode ids as UTF-8.") from None

    @app.before_request
    def _body() -> None:
        if request.content_length is not None and request.content_length > max_body:
            raise RequestEntityTooLarge(f"The request body is {request.content_length:,} bytes; the limit is {max_body:,}.")

    rate, burst = float(config.rate_limit), max(1, int(config.rate_burst))
    if rate <= 0:
        app.extensions["podsearch_rate_limit"] = None
        return
    window = max(1, math.ceil(burst / rate))

    def breached(limit: RequestLimit) -> None:
        """A 429 as every other error is answered (JSON or a page, by errors.py), saying when to come back."""
        wait = max(1, math.ceil(limit.reset_at - time.time()))
        raise TooManyRequests(f"Too many requests from {request.remote_addr}; slow down and retry in {wait} s.", retry_after=wait)

    app.extensions["podsearch_rate_limit"] = Limiter(
        _client,
        app=app,
        application_limits=[f"{burst} per {window} second"],
        application_limits_cost=request_cost,
        application_limits_exempt_when=_exempt,
        strategy="moving-window",
        storage_uri="memory://",
        headers_enabled=False,
        on_breach=breached,
    )
