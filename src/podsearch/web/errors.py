"""One place that turns errors into answers: JSON for the API, an HTML page for people, never a traceback."""

from __future__ import annotations

import html
import logging

from flask import Flask, current_app, jsonify, render_template, request
from flask.globals import request_ctx
from werkzeug.exceptions import BadHost, HTTPException

from ..errors import EngineUnavailable, IndexMissing, NotFound, Overloaded, PodsearchError, QueryError, ReindexRunning
from .context import EXTENSION, FEED_PATH

log = logging.getLogger(__name__)

STATUS = {QueryError: (400, "bad_query"), NotFound: (404, "not_found"), IndexMissing: (503, "not_ready"),
          ReindexRunning: (503, "busy"), Overloaded: (503, "overloaded"),
          EngineUnavailable: (503, "engine_unavailable")}
# Error codes of HTTP-level refusals; the OpenAPI document lists the same ones.
HTTP_CODES = {400: "bad_request", 404: "not_found", 405: "method_not_allowed", 413: "too_large",
              429: "rate_limited"}
PASSED_HEADERS = ("Retry-After", "Allow")
# Paths outside /api/ and /similar whose errors are JSON: the probes, the search feed (read by programs), and the
# browsers' suggestions (their 400 was an HTML page).
JSON_PATHS = frozenset({"/healthz", "/readyz", FEED_PATH, "/opensearch/suggest"})


def wants_json() -> bool:
    path = request.path
    return (path.startswith("/api/") or path.startswith("/similar") or path in JSON_PATHS
            or request.accept_mimetypes.best == "application/json")


def _answer(status: int, code: str, message: str, headers: dict[str, str] | None = None):
    if wants_json():
        return jsonify({"error": {"code": code, "message": message}}), status, headers or {}
    if request_ctx.url_adapter is None:  # (the Host header could not be read: the page's links cannot be built)
        page = f"<!doctype html><title>{status}</title><h1>{status}</h1><p>{html.escape(message)}</p>"
        return page, status, {**(headers or {}), "Content-Type": "text/html; charset=utf-8"}
    return render_template("error.html", status=status, code=code, message=message), status, headers or {}


def _public(message: str) -> str:
    """``message`` without the server's data folder (``No index in /srv/podsearch. Run ...`` was said to any client
    before the first reindex, and to every one while the folder was away): the log keeps the path."""
    served = current_app.extensions.get(EXTENSION)
    folder = getattr(served, "data_dir", None)
    # (a relative folder, `index` by default, says nothing of the machine, and is a word of the messages too)
    return message.replace(str(folder), "the data folder") if folder and folder.is_absolute() else message


def register(app: Flask) -> None:
    @app.errorhandler(PodsearchError)
    def _domain(exc: PodsearchError):
        status, code = next(((s, c) for cls, (s, c) in STATUS.items() if isinstance(exc, cls)), (500, "error"))
        if status >= 500 and not isinstance(exc, Overloaded):
            log.warning("%s %s: %s", request.method, request.path, exc)
        headers = {"Retry-After": str(exc.retry_after)} if isinstance(exc, Overloaded) else None
        # (a file that cannot be read: the log has its path and cause, the client is told that much only)
        return _answer(status, code, _public(getattr(exc, "public", None) or str(exc)), headers)

    @app.errorhandler(HTTPException)
    def _http(exc: HTTPException):
        status = exc.code or 500
        code = HTTP_CODES.get(status) or (exc.name or "error").lower().replace(" ", "_")
        headers = {k: v for k, v in exc.get_headers() if k in PASSED_HEADERS}
        if isinstance(exc, BadHost):  # (a label over 63 characters, an empty one: "a..b"; it was a 500 on pages)
            return _answer(400, "bad_request", "The request's Host header is not a host name this server can read.")
        return _answer(status, code, exc.description or exc.name, headers)

    @app.errorhandler(Exception)
    def _unexpected(exc: Exception):
        log.exception("unexpected error on %s %s", request.method, request.path)
        return _answer(500, "internal", "Something went wrong on our side; the error was logged.")
