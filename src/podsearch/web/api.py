"""The JSON API. Every view calls one library function; errors are turned into JSON by errors.py.

The blueprint ``bp`` is mounted twice: at ``/api/v1`` (the stable, documented path) and at ``/api`` (the
older unversioned path, kept as an alias). ``site`` holds the paths the HTML site calls directly
(``/similar/<id>``) and ``ops`` the probes and the OpenAPI document.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from flask import Blueprint, current_app, jsonify, request

from ..answers import PART_SEGMENTS, episode_json, show_json, transcript_parts
from ..errors import NotFound, QueryError
from ..requests import MomentParams, PartParams, ShowPageParams, SimilarTextParams, SuggestParams, parse
from .admission import admission, run_search
from .caching import cacheable, stored
from .context import asked_search, library

bp = Blueprint("api", __name__)
site = Blueprint("site_api", __name__)
ops = Blueprint("ops", __name__)


@bp.get("/search")
@stored
def search():
    """Kept in memory by ETag like /similar (a site's popular searches repeat); an answer cut short by its
    deadline is not kept (``caching``)."""
    return jsonify(run_search(asked_search()).to_dict())


@bp.get("/suggest")
@cacheable
def suggest():
    q = parse(SuggestParams, request.args).q
    return jsonify({"query": q, "suggestions": library().suggest(q)})


@bp.get("/shows")
@cacheable
def shows():
    return jsonify({"shows": [show_json(s) for s in library().shows()]})


@bp.get("/shows/<id:show_id>")
@cacheable
def show(show_id: str):
    lib = library()
    p = parse(ShowPageParams, request.args)
    page, per_page = p.page, p.per_page
    data = show_json(lib.show(show_id))
    episodes = lib.episodes_of(show_id, limit=page * per_page + 1)
    chunk = episodes[(page - 1) * per_page:page * per_page]
    data["episodes"] = [{"id": e.id, "title": e.title, "published": e.published, "duration": e.duration,
                         "url": e.link} for e in chunk]
    data.update(page=page, per_page=per_page, has_more=len(episodes) > page * per_page)
    return jsonify(data)


@bp.get("/episodes/<id:episode_id>")
@cacheable
def episode(episode_id: str):
    """The episode with one part of its transcript (``answers.PART_SEGMENTS`` segments, ``?part=2`` the next;
    until 5 December 2026 every segment: 300,000 cues were a 21 MB answer at 3.4 s of CPU)."""
    lib = library()
    ep = lib.episode(episode_id, with_segments=False)
    part = parse(PartParams, request.args).part or 1
    total = lib.segment_count(episode_id)
    parts = transcript_parts(total)
    if part > parts:
        raise NotFound(f"This episode's transcript has {parts} part{'s' if parts > 1 else ''}, not {part}.")
    first = (part - 1) * PART_SEGMENTS
    ep.segments = lib.segments(episode_id, first, first + PART_SEGMENTS)
    # (an episode that left its feed stays searchable; until 5 December 2026 nothing said it had left, until 6
    # December when)
    gone, since = lib.episode_gone(episode_id)
    return jsonify({**episode_json(ep, first, total), "gone": gone, "gone_since": since})


@bp.get("/similar/<id:episode_id>")
@stored
def similar(episode_id: str):
    p = parse(MomentParams, request.args)
    return jsonify(library().similar(episode_id, t=p.t, **p.options()).to_dict())


def _posted() -> dict[str, Any]:
    """What a POST to ``/similar`` sends: a JSON object's members (``text`` a string) or a form's fields."""
    if request.is_json:
        try:
            body = request.get_json(silent=True)  # silent: None for a body that is no JSON
        except RecursionError:  # nested deeper than the decoder goes ("[" * 60000 was a 500)
            body = None
        if not isinstance(body, dict) or not isinstance(body.get("text"), str):
            raise QueryError('Send JSON like {"text": "..."}.')
        return body
    return {"text": "", **request.form.to_dict(flat=False)}


@bp.route("/similar", methods=["GET", "POST"])
@cacheable
def similar_text():
    args: dict[str, Any] = request.args.to_dict(flat=False)
    if request.method == "POST" and (request.content_length or request.is_json or request.form):
        # The body's text, and its parameters where the query string has none (``{"text": "...", "k": 3}``: until
        # 5 December 2026 only the query string's were read, and k=3 in the body answered 10). A POST with no body
        # reads ?text= as a GET does (the README's "GET|POST /similar?text=..." was "text is empty" until then).
        posted = _posted()
        args = {**posted, **args, "text": posted["text"]}
    opts = parse(SimilarTextParams, args).options()
    k = opts.pop("k")
    text = args.get("text", "")
    return jsonify(library().similar_to_text(text[0] if isinstance(text, list) else text, k, **opts).to_dict())


@bp.get("/health")
def health():
    return readyz()


def _alias(rule: str, view: Callable[..., Any], **options: Any) -> None:
    site.add_url_rule(rule, view_func=view, **options)


_alias("/similar/<id:episode_id>", similar, methods=["GET"])
_alias("/similar", similar_text, methods=["GET", "POST"])


@ops.get("/healthz")
def healthz():
    return jsonify({"status": "ok"})


@ops.get("/readyz")
def readyz():
    """Ready to take traffic: the index and model are loaded and a search slot is free. Saturated (every search
    slot busy) answers 503 with the same figures, so that a load balancer sends the next request elsewhere."""
    lib = library()
    data = lib.ready()
    scheduler = current_app.extensions.get("podsearch_scheduler")
    if scheduler is not None:
        data["reindex"] = scheduler.status()
    connections = current_app.extensions.get("podsearch_connections")  # under `podsearch serve` only
    if connections is not None:
        data["connections"] = connections.status()
    data["load"] = {**admission().status(), **{k: v for k, v in lib.load.snapshot().items() if k != "pid"}}
    if data["load"]["saturated"]:
        data["status"] = "saturated"
        return jsonify(data), 503, {"Retry-After": "1"}
    return jsonify(data)


@ops.get("/api/openapi.json")
@ops.get("/api/v1/openapi.json")
@cacheable
def openapi():
    from .openapi import document

    return jsonify(document(request.script_root))
