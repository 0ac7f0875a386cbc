"""The JSON API. Every view calls one library function; errors are turned into JSON by errors.py.

The blueprint ``bp`` is mounted twice: at ``/api/v1`` (the stable, documented path) and at ``/api`` (the
older unversioned path, kept as an alias). ``site`` holds the paths the HTML site calls directly
(``/similar/<id>``) and ``ops`` the probes and the OpenAPI document.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict
from typing import Any
from urllib.parse import urlsplit

from flask import Blueprint, current_app, jsonify, request

from ..errors import QueryError
from ..search_types import SearchResult
from ..service import SimilarResult
from .app import library
from .caching import cacheable, stored
from .params import page_window, search_request, seconds, similar_options, suggest_prefix

bp = Blueprint("api", __name__)
site = Blueprint("site_api", __name__)
ops = Blueprint("ops", __name__)


def search_json(result: SearchResult) -> dict[str, Any]:
    return {
        "query": result.query,
        "total": result.total,
        "page": result.page,
        "per_page": result.per_page,
        "pages": result.pages,
        "took_ms": result.took_ms,
        "relaxed": result.relaxed,
        "suggestion": result.suggestion or None,
        "hits": [
            {
                "id": h.id, "title": h.title, "show": h.show, "show_id": h.show_id, "published": h.published,
                "url": h.url, "audio_url": h.audio_url, "duration": h.duration, "score": h.score,
                "snippet": h.snippet, "title_html": h.title_html, "language": h.language,
                "moments": [{"start": m.start, "speaker": m.speaker, "text": m.text, "chapter": m.chapter}
                            for m in h.moments],
            }
            for h in result.hits
        ],
        "facets": result.facets,
    }


def similar_json(result: SimilarResult) -> dict[str, Any]:
    out: dict[str, Any] = {"id": result.id, "similar": [_similar_item(s) for s in result.similar]}
    out["duplicates"] = [{**_similar_item(s), "duplicate": s.duplicate} for s in result.duplicates]
    if result.t is not None:
        out["t"] = result.t
    return out


def _similar_item(s: Any) -> dict[str, Any]:
    return {"id": s.id, "title": s.title, "show": s.show, "show_id": s.show_id, "published": s.published, "url": s.url,
            "score": s.score, "reasons": list(s.reasons), "language": s.language}


def _public_url(value: str) -> str:
    """Only web addresses leave the server; local paths (feeds read from disk) stay private."""
    return value if urlsplit(value).scheme.lower() in {"http", "https"} else ""


def show_json(show: Any) -> dict[str, Any]:
    data = show.to_dict()
    data.pop("source", None)  # a feed URL or a path on the server's disk: not for the public
    return data


def episode_json(ep: Any) -> dict[str, Any]:
    data = ep.to_dict()
    data["transcript_source"] = _public_url(data.get("transcript_source") or "")
    data["segments"] = [asdict(s) for s in ep.segments]
    return data


@bp.get("/search")
@cacheable
def search():
    return jsonify(search_json(library().search(search_request(request))))


@bp.get("/suggest")
@cacheable
def suggest():
    q = suggest_prefix(request)
    return jsonify({"query": q, "suggestions": library().suggest(q)})


@bp.get("/shows")
@cacheable
def shows():
    return jsonify({"shows": [show_json(s) for s in library().shows()]})


@bp.get("/shows/<path:show_id>")
@cacheable
def show(show_id: str):
    lib = library()
    page, per_page = page_window(request, default_per_page=50)
    data = show_json(lib.show(show_id))
    episodes = lib.episodes_of(show_id, limit=page * per_page + 1)
    chunk = episodes[(page - 1) * per_page:page * per_page]
    data["episodes"] = [{"id": e.id, "title": e.title, "published": e.published, "duration": e.duration,
                         "url": e.link} for e in chunk]
    data.update(page=page, per_page=per_page, has_more=len(episodes) > page * per_page)
    return jsonify(data)


@bp.get("/episodes/<path:episode_id>")
@cacheable
def episode(episode_id: str):
    return jsonify(episode_json(library().episode(episode_id)))


@bp.get("/similar/<path:episode_id>")
@stored
def similar(episode_id: str):
    opts = similar_options(request)
    return jsonify(similar_json(library().similar(episode_id, t=seconds(request), **opts)))


def _posted_text() -> str:
    if request.is_json:
        body = request.get_json(silent=True)
        if not isinstance(body, dict) or not isinstance(body.get("text"), str):
            raise QueryError('Send JSON like {"text": "..."}.')
        return body["text"]
    return request.form.get("text", "")


@bp.route("/similar", methods=["GET", "POST"])
@cacheable
def similar_text():
    opts = similar_options(request)
    text = _posted_text() if request.method == "POST" else request.args.get("text", "")
    k = opts.pop("k")
    return jsonify(similar_json(library().similar_to_text(text, k, **opts)))


@bp.get("/health")
def health():
    return readyz()


def _alias(rule: str, view: Callable[..., Any], **options: Any) -> None:
    site.add_url_rule(rule, view_func=view, **options)


_alias("/similar/<path:episode_id>", similar, methods=["GET"])
_alias("/similar", similar_text, methods=["GET", "POST"])


@ops.get("/healthz")
def healthz():
    return jsonify({"status": "ok"})


@ops.get("/readyz")
def readyz():
    data = library().ready()
    scheduler = current_app.extensions.get("podsearch_scheduler")
    if scheduler is not None:
        data["reindex"] = scheduler.status()
    return jsonify(data)


@ops.get("/api/openapi.json")
@ops.get("/api/v1/openapi.json")
@cacheable
def openapi():
    from .openapi import document

    return jsonify(document(request.script_root))
