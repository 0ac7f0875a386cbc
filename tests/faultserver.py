"""A misbehaving HTTP server on 127.0.0.1: :class:`feedserver.FeedServer` plus faults per path.

Everything FeedServer does still works (files under a root, overrides, 404s, conditional requests); a path
listed in ``faults`` answers with that fault instead::

    with serve_faults(root) as srv:
        srv.faults["/bad/500.xml"] = Status(500)
        srv.faults["/bad/drip.xml"] = Drip(b"<rss>...")

The faults are the ways the internet misbehaves: an error status, a body dripped one byte per second,
no answer at all, an endless body, a redirect loop, a gzip bomb, a body shorter than its Content-Length,
and a slow but correct answer (to hold a reindex at a known place).
"""

from __future__ import annotations

import functools
import sys
import threading
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urlsplit

from feedserver import FeedServer, Request

MIB = 1024 * 1024


class Fault:
    """How one path misbehaves. ``answer`` writes the response; ``stop`` is set when the server stops."""

    status = 200

    def answer(self, handler: BaseHTTPRequestHandler, stop: threading.Event) -> None:
        raise NotImplementedError


def _head(handler: BaseHTTPRequestHandler, status: int, headers: dict[str, str]) -> None:
    handler.send_response(status)
    for key, value in headers.items():
        handler.send_header(key, value)
    handler.end_headers()
    handler.wfile.flush()


@dataclass
class Status(Fault):
    """An error (or any) status with a short body."""

    status: int = 500
    body: bytes = b"something went wrong"

    def answer(self, handler: BaseHTTPRequestHandler, stop: threading.Event) -> None:
        _head(handler, self.status, {"Content-Type": "text/plain", "Content-Length": str(len(self.body))})
        handler.wfile.write(self.body)


@dataclass
class Drip(Fault):
    """A correct body sent one byte per ``every`` seconds."""

    body: bytes = b"x" * 100
    every: float = 1.0

    def answer(self, handler: BaseHTTPRequestHandler, stop: threading.Event) -> None:
        _head(handler, 200, {"Content-Type": "application/rss+xml", "Content-Length": str(len(self.body))})
        for i in range(len(self.body)):
            handler.wfile.write(self.body[i:i + 1])
            handler.wfile.flush()
            if stop.wait(self.every):
                return


@dataclass
class Silent(Fault):
    """Accept the request and never answer (until the server stops)."""

    status: int = 0

    def answer(self, handler: BaseHTTPRequestHandler, stop: threading.Event) -> None:
        stop.wait()


@dataclass
class Endless(Fault):
    """A chunked body that never ends (up to ``limit`` bytes, so a broken client cannot fill the disk)."""

    limit: int = 512 * MIB

    def answer(self, handler: BaseHTTPRequestHandler, stop: threading.Event) -> None:
        _head(handler, 200, {"Content-Type": "application/rss+xml", "Transfer-Encoding": "chunked"})
        block = b"<item><title>again</title></item>" * 2000
        sent = 0
        while not stop.is_set() and sent < self.limit:
            handler.wfile.write(b"%x\r\n%s\r\n" % (len(block), block))
            sent += len(block)


@dataclass
class RedirectLoop(Fault):
    """302 to ``target`` (another path in a loop, or itself)."""

    target: str = ""
    status: int = 302

    def answer(self, handler: BaseHTTPRequestHandler, stop: threading.Event) -> None:
        target = self.target or urlsplit(handler.path).path
        _head(handler, self.status, {"Location": target, "Content-Length": "0"})


@functools.cache
def gzip_bomb(size: int = 64 * MIB) -> bytes:
    """``size`` bytes of zeros gzip-compressed (64 MiB -> about 64 KiB)."""
    co = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    zeros = bytes(MIB)
    return b"".join(co.compress(zeros) for _ in range(size // MIB)) + co.flush()


@dataclass
class GzipBomb(Fault):
    """A small gzip body that inflates to ``size`` bytes."""

    size: int = 64 * MIB
    content_type: str = "application/rss+xml"

    def answer(self, handler: BaseHTTPRequestHandler, stop: threading.Event) -> None:
        body = gzip_bomb(self.size)
        _head(handler, 200, {"Content-Type": self.content_type, "Content-Encoding": "gzip",
                             "Content-Length": str(len(body))})
        handler.wfile.write(body)


@dataclass
class Truncated(Fault):
    """The first ``keep`` bytes of ``body`` under a Content-Length of the whole body, then the connection closes."""

    body: bytes = b""
    keep: int = 0
    content_type: str = "text/vtt"

    def answer(self, handler: BaseHTTPRequestHandler, stop: threading.Event) -> None:
        _head(handler, 200, {"Content-Type": self.content_type, "Content-Length": str(len(self.body))})
        handler.wfile.write(self.body[:self.keep])
        handler.wfile.flush()
        handler.close_connection = True


@dataclass
class Slow(Fault):
    """Wait ``seconds``, then serve ``body`` correctly."""

    body: bytes = b""
    seconds: float = 1.0
    content_type: str = "application/rss+xml"

    def answer(self, handler: BaseHTTPRequestHandler, stop: threading.Event) -> None:
        if stop.wait(self.seconds):
            return
        _head(handler, 200, {"Content-Type": self.content_type, "Content-Length": str(len(self.body))})
        handler.wfile.write(self.body)


class FaultServer(FeedServer):
    """FeedServer whose paths listed in ``faults`` misbehave (and that takes clients hanging up calmly)."""

    def __init__(self, root: Path) -> None:
        self.faults: dict[str, Fault] = {}
        self.stopping = threading.Event()
        super().__init__(root)
        self._server.handle_error = self._handle_error  # type: ignore[method-assign]

    def _handle_error(self, request: object, client_address: object) -> None:
        """A client that hangs up (or is killed) mid-request is expected here; anything else is printed."""
        if not isinstance(sys.exc_info()[1], ConnectionError):
            ThreadingHTTPServer.handle_error(self._server, request, client_address)

    def stop(self) -> None:
        self.stopping.set()  # releases Silent, Drip and Endless handlers first
        super().stop()

    def hits(self, path: str) -> int:
        return sum(1 for r in self.log() if r.path == path)

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        base = super()._handler()
        server = self

        class FaultHandler(base):  # type: ignore[valid-type,misc]
            def do_GET(self) -> None:  # noqa: N802 - http.server's naming
                path = urlsplit(self.path).path
                fault = server.faults.get(path)
                if fault is None:
                    super().do_GET()
                    return
                server._record(Request("GET", path, fault.status, self.headers.get("If-None-Match"),
                                       self.headers.get("If-Modified-Since")))
                try:
                    fault.answer(self, server.stopping)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up: what a bounded client should do

        return FaultHandler


@contextmanager
def serve_faults(root: Path) -> Iterator[FaultServer]:
    """``with serve_faults(root) as srv: srv.faults['/x.xml'] = Status(410)``."""
    server = FaultServer(root).start()
    try:
        yield server
    finally:
        server.stop()
