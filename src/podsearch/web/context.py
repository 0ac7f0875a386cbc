"""The running app's library, for the views (a module of its own, so that the app factory and the blueprints
do not import each other)."""

from __future__ import annotations

from flask import current_app

from ..service import Library

EXTENSION = "podsearch"


def library() -> Library:
    return current_app.extensions[EXTENSION]
