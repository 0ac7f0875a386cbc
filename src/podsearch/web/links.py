"""Absolute links to this server, for the answers that hold them: the RSS feeds, the OpenSearch description and
the "Nearby episodes" widget (its script and its page).

They start with the ``public_url`` setting when it is set, whatever the request says. Without it they start
with the request's own address, its ``Host`` header (or a trusted proxy's ``X-Forwarded-Host``): then anyone
can ask for an answer that links elsewhere (``Host: evil.example``), and a cache in front of podsearch that does
not tell requests apart by that header keeps those links for everyone (``/embed.js`` is public for an hour). So
those answers say ``Vary: Host, X-Forwarded-Host, Forwarded``, and a ``Host`` that names no host (``a"b``,
empty) is a 400 instead of links to ``http:///``. A public site sets ``public_url`` (docs/operations.md).
"""

from __future__ import annotations

from typing import Any, TypeVar
from urllib.parse import quote, urlencode

from flask import Flask, Response, current_app, request, url_for
from werkzeug.exceptions import BadRequest
from werkzeug.urls import iri_to_uri

VARY = ("Host", "X-Forwarded-Host", "Forwarded")
F = TypeVar("F")


def holds_links(view: F) -> F:
    """Mark a view whose answers hold absolute links to this server: without ``public_url`` they (and their
    304s) say ``Vary`` by the headers the links follow."""
    view._podsearch_links = True  # type: ignore[attr-defined]
    return view


def site_root() -> str:
    """The address of podsearch's root as links should name it, without a trailing slash."""
    public = str(current_app.config["PODSEARCH"].public_url)
    if public:
        return public
    if not request.host:
        raise BadRequest("This answer holds links to this server, and the request's Host header names no host "
                         "(send the server's name, or set public_url).")
    # as a URI: Werkzeug gives the root as an IRI, so "Host: xn--e1a.example" made links to the look-alike "е.example"
    return iri_to_uri(request.url_root).rstrip("/")


def absolute_url(endpoint: str, **values: Any) -> str:
    """``url_for(endpoint, **values)`` as an absolute address."""
    return site_root() + url_for(endpoint, **values)[len(request.script_root):]


def this_url() -> str:
    """The address of the current request (its path and query) as an absolute address, percent-encoded (the feed's
    self link held the query as typed: ``q=<script>`` and its quotes raw)."""
    query = urlencode(list(request.args.items(multi=True)))
    return site_root() + quote(request.path) + (f"?{query}" if query else "")


def register(app: Flask) -> None:
    app.add_template_global(absolute_url)

    @app.after_request
    def _vary(response: Response) -> Response:
        view = current_app.view_functions.get(request.endpoint) if request.endpoint else None
        if getattr(view, "_podsearch_links", False) and not current_app.config["PODSEARCH"].public_url:
            for header in VARY:
                response.vary.add(header)
        return response
