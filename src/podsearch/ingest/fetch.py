"""Bounded, SSRF-aware HTTP(S) and local-file fetching for feeds, transcripts and chapters.

Every fetch is bounded in time (connect, per-read and a wall-clock total that also covers a
body dripped one byte at a time) and in size (``max_bytes`` caps the raw *and* the decoded body,
so a gzip bomb stops at the cap without being inflated).

URLs found inside feeds are untrusted (``trusted=False``): only http/https are allowed and,
unless ``FetchLimits.allow_private`` is set, every address the host resolves to must be global.
The check is repeated on every redirect hop, and the connection itself verifies the address it
actually connected to, so a DNS answer that changes between the check and the connect
(DNS rebinding) is refused too. A URL the operator configured (``trusted=True``, ``trusted_url``) is not
checked, nor is any hop on its origin (scheme, host and port); a redirect to another origin is the feed's
choice and is checked like a URL found inside a feed.
"""

from __future__ import annotations

import ipaddress
import logging
import math
import mimetypes
import os
import socket
import ssl
import stat
import threading
import time
import weakref
import zlib
from collections.abc import Iterable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from email.utils import formatdate, parsedate_to_datetime
from http import HTTPStatus
from pathlib import Path
from typing import Any, Self
from urllib.parse import unquote, urldefrag, urljoin, urlsplit

import urllib3
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool

from podsearch import __version__
from podsearch.errors import BlockedAddress, DeadlinePassed, FetchError, HostSkipped, HostUnreachable, StatusError

from .hosts import FATAL_CAUSES, HostHealth

log = logging.getLogger(__name__)

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

ALLOWED_SCHEMES = frozenset({"http", "https"})
REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
PERMANENT_REDIRECTS = frozenset({301, 308})
RETRY_STATUSES = frozenset({429, 500, 502, 503, 504}) | frozenset(range(505, 600))
MAX_RETRY_AFTER = 10.0
ALLOW_PRIVATE_HINT = "set PODSEARCH_ALLOW_PRIVATE_HOSTS=1 to allow"
DEFAULT_USER_AGENT = f"podsearch/{__version__} (+https://github.com/podsearch/podsearch-server)"

_CHUNK = 64 * 1024

_SHARED_ADDRESS_SPACE = ipaddress.IPv4Network("100.64.0.0/10")
_THIS_NETWORK = ipaddress.IPv4Network("0.0.0.0/8")
_RFC1918 = (
    ipaddress.IPv4Network("10.0.0.0/8"),
    ipaddress.IPv4Network("172.16.0.0/12"),
    ipaddress.IPv4Network("192.168.0.0/16"),
)
_UNIQUE_LOCAL = ipaddress.IPv6Network("fc00::/7")
_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")


@dataclass
class FetchLimits:
    """Bounds for one fetch. Times are seconds; ``total_timeout`` is wall clock for the whole
    fetch (retries, redirects and a slow-drip body included)."""

    connect_timeout: float = 10.0
    read_timeout: float = 30.0
    total_timeout: float = 60.0
    max_bytes: int = 50 * 1024 * 1024
    max_redirects: int = 5
    retries: int = 2
    backoff: float = 0.5
    user_agent: str = DEFAULT_USER_AGENT
    allow_private: bool = False


@dataclass
class FetchResult:
    """What a fetch produced. ``url`` is the final URL after redirects (the source as given for
    local files). ``status`` is the HTTP status (200 or 304 for local files)."""

    url: str
    status: int
    content: bytes
    content_type: str | None = None
    charset: str | None = None
    etag: str | None = None
    last_modified: str | None = None
    not_modified: bool = False
    moved_to: str | None = None  # where permanent redirects (301, 308) from the URL asked for led, if any


# --------------------------------------------------------------------------------------------
# Address checks


def is_public_ip(ip: IPAddress) -> tuple[bool, str]:
    """Return ``(True, "global")`` for a globally routable unicast address, else
    ``(False, reason)`` with a short reason such as ``"loopback"`` or ``"private"``."""
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.scope_id:
            ip = ipaddress.IPv6Address(str(ip).split("%", 1)[0])
        embedded: tuple[str, ipaddress.IPv4Address | None] = ("", None)
        if ip.ipv4_mapped is not None:
            embedded = ("IPv4-mapped", ip.ipv4_mapped)
        elif ip.sixtofour is not None:
            embedded = ("6to4", ip.sixtofour)
        elif ip in _NAT64:
            embedded = ("NAT64", ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF))
        label, inner = embedded
        if inner is not None:
            ok, why = is_public_ip(inner)
            if not ok:
                return False, f"{label} {why}"
            return True, "global"
    if ip.is_unspecified:
        return False, "unspecified"
    if ip.is_loopback:
        return False, "loopback"
    if ip.is_link_local:
        return False, "link-local"
    if ip.is_multicast:
        return False, "multicast"
    if isinstance(ip, ipaddress.IPv4Address):
        if ip in _SHARED_ADDRESS_SPACE:
            return False, "shared address space (carrier-grade NAT)"
        if ip in _THIS_NETWORK:
            return False, "this-network"
        if any(ip in net for net in _RFC1918):
            return False, "private"
    else:
        if ip.is_site_local:
            return False, "site-local"
        if ip in _UNIQUE_LOCAL:
            return False, "unique-local (private)"
    if ip.is_reserved:
        return False, "reserved"
    if ip.is_private:
        return False, "private or special-purpose"
    if not ip.is_global:
        return False, "not globally routable"
    return True, "global"


