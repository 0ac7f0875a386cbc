"""The site's links to an id shaped like a URL (``https://example.org/signal-path/episodes/3?v=2``) hold no ``//``:
a reverse proxy that merges a path's slashes (HAProxy's ``normalize-uri path-merge-slashes``) made
``/episodes/https://example.org/...`` the id ``https:/example.org/...``, a 404, until 5 December 2026. The id's
empty segments are written ``/%2F``, which the route reads back as a slash. A real ``podsearch serve`` (waitress)
on 127.0.0.1, behind a small proxy that merges slashes as such a proxy does."""

from __future__ import annotations

import html
import re
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

import pytest

ENIGMA = "https://example.org/signal-path/episodes/3?v=2"


@pytest.fixture
def merging_proxy(live_server) -> Iterator[str]:
    """A proxy to the live server that merges each run of slashes of the raw path into one."""
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: object) -> None:  # noqa: A002
            pass

        def do_GET(self) -> None:  # noqa: N802
            path = re.sub(r"/{2,}", "/", self.path.split("?")[0]) + ("?" + self.path.split("?", 1)[1] if "?" in self.path
                                                                      else "")
            try:
                with urllib.request.urlopen(live_server.url(path), timeout=30) as resp:
                    status, body = resp.status, resp.read()
            except urllib.error.HTTPError as exc:
                status, body = exc.code, exc.read()
            self.send_response(status)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def _get(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=30) as resp:
            return resp.status, resp.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def test_links_to_a_url_shaped_id_survive_a_proxy_that_merges_slashes(live_server, merging_proxy) -> None:
    status, page = _get(merging_proxy + "/search?q=enigma")
    assert status == 200
    hrefs = {html.unescape(h) for h in re.findall(r'href="(/episodes/https[^"#]*)', page)}
    assert hrefs, page
    for href in hrefs:
        assert "//" not in href, href
        for base in (merging_proxy, live_server.base):  # behind the proxy, and straight
            status, episode = _get(base + href)
            assert status == 200 and "Breaking Enigma" in episode, (base, href, status)
    page_href = min(hrefs, key=len)
    assert urlsplit(page_href).path == "/episodes/https:/%2Fexample.org/signal-path/episodes/3%3Fv=2", page_href
    status, data = _get(live_server.url("/api/v1/episodes/https:/%2Fexample.org/signal-path/episodes/3%3Fv=2"))
    assert status == 200 and f'"id":"{ENIGMA}"' in data.replace(" ", "")
    # the id as written before, with its "//", is still served straight (old links, bookmarks)
    assert _get(live_server.url("/episodes/https://example.org/signal-path/episodes/3%3Fv=2"))[0] == 200
