"""CORS for the JSON API (flask-cors), so that a publisher's pages on another origin can call it from the browser.

Off unless ``cors_origins`` lists origins (or ``*``). HTML pages need none of it: the embeddable widget is an
iframe. Preflights are exempt from the rate limit (``limits.py``): they cost nothing and carry no request.
"""

from __future__ import annotations

import re

from flask import Flask, Response, request
from flask_cors import CORS

API_PATHS = (r"/api/.*", r"/similar.*")
EXPOSED = ["ETag", "Last-Modified", "Retry-After"]


def register(app: Flask) -> None:
    origins = [o.rstrip("/") for o in app.config["PODSEARCH"].cors_origins]
    if not origins:
        return
    CORS(app, resources={path: {"origins": "*" if "*" in origins else origins} for path in API_PATHS},
         methods=["GET", "POST"], allow_headers=["Content-Type", "If-None-Match"], expose_headers=EXPOSED,
         max_age=86400, send_wildcard="*" in origins, vary_header=True)
    if "*" in origins:
        return
    api = re.compile("|".join(API_PATHS))

    def _vary(response: Response) -> Response:
        """One ``Vary`` header naming ``Origin`` on every API answer. flask-cors leaves it out when one origin is
        listed; the answer still differs by Origin (the listed one gets Access-Control-Allow-Origin, others do not),
        so a shared cache must keep them apart. With more origins flask-cors adds a header line of its own, which
        was a second ``Vary: Origin`` beside this one until 5 December 2026: the lines are joined into one."""
        if api.match(request.path):
            named: dict[str, str] = {}  # (each once, whatever its case)
            for value in [v for line in response.headers.getlist("Vary") for v in line.split(",")] + ["Origin"]:
                if value.strip():
                    named.setdefault(value.strip().lower(), value.strip())
            response.headers["Vary"] = ", ".join(named.values())
        return response

    # run after flask-cors's own hook (Flask runs the last registered first)
    app.after_request_funcs.setdefault(None, []).insert(0, _vary)
