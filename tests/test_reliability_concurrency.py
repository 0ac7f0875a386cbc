"""Concurrency: one reindex at a time per data folder (a second is refused, or waits with --wait), and
searches never fail while reindexes swap new index and model generations in under a running server."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

from conftest import start_server
from faultserver import Slow, serve_faults
from soak.crash import _LogReader
from soak.load import drain

from podsearch.cli import main
from podsearch.requests import SearchRequest
from podsearch.service import Library

SAMPLE = Path(__file__).resolve().parents[1] / "src" / "podsearch" / "sample"
HOLD_SECONDS = 8.0  # how long the first reindex is held inside its fetching phase


def podsearch(*args: str) -> list[str]:
    return [sys.executable, "-m", "podsearch", *args]


def test_a_second_reindex_is_refused_and_one_with_wait_waits(tmp_path: Path, runner) -> None:
    with serve_faults(SAMPLE) as server:
        slow = "/feeds/field-notes.xml"
        server.faults[slow] = Slow((SAMPLE / slow.lstrip("/")).read_bytes(), seconds=HOLD_SECONDS)
        config = tmp_path / "podsearch.toml"
        feeds = ", ".join(f'"{server.url(f"feeds/{n}.xml")}"' for n in ("field-notes", "long-table", "signal-path"))
        config.write_text(f"allow_private_hosts = true\nfetch_timeout = 30.0\nfeeds = [{feeds}]\n")
        data = tmp_path / "data"
        base = ["--config", str(config), "--data", str(data)]
        first = _LogReader(subprocess.Popen(podsearch(*base, "-v", "reindex"), stderr=subprocess.PIPE,
                                            stdout=subprocess.PIPE))
        assert first.wait_for("fetching", timeout=60), first.text()
        waiter = _LogReader(subprocess.Popen(podsearch(*base, "-v", "reindex", "--wait"), stderr=subprocess.PIPE,
                                             stdout=subprocess.PIPE))
        started = time.monotonic()
        refused = runner.invoke(main, [*base, "reindex"])
        assert time.monotonic() - started < 5, "a refused reindex must not wait"
        assert refused.exit_code == 1
        assert "Another reindex is running on" in refused.output and "use --wait" in refused.output
        assert f"pid {first.proc.pid}" in refused.output
        assert first.proc.wait(timeout=120) == 0, first.text()
        first_done = time.monotonic()
        assert waiter.proc.wait(timeout=120) == 0, waiter.text()
        waiter.join()
        assert "is running on" in waiter.text() and "waiting for it" in waiter.text()
        assert time.monotonic() >= first_done
        # The waiting reindex ran after the first one, on its result: nothing left to do.
        assert "episodes: 0 new, 0 updated, 36 unchanged" in waiter.proc.stdout.read().decode()


def get(url: str) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=30) as resp:
            return resp.status, resp.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


def test_searches_never_fail_while_reindexes_swap_generations(sample_data: Path) -> None:
    library = Library(sample_data)
    ids = [ep.id for ep in library.recent(36)]
    server = start_server(sample_data, "--no-access-log")
    logged = drain(server.proc)
    failures: list[str] = []
    answered = {"library": 0, "server": 0}
    generations: set[str] = set()
    done = threading.Event()

    def library_client() -> None:
        lib = Library(sample_data)  # its own, like another process would have
        n = 0
        while not done.is_set():
            n += 1
            try:
                result = lib.search(SearchRequest(q=("bees", "volcano", "sourdough bread")[n % 3]))
                assert result.total >= 1, "no hits"
                assert lib.similar(ids[n % len(ids)], 5).similar, "no neighbours"
                generations.add(lib.engine.stamp()[0])
                answered["library"] += 1
            except Exception as exc:  # noqa: BLE001 - every failure is collected and reported
                failures.append(f"library: {exc!r}")
            done.wait(0.02)  # leave the reindex some CPU on a 2-core machine
        lib.close()

    def server_client(offset: int) -> None:
        n = offset
        while not done.is_set():
            n += 1
            quoted = urllib.parse.quote(ids[n % len(ids)], safe="")
            for path in ("/api/v1/search?q=bees", f"/similar/{quoted}?k=5", f"/episodes/{quoted}", "/search?q=clouds"):
                try:
                    status, body = get(server.url(path))
                except OSError as exc:
                    failures.append(f"{path}: {exc!r}")
                    continue
                if status != 200:
                    failures.append(f"{path}: {status} {body[:200]!r}")
                elif path.startswith("/api/v1/search") and json.loads(body)["total"] < 1:
                    failures.append(f"{path}: no hits")
                answered["server"] += 1
            done.wait(0.02)

    clients = [threading.Thread(target=library_client)] + [threading.Thread(target=server_client, args=(i,)) for i in (0, 7)]
    for c in clients:
        c.start()
    try:
        for args in (["reindex", "--full"], ["reindex", "--full"]):
            proc = subprocess.run(podsearch("--data", str(sample_data), "-q", *args), capture_output=True, text=True,
                                  timeout=300)
            assert proc.returncode == 0, proc.stderr
    finally:
        done.set()
        for c in clients:
            c.join(timeout=60)
        server.stop(timeout=30)
    assert not failures, failures[:10]
    assert answered["library"] > 5 and answered["server"] > 20, answered
    assert len(generations) >= 2, "the index generation never changed under the clients"
    assert not [line for line in logged if "Traceback" in line or "ERROR" in line], logged[:20]
