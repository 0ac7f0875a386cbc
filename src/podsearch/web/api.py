"""The JSON API. Every view calls one library function; errors are turned into JSON by errors.py."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from flask import Blueprint, jsonify, request

from ..errors import QueryError
from ..search_types import SearchResult
from ..service import SimilarResult
from .app import library
from .params import search_request, seconds, similar_options

bp = Blueprint("api", __name__)


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
                "snippet": h.snippet,
                "moments": [{"start": m.start, "speaker": m.speaker, "text": m.text, "chapter": m.chapter}
                            for m in h.moments],
            }
            for h in result.hits
        ],
        "facets": result.facets,
    }


def similar_json(result: SimilarResult) -> dict[str, Any]:
    out: dict[str, Any] = {"id": result.id, "similar": [asdict(s) for s in result.similar]}
    for item in out["similar"]:
        item.pop("duplicate", None)
    out["duplicates"] = [asdict(s) for s in result.duplicates]
    if result.t is not None:
        out["t"] = result.t
    return out


@bp.get("/api/search")
def api_search():
    return jsonify(search_json(library().search(search_request(request))))


@bp.get("/api/suggest")
def api_suggest():
    q = request.args.get("q", "")
    return jsonify({"query": q, "suggestions": library().suggest(q)})


@bp.get("/api/shows")
def api_shows():
    return jsonify({"shows": [s.to_dict() for s in library().shows()]})


@bp.get("/api/episodes/<path:episode_id>")
def api_episode(episode_id: str):
    ep = library().episode(episode_id)
    data = ep.to_dict()
    data["segments"] = [asdict(s) for s in ep.segments]
    return jsonify(data)


@bp.get("/similar/<path:episode_id>")
@bp.get("/api/similar/<path:episode_id>")
def similar(episode_id: str):
    opts = similar_options(request)
    return jsonify(similar_json(library().similar(episode_id, t=seconds(request), **opts)))


@bp.route("/similar", methods=["GET", "POST"])
@bp.route("/api/similar", methods=["GET", "POST"])
def similar_text():
    opts = similar_options(request)
    if request.method == "POST":
        if request.is_json:
            body = request.get_json(silent=True)
            if not isinstance(body, dict) or not isinstance(body.get("text"), str):
                raise QueryError('Send JSON like {"text": "..."}.')
            text = body["text"]
        else:
            text = request.form.get("text", "")
    else:
        text = request.args.get("text", "")
    k = opts.pop("k")
    return jsonify(similar_json(library().similar_to_text(text, k, **opts)))


@bp.get("/healthz")
def healthz():
    return jsonify({"status": "ok"})


@bp.get("/readyz")
def readyz():
    return jsonify(library().ready())
