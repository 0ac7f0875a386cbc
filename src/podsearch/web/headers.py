"""Headers every answer carries for the browser's safety (found missing by a hostile probe, 5 December 2026).

- ``X-Content-Type-Options: nosniff`` on every answer: a browser takes each answer as the type it says (a JSON
  error that echoes a query is never read as a page or a script).
- A plain ``OPTIONS`` (no CORS preflight: ``cors.py`` answers those) is ``204 No Content`` with ``Allow``: Flask's
  own answer was a 200 that said ``text/html`` and held nothing.
- The HTML pages may not be framed by other sites (``Content-Security-Policy: frame-ancestors 'self'`` and
  ``X-Frame-Options: SAMEORIGIN`` for older browsers), so a page cannot be laid under another site's clicks; the
  widget's pages under ``/embed/`` are made to be framed, and say nothing of it.
- Every HTML page (the widget's too) says which scripts may run: only its own, each ``<script>`` carrying the
  answer's nonce (``csp_nonce()`` in the templates), no plugins, no ``<base>``. The pages escape what feeds write,
  and this stops a script that an escaping slip would let through (until 5 December 2026 the policy said
  ``frame-ancestors`` only, and any injected ``<script>`` or ``onerror=`` would have run).
"""

from __future__ import annotations

import secrets

from flask import Flask, Response, g, request

EMBEDDED = "/embed/"  # the paths of the pages made for another site's iframe


def csp_nonce() -> str:
    """This answer's script nonce (made on first use)."""
    if "csp_nonce" not in g:
        g.csp_nonce = secrets.token_urlsafe(18)
    return str(g.csp_nonce)


def register(app: Flask) -> None:
    app.add_template_global(csp_nonce)

    @app.after_request
    def _safety(response: Response) -> Response:
        if request.method == "OPTIONS" and response.status_code == 200 and not response.content_length:
            response.status_code = 204
            response.headers.pop("Content-Type", None)
        response.headers["X-Content-Type-Options"] = "nosniff"
        if response.mimetype == "text/html":
            policy = f"script-src 'nonce-{csp_nonce()}'; object-src 'none'; base-uri 'none'"
            if request.path.startswith(EMBEDDED):
                response.headers["Content-Security-Policy"] = policy
            else:
                response.headers["Content-Security-Policy"] = policy + "; frame-ancestors 'self'"
                response.headers["X-Frame-Options"] = "SAMEORIGIN"
        return response
