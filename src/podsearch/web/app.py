"""The app factory."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from flask import Flask
from werkzeug.routing import PathConverter

from ..config import Config, load_config
from ..load import LoadCounters
from ..service import Library
from . import admission, api, caching, cors, embed, errors, filters, headers, limits, links, rss, views
from .accesslog import AccessLog
from .context import EXTENSION, SEARCH_DEFAULTS, library

log = logging.getLogger(__name__)


def template_folder() -> str:
    """Templates ship inside the wheel (podsearch/templates); in a checkout they are at the top level."""
    here = Path(__file__).resolve().parent.parent
    packaged = here / "templates"
    if packaged.is_dir():
        return str(packaged)
    return str(here.parent.parent / "templates")


class IdConverter(PathConverter):
    """An episode's or show's id in a path: any text, slashes too, and also a leading one. Feeds write guids such
    as ``/2019/05/ep-12`` (a relative guid is kept as written), and ``<path:...>`` takes no leading slash: such an
    episode's page, its JSON and its nearby episodes were 404s."""

    regex = ".+?"
    part_isolating = False  # (Werkzeug makes a converter whose pattern has no "/" match one segment only)

    def to_url(self, value: Any) -> str:
        """The id's slashes kept as written (``/episodes/tag:x,2024:show/ep-2``), except in an id with a ``.`` or
        ``..`` segment: a browser resolves those away, and ``/episodes/../../etc/passwd`` opened ``/etc/passwd``
        (a feed's guid could make its links on the site lead to any page of it, until 5 December 2026). There each
        slash is ``%2F``, which the route reads as a slash. (An id that is nothing but ``.`` or ``..`` has no link
        that a browser keeps.) An empty segment, the ``//`` of a URL id (``https://example.com/ep/1``) or a leading
        slash after the route's own, is written ``/%2F``, which the route reads back as a slash: a reverse proxy that
        merges the slashes of a path (HAProxy's ``normalize-uri path-merge-slashes``) led such links to another id,
        a 404, until 5 December 2026."""
        url = super().to_url(value)
        if any(part in {".", ".."} for part in url.split("/")):
            url = url.replace("/", "%2F")
        if url.startswith("/"):
            url = "%2F" + url[1:]
        return url.replace("//", "/%2F")


def create_app(config: Config | None = None, test_config: dict[str, Any] | None = None) -> Flask:
    """Build the app. ``config`` defaults to the environment (``PODSEARCH_*``) and config file."""
    config = config or load_config()
    app = Flask("podsearch", template_folder=template_folder(), static_folder=None)
    # "/api/v1//search" is no route (404), not a redirect to the path with one slash: Werkzeug answered 308 with an
    # HTML body and a Location built from the request's Host header, whatever host it named
    app.url_map.merge_slashes = False
    app.url_map.converters["id"] = IdConverter  # before the routes that use it
    app.config.update(PODSEARCH=config, JSON_SORT_KEYS=False)
    if test_config:
        app.config.update(test_config)
    served = app.extensions[EXTENSION] = Library.from_config(config)
    served.load = LoadCounters(config.data_dir)  # the serving process's counters, which `podsearch stats` reads
    app.extensions[admission.EXTENSION] = admission.Admission(int(config.threads), int(config.expensive_searches))
    # the paths that search, each with what its query string takes when it does not say (the server weighs them)
    app.extensions["podsearch_search_paths"] = {path: SEARCH_DEFAULTS.get(path, {}) for path in limits.SEARCH_PATHS}

    app.register_blueprint(views.bp)
    app.register_blueprint(embed.bp)  # the widget and /opensearch.xml
    app.register_blueprint(rss.bp)  # /search.rss
    app.register_blueprint(api.bp, url_prefix="/api/v1")
    app.register_blueprint(api.bp, url_prefix="/api", name="api_unversioned")
    app.register_blueprint(api.site)
    app.register_blueprint(api.ops)
    cors.register(app)  # first: preflights are answered before the rate limit counts them
    limits.register(app)  # then refuse before any other work
    caching.register(app, library)
    errors.register(app)
    links.register(app)
    headers.register(app)
    app.wsgi_app = AccessLog(app.wsgi_app)  # type: ignore[method-assign]
    app.add_template_filter(filters.clock)
    app.add_template_filter(filters.date)
    app.add_template_filter(filters.quoted)
    app.add_template_filter(filters.part)
    app.add_template_global(filters.part_numbers)

    return app
