"""Tests for podsearch.ingest.fetch against a real HTTP server on 127.0.0.1 (no other network)."""

from __future__ import annotations

import gzip
import ipaddress
import re
import socket
import threading
import time
import tracemalloc
import zlib
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from email.utils import formatdate
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from podsearch import __version__
from podsearch.errors import BlockedAddress, DeadlinePassed, FetchError, HostSkipped, HostUnreachable
from podsearch.ingest import fetch as fetch_mod
from podsearch.ingest.fetch import (
    Fetcher,
    FetchLimits,
    check_address,
    fetch_any,
    is_public_ip,
    read_local,
)
from podsearch.ingest.hosts import HostHealth

FEED = b"<?xml version='1.0'?><rss><channel><title>t</title></channel></rss>"
ETAG = '"v1"'
LAST_MODIFIED = "Wed, 21 Oct 2015 07:28:00 GMT"
TEXT = b"WEBVTT\n\n00:00.000 --> 00:01.000\nhello there\n" * 50
MIB = 1024 * 1024


# --------------------------------------------------------------------------------------------
# Safety net: nothing in this module may resolve (let alone reach) anything but 127.0.0.1.


_real_getaddrinfo = socket.getaddrinfo


def _loopback_only_getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
    if host not in ("127.0.0.1", b"127.0.0.1"):
        raise AssertionError(f"test tried to resolve {host!r}")
    return _real_getaddrinfo(host, *args, **kwargs)


@pytest.fixture(autouse=True)
def _no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(socket, "getaddrinfo", _loopback_only_getaddrinfo)


# --------------------------------------------------------------------------------------------
# Local test server


@dataclass
class _State:
    bomb: bytes
    lock: threading.Lock = field(default_factory=threading.Lock)
    stop: threading.Event = field(default_factory=threading.Event)
    hits: Counter[str] = field(default_factory=Counter)
    headers: dict[str, dict[str, str]] = field(default_factory=dict)
    active: int = 0
    max_active: int = 0


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: Any

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _send(self, status: int, body: bytes = b"", headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        if status != 304:
            self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if body and status != 304:
            self.wfile.write(body)

    def do_GET(self) -> None:
        st: _State = self.server.state
        path = urlsplit(self.path).path
        with st.lock:
            st.hits[path] += 1
            n = st.hits[path]
            st.headers[path] = {k.lower(): v for k, v in self.headers.items()}
        try:
            if path == "/feed":
                if self.headers.get("If-None-Match") == ETAG or self.headers.get("If-Modified-Since") == LAST_MODIFIED:
                    self._send(304, headers={"ETag": ETAG})
                else:
                    self._send(
                        200,
                        FEED,
                        {
                            "Content-Type": 'Application/RSS+XML; Charset="UTF-8"',
                            "ETag": ETAG,
                            "Last-Modified": LAST_MODIFIED,
                        },
                    )
            elif path == "/gzip":
                self._send(200, gzip.compress(TEXT), {"Content-Encoding": "gzip", "Content-Type": "text/vtt"})
            elif path == "/deflate":
                self._send(200, zlib.compress(TEXT), {"Content-Encoding": "deflate"})
            elif path == "/rawdeflate":
                co = zlib.compressobj(6, zlib.DEFLATED, -zlib.MAX_WBITS)
                self._send(200, co.compress(TEXT) + co.flush(), {"Content-Encoding": "deflate"})
            elif path == "/chunked":
                self.send_response(200)
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                for part in (b"one ", b"two ", b"three"):
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(part), part))
                self.wfile.write(b"0\r\n\r\n")
            elif path == "/flaky":
                self._send(500 if n == 1 else 200, b"recovered")
            elif path == "/always500":
                self._send(500, b"boom")
            elif path == "/busy":
                if n == 1:
                    self._send(503, b"later", {"Retry-After": "1"})
                else:
                    self._send(200, b"done")
            elif path.startswith("/status/"):
                self._send(int(path.rsplit("/", 1)[1]), b"nope")
            elif path == "/drip":
                self.send_response(200)
                self.send_header("Content-Length", "100")
                self.end_headers()
                self.wfile.flush()
                for _ in range(100):
                    self.wfile.write(b"x")
                    self.wfile.flush()
                    if st.stop.wait(1.0):
                        break
            elif path == "/endless":
                self.send_response(200)
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                block = b"y" * 65536
                sent = 0
                while not st.stop.is_set() and sent < 256 * MIB:
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(block), block))
                    sent += len(block)
            elif path == "/big":
                self.send_response(200)
                self.send_header("Content-Length", str(10 * MIB))
                self.end_headers()
                self.wfile.write(b"z" * 1024)
            elif path == "/bomb":
                self._send(200, st.bomb, {"Content-Encoding": "gzip"})
            elif path.startswith("/loop/"):
                nxt = int(path.rsplit("/", 1)[1]) + 1
                self._send(302, headers={"Location": str(nxt)})  # relative: /loop/3 -> /loop/4
            elif path == "/redirect-to-feed":
                self._send(301, headers={"Location": "/feed"})
            elif path == "/moved-308":
                self._send(308, headers={"Location": "/redirect-to-feed"})
            elif path == "/found-then-moved":
                self._send(302, headers={"Location": "/redirect-to-feed"})
            elif path == "/to-file":
                self._send(302, headers={"Location": "file:///etc/passwd"})
            elif path == "/to-private":
                self._send(302, headers={"Location": "/private"})
            elif path == "/private":
                self._send(200, b"secret")
            elif path == "/elsewhere":  # another origin (another port of the machine)
                self._send(301, headers={"Location": "http://127.0.0.1:9/private"})
            elif path == "/concurrent":
                with st.lock:
                    st.active += 1
                    st.max_active = max(st.max_active, st.active)
                time.sleep(0.2)
                with st.lock:
                    st.active -= 1
                self._send(200, b"c")
            else:
                self._send(404, b"unknown")
        except (BrokenPipeError, ConnectionResetError):
            pass


