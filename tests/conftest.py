"""Shared fixtures: the corpus, a data folder with the sample indexed, the app, a client, a CLI runner,
and a real ``podsearch serve`` (waitress) on a free port of 127.0.0.1."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT.parent / "shared" / "corpus"


def require_corpus() -> Path:
    """The shared corpus, or a skip (a failure in CI, where PODSEARCH_REQUIRE_CORPUS=1)."""
    if CORPUS.is_dir():
        return CORPUS
    message = f"shared corpus not found at {CORPUS}"
    if os.environ.get("PODSEARCH_REQUIRE_CORPUS") == "1":
        pytest.fail(message + " (PODSEARCH_REQUIRE_CORPUS=1)")
    pytest.skip(message)


@pytest.fixture(scope="session")
def corpus() -> Path:
    return require_corpus()


def require_opensearch_launcher() -> Path:
    """The OpenSearch launcher jar (built on first use), or a skip (a failure where
    PODSEARCH_REQUIRE_OPENSEARCH=1, as in CI, whose ``make test`` builds it)."""
    from opensearch_node import LauncherMissing, ensure_launcher

    try:
        return ensure_launcher()
    except LauncherMissing as e:
        if os.environ.get("PODSEARCH_REQUIRE_OPENSEARCH") == "1":
            pytest.fail(f"{e} (PODSEARCH_REQUIRE_OPENSEARCH=1)")
        pytest.skip(str(e))


@pytest.fixture(scope="session")
def opensearch(tmp_path_factory: pytest.TempPathFactory):
    """One real OpenSearch node for the whole session (its own JVM, free loopback ports); tests that use it
    create indexes with names of their own."""
    from opensearch_node import Cluster

    require_opensearch_launcher()
    with Cluster.start(tmp_path_factory.mktemp("opensearch"), nodes=1) as cluster:
        yield cluster


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests never see the developer's own settings."""
    for key in list(os.environ):
        if key.startswith("PODSEARCH_") and not key.startswith("PODSEARCH_REQUIRE_"):
            monkeypatch.delenv(key, raising=False)


@pytest.fixture(scope="session")
def sample_data_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The bundled sample indexed once per session (through the real CLI); copy it before writing."""
    from click.testing import CliRunner

    from podsearch.cli import main

    data = tmp_path_factory.mktemp("sample") / "data"
    result = CliRunner().invoke(main, ["--data", str(data), "-q", "demo", "--no-serve"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return data


@pytest.fixture(scope="session")
def site_index(corpus: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The site corpus (25 shows, 1,869 episodes) reindexed once per session: catalog, index and model. Tests
    only read it (copy it before writing)."""
    from podsearch.config import load_config
    from podsearch.reindex import reindex

    data = tmp_path_factory.mktemp("site-index") / "data"
    feeds = sorted(str(p) for p in (corpus / "site" / "feeds").glob("*.xml"))
    report = reindex(load_config({"data": str(data), "feeds": feeds}, environ={}))
    assert report.feeds == 25 and report.feeds_failed == 0, report.errors[:5]
    return data


@pytest.fixture
def engine_name() -> str:
    """The engine the sample is searched with. The modules of the parity suite override this fixture with
    ``params=ENGINES``, so that each of their tests runs against both engines."""
    return "whoosh"


ENGINES = ["whoosh", pytest.param("opensearch", marks=pytest.mark.opensearch)]


_indexes = iter(range(1, 10**9))


@contextlib.contextmanager
def imported_library(episodes: list[dict], engine: str, request: pytest.FixtureRequest, root: Path):
    """A Library over ``episodes`` (import lines) imported into ``root``, on ``engine`` (OpenSearch: the session's
    node, an index of its own, removed after)."""
    from podsearch.config import load_config
    from podsearch.reindex import import_jsonl
    from podsearch.service import Library

    settings: dict[str, str] = {}
    if engine == "opensearch":
        node = request.getfixturevalue("opensearch")
        settings = {"engine": "opensearch", "opensearch_url": node.url,
                    "opensearch_index": f"t{next(_indexes)}-{os.getpid()}"}
    path = root / "eps.jsonl"
    path.write_text("".join(json.dumps(e, ensure_ascii=False) + "\n" for e in episodes), encoding="utf-8")
    config = load_config({"data": str(root / "data"), **settings}, environ={})
    import_jsonl(config, path)
    library = Library.from_config(config)
    try:
        yield library
    finally:
        library.close()
        if settings:
            from opensearch_node import request as os_request

            os_request(f"{settings['opensearch_url']}/{settings['opensearch_index']}-*", "DELETE")


@pytest.fixture
def engine_settings(engine_name: str, request: pytest.FixtureRequest) -> Iterator[dict[str, str]]:
    """Settings that select the engine: none for Whoosh; for OpenSearch the session's node and an index (an
    alias) of this test's own, removed after it."""
    if engine_name == "whoosh":
        yield {}
        return
    from opensearch_node import request as os_request

    node = request.getfixturevalue("opensearch")
    alias = f"t{next(_indexes)}-{os.getpid()}"
    yield {"engine": "opensearch", "opensearch_url": node.url, "opensearch_index": alias}
    os_request(f"{node.url}/{alias}-*", "DELETE")