def _blocked_message(target: str, address: str, reason: str) -> str:
    return f"refused {target}: resolves to {address} ({reason}); {ALLOW_PRIVATE_HINT}"


def _resolve(host: str, port: int) -> list[str]:
    """All addresses ``host`` resolves to (a seam for tests)."""
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, proto=socket.IPPROTO_TCP)
    seen: dict[str, None] = {}
    for _family, _type, _proto, _canon, sockaddr in infos:
        seen.setdefault(str(sockaddr[0]).split("%", 1)[0], None)
    return list(seen)


def _parse_ip(text: str) -> IPAddress | None:
    try:
        return ipaddress.ip_address(text.strip("[]").split("%", 1)[0])
    except ValueError:
        return None


def check_address(host_or_ip: str, *, url: str | None = None, port: int = 443) -> None:
    """Raise ``BlockedAddress`` unless ``host_or_ip`` (an IP literal, checked without any lookup,
    or a host name, resolved with ``socket.getaddrinfo``) has only global addresses.

    ``url`` only makes the message name the URL instead of the host."""
    target = url or host_or_ip
    host = host_or_ip.strip().strip("[]")
    if not host:
        raise BlockedAddress(f"refused {target}: no host")
    literal = _parse_ip(host)
    if literal is not None:
        addresses: list[str] = [str(literal)]
    else:
        try:
            addresses = _resolve(host, port)
        except (OSError, UnicodeError) as e:
            raise HostUnreachable(f"cannot resolve {host} for {target}: name not found ({e})", host=host,
                                  cause="name not found") from e
        if not addresses:
            raise HostUnreachable(f"cannot resolve {host} for {target}: name not found (no addresses)", host=host,
                                  cause="name not found")
    for address in addresses:
        ip = _parse_ip(address)
        if ip is None:
            raise BlockedAddress(f"refused {target}: unparseable address {address!r}")
        ok, reason = is_public_ip(ip)
        if not ok:
            raise BlockedAddress(_blocked_message(target, address, reason))


def _origin(url: str) -> tuple[str, str, int] | None:
    """(scheme, host, port) of an http(s) URL, the port made explicit; None for anything else."""
    try:
        parts = urlsplit(url.strip())
        scheme, host = parts.scheme.lower(), (parts.hostname or "").lower()
        port = parts.port or (443 if scheme == "https" else 80)
    except ValueError:
        return None
    return (scheme, host, port) if scheme in ALLOWED_SCHEMES and host else None


def _check_scheme(url: str) -> str:
    scheme = urlsplit(url).scheme.lower()
    if scheme not in ALLOWED_SCHEMES:
        raise BlockedAddress(f"refused {url}: scheme not allowed ({scheme or 'none'!r}); only http and https")
    return scheme


# --------------------------------------------------------------------------------------------
# Connection guard: verify the peer actually connected to (defeats DNS rebinding).


class _PeerBlocked(BlockedAddress):
    def __init__(self, address: str, reason: str) -> None:
        super().__init__(f"connected to {address} ({reason})")
        self.address = address
        self.reason = reason


def _guard_socket(sock: socket.socket) -> socket.socket:
    try:
        address = str(sock.getpeername()[0])
    except OSError:
        return sock
    ip = _parse_ip(address)
    ok, reason = is_public_ip(ip) if ip is not None else (False, "unparseable")
    if not ok:
        sock.close()
        raise _PeerBlocked(address, reason)
    return sock


class _GuardedHTTPConnection(HTTPConnection):
    def _new_conn(self) -> socket.socket:
        return _guard_socket(super()._new_conn())


class _GuardedHTTPSConnection(HTTPSConnection):
    def _new_conn(self) -> socket.socket:
        return _guard_socket(super()._new_conn())


