"""A real webhook receiver on 127.0.0.1 (http.server in a thread) for the watch tests.

It records every POST (path, headers, body) and checks the ``X-Podsearch-Signature`` of each under the
secret its path was given, the way docs/alerts.md tells a receiver to. Each path answers as told::

    with HookServer() as hooks:
        hooks.secrets["/ok"] = "a secret of sixteen+"
        hooks.answers["/flaky"] = [500, 500, 500]   # then 204 once the list is used up
        hooks.answers["/slow"] = ["hang"]           # no answer until the server stops
        hooks.answers["/moved"] = [(307, "http://10.0.0.1/hook")]
"""

from __future__ import annotations

import hashlib
import hmac
import json
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Post:
    path: str
    headers: dict[str, str]
    body: bytes
    status: int
    signed: bool | None  # the signature checked out under the path's secret (None: no secret known)

    @property
    def json(self) -> Any:
        return json.loads(self.body)


def signature_ok(secret: str, body: bytes, header: str) -> bool:
    """What a receiver does (docs/alerts.md): recompute and compare in constant time."""
    expected = "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
    return hmac.compare_digest(expected, header or "")


class HookServer:
    def __init__(self) -> None:
        self.posts: list[Post] = []
        self.secrets: dict[str, str] = {}
        self.answers: dict[str, list[Any]] = {}  # per path, what the next requests get; then 204
        self.stopping = threading.Event()
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, name="hookserver", daemon=True)

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}{path}"

    def to(self, path: str) -> list[Post]:
        with self._lock:
            return [p for p in self.posts if p.path == path]

    def __enter__(self) -> HookServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stopping.set()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def _next(self, path: str) -> Any:
        with self._lock:
            queue = self.answers.get(path) or []
            return queue.pop(0) if queue else 204

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        hooks = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:  # noqa: N802
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                answer = hooks._next(self.path)
                secret = hooks.secrets.get(self.path)
                signed = None if secret is None else signature_ok(secret, body, self.headers.get("X-Podsearch-Signature", ""))
                status = answer[0] if isinstance(answer, tuple) else (0 if answer == "hang" else int(answer))
                with hooks._lock:
                    hooks.posts.append(Post(self.path, dict(self.headers.items()), body, status, signed))
                if answer == "hang":
                    hooks.stopping.wait(30)
                    self.close_connection = True
                    return
                self.send_response(status)
                if isinstance(answer, tuple):
                    self.send_header("Location", answer[1])
                self.send_header("Content-Length", "0")
                self.end_headers()

        return Handler