@pytest.fixture
def sample_data(sample_data_template: Path, tmp_path: Path, engine_settings: dict[str, str]) -> Path:
    """A private copy of the indexed sample for one test (indexed into the test's OpenSearch index too, when
    the test runs on OpenSearch)."""
    data = tmp_path / "data"
    shutil.copytree(sample_data_template, data)
    if engine_settings:
        from podsearch.catalog import Catalog
        from podsearch.documents import CatalogDocuments
        from podsearch.engines import open_engine

        engine = open_engine(data, sample_config(data, engine_settings))
        with Catalog.in_dir(data) as catalog:
            engine.sync(CatalogDocuments(catalog), full=True)
    return data


def sample_config(data: Path, engine_settings: dict[str, str], **settings: object):
    """The config of a test's data folder and engine (no environment)."""
    from podsearch.config import load_config

    return load_config({"data": str(data), **engine_settings, **settings}, environ={})


@pytest.fixture
def config(sample_data: Path, engine_settings: dict[str, str]):
    return sample_config(sample_data, engine_settings)


@pytest.fixture
def app(config):
    from podsearch.web import create_app

    return create_app(config, {"TESTING": True})


@pytest.fixture
def client(app):
    return app.test_client()


@pytest.fixture
def runner():
    from click.testing import CliRunner

    return CliRunner()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_until_up(url: str, proc: subprocess.Popen | None = None, timeout: float = 30.0,
                  log: Path | None = None) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            output = log.read_text(errors="replace") if log else (proc.stderr.read() if proc.stderr else "")
            raise RuntimeError(f"server exited with {proc.returncode}: {output}")
        try:
            with urllib.request.urlopen(url, timeout=2) as resp:
                if resp.status == 200:
                    return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(f"{url} did not answer within {timeout} s")


class LiveServer:
    def __init__(self, proc: subprocess.Popen, base: str, data: Path, log: Path) -> None:
        self.proc, self.base, self.data, self.log = proc, base, data, log

    def stderr(self) -> str:
        """Everything the server has written on stderr so far (it goes to a file: a pipe nobody reads fills
        up and blocks the server's logging, and with it every request)."""
        return self.log.read_text(errors="replace")

    def url(self, path: str) -> str:
        return self.base + path

    def stop(self, timeout: float = 10) -> None:
        """SIGTERM, then SIGKILL if it has not exited within ``timeout`` seconds."""
        self.proc.terminate()
        try:
            self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.log.unlink(missing_ok=True)


PORT_TRIES = 5  # a free port another process takes between free_port() and the server's bind: another one


def start_server(data: Path, *extra: str, env: dict[str, str] | None = None) -> LiveServer:
    for attempt in range(PORT_TRIES):
        port = free_port()
        cmd = [sys.executable, "-m", "podsearch", "--data", str(data), "serve", "--host", "127.0.0.1",
               "--port", str(port), *extra]
        fd, log_name = tempfile.mkstemp(prefix="podsearch-serve-", suffix=".log")
        with os.fdopen(fd, "wb") as log:
            proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=log, env={**os.environ, **(env or {})})
        base = f"http://127.0.0.1:{port}"
        try:
            wait_until_up(base + "/healthz", proc, log=Path(log_name))
        except RuntimeError as exc:
            proc.kill()
            # (the port was free when chosen: other tests on the machine pick theirs the same way)
            if "Address already in use" in str(exc) and attempt + 1 < PORT_TRIES:
                continue
            raise
        except Exception:
            proc.kill()
            raise
        return LiveServer(proc, base, data, Path(log_name))
    raise AssertionError("unreachable")


@pytest.fixture
def live_server(sample_data: Path) -> Iterator[LiveServer]:
    """``podsearch serve`` (waitress) in a subprocess on a free port, serving a copy of the sample."""
    server = start_server(sample_data)
    yield server
    server.stop()


class ListedTimes:
    """``web.views.Times`` of a list of every segment's start (what the episode page read until 6 December 2026): the
    reference the catalog's reads (``web.views.LibraryTimes``) are checked against."""

    def __init__(self, starts: Sequence[float | None]) -> None:
        self.all = list(starts)

    def count(self) -> int:
        return len(self.all)

    def playing(self, t: float) -> int:
        current = -1
        for i, start in enumerate(self.all):
            if start is not None and int(start) <= t and (current < 0 or int(start) != int(self.all[current] or 0)):
                current = i
        return current

    def starts(self, first: int, stop: int) -> list[float | None]:
        return self.all[first:stop]

    def seconds_before(self, first: int, seconds: set[int]) -> set[int]:
        return {int(s) for s in self.all[:max(0, first)] if s is not None} & seconds
