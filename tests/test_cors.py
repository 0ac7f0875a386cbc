"""CORS on the JSON API: off by default, the listed origins (or any) when configured, preflights answered."""

from __future__ import annotations

from pathlib import Path

import pytest

from podsearch.config import load_config
from podsearch.web import create_app


def _client(data: Path, **settings):
    return create_app(load_config({"data": str(data), **settings}, environ={}), {"TESTING": True}).test_client()


def test_no_cors_headers_by_default(client):
    resp = client.get("/api/search?q=bees", headers={"Origin": "https://site.example"})
    assert resp.status_code == 200
    assert "Access-Control-Allow-Origin" not in resp.headers


def test_listed_origin_is_allowed_and_others_are_not(sample_data: Path):
    client = _client(sample_data, cors_origins=["https://site.example"])
    ok = client.get("/api/search?q=bees", headers={"Origin": "https://site.example"})
    assert ok.headers["Access-Control-Allow-Origin"] == "https://site.example"
    assert "ETag" in ok.headers["Access-Control-Expose-Headers"]
    assert "Origin" in ok.headers["Vary"]
    other = client.get("/api/search?q=bees", headers={"Origin": "https://evil.example"})
    assert other.status_code == 200 and "Access-Control-Allow-Origin" not in other.headers
    page = client.get("/search?q=bees", headers={"Origin": "https://site.example"})
    assert "Access-Control-Allow-Origin" not in page.headers  # HTML pages are not shared


@pytest.mark.parametrize("origins", [["https://site.example"], ["https://site.example", "https://other.example"]])
def test_vary_names_origin_once(sample_data: Path, origins: list[str]):
    """With two origins listed flask-cors adds a ``Vary: Origin`` line of its own, and the answers had two."""
    client = _client(sample_data, cors_origins=origins)
    for origin in ("https://site.example", "https://evil.example"):
        resp = client.get("/api/v1/suggest?q=be", headers={"Origin": origin})
        lines = resp.headers.getlist("Vary")
        assert len(lines) == 1 and [v.strip().lower() for v in lines[0].split(",")].count("origin") == 1, lines


@pytest.mark.parametrize("path", ["/similar", "/api/v1/similar"])
def test_preflight_for_json_post_is_answered_even_when_rate_limited(sample_data: Path, path: str):
    client = _client(sample_data, cors_origins=["*"], rate_limit=0.001, rate_burst=1)
    headers = {"Origin": "https://site.example", "Access-Control-Request-Method": "POST",
               "Access-Control-Request-Headers": "content-type"}
    for _ in range(3):
        resp = client.options(path, headers=headers)
        assert resp.status_code in {200, 204}
        assert resp.headers["Access-Control-Allow-Origin"] == "*"
        assert "POST" in resp.headers["Access-Control-Allow-Methods"]
        assert "content-type" in resp.headers["Access-Control-Allow-Headers"].lower()