@dataclass
class _Server:
    base: str
    state: _State

    def url(self, path: str) -> str:
        return self.base + path


@pytest.fixture(scope="module")
def bomb() -> bytes:
    """64 MiB of zeros, gzip-compressed to ~64 KiB."""
    co = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    zero = bytes(MIB)
    data = b"".join(co.compress(zero) for _ in range(64)) + co.flush()
    assert len(data) < MIB
    return data


@pytest.fixture
def server(bomb: bytes) -> Iterator[_Server]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    httpd.daemon_threads = True
    state = _State(bomb=bomb)
    httpd.state = state  # type: ignore[attr-defined]
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    host, port = httpd.server_address[:2]
    try:
        yield _Server(f"http://{host}:{port}", state)
    finally:
        state.stop.set()
        httpd.shutdown()
        httpd.server_close()
        thread.join(5)


@pytest.fixture
def silent_url() -> Iterator[str]:
    """A port that accepts TCP connections (kernel backlog) but never answers."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    sock.listen(16)
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}/never"
    finally:
        sock.close()


def _limits(**overrides: Any) -> FetchLimits:
    base: dict[str, Any] = {
        "connect_timeout": 2.0,
        "read_timeout": 2.0,
        "total_timeout": 10.0,
        "retries": 2,
        "backoff": 0.05,
        "allow_private": True,
    }
    base.update(overrides)
    return FetchLimits(**base)


@pytest.fixture
def fetcher() -> Iterator[Fetcher]:
    with Fetcher(_limits()) as f:
        yield f


# --------------------------------------------------------------------------------------------
# Defaults


def test_limit_defaults() -> None:
    limits = FetchLimits()
    assert (limits.connect_timeout, limits.read_timeout, limits.total_timeout) == (10.0, 30.0, 60.0)
    assert limits.max_bytes == 50 * MIB
    assert (limits.max_redirects, limits.retries, limits.backoff) == (5, 2, 0.5)
    assert limits.user_agent == f"podsearch/{__version__} (+https://github.com/podsearch/podsearch-server)"
    assert limits.allow_private is False


# --------------------------------------------------------------------------------------------
# Success paths


def test_ok_with_validators_then_304(server: _Server, fetcher: Fetcher) -> None:
    url = server.url("/feed")
    r = fetcher.fetch(url, trusted=True)
    assert (r.status, r.content, r.not_modified, r.url) == (200, FEED, False, url)
    assert r.content_type == "application/rss+xml"
    assert r.charset == "utf-8"
    assert (r.etag, r.last_modified) == (ETAG, LAST_MODIFIED)

    again = fetcher.fetch(url, etag=r.etag, trusted=True)
    assert (again.status, again.content, again.not_modified) == (304, b"", True)
    assert again.etag == ETAG
    assert server.state.headers["/feed"]["if-none-match"] == ETAG

    by_date = fetcher.fetch(url, last_modified=LAST_MODIFIED, trusted=True)
    assert by_date.not_modified and by_date.last_modified == LAST_MODIFIED
    assert server.state.headers["/feed"]["if-modified-since"] == LAST_MODIFIED

    changed = fetcher.fetch(url, etag='"old"', trusted=True)
    assert changed.status == 200 and changed.content == FEED


def test_sends_user_agent_and_accept_encoding(server: _Server, fetcher: Fetcher) -> None:
    fetcher.fetch(server.url("/feed"), trusted=True)
    sent = server.state.headers["/feed"]
    assert sent["user-agent"] == FetchLimits().user_agent
    assert "gzip" in sent["accept-encoding"] and "deflate" in sent["accept-encoding"]


@pytest.mark.parametrize("path", ["/gzip", "/deflate", "/rawdeflate"])
def test_compressed_bodies_are_decoded(server: _Server, fetcher: Fetcher, path: str) -> None:
    r = fetcher.fetch(server.url(path), trusted=True)
    assert r.content == TEXT


def test_chunked_body(server: _Server, fetcher: Fetcher) -> None:
    assert fetcher.fetch(server.url("/chunked"), trusted=True).content == b"one two three"


def test_relative_redirect_is_followed(server: _Server, fetcher: Fetcher) -> None:
    r = fetcher.fetch(server.url("/redirect-to-feed"), trusted=True)
    assert r.url == server.url("/feed")
    assert r.content == FEED


# --------------------------------------------------------------------------------------------
# Retries and status errors


def test_500_then_200_is_retried(server: _Server, fetcher: Fetcher) -> None:
    r = fetcher.fetch(server.url("/flaky"), trusted=True)
    assert r.content == b"recovered"
    assert server.state.hits["/flaky"] == 2


def test_always_500_fails_after_retries(server: _Server, fetcher: Fetcher) -> None:
    url = server.url("/always500")
    started = time.monotonic()
    with pytest.raises(FetchError, match=f"^HTTP 500 Internal Server Error for {re.escape(url)}$"):
        fetcher.fetch(url, trusted=True)
    assert time.monotonic() - started < 3
    assert server.state.hits["/always500"] == 3  # 1 try + retries=2


def test_retry_after_is_honoured(server: _Server) -> None:
    with Fetcher(_limits(backoff=0.01)) as f:
        started = time.monotonic()
        r = f.fetch(server.url("/busy"), trusted=True)
    assert r.content == b"done"
    assert time.monotonic() - started >= 0.9
    assert server.state.hits["/busy"] == 2


def test_retry_after_parsing() -> None:
    parse = fetch_mod._retry_after
    assert parse("3") == 3.0
    assert parse("3600") == 10.0  # capped
    assert parse(formatdate(time.time() - 60, usegmt=True)) == 0.0
    assert 0 < parse(formatdate(time.time() + 5, usegmt=True)) <= 10  # type: ignore[operator]
    assert parse("soon") is None
    assert parse(None) is None


@pytest.mark.parametrize(("code", "phrase"), [(404, "Not Found"), (410, "Gone")])
def test_client_errors_fail_without_retry(server: _Server, fetcher: Fetcher, code: int, phrase: str) -> None:
    url = server.url(f"/status/{code}")
    with pytest.raises(FetchError, match=f"^HTTP {code} {phrase} for {re.escape(url)}$") as info:
        fetcher.fetch(url, trusted=True)
    assert not isinstance(info.value, BlockedAddress)
    assert server.state.hits[f"/status/{code}"] == 1


# --------------------------------------------------------------------------------------------
# Time and size bounds


def test_slow_drip_stops_at_total_timeout(server: _Server) -> None:
    with Fetcher(_limits(total_timeout=2.0, read_timeout=5.0)) as f:
        started = time.monotonic()
        with pytest.raises(FetchError, match="took longer than 2 s"):
            f.fetch(server.url("/drip"), trusted=True)
    elapsed = time.monotonic() - started
    assert 1.5 < elapsed < 3.5


def test_endless_body_stops_at_max_bytes(server: _Server) -> None:
    with Fetcher(_limits(max_bytes=MIB)) as f:
        started = time.monotonic()
        with pytest.raises(FetchError, match=f"larger than {MIB} bytes"):
            f.fetch(server.url("/endless"), trusted=True)
    assert time.monotonic() - started < 5


def test_declared_length_over_limit_fails_before_reading(server: _Server) -> None:
    with Fetcher(_limits(max_bytes=MIB)) as f, pytest.raises(FetchError, match="larger than"):
        f.fetch(server.url("/big"), trusted=True)


def test_gzip_bomb_stops_at_max_bytes_without_inflating_it_all(server: _Server) -> None:
    with Fetcher(_limits(max_bytes=MIB)) as f:
        tracemalloc.start()
        try:
            with pytest.raises(FetchError, match=f"larger than {MIB} bytes"):
                f.fetch(server.url("/bomb"), trusted=True)
            _current, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
    assert peak < 8 * MIB  # bounded: ~2-3 MiB; the bomb inflates to 64 MiB


def test_never_answering_server_hits_read_timeout(silent_url: str) -> None:
    with Fetcher(_limits(read_timeout=0.3, retries=1)) as f:
        started = time.monotonic()
        with pytest.raises(FetchError, match="timed out"):
            f.fetch(silent_url, trusted=True)
    assert time.monotonic() - started < 2.5


def test_total_timeout_bounds_waiting_for_headers(silent_url: str) -> None:
    with Fetcher(_limits(read_timeout=10.0, total_timeout=0.8)) as f:
        started = time.monotonic()
        with pytest.raises(FetchError, match=r"took longer than 0\.8 s"):
            f.fetch(silent_url, trusted=True)
    assert time.monotonic() - started < 2.5


# --------------------------------------------------------------------------------------------
# Redirect safety


def test_redirect_loop_is_bounded(server: _Server) -> None:
    with Fetcher(_limits(max_redirects=3)) as f, pytest.raises(FetchError, match="too many redirects"):
        f.fetch(server.url("/loop/0"), trusted=True)
    hops = sum(n for p, n in server.state.hits.items() if p.startswith("/loop/"))
    assert hops == 4  # the first request + 3 redirects


@pytest.mark.parametrize("trusted", [True, False])
def test_redirect_to_file_url_is_refused(server: _Server, fetcher: Fetcher, trusted: bool) -> None:
    with pytest.raises(BlockedAddress, match="scheme not allowed"):
        fetcher.fetch(server.url("/to-file"), trusted=trusted)


@pytest.mark.parametrize(
    "url",
    ["file:///etc/passwd", "ftp://127.0.0.1/feed.xml", "data:text/plain,hello", "gopher://127.0.0.1/", "javascript:x"],
)
@pytest.mark.parametrize("trusted", [True, False])
def test_non_http_schemes_are_refused(fetcher: Fetcher, url: str, trusted: bool) -> None:
    with pytest.raises(BlockedAddress, match="scheme not allowed"):
        fetcher.fetch(url, trusted=trusted)


# --------------------------------------------------------------------------------------------
# Address checks on live fetches


def test_a_trusted_url_trusts_its_own_origin_only(server: _Server) -> None:
    """The operator chose the feed's address, not where it redirects: a hop to another origin is checked (a
    configured feed, or a new-feed-url, could lead to any private address, unchecked, until 5 December 2026)."""
    with Fetcher(_limits(allow_private=False)) as strict:
        assert strict.fetch(server.url("/to-private"), trusted=True).content == b"secret"  # the same origin
        with pytest.raises(BlockedAddress, match=r"refused http://127.0.0.1:9/private: resolves to 127.0.0.1 \(loopback\)"):
            strict.fetch(server.url("/elsewhere"), trusted=True)
        # trusted_url: that URL's origin is the trusted one (a feed read where it moved), not the one asked
        with pytest.raises(BlockedAddress, match="loopback"):
            strict.fetch(server.url("/private"), trusted_url="https://feeds.example.org/show.xml")
        assert strict.fetch(server.url("/private"), trusted_url=server.url("/feed")).content == b"secret"


def test_untrusted_loopback_is_refused_unless_allow_private(server: _Server) -> None:
    url = server.url("/private")
    with Fetcher(_limits(allow_private=False)) as strict:
        with pytest.raises(BlockedAddress) as info:
            strict.fetch(url, trusted=False)
        # the operator's own feed URLs are not address-checked
        assert strict.fetch(url, trusted=True).content == b"secret"
    message = str(info.value)
    assert message == (
        f"refused {url}: resolves to 127.0.0.1 (loopback); set PODSEARCH_ALLOW_PRIVATE_HOSTS=1 to allow"
    )
    assert server.state.hits["/private"] == 1  # only the trusted fetch reached the server

    with Fetcher(_limits(allow_private=True)) as lenient:
        assert lenient.fetch(url, trusted=False).content == b"secret"


def test_connection_guard_refuses_rebinding(server: _Server, monkeypatch: pytest.MonkeyPatch) -> None:
    """Even if the pre-connect DNS check were fooled, the connected peer address is checked."""
    monkeypatch.setattr(fetch_mod, "check_address", lambda *a, **k: None)
    with Fetcher(_limits(allow_private=False)) as f, pytest.raises(BlockedAddress, match=r"127\.0\.0\.1 \(loopback\)"):
        f.fetch(server.url("/private"), trusted=False)
    assert server.state.hits["/private"] == 0


def test_every_redirect_hop_is_rechecked(server: _Server, monkeypatch: pytest.MonkeyPatch) -> None:
    """Pretend the first hop is public and /private is not; the redirect must be refused."""
    checked: list[str] = []

    def fake_check(host: str, *, url: str | None = None, port: int = 443) -> None:
        checked.append(url or host)
        if url and url.endswith("/private"):
            raise BlockedAddress(f"refused {url}: resolves to 10.0.0.1 (private)")

    monkeypatch.setattr(fetch_mod, "check_address", fake_check)
    monkeypatch.setattr(fetch_mod, "is_public_ip", lambda ip: (True, "global"))  # disable the socket guard
    with Fetcher(_limits(allow_private=False)) as f, pytest.raises(BlockedAddress, match="private"):
        f.fetch(server.url("/to-private"), trusted=False)
    assert checked == [server.url("/to-private"), server.url("/private")]
    assert server.state.hits["/to-private"] == 1
    assert server.state.hits["/private"] == 0


# --------------------------------------------------------------------------------------------
# Address checks on literals (no connection, no DNS: the autouse fixture forbids lookups)

REFUSED = {
    "10.0.0.1": "private",
    "172.16.5.4": "private",
    "192.168.1.1": "private",
    "169.254.169.254": "link-local",
    "224.0.0.1": "multicast",
    "ff02::1": "multicast",
    "fe80::1": "link-local",
    "::1": "loopback",
    "::ffff:127.0.0.1": "IPv4-mapped loopback",
    "0.0.0.0": "unspecified",
    "100.64.0.1": "shared address space",
    "127.0.0.1": "loopback",
    "fc00::1": "unique-local",
    "255.255.255.255": "reserved",
    "2002:7f00:1::1": "6to4 loopback",
    "64:ff9b::a00:1": "NAT64 private",
}
ALLOWED = ["8.8.8.8", "2606:4700::1111", "1.1.1.1", "::ffff:8.8.8.8"]


@pytest.mark.parametrize(("address", "reason"), sorted(REFUSED.items()))
def test_is_public_ip_refuses(address: str, reason: str) -> None:
    ok, why = is_public_ip(ipaddress.ip_address(address))
    assert not ok
    assert why.startswith(reason)


@pytest.mark.parametrize("address", ALLOWED)
def test_is_public_ip_allows(address: str) -> None:
    assert is_public_ip(ipaddress.ip_address(address)) == (True, "global")


@pytest.mark.parametrize(("address", "reason"), sorted(REFUSED.items()))
def test_check_address_refuses_literals(address: str, reason: str) -> None:
    with pytest.raises(BlockedAddress) as info:
        check_address(address)
    message = str(info.value)
    assert f"({reason}" in message
    assert str(ipaddress.ip_address(address)) in message
    assert "PODSEARCH_ALLOW_PRIVATE_HOSTS=1" in message


@pytest.mark.parametrize("address", [*ALLOWED, "[2606:4700::1111]"])
def test_check_address_allows_literals(address: str) -> None:
    check_address(address)


def test_check_address_names_the_url() -> None:
    with pytest.raises(BlockedAddress, match=r"^refused https://x/t\.vtt: resolves to ::1 \(loopback\)"):
        check_address("::1", url="https://x/t.vtt")


def test_check_address_checks_every_resolved_address(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fetch_mod, "_resolve", lambda host, port: ["8.8.8.8", "10.1.2.3"])
    with pytest.raises(BlockedAddress, match=r"resolves to 10\.1\.2\.3 \(private\)"):
        check_address("mixed.example")
    monkeypatch.setattr(fetch_mod, "_resolve", lambda host, port: ["8.8.8.8", "2606:4700::1111"])
    check_address("public.example")


def test_check_address_unresolvable_is_a_fetch_error(monkeypatch: pytest.MonkeyPatch) -> None:
    def fail(host: str, port: int) -> list[str]:
        raise socket.gaierror(-2, "Name or service not known")

    monkeypatch.setattr(fetch_mod, "_resolve", fail)
    with pytest.raises(FetchError, match=r"cannot resolve nowhere\.invalid") as info:
        check_address("nowhere.invalid")
    assert not isinstance(info.value, BlockedAddress)


# --------------------------------------------------------------------------------------------
# Concurrency


def test_max_per_host_bounds_concurrent_requests(server: _Server) -> None:
    with Fetcher(_limits(), max_per_host=2) as f, ThreadPoolExecutor(max_workers=6) as pool:
        results = list(pool.map(lambda i: f.fetch(server.url(f"/concurrent?i={i}"), trusted=True), range(6)))
    assert [r.content for r in results] == [b"c"] * 6
    assert server.state.hits["/concurrent"] == 6
    assert 1 <= server.state.max_active <= 2


# --------------------------------------------------------------------------------------------
# Local sources and fetch_any


def test_read_local(tmp_path: Path) -> None:
    path = tmp_path / "feed.xml"
    path.write_bytes(FEED)
    assert read_local(path, 1000) == FEED
    assert read_local(str(path), len(FEED)) == FEED
    with pytest.raises(FetchError, match="larger than 10 bytes"):
        read_local(path, 10)
    with pytest.raises(FetchError, match="not a regular file"):
        read_local(tmp_path, 1000)
    with pytest.raises(FetchError, match="cannot read"):
        read_local(tmp_path / "missing.xml", 1000)


def test_fetch_any_dispatches_paths_and_file_urls(tmp_path: Path) -> None:
    path = tmp_path / "my feed.xml"
    path.write_bytes(FEED)
    with Fetcher(_limits(allow_private=False)) as f:
        for source in (str(path), path, path.as_uri()):
            r = f.fetch_any(source)
            assert (r.status, r.content, r.not_modified) == (200, FEED, False)
            assert r.url == str(source)
            assert r.content_type in {"application/xml", "text/xml"}
        unchanged = f.fetch_any(str(path), last_modified=r.last_modified)
        assert (unchanged.status, unchanged.content, unchanged.not_modified) == (304, b"", True)
        with pytest.raises(BlockedAddress, match="scheme not allowed"):
            f.fetch_any("ftp://127.0.0.1/feed.xml")
        with pytest.raises(FetchError, match="local path"):
            f.fetch_any("file://otherhost/feed.xml")
    assert fetch_any(str(path)).content == FEED


def test_fetch_any_http_is_trusted(server: _Server) -> None:
    """Operator-configured URLs are fetched even at 127.0.0.1 with allow_private=False."""
    with Fetcher(_limits(allow_private=False)) as f:
        assert f.fetch_any(server.url("/feed")).content == FEED
    assert fetch_any(server.url("/feed"), limits=_limits(allow_private=False)).content == FEED


# --------------------------------------------------------------------------------------------
# Permanent redirects, unreachable hosts, the run's deadline


def test_permanent_redirects_say_where_the_url_moved(server: _Server, fetcher: Fetcher) -> None:
    assert fetcher.fetch(server.url("/moved-308"), trusted=True).moved_to == server.url("/feed")
    assert fetcher.fetch(server.url("/redirect-to-feed"), trusted=True).moved_to == server.url("/feed")
    # A temporary redirect first: the address the operator gave stays right.
    assert fetcher.fetch(server.url("/found-then-moved"), trusted=True).moved_to is None
    assert fetcher.fetch(server.url("/feed"), trusted=True).moved_to is None


@pytest.fixture
def refused_url() -> str:
    """A port of 127.0.0.1 where nothing listens: connections are refused."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}"


