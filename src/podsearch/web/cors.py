"""CORS for the JSON API, so that a publisher's pages on another origin can call it from the browser.

Off unless ``cors_origins`` lists origins (or ``*``). HTML pages need none of it: the embeddable widget is an
iframe.
"""

from __future__ import annotations

from flask import Flask, Response, request

API_PREFIXES = ("/api/", "/similar")
EXPOSED = "ETag, Last-Modified, Retry-After"


def _is_api(path: str) -> bool:
    return path.startswith(API_PREFIXES)


def register(app: Flask) -> None:
    """Call before the limits are registered, so that preflights are answered before rate limiting."""
    origins = [o.rstrip("/") for o in app.config["PODSEARCH"].cors_origins]
    if not origins:
        return
    any_origin = "*" in origins

    def allowed(origin: str | None) -> str | None:
        if not origin:
            return None
        if any_origin:
            return "*"
        return origin if origin.rstrip("/") in origins else None

    @app.before_request
    def _preflight() -> Response | None:
        if request.method != "OPTIONS" or not _is_api(request.path):
            return None
        if not request.headers.get("Access-Control-Request-Method"):
            return None
        response = Response(status=204)
        origin = allowed(request.headers.get("Origin"))
        if origin:
            response.headers["Access-Control-Allow-Origin"] = origin
            response.headers["Access-Control-Allow-Methods"] = "GET, POST"
            response.headers["Access-Control-Allow-Headers"] = "Content-Type, If-None-Match"
            response.headers["Access-Control-Max-Age"] = "86400"
        if not any_origin:
            response.vary.add("Origin")
        return response

    @app.after_request
    def _headers(response: Response) -> Response:
        if not _is_api(request.path):
            return response
        origin = allowed(request.headers.get("Origin"))
        if origin:
            response.headers["Access-Control-Allow-Origin"] = origin
            response.headers["Access-Control-Expose-Headers"] = EXPOSED
        if not any_origin:
            response.vary.add("Origin")
        return response
