"""One place that turns errors into answers: JSON for the API, an HTML page for people, never a traceback."""

from __future__ import annotations

import logging

from flask import Flask, jsonify, render_template, request
from werkzeug.exceptions import HTTPException

from ..errors import IndexMissing, NotFound, PodsearchError, QueryError, ReindexRunning

log = logging.getLogger(__name__)

STATUS = {QueryError: (400, "bad_query"), NotFound: (404, "not_found"), IndexMissing: (503, "not_ready"),
          ReindexRunning: (503, "busy")}


def wants_json() -> bool:
    path = request.path
    return (path.startswith("/api/") or path.startswith("/similar") or path in {"/healthz", "/readyz"}
            or request.accept_mimetypes.best == "application/json")


def _answer(status: int, code: str, message: str):
    if wants_json():
        return jsonify({"error": {"code": code, "message": message}}), status
    return render_template("error.html", status=status, code=code, message=message), status


def register(app: Flask) -> None:
    @app.errorhandler(PodsearchError)
    def _domain(exc: PodsearchError):
        status, code = next(((s, c) for cls, (s, c) in STATUS.items() if isinstance(exc, cls)), (500, "error"))
        if status >= 500:
            log.warning("%s %s: %s", request.method, request.path, exc)
        return _answer(status, code, str(exc))

    @app.errorhandler(HTTPException)
    def _http(exc: HTTPException):
        code = (exc.name or "error").lower().replace(" ", "_")
        return _answer(exc.code or 500, code, exc.description or exc.name)

    @app.errorhandler(Exception)
    def _unexpected(exc: Exception):
        log.exception("unexpected error on %s %s", request.method, request.path)
        return _answer(500, "internal", "Something went wrong on our side; the error was logged.")
