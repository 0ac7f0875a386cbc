"""A real ``podsearch serve`` (waitress on 127.0.0.1) for the benchmark, and a keep-alive HTTP client."""

from __future__ import annotations

import http.client
import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    def __init__(self, data: Path, log_path: Path, env: dict[str, str] | None = None) -> None:
        self.data = data
        self.extra_env = env or {}
        self.log_path = log_path
        self.port = free_port()
        self.proc: subprocess.Popen[bytes] | None = None
        self.conn: http.client.HTTPConnection | None = None

    def __enter__(self) -> Server:
        env = {**{k: v for k, v in os.environ.items() if not k.startswith("PODSEARCH_")}, **self.extra_env}
        with open(self.log_path, "wb") as log:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "podsearch", "--data", str(self.data), "serve", "--host", "127.0.0.1",
                 "--port", str(self.port)], stdout=log, stderr=subprocess.STDOUT, env=env)
        deadline = time.monotonic() + 900  # a loaded machine loads the model slowly
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"podsearch serve exited with {self.proc.returncode}; see {self.log_path}")
            try:
                if self.get("/readyz")[0] == 200:
                    return self
            except OSError:
                self.conn = None
            time.sleep(0.2)
        self.__exit__()
        raise RuntimeError(f"podsearch serve did not become ready; see {self.log_path}")

    def __exit__(self, *exc: object) -> None:
        if self.conn is not None:
            self.conn.close()
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    def get(self, path: str, params: dict[str, Any] | None = None) -> tuple[int, Any]:
        """One GET on a kept-alive connection: (status, decoded JSON)."""
        if params:
            path += "?" + urlencode(params)
        for attempt in (1, 2):
            reused = self.conn is not None
            if self.conn is None:
                self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
            try:
                self.conn.request("GET", path)
                response = self.conn.getresponse()
                body = response.read()
                break
            except (http.client.HTTPException, OSError):
                self.conn.close()
                self.conn = None
                if not reused or attempt == 2:  # a kept-alive connection the server closed (client_timeout): once more
                    raise
        return response.status, json.loads(body) if body else None


def similar_path(episode_id: str) -> str:
    return "/api/v1/similar/" + quote(episode_id, safe="")
