"""What a publisher's own site can use: the "Nearby episodes" widget (a small page for an iframe, and the
script that places it) and the OpenSearch description that lets browsers add podsearch as a search engine.
"""

from __future__ import annotations

import logging
import re
from urllib.parse import urlsplit

from flask import Blueprint, Response, jsonify, render_template, request

from ..errors import IndexMissing, QueryError
from ..requests import SimilarParams, SuggestParams, parse
from .context import library
from .links import holds_links

log = logging.getLogger(__name__)

bp = Blueprint("embed", __name__)

SCRIPT_MAX_AGE = 3600


def _public(url: str) -> bool:
    return urlsplit(url).scheme.lower() in {"http", "https"}


@bp.get("/embed/similar/<id:episode_id>")
@holds_links
def similar(episode_id: str):
    """The nearby episodes of one episode as a small page for an iframe.

    Links open in the top window: on the publisher's own episode page when the feed gives one
    (``link=site``, the default), else on podsearch's (``link=podsearch``).
    """
    opts = parse(SimilarParams, request.args).options()
    mode = request.args.get("link", "site")
    if mode not in {"site", "podsearch"}:
        raise QueryError("link must be site or podsearch.")
    lib = library()
    ep = lib.episode(episode_id)
    try:
        items = lib.similar(episode_id, **opts).similar
    except IndexMissing as exc:  # (its reason names the data folder and an admin's command: the log's, not the page's)
        log.info("no nearby episodes for %s: %s", episode_id, exc)
        items = []
    return render_template("embed_similar.html", ep=ep, items=items, mode=mode, public=_public)


def _cached_template(name: str, mimetype: str) -> Response:
    response = Response(render_template(name), mimetype=mimetype)
    response.headers["Cache-Control"] = f"public, max-age={SCRIPT_MAX_AGE}"
    return response


@bp.get("/embed.js")
@holds_links
def script():
    return _cached_template("embed.js", "text/javascript")


@bp.get("/opensearch.xml")
@holds_links
def opensearch():
    return _cached_template("opensearch.xml", "application/opensearchdescription+xml")


def _completion(q: str, suggestion: dict[str, str]) -> str:
    """What the browser searches when the suggestion is picked: a word completes the query's last word, the words
    before it kept, as the site's typeahead does (a show, an episode or a person is its name). Until 5 December 2026
    the word alone: "kubernetes operat" offered "operating", and picking it searched "operating"."""
    if suggestion["kind"] != "term":
        return suggestion["text"]
    return re.sub(r"\S*$", lambda _: suggestion["text"], q.strip(), count=1)


@bp.get("/opensearch/suggest")
def opensearch_suggest():
    """Suggestions in the OpenSearch format browsers read: ``["prefix", ["completion", ...]]``."""
    q = parse(SuggestParams, request.args).q
    texts = list(dict.fromkeys(_completion(q, s) for s in library().suggest(q))) if q.strip() else []
    response = jsonify([q, texts])
    response.mimetype = "application/x-suggestions+json"
    return response
