"""HTML pages. Each view calls the library once or twice and renders a template."""

from __future__ import annotations

from flask import Blueprint, render_template, request

from ..errors import IndexMissing, PodsearchError
from .app import library
from .params import search_request, seconds

bp = Blueprint("views", __name__)


@bp.get("/")
def home():
    lib = library()
    try:
        shows, recent = lib.shows(), lib.recent(8)
    except IndexMissing:
        shows, recent = [], []
    return render_template("home.html", shows=shows, recent=recent)


@bp.get("/search")
def search():
    req = search_request(request)
    if not req.q.strip() and not req.shows and not req.person:
        return render_template("search.html", req=req, result=None, shows={})
    lib = library()
    result = lib.search(req)
    shows = {s.id: s.title for s in lib.shows()}
    return render_template("search.html", req=req, result=result, shows=shows)


@bp.get("/episodes/<path:episode_id>")
def episode(episode_id: str):
    lib = library()
    ep = lib.episode(episode_id)
    show = lib.show(ep.show_id)
    try:
        nearby = lib.similar(episode_id, 10).similar
        nearby_error = ""
    except PodsearchError as exc:
        nearby, nearby_error = [], str(exc)
    return render_template("episode.html", ep=ep, show=show, nearby=nearby, nearby_error=nearby_error,
                           t=seconds(request))


@bp.get("/shows/<show_id>")
def show(show_id: str):
    lib = library()
    show = lib.show(show_id)
    return render_template("show.html", show=show, episodes=lib.episodes_of(show_id))