def test_a_refused_connection_is_named_refused_not_timed_out(refused_url: str) -> None:
    with Fetcher(_limits()) as f, pytest.raises(HostUnreachable) as info:
        f.fetch(refused_url + "/a", trusted=True)
    assert info.value.cause == "connection refused"
    assert "connection refused" in str(info.value) and "timed out" not in str(info.value)


def test_a_host_that_refuses_is_skipped_after_a_few_failures(refused_url: str) -> None:
    health = HostHealth(max_failures=3)
    with Fetcher(_limits(retries=2), health=health) as f:
        with pytest.raises(HostUnreachable, match="connection refused"):
            f.fetch(refused_url + "/a", trusted=True)  # three attempts: the third puts the host down
        started = time.monotonic()
        for n in range(5):
            with pytest.raises(HostSkipped, match=r"127\.0\.0\.1:\d+ is unreachable \(connection refused\)"):
                f.fetch(refused_url + f"/b{n}", trusted=True)
        assert time.monotonic() - started < 0.1  # no connection tried
    [down] = health.down()
    assert (down.cause, len(down.skipped), down.failed) == ("connection refused", 5, [refused_url + "/a"])


def test_a_host_that_never_answers_is_skipped_after_a_few_timeouts(silent_url: str) -> None:
    health = HostHealth(max_failures=3)
    with Fetcher(_limits(read_timeout=0.2, retries=2), health=health) as f:
        with pytest.raises(HostUnreachable, match="no answer") as info:
            f.fetch(silent_url, trusted=True)
        assert "timed out" in str(info.value)
        started = time.monotonic()
        with pytest.raises(HostSkipped):
            f.fetch(silent_url + "/other", trusted=True)
        assert time.monotonic() - started < 0.1
    assert [d.cause for d in health.down()] == ["no answer"]


