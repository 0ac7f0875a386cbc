"""Headers every answer carries for the browser's safety (found missing by a hostile probe, 5 December 2026).

- ``X-Content-Type-Options: nosniff`` on every answer: a browser takes each answer as the type it says (a JSON
  error that echoes a query is never read as a page or a script).
- A plain ``OPTIONS`` (no CORS preflight: ``cors.py`` answers those) is ``204 No Content`` with ``Allow``: Flask's
  own answer was a 200 that said ``text/html`` and held nothing.
- The HTML pages may not be framed by other sites (``Content-Security-Policy: frame-ancestors 'self'`` and
  ``X-Frame-Options: SAMEORIGIN`` for older browsers), so a page cannot be laid under another site's clicks; the
  widget's pages under ``/embed/`` are made to be framed, and say nothing of it.
"""

from __future__ import annotations

from flask import Flask, Response, request

EMBEDDED = "/embed/"  # the paths of the pages made for another site's iframe


def register(app: Flask) -> None:
    @app.after_request
    def _safety(response: Response) -> Response:
        if request.method == "OPTIONS" and response.status_code == 200 and not response.content_length:
            response.status_code = 204
            response.headers.pop("Content-Type", None)
        response.headers["X-Content-Type-Options"] = "nosniff"
        if response.mimetype == "text/html" and not request.path.startswith(EMBEDDED):
            response.headers["Content-Security-Policy"] = "frame-ancestors 'self'"
            response.headers["X-Frame-Options"] = "SAMEORIGIN"
        return response
