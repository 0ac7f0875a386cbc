"""Real OpenSearch nodes for the tests and the bench, started from the launcher in ``opensearch/``.

The launcher (``make opensearch-build``, or built here on first use when Maven is on PATH) runs one node per
JVM from OpenSearch's own Maven Central jars. Each node gets free loopback ports, a home folder of its own,
a small heap, its own process group (stopped as a group, so no JVM outlives the test) and a pipe on its
standard input: when the Python process dies, the pipe closes and the launcher exits by itself.

    with Cluster.start(tmp_path, nodes=2) as cluster:
        cluster.url          # http://127.0.0.1:<port> of the first node
        cluster.nodes[1].stop()
"""

from __future__ import annotations

import atexit
import json
import os
import shutil
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
PROJECT = ROOT / "opensearch"
LAUNCHER = PROJECT / "target" / "opensearch-launcher.jar"
HEAP = os.environ.get("OPENSEARCH_TEST_HEAP", "768m")

_running: set[Node] = set()


class LauncherMissing(RuntimeError):
    """The launcher jar is not built and cannot be built here (no Java or no Maven)."""


def _sources_newer_than_jar() -> bool:
    if not LAUNCHER.exists():
        return True
    built = LAUNCHER.stat().st_mtime
    sources = [PROJECT / "pom.xml", *(p for p in (PROJECT / "src").rglob("*") if p.is_file())]
    return any(p.stat().st_mtime > built for p in sources)


def ensure_launcher() -> Path:
    """The launcher jar, built with Maven when it is missing or older than its sources."""
    if not _sources_newer_than_jar():
        return LAUNCHER
    if shutil.which("java") is None or shutil.which("mvn") is None:
        raise LauncherMissing(f"{LAUNCHER} is not built and java/mvn are not on PATH (run 'make opensearch-build')")
    result = subprocess.run(["mvn", "-q", "-B", "-f", str(PROJECT / "pom.xml"), "package"],
                            capture_output=True, text=True, timeout=900)
    if result.returncode != 0 or not LAUNCHER.exists():
        raise LauncherMissing(f"building the OpenSearch launcher failed:\n{result.stdout[-4000:]}{result.stderr[-4000:]}")
    LAUNCHER.touch()
    return LAUNCHER


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def request(url: str, method: str = "GET", body: Any = None, timeout: float = 30,
            body_text: str | None = None) -> tuple[int, Any]:
    """A JSON request to a node (``body_text``: an NDJSON body, for _bulk): (status, decoded body); HTTP
    errors are answers, not exceptions."""
    if body_text is not None:
        data, kind = body_text.encode(), "application/x-ndjson"
    else:
        data, kind = (json.dumps(body).encode() if body is not None else None), "application/json"
    req = urllib.request.Request(url, data=data, method=method, headers={"Content-Type": kind})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            raw = resp.read()
            status = resp.status
    except urllib.error.HTTPError as e:
        raw, status = e.read(), e.code
    return status, json.loads(raw) if raw else None


class Node:
    """One OpenSearch node in a JVM of its own."""

    def __init__(self, home: Path, name: str, http_port: int, transport_port: int, settings: dict[str, str],
                 heap: str = HEAP) -> None:
        self.home, self.name = home, name
        self.http_port, self.transport_port = http_port, transport_port
        self.settings, self.heap = settings, heap
        self.log_path = home / "node.log"
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.http_port}"

    @property
    def transport_address(self) -> str:
        return f"127.0.0.1:{self.transport_port}"

    def start(self) -> Node:
        jar = ensure_launcher()
        self.home.mkdir(parents=True, exist_ok=True)
        settings = {"node.name": self.name, "http.port": str(self.http_port),
                    "transport.port": str(self.transport_port), "path.home": str(self.home),
                    "logger.level": "WARN", **self.settings}
        cmd = ["java", "-Xms256m", f"-Xmx{self.heap}",
               "-XX:+UseSerialGC", "-Dpodsearch.stdin.watch=true", "-jar", str(jar)]
        for key, value in settings.items():
            cmd += ["-E", f"{key}={value}"]
        with open(self.log_path, "ab") as log:
            self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=log, stderr=subprocess.STDOUT,
                                         start_new_session=True)
        _running.add(self)
        return self

    def wait_until_up(self, timeout: float = 180) -> None:
        """Until ``GET /`` answers (the HTTP layer is up and the node has joined a cluster)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc is None or self.proc.poll() is not None:
                raise RuntimeError(f"OpenSearch node {self.name} exited:\n{self.log()}")
            try:
                status, body = request(self.url + "/", timeout=5)
                if status == 200 and body["version"]["distribution"] == "opensearch":
                    return
            except (OSError, ValueError):
                pass
            time.sleep(0.5)
        raise RuntimeError(f"OpenSearch node {self.name} did not answer within {timeout} s:\n{self.log()}")

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")[-6000:] if self.log_path.exists() else ""

    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def stop(self, timeout: float = 60) -> None:
        """A clean stop (SIGTERM to the node's process group), then SIGKILL if it takes too long."""
        self._signal(signal.SIGTERM, timeout)

    @contextmanager
    def paused(self) -> Iterator[None]:
        """The node stopped (SIGSTOP to its process group: it takes connections and answers nothing) for the block,
        then continued."""
        assert self.proc is not None
        os.killpg(self.proc.pid, signal.SIGSTOP)
        try:
            yield
        finally:
            os.killpg(self.proc.pid, signal.SIGCONT)

    def kill(self) -> None:
        """A hard crash: SIGKILL to the node's process group."""
        self._signal(signal.SIGKILL, 30)

    def _signal(self, sig: int, timeout: float) -> None:
        if self.proc is None:
            return
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, sig)
                self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
            except ProcessLookupError:
                pass
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        _running.discard(self)


