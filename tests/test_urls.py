"""The one check of an http(s) address that ``public_url``, a watch's webhook and ``opensearch_url`` share."""

from __future__ import annotations

import pytest

from podsearch.urls import http_url_problem


@pytest.mark.parametrize("url", ["http://example.org", "https://Example.org:8443/podsearch/?q=1", "http://[::1]:9200",
                                 "HTTPS://127.0.0.1:1/", "http://h:65535"])
def test_an_http_address_with_a_host_passes(url: str):
    assert http_url_problem(url) is None


@pytest.mark.parametrize(("url", "problem"), [
    ("", "empty"), ("https://exa mple.org", "spaces"), ("https://example.org/\x00", "control"),
    ("https://example.org/\x7f", "control"), ("https://example.org\n", "control"),
    ("ftp://example.org", "no http"), ("search.example.org", "no http"), ("javascript:alert(1)", "no http"),
    ("https://", "no host"), ("http://:80/", "no host"), ("https://example.org:0", "port"),
    ("https://example.org:99999", "port"), ("https://example.org:x", "port"), ("http://[::1", "host"), ("http://[::1/x", "host"),
])
def test_anything_else_is_named_for_what_is_wrong(url: str, problem: str):
    assert problem in (http_url_problem(url) or "")
