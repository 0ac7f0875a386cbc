"""The Flask app: HTML pages and the JSON API over the library."""

from .app import create_app

__all__ = ["create_app"]
