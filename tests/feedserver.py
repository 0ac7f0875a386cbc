"""A real HTTP server on 127.0.0.1 that serves a directory, for ingest tests.

It answers GET and HEAD with ETag and Last-Modified, honours If-None-Match and If-Modified-Since with
304, and logs every request (path, status and the conditional headers sent) so that tests can assert
what a reindex asked for. Files can be overridden or removed per path (``files``/``missing``) to
simulate a feed that changed or left, without touching the shared corpus.
"""

from __future__ import annotations

import hashlib
import mimetypes
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from email.utils import formatdate, parsedate_to_datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import quote, unquote, urlsplit

TYPES = {".xml": "application/rss+xml", ".rss": "application/rss+xml", ".vtt": "text/vtt", ".srt": "application/srt",
         ".json": "application/json", ".html": "text/html", ".txt": "text/plain"}


@dataclass
class Request:
    method: str
    path: str
    status: int
    if_none_match: str | None
    if_modified_since: str | None

    @property
    def conditional(self) -> bool:
        return bool(self.if_none_match or self.if_modified_since)


class FeedServer:
    """Serve ``root`` on a free port of 127.0.0.1 in a background thread."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root).resolve()
        self.requests: list[Request] = []
        self.files: dict[str, bytes] = {}  # path ("/feeds/a.xml") -> body served instead of the file
        self.missing: set[str] = set()  # paths answered with 404
        self.content_types: dict[str, str] = {}  # path -> Content-Type served instead of the guess
        self.conditional = True  # False: never send ETag/Last-Modified nor answer 304
        self.etags = True  # False: Last-Modified alone (a server that keeps no ETags)
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, name="feedserver", daemon=True)

    @property
    def port(self) -> int:
        return self._server.server_address[1]

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def url(self, relative: str | Path) -> str:
        """The URL of a file under root ('site/feeds/go.xml' or an absolute path under root)."""
        path = Path(relative)
        if path.is_absolute():
            path = path.resolve().relative_to(self.root)
        return self.base + "/" + quote(path.as_posix())

    def start(self) -> FeedServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def clear_log(self) -> None:
        with self._lock:
            self.requests.clear()

    def log(self) -> list[Request]:
        with self._lock:
            return list(self.requests)

    def _record(self, request: Request) -> None:
        with self._lock:
            self.requests.append(request)

    def _body(self, path: str) -> tuple[bytes, float] | None:
        if path in self.missing:
            return None
        if path in self.files:
            return self.files[path], 0.0
        target = (self.root / unquote(path).lstrip("/")).resolve()
        if not target.is_relative_to(self.root) or not target.is_file():
            return None
        return target.read_bytes(), target.stat().st_mtime

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - quiet
                pass

            def _answer(self, send_body: bool) -> None:
                path = urlsplit(self.path).path
                inm, ims = self.headers.get("If-None-Match"), self.headers.get("If-Modified-Since")
                found = server._body(path)
                if found is None:
                    status, headers, body = 404, {"Content-Type": "text/plain"}, b"not found"
                else:
                    body, mtime = found
                    etag = '"' + hashlib.sha1(body).hexdigest()[:20] + '"'
                    last_modified = formatdate(int(mtime) or 1_000_000_000, usegmt=True)
                    suffix = Path(path).suffix.lower()
                    ctype = server.content_types.get(path) or TYPES.get(suffix) or mimetypes.guess_type(path)[0]
                    headers = {"Content-Type": ctype or "application/octet-stream"}
                    status = 200
                    if server.conditional:
                        headers |= {"ETag": etag, "Last-Modified": last_modified} if server.etags else {
                            "Last-Modified": last_modified}
                        if inm is not None and server.etags:
                            fresh = etag in [t.strip() for t in inm.split(",")] or inm.strip() == "*"
                        elif ims is not None:
                            try:
                                fresh = int(mtime or 1_000_000_000) <= parsedate_to_datetime(ims).timestamp()
                            except (TypeError, ValueError):
                                fresh = False
                        else:
                            fresh = False
                        if fresh:
                            status, body = 304, b""
                server._record(Request(self.command, path, status, inm, ims))
                self.send_response(status)
                for key, value in headers.items():
                    self.send_header(key, value)
                if status != 304:
                    self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                if send_body and status != 304:
                    self.wfile.write(body)

            def do_GET(self) -> None:  # noqa: N802 - http.server's naming
                self._answer(True)

            def do_HEAD(self) -> None:  # noqa: N802
                self._answer(False)

        return Handler


@contextmanager
def serve(root: Path) -> Iterator[FeedServer]:
    """``with serve(corpus) as server: server.url('site/feeds/gotime.xml')``."""
    server = FeedServer(root).start()
    try:
        yield server
    finally:
        server.stop()
