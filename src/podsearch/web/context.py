"""The running app's library, for the views (a module of its own, so that the app factory and the blueprints
do not import each other)."""

from __future__ import annotations

from flask import current_app, g, request

from ..errors import QueryError
from ..requests import SearchRequest, search_asked
from ..service import Library

EXTENSION = "podsearch"
FEED_PATH = "/search.rss"  # the search as an RSS feed (rss.py), an API: its errors are JSON (errors.py)
# What a search route takes when the query string does not say: the search feed's page is longer.
SEARCH_DEFAULTS: dict[str, dict[str, str]] = {FEED_PATH: {"per_page": "50"}}


def library() -> Library:
    return current_app.extensions[EXTENSION]


def asked_search() -> SearchRequest:
    """The search this request asks for, read once (the rate limit weighs it, the view runs it): QueryError (a
    400) when the parser refuses it, each time it is asked."""
    if "podsearch_asked" not in g:
        try:
            g.podsearch_asked = search_asked(request.args, SEARCH_DEFAULTS.get(request.path))
        except QueryError as exc:
            g.podsearch_asked = str(exc)
    asked = g.podsearch_asked
    if isinstance(asked, str):
        raise QueryError(asked)
    return asked
