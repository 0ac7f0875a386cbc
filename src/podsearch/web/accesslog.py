"""One structured log line per request: ``method=GET path=/api/search status=200 ms=3.1 bytes=812 ...``.

It wraps the WSGI app (not a Flask hook) so it sees every answer, 304s and errors included, and times
the whole answer, streaming included. The fields are also passed as ``extra`` for JSON log formatters.
The query string is left out: search terms people type are not the operator's business.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable, Iterator
from typing import Any
from urllib.parse import quote

log = logging.getLogger("podsearch.access")

WSGIApp = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]


class AccessLog:
    def __init__(self, app: WSGIApp, logger: logging.Logger = log) -> None:
        self.app, self.logger = app, logger

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        started = time.perf_counter()
        status = ["-"]

        def _start(line: str, headers: list[tuple[str, str]], exc_info: Any = None) -> Any:
            status[0] = line.split(" ", 1)[0]
            return start_response(line, headers, exc_info)

        try:
            body = self.app(environ, _start)
        except BaseException:
            self._log(environ, "500", started, 0)
            raise
        return _Logged(body, lambda sent: self._log(environ, status[0], started, sent))

    def _log(self, environ: dict[str, Any], status: str, started: float, sent: int) -> None:
        if not self.logger.isEnabledFor(logging.INFO):
            return
        ms = round((time.perf_counter() - started) * 1000, 1)
        method = environ.get("REQUEST_METHOD", "-")
        path = quote(environ.get("SCRIPT_NAME", "") + environ.get("PATH_INFO", ""), safe="/:@!$&'()*+,;=-._~")
        remote = environ.get("REMOTE_ADDR", "-")
        outcome = environ.get("podsearch.outcome", "")  # refused, timed_out or shed (web/admission.py)
        fields = {"method": method, "path": path, "status": int(status) if status.isdigit() else 0, "ms": ms,
                  "bytes": sent, "remote": remote, "outcome": outcome}
        self.logger.info("method=%s path=%s status=%s ms=%s bytes=%d remote=%s%s", method, path, status, ms, sent,
                         remote, f" outcome={outcome}" if outcome else "", extra={"access": fields})


class _Logged:
    """The app's body, passed through; logs once when the server closes it (after the last byte)."""

    def __init__(self, body: Iterable[bytes], done: Callable[[int], None]) -> None:
        self.body, self.done, self.sent = body, done, 0

    def __iter__(self) -> Iterator[bytes]:
        for chunk in self.body:
            self.sent += len(chunk)
            yield chunk

    def close(self) -> None:
        try:
            close = getattr(self.body, "close", None)
            if close is not None:
                close()
        finally:
            self.done(self.sent)
