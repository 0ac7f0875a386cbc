"""podsearch: full-text search and topic recommendations for podcast episodes."""

__version__ = "0.1.0"