def test_an_answer_resets_the_count_of_failures(server: _Server) -> None:
    health = HostHealth(max_failures=2)
    host = f"127.0.0.1:{urlsplit(server.url('/')).port}"
    with Fetcher(_limits(), health=health) as f:
        health.failed(HostUnreachable("x", host=host, cause="connection refused"), "u1")
        f.fetch(server.url("/feed"), trusted=True)
        health.failed(HostUnreachable("x", host=host, cause="connection refused"), "u2")
        assert not health.is_down(host)  # two failures, but not in a row
        f.fetch(server.url("/feed"), trusted=True)


def test_a_name_that_does_not_resolve_is_tried_once_per_run(monkeypatch: pytest.MonkeyPatch) -> None:
    lookups: list[str] = []

    def resolver(host: Any, *args: Any, **kwargs: Any) -> Any:
        if host == "unresolvable.test":
            lookups.append(host)
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        return _loopback_only_getaddrinfo(host, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", resolver)
    health = HostHealth()
    for allow_private in (True, False):  # the plain pool resolves in urllib3, the guarded one before connecting
        with Fetcher(_limits(retries=2, allow_private=allow_private), health=health) as f:
            with pytest.raises(FetchError, match="name not found") as info:
                f.fetch(f"http://unresolvable.test/{allow_private}/1", trusted=False)
            if allow_private:
                assert isinstance(info.value, HostUnreachable) and info.value.cause == "name not found"
            else:
                assert isinstance(info.value, HostSkipped)  # already down from the first fetcher: not looked up
            for n in range(3):
                with pytest.raises(HostSkipped, match=r"unresolvable\.test is unreachable \(name not found\)"):
                    f.fetch(f"http://unresolvable.test/{allow_private}/{n + 2}", trusted=False)
    assert lookups == ["unresolvable.test"]  # no retry, no second lookup
    assert [len(d.skipped) for d in health.down()] == [7]


def test_a_name_that_does_not_resolve_is_named_on_the_guarded_path(monkeypatch: pytest.MonkeyPatch) -> None:
    def resolver(host: Any, *args: Any, **kwargs: Any) -> Any:
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")

    monkeypatch.setattr(socket, "getaddrinfo", resolver)
    with Fetcher(_limits()) as f, pytest.raises(HostUnreachable, match="name not found") as info:
        f.fetch("http://unresolvable.test/t.vtt", trusted=False)
    assert info.value.cause == "name not found"


def test_tls_trouble_is_named(server: _Server) -> None:
    plain = server.url("/feed").replace("http://", "https://")  # TLS to a server that speaks plain HTTP
    with Fetcher(_limits()) as f, pytest.raises(HostUnreachable, match="TLS error") as info:
        f.fetch(plain, trusted=True)
    assert info.value.cause == "TLS error" and server.state.hits["/feed"] == 0


def test_the_run_deadline_bounds_a_fetch(silent_url: str) -> None:
    health = HostHealth(deadline_seconds=0.5)
    with Fetcher(_limits(read_timeout=5.0, total_timeout=10.0), health=health) as f:
        started = time.monotonic()
        with pytest.raises(DeadlinePassed, match=r"deadline \(0\.5 s\) passed while fetching"):
            f.fetch(silent_url, trusted=True)
        assert time.monotonic() - started < 1.5
        with pytest.raises(DeadlinePassed, match="passed before fetching"):
            f.fetch(silent_url + "/next", trusted=True)


def test_a_refused_connection_is_not_called_a_timeout() -> None:
    """urllib3 makes NewConnectionError a ConnectTimeoutError; a closed port answers at once and says so."""
    import socket as _socket

    with _socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again when the block ends: nothing listens there
    with Fetcher(_limits(retries=0)) as f, pytest.raises(FetchError) as caught:
        f.fetch(f"http://127.0.0.1:{port}/feed", trusted=True)
    assert "failed" in str(caught.value) and "timed out" not in str(caught.value)
    assert "refused" in str(caught.value).lower()