PORT_TRIES = 3


class Cluster:
    """One node (``discovery.type: single-node``) or several joined by seed hosts, the first the cluster manager."""

    def __init__(self, nodes: list[Node]) -> None:
        self.nodes = nodes

    @classmethod
    def start(cls, base: Path, nodes: int = 1, heap: str = HEAP, timeout: float = 180) -> Cluster:
        """Start the nodes; again on other ports (and in a new folder) when a port chosen free was taken before a
        node bound it (other tests on the machine choose theirs the same way)."""
        for attempt in range(PORT_TRIES):
            try:
                return cls._start(base if attempt == 0 else base / f"again-{attempt}", nodes, heap, timeout)
            except RuntimeError as exc:
                if "Address already in use" not in str(exc) or attempt + 1 == PORT_TRIES:
                    raise
        raise AssertionError("unreachable")

    @classmethod
    def _start(cls, base: Path, nodes: int, heap: str, timeout: float) -> Cluster:
        ports = [(free_port(), free_port()) for _ in range(nodes)]
        names = [f"node-{i + 1}" for i in range(nodes)]
        members: list[Node] = []
        for i, (http_port, transport_port) in enumerate(ports):
            if nodes == 1:
                settings = {"discovery.type": "single-node"}
            else:
                settings = {"discovery.seed_hosts": ",".join(f"127.0.0.1:{t}" for _, t in ports),
                            "cluster.initial_cluster_manager_nodes": names[0],
                            # the first node alone is eligible: stopping any other one never costs the cluster
                            # its manager (two eligible nodes cannot keep a quorum when one goes)
                            "node.roles": "cluster_manager,data,ingest" if i == 0 else "data,ingest"}
            members.append(Node(base / names[i], names[i], http_port, transport_port, settings, heap))
        cluster = cls(members)
        try:
            for node in members:
                node.start()
            for node in members:
                node.wait_until_up(timeout)
            cluster.wait_for_nodes(nodes, timeout)
        except BaseException:
            cluster.stop()
            raise
        return cluster

    @property
    def url(self) -> str:
        return self.nodes[0].url

    def wait_for_nodes(self, count: int, timeout: float = 120) -> None:
        status, body = request(f"{self.url}/_cluster/health?wait_for_nodes={count}&timeout={int(timeout)}s",
                               timeout=timeout + 10)
        if status != 200 or body.get("timed_out"):
            raise RuntimeError(f"the cluster did not reach {count} nodes: {body}")

    def stop(self) -> None:
        for node in self.nodes:
            node.stop()

    def __enter__(self) -> Cluster:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


@atexit.register
def _stop_all() -> None:
    for node in list(_running):
        node.kill()


@contextmanager
def json_node(answer: Callable[[str, str], tuple[int, Any]]) -> Iterator[str]:
    """A stand-in for a node on 127.0.0.1, its URL yielded: every GET and POST (its body read and left) is answered
    ``answer(method, path)``, a status and a JSON body. For the answers a real node gives only at a moment hard to
    bring about (a node leaving, a search context lost between phases, a shard with no copy during a bulk)."""
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    class Node(BaseHTTPRequestHandler):
        def _answer(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            status, body = answer(self.command, self.path)
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        do_GET = do_POST = _answer  # noqa: N815 (http.server's names)

        def log_message(self, *_args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Node)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
