"""What an http(s) address given to podsearch must be: one check for every setting and option that takes one
(``public_url``, a watch's ``--webhook``, ``opensearch_url``). Each caller adds its own rules (``public_url``
takes no query, fragment or user; a webhook's host must be one fetches may reach) and its own error."""

from __future__ import annotations

from urllib.parse import urlsplit


def http_url_problem(text: str) -> str | None:
    """Why ``text`` is no http or https URL with a host and a valid port, in a few words; None when it is one."""
    if not text or any(c.isspace() or ord(c) < 32 or ord(c) == 127 for c in text):
        return "it is empty or has spaces or control characters"
    try:
        parts = urlsplit(text)
    except ValueError:  # an unclosed "[" of an IPv6 address
        return "its host is no valid name or address"
    if parts.scheme.lower() not in {"http", "https"}:
        return "it is no http:// or https:// URL"
    try:
        port = parts.port
    except ValueError:
        port = 0
    if port == 0:
        return "its port is no number from 1 to 65535"
    if not parts.hostname:
        return "it has no host"
    return None