class _LendingPool(HTTPConnectionPool):
    """A pool that knows which thread uses each connection it lent (:meth:`Fetcher.abandon`)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.lent: weakref.WeakKeyDictionary[Any, threading.Thread] = weakref.WeakKeyDictionary()
        self.lent_lock = threading.Lock()

    def _get_conn(self, timeout: float | None = None) -> Any:
        conn = super()._get_conn(timeout)
        with self.lent_lock:
            self.lent[conn] = threading.current_thread()
        return conn

    def _put_conn(self, conn: Any) -> None:
        if conn is not None:
            with self.lent_lock:
                self.lent.pop(conn, None)
        super()._put_conn(conn)

    def shut(self, threads: set[threading.Thread]) -> int:
        """Shut the sockets of the connections lent to ``threads``: a read or write waiting on one ends at once (a
        shutdown, not a close, which another thread's read may not notice and which frees the number for reuse)."""
        with self.lent_lock:
            socks = [conn.sock for conn, thread in self.lent.items() if thread in threads and conn.sock is not None]
        for sock in socks:
            with suppress(OSError):
                socket.socket.shutdown(sock, socket.SHUT_RDWR)  # (TLS too: the socket under it)
        return len(socks)


class _LendingHTTPSPool(_LendingPool, HTTPSConnectionPool):
    pass


class _GuardedHTTPConnectionPool(_LendingPool):
    ConnectionCls = _GuardedHTTPConnection


class _GuardedHTTPSConnectionPool(_LendingHTTPSPool):
    ConnectionCls = _GuardedHTTPSConnection


# --------------------------------------------------------------------------------------------
# Bounded content decoding


class _BoundedDecoder:
    """gzip/deflate decoder that never produces more than the caller's remaining room (+1)."""

    def __init__(self, encoding: str, url: str) -> None:
        self.encoding = encoding
        self.url = url
        self._gzip = encoding == "gzip"
        self._first = True
        self._done = False
        self._obj = self._new()

    def _new(self, raw: bool = False) -> Any:
        if self._gzip:
            return zlib.decompressobj(16 + zlib.MAX_WBITS)
        return zlib.decompressobj(-zlib.MAX_WBITS if raw else zlib.MAX_WBITS)

    def decode(self, data: bytes, room: int) -> bytes:
        """Decode ``data``; returns at most ``room + 1`` bytes (more than ``room`` means too big)."""
        out = bytearray()
        while data and not self._done:
            try:
                out += self._obj.decompress(data, room + 1 - len(out))
            except zlib.error as e:
                if self._first and not self._gzip:
                    # Some servers send raw deflate without the zlib wrapper.
                    self._first = False
                    self._obj = self._new(raw=True)
                    continue
                raise FetchError(f"cannot decode {self.encoding} body from {self.url}: {e}") from e
            self._first = False
            if len(out) > room:
                return bytes(out)
            if self._obj.unconsumed_tail:
                data = self._obj.unconsumed_tail
                continue
            if self._obj.eof:
                rest = self._obj.unused_data
                if self._gzip and rest[:2] == b"\x1f\x8b":
                    self._obj = self._new()  # next gzip member
                    data = rest
                    continue
                self._done = True  # ignore trailing garbage, like browsers do
            break
        return bytes(out)

    def flush(self, room: int) -> bytes:
        if self._done:
            return b""
        try:
            return self._obj.flush(room + 1)
        except zlib.error as e:
            raise FetchError(f"cannot decode {self.encoding} body from {self.url}: {e}") from e


def _make_decoder(content_encoding: str | None, url: str) -> _BoundedDecoder | None:
    codings = [c.strip().lower() for c in (content_encoding or "").split(",")]
    codings = [c for c in codings if c and c != "identity"]
    if not codings:
        return None
    if len(codings) > 1:
        raise FetchError(f"unsupported Content-Encoding {content_encoding!r} from {url}")
    coding = codings[0]
    if coding in ("gzip", "x-gzip"):
        return _BoundedDecoder("gzip", url)
    if coding == "deflate":
        return _BoundedDecoder("deflate", url)
    log.warning("ignoring unknown Content-Encoding %r from %s", content_encoding, url)
    return None


# --------------------------------------------------------------------------------------------
# Helpers


def _split_content_type(value: str | None) -> tuple[str | None, str | None]:
    if not value:
        return None, None
    mime, _, params = value.partition(";")
    charset = None
    for param in params.split(";"):
        key, _, val = param.partition("=")
        if key.strip().lower() == "charset" and val.strip():
            charset = val.strip().strip("\"'").lower()
    return (mime.strip().lower() or None), charset


def _retry_after(value: str | None) -> float | None:
    """Seconds to wait per a Retry-After header (delta-seconds or HTTP-date), capped at 10 s."""
    if not value:
        return None
    value = value.strip()
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = parsedate_to_datetime(value)
        except (TypeError, ValueError, IndexError):
            return None
        if when is None:
            return None
        seconds = when.timestamp() - time.time()
    if math.isnan(seconds):
        return None
    return max(0.0, min(seconds, MAX_RETRY_AFTER))


def _socket_of(resp: Any) -> socket.socket | None:
    conn = getattr(resp, "connection", None)
    sock = getattr(conn, "sock", None)
    return sock if hasattr(sock, "settimeout") else None


class _Left(FetchError):
    """A fetch its run left (:meth:`Fetcher.abandon`): not the host's failure."""


class _TooSlow(FetchError):
    """A fetch that ran out of its own ``total_timeout`` (not the run's deadline)."""


class _Transient(Exception):
    """A failure worth retrying (connection error, timeout), unless ``unreachable`` says the host is down."""

    def __init__(self, message: str, unreachable: HostUnreachable | None = None, retry: bool = True) -> None:
        super().__init__(message)
        self.unreachable = unreachable
        self.retry = retry


def _root_cause(exc: BaseException) -> BaseException:
    while exc.__cause__ is not None and exc.__cause__ is not exc:
        exc = exc.__cause__
    return exc


def connection_failure(exc: BaseException, url: str, host: str, limits: FetchLimits) -> HostUnreachable | None:
    """The reason a request got no answer at all, named (refused, timed out, name not found, TLS), or None
    when ``exc`` is not such a failure. urllib3 makes every failed connect a "timeout" (NewConnectionError is
    a ConnectTimeoutError), so the OS error underneath is what tells refused from timed out."""
    e = urllib3.exceptions
    root = _root_cause(exc)
    if isinstance(exc, e.SSLError) or isinstance(root, ssl.SSLError):
        cause, text = "TLS error", f"TLS error fetching {url}: {root}"
    elif isinstance(exc, e.NameResolutionError) or isinstance(root, socket.gaierror):
        cause, text = "name not found", f"cannot fetch {url}: name not found ({host} does not resolve: {root})"
    elif isinstance(exc, e.NewConnectionError) and isinstance(root, ConnectionRefusedError):
        cause, text = "connection refused", f"fetching {url} failed: connection refused by {host}"
    elif isinstance(exc, e.NewConnectionError):
        cause, text = "could not connect", f"fetching {url} failed: could not connect to {host} ({root})"
    elif isinstance(exc, e.ConnectTimeoutError):
        cause = "connect timed out"
        text = f"cannot fetch {url}: connecting to {host} timed out (after {limits.connect_timeout:g} s)"
    elif isinstance(exc, e.ReadTimeoutError):
        cause, text = "no answer", f"fetching {url} timed out: no answer from {host} within {limits.read_timeout:g} s"
    elif isinstance(exc, (e.ProtocolError, ConnectionError)):
        cause, text = "connection lost", f"fetching {url} failed: the connection to {host} was lost ({root})"
    else:
        return None
    return HostUnreachable(text, host=host, cause=cause)


@dataclass
class _Exchange:
    status: int
    reason: str
    headers: Any
    body: bytes


@dataclass
class _Clock:
    """When one fetch must end (``time.monotonic()``): ``total_timeout`` after it began, plus the time it waited for a
    turn on its host (waiting behind other requests is not its download's time), and never after the run's deadline
    (``cap``, None: none)."""

    deadline: float
    cap: float | None

    def waited(self, seconds: float) -> None:
        self.deadline += seconds
        if self.cap is not None:
            self.deadline = min(self.deadline, self.cap)


# --------------------------------------------------------------------------------------------
# Fetcher


class Fetcher:
    """Thread-safe HTTP(S) fetcher. Share one per process/reindex; close it when done.

    ``max_per_host`` bounds concurrent requests to one host across all threads."""

    def __init__(self, limits: FetchLimits | None = None, *, max_per_host: int = 2,
                 health: HostHealth | None = None) -> None:
        if max_per_host < 1:
            raise ValueError("max_per_host must be at least 1")
        self.limits = limits or FetchLimits()
        self.health = health  # shared by one run's fetchers: hosts that are down, the run's deadline
        self.max_per_host = max_per_host
        pool_kw: dict[str, Any] = {"num_pools": 32, "maxsize": max_per_host, "retries": False}
        # Plain pool: trusted (operator-configured) URLs, or everything when allow_private.
        self._pool = urllib3.PoolManager(**pool_kw)
        # Guarded pool: untrusted URLs; each new connection re-checks the peer address.
        self._guarded = urllib3.PoolManager(**pool_kw)
        self._pool.pool_classes_by_scheme = {"http": _LendingPool, "https": _LendingHTTPSPool}
        self._guarded.pool_classes_by_scheme = {
            "http": _GuardedHTTPConnectionPool,
            "https": _GuardedHTTPSConnectionPool,
        }
        self._host_slots: dict[str, threading.BoundedSemaphore] = {}
        self._slots_lock = threading.Lock()
        self._left: weakref.WeakSet[threading.Thread] = weakref.WeakSet()  # (abandon)

    def close(self) -> None:
        self._pool.clear()
        self._guarded.clear()

    def abandon(self, threads: Iterable[threading.Thread]) -> int:
        """The fetches of ``threads`` are left by their run (stopped, or ended early by an error): the connections they
        use are shut at once, and they start no other request (each ends with an error, counted against no host).
        The number of connections shut. Until 6 December 2026 a fetch left so kept its connection to a slow host
        until it answered or ``fetch_timeout`` passed (30 s by default), in a server that had stopped its run."""
        threads = set(threads)
        if not threads:
            return 0
        self._left.update(threads)
        shut = 0
        for manager in (self._pool, self._guarded):
            for key in manager.pools.keys():
                pool = manager.pools.get(key)
                if isinstance(pool, _LendingPool):
                    shut += pool.shut(threads)
        return shut

    def _check_left(self, url: str) -> None:
        if threading.current_thread() in self._left:
            raise _Left(f"fetching {url}: left by its run")

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- public API ----------------------------------------------------------------------------

    def fetch(
        self,
        url: str,
        *,
        etag: str | None = None,
        last_modified: str | None = None,
        trusted: bool = False,
        trusted_url: str | None = None,
    ) -> FetchResult:
        """GET ``url`` and return its body, following redirects by hand.

        ``trusted=True`` for feed URLs the operator configured: no address check on ``url``'s origin (scheme, host,
        port), a redirect to another origin is checked; ``trusted_url``: the origin of that URL is the trusted one
        (a feed read where it moved: the origin the operator configured); ``trusted=False`` for URLs found inside
        feeds. Raises ``BlockedAddress`` for a refused scheme or address, ``FetchError`` for anything else."""
        headers = {
            "User-Agent": self.limits.user_agent,
            "Accept": "*/*",
            "Accept-Encoding": "gzip, deflate",
        }
        if etag:
            headers["If-None-Match"] = etag
        if last_modified:
            headers["If-Modified-Since"] = last_modified
        trust = trusted_url or (url if trusted else None)
        current, ex, moved_to = self._send("GET", url, headers, None, trust, REDIRECT_STATUSES)
        content_type, charset = _split_content_type(ex.headers.get("Content-Type"))
        new_etag = ex.headers.get("ETag")
        new_lm = ex.headers.get("Last-Modified")
        if ex.status == 304:
            return FetchResult(
                url=current,
                status=304,
                content=b"",
                content_type=content_type,
                charset=charset,
                etag=new_etag or etag,
                last_modified=new_lm or last_modified,
                not_modified=True,
                moved_to=moved_to,
            )
        if 200 <= ex.status < 300:
            return FetchResult(
                url=current,
                status=ex.status,
                content=ex.body,
                content_type=content_type,
                charset=charset,
                etag=new_etag,
                last_modified=new_lm,
                moved_to=moved_to,
            )
        status_text = f"{ex.status} {ex.reason}".strip()
        raise StatusError(f"HTTP {status_text} for {current}", ex.status, current)

    def post(self, url: str, body: bytes, headers: dict[str, str] | None = None, *, trusted: bool = False) -> int:
        """POST ``body`` to ``url`` (a webhook) and return the 2xx status it answered; the answer's body is not read.

        Each hop is checked like a GET's. Only 307 and 308 redirects are followed (they keep the method and the
        body); any other answer, a 301/302/303 included, raises ``FetchError``. 5xx, 429 and connection failures
        are retried within ``total_timeout``, so a receiver may see a body twice: webhooks carry a delivery id."""
        sent = {"User-Agent": self.limits.user_agent, "Accept": "*/*", **(headers or {})}
        current, ex, _ = self._send("POST", url, sent, body, url if trusted else None, frozenset({307, 308}))
        if 200 <= ex.status < 300:
            return ex.status
        if ex.status in REDIRECT_STATUSES:
            raise FetchError(f"HTTP {ex.status} redirect to {ex.headers.get('Location', '?')} for {current}; "
                             "only 307 and 308 redirects keep a POST, so none other is followed")
        raise FetchError(f"HTTP {f'{ex.status} {ex.reason}'.strip()} for {current}")

    def _send(self, method: str, url: str, headers: dict[str, str], body: bytes | None, trusted: str | None,
              follow: frozenset[int]) -> tuple[str, _Exchange, str | None]:
        """Send the request, following the ``follow`` redirects by hand (every hop checked; the address check
        skipped on the origin of ``trusted``): the final URL, its answer, and where permanent redirects (301, 308)
        led when every redirect followed was permanent.
        A host found unreachable (or skipped as such) is told to the run's host health."""
        try:
            return self._send_hops(method, url, headers, body, trusted, follow)
        except (HostUnreachable, HostSkipped) as e:
            if self.health is not None and e.host:
                self.health.lost(e.host, url, skipped=isinstance(e, HostSkipped))
            raise

    def _send_hops(self, method: str, url: str, headers: dict[str, str], body: bytes | None, trusted: str | None,
                   follow: frozenset[int]) -> tuple[str, _Exchange, str | None]:
        limits = self.limits
        started = time.monotonic()
        cap: float | None = None
        if self.health is not None:
            self.health.check_deadline(f"fetching {url}")
            left = self.health.time_left()
            cap = None if left is None else started + left
        clock = _Clock(started + limits.total_timeout if cap is None else min(started + limits.total_timeout, cap), cap)
        trusted_origin = _origin(trusted) if trusted else None
        current = urldefrag(url.strip())[0]
        moved_to: str | None = None
        permanent = True  # every redirect so far was permanent
        for hop in range(limits.max_redirects + 1):
            # Until 5 December 2026 every hop of a trusted fetch went unchecked: a configured feed's redirect (and a
            # new-feed-url, fetched as trusted) could lead to a private or loopback address.
            check_addresses = not limits.allow_private and (trusted_origin is None or _origin(current) != trusted_origin)
            pool = self._guarded if check_addresses else self._pool
            host = self._check_url(current, check_addresses)
            ex = self._exchange(current, host, headers, clock, pool, method, body)
            if ex.status not in follow:
                return current, ex, moved_to
            location = ex.headers.get("Location")
            if not location:
                raise FetchError(f"HTTP {ex.status} redirect without Location for {current}")
            target = urldefrag(urljoin(current, location.strip()))[0]
            log.debug("redirect %d of %s: %s -> %s", hop + 1, url, current, target)
            permanent = permanent and ex.status in PERMANENT_REDIRECTS
            moved_to = target if permanent else moved_to
            current = target
        raise FetchError(f"too many redirects (more than {limits.max_redirects}) fetching {url}")

    def fetch_any(
        self,
        source: str | os.PathLike[str],
        *,
        etag: str | None = None,
        last_modified: str | None = None,
        trusted_url: str | None = None,
    ) -> FetchResult:
        """Fetch an operator-configured feed source: an http(s) URL (trusted: its origin, or ``trusted_url``'s when
        given, see :meth:`fetch`), a ``file://`` URL or a local path. Other URL schemes are refused."""
        if isinstance(source, os.PathLike):
            return _local_result(str(source), Path(source), self.limits.max_bytes, last_modified)
        text = source.strip()
        scheme = urlsplit(text).scheme.lower()
        if scheme in ALLOWED_SCHEMES:
            return self.fetch(text, etag=etag, last_modified=last_modified, trusted=True, trusted_url=trusted_url)
        if scheme == "file":
            return _local_result(text, _file_url_to_path(text), self.limits.max_bytes, last_modified)
        if "://" in text:
            raise BlockedAddress(
                f"refused {text}: scheme not allowed ({scheme!r}); use http, https, file or a path"
            )
        return _local_result(text, Path(text), self.limits.max_bytes, last_modified)

    # -- internals -----------------------------------------------------------------------------

    def _check_url(self, url: str, check_addresses: bool) -> str:
        """The URL's host (with its port when the URL names one), once it may be asked."""
        scheme = _check_scheme(url)
        try:
            parts = urlsplit(url)
            host = parts.hostname or ""
            port = parts.port or (443 if scheme == "https" else 80)
            authority = host if parts.port is None else f"{host}:{parts.port}"
        except ValueError as e:
            raise FetchError(f"invalid URL {url}: {e}") from e
        if not host:
            raise FetchError(f"invalid URL {url}: no host")
        if self.health is not None:
            self.health.before(authority, url)
        if check_addresses:
            try:
                check_address(host, url=url, port=port)
            except HostUnreachable as e:
                e.host = authority
                self._host_failed(e, url)
                raise
        return authority

    def _host_failed(self, exc: HostUnreachable, url: str) -> bool:
        """Tell the run's host health; True when the host must not be tried again."""
        if self.health is not None:
            return self.health.failed(exc, url)
        return exc.cause in FATAL_CAUSES

    @contextmanager
    def _host_slot(self, host: str, clock: _Clock, url: str) -> Iterator[None]:
        """A turn on ``host`` (at most ``max_per_host`` requests at once). The wait does not count against the fetch's
        ``total_timeout`` (each request ahead ends within its own), only against the run's deadline. Until 5 December
        2026 it did, and links queued behind requests a silent host never answered ran out of time in the queue."""
        with self._slots_lock:
            slot = self._host_slots.get(host)
            if slot is None:
                slot = self._host_slots[host] = threading.BoundedSemaphore(self.max_per_host)
        started = time.monotonic()
        if not slot.acquire(timeout=None if clock.cap is None else max(0.0, clock.cap - started)):
            raise self._too_slow(url)  # the run's deadline passed
        clock.waited(time.monotonic() - started)
        try:
            yield
        finally:
            slot.release()

    def _too_slow(self, url: str) -> FetchError:
        left = self.health.time_left() if self.health is not None else None
        if left is not None and left <= 0.01:
            return DeadlinePassed(f"the reindex deadline ({self.health.deadline_seconds:g} s) passed "  # type: ignore[union-attr]
                                  f"while fetching {url}")
        return _TooSlow(f"fetching {url} took longer than {self.limits.total_timeout:g} s")

    def _too_large(self, url: str) -> FetchError:
        return FetchError(f"response from {url} is larger than {self.limits.max_bytes} bytes")

    def _exchange(
        self, url: str, host: str, headers: dict[str, str], clock: _Clock, pool: Any, method: str = "GET",
        body: bytes | None = None,
    ) -> _Exchange:
        """One hop, with retries on 5xx/429, connection errors and timeouts."""
        limits = self.limits
        attempts = max(0, limits.retries) + 1
        for attempt in range(attempts):
            last = attempt == attempts - 1
            ex: _Exchange | None = None
            unreachable: HostUnreachable | None = None
            try:
                with self._host_slot(host, clock, url):
                    if self.health is not None:
                        self.health.before(host, url)  # found down by another request meanwhile?
                    ex = self._attempt(url, host, headers, clock.deadline, pool, method, body)
            except _Transient as e:
                unreachable = e.unreachable
                if unreachable is not None and (self._host_failed(unreachable, url) or not e.retry or last):
                    raise unreachable from e.__cause__
                if last:
                    raise FetchError(str(e)) from e.__cause__
                why = str(e)
                delay = limits.backoff * (2**attempt)
            else:
                if self.health is not None:
                    self.health.answered(host)
                if last or ex.status not in RETRY_STATUSES:
                    return ex
                why = f"HTTP {ex.status}"
                retry_after = _retry_after(ex.headers.get("Retry-After"))
                delay = retry_after if retry_after is not None else limits.backoff * (2**attempt)
            if time.monotonic() + delay >= clock.deadline:
                log.info("not retrying %s (%s): would pass the total timeout", url, why)
                if ex is not None:
                    return ex
                raise unreachable or FetchError(why)
            log.info("retrying %s in %.2f s (%s), attempt %d of %d", url, delay, why, attempt + 2, attempts)
            time.sleep(delay)
        raise AssertionError("unreachable")  # pragma: no cover

    def _attempt(self, url: str, host: str, headers: dict[str, str], deadline: float, pool: Any,
                 method: str = "GET", body: bytes | None = None) -> _Exchange:
        limits = self.limits
        self._check_left(url)
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise self._too_slow(url)
        timeout = urllib3.Timeout(
            connect=min(limits.connect_timeout, remaining),
            read=min(limits.read_timeout, remaining),
        )
        try:
            resp = pool.urlopen(
                method,
                url,
                body=body,
                headers=headers,
                redirect=False,
                retries=False,
                preload_content=False,
                decode_content=False,
                timeout=timeout,
            )
        except _PeerBlocked as e:
            raise BlockedAddress(_blocked_message(url, e.address, e.reason)) from e
        except urllib3.exceptions.LocationValueError as e:
            raise FetchError(f"invalid URL {url}: {e}") from e
        except (urllib3.exceptions.HTTPError, OSError) as e:
            self._check_left(url)  # (its connection shut by abandon: not the host's failure)
            unreachable = connection_failure(e, url, host, limits)
            if time.monotonic() >= deadline - 0.01:
                slow = self._too_slow(url)
                if unreachable is None or isinstance(slow, DeadlinePassed):
                    raise slow from e
                # Out of time, and the host gave no answer: a failure of the host, said as both.
                unreachable = HostUnreachable(f"{slow}: {unreachable.cause} from {host}", host=host,
                                              cause=unreachable.cause)
                raise _Transient(str(unreachable), unreachable, retry=False) from e
            if unreachable is None:
                raise _Transient(f"fetching {url} {_how_it_failed(e)}: {e}") from e
            # Retrying cannot bring back a name or fix a certificate within one run.
            retry = unreachable.cause not in FATAL_CAUSES | {"TLS error"}
            raise _Transient(str(unreachable), unreachable, retry) from e

        complete = False
        try:
            status = int(resp.status)
            reason = resp.reason or _reason_phrase(status)
            content = b""
            if 200 <= status < 300 and method == "GET":
                try:
                    content = self._read_body(resp, url, deadline)
                    self._check_left(url)  # (a body cut short by abandon)
                except _TooSlow as slow:
                    # The host answered, then sent its body too slowly to end in time (a byte now and then): a
                    # failure of the host as one that never answers is, so that three in a row put it down. Until
                    # 5 December 2026 the answer reset the count, and every link of a dripping host cost the whole
                    # fetch_timeout, at every run: 1,000 such transcripts held a reindex for hours.
                    unreachable = HostUnreachable(f"{slow}: the body came too slowly from {host}", host=host,
                                                  cause="too slow")
                    raise _Transient(str(unreachable), unreachable, retry=False) from slow
                complete = True
            elif status == 304:
                complete = True
            return _Exchange(status, reason, resp.headers, content)
        finally:
            if not complete:
                resp.close()  # unread or half-read body: do not reuse this connection
            resp.release_conn()

    def _read_body(self, resp: Any, url: str, deadline: float) -> bytes:
        limits = self.limits
        max_bytes = limits.max_bytes
        decoder = _make_decoder(resp.headers.get("Content-Encoding"), url)
        raw_cap = max_bytes if decoder is None else max_bytes + max_bytes // 100 + 1024
        length = resp.headers.get("Content-Length")
        if length and length.strip().isdigit() and int(length) > raw_cap:
            raise self._too_large(url)
        sock = _socket_of(resp)
        out = bytearray()
        raw_total = 0
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise self._too_slow(url)
            if sock is not None:
                with suppress(OSError):
                    sock.settimeout(min(limits.read_timeout, remaining))
            try:
                chunk = resp.read1(_CHUNK, decode_content=False)
            except (urllib3.exceptions.HTTPError, OSError) as e:
                self._check_left(url)
                if time.monotonic() >= deadline - 0.01:
                    raise self._too_slow(url) from e
                raise _Transient(f"reading {url} {_how_it_failed(e)}: {e}") from e
            if not chunk:
                break
            raw_total += len(chunk)
            if raw_total > raw_cap:
                raise self._too_large(url)
            if decoder is not None:
                chunk = decoder.decode(chunk, max_bytes - len(out))
            out += chunk
            if len(out) > max_bytes:
                raise self._too_large(url)
        if decoder is not None:
            out += decoder.flush(max_bytes - len(out))
            if len(out) > max_bytes:
                raise self._too_large(url)
        return bytes(out)


def _how_it_failed(exc: BaseException) -> str:
    """"timed out" or "failed" (urllib3 makes a refused connection a kind of connect timeout)."""
    timeout = isinstance(exc, urllib3.exceptions.TimeoutError)
    return "timed out" if timeout and not isinstance(exc, urllib3.exceptions.NewConnectionError) else "failed"


def _reason_phrase(status: int) -> str:
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return ""


# --------------------------------------------------------------------------------------------
# Local files


def read_local(path: str | os.PathLike[str], max_bytes: int) -> bytes:
    """Read a regular local file of at most ``max_bytes`` bytes (operator-configured feeds)."""
    p = Path(path).expanduser()
    try:
        st = p.stat()
    except OSError as e:
        raise FetchError(f"cannot read {p}: {e.strerror or e}") from e
    if not stat.S_ISREG(st.st_mode):
        raise FetchError(f"cannot read {p}: not a regular file")
    if st.st_size > max_bytes:
        raise FetchError(f"{p} is larger than {max_bytes} bytes")
    try:
        with p.open("rb") as fh:
            data = fh.read(max_bytes + 1)
    except OSError as e:
        raise FetchError(f"cannot read {p}: {e.strerror or e}") from e
    if len(data) > max_bytes:
        raise FetchError(f"{p} is larger than {max_bytes} bytes")
    return data


def _file_url_to_path(url: str) -> Path:
    parts = urlsplit(url)
    if parts.netloc not in ("", "localhost"):
        raise FetchError(f"cannot read {url}: file URLs must name a local path")
    return Path(unquote(parts.path))


def _local_result(source: str, path: Path, max_bytes: int, last_modified: str | None) -> FetchResult:
    p = path.expanduser()
    try:
        mtime: str | None = formatdate(p.stat().st_mtime, usegmt=True)
    except OSError:
        mtime = None  # read_local reports the error
    content_type = mimetypes.guess_type(p.name)[0]
    if last_modified and mtime and last_modified == mtime and p.is_file():
        return FetchResult(
            url=source,
            status=304,
            content=b"",
            content_type=content_type,
            last_modified=mtime,
            not_modified=True,
        )
    content = read_local(p, max_bytes)
    return FetchResult(
        url=source, status=200, content=content, content_type=content_type, last_modified=mtime
    )


def fetch_any(
    source: str | os.PathLike[str],
    fetcher: Fetcher | None = None,
    *,
    etag: str | None = None,
    last_modified: str | None = None,
    limits: FetchLimits | None = None,
) -> FetchResult:
    """Fetch a feed source the operator configured: http(s) URL (trusted), ``file://`` URL or path.

    Uses ``fetcher`` when given, else a short-lived ``Fetcher(limits)``."""
    if fetcher is not None:
        return fetcher.fetch_any(source, etag=etag, last_modified=last_modified)
    with Fetcher(limits) as own:
        return own.fetch_any(source, etag=etag, last_modified=last_modified)
