"""Load: 16 clients on loopback for 10 s against a real waitress ``podsearch serve`` (searches, similar, episode
pages): no errors. The 60-second run on the whole site corpus is ``python tests/soak/load.py`` (make soak)."""

from __future__ import annotations

from pathlib import Path

from conftest import start_server
from soak.load import drain, episode_ids, run_load


def test_sixteen_clients_for_ten_seconds_without_an_error(sample_data: Path) -> None:
    ids = episode_ids(sample_data)
    server = start_server(sample_data, "--no-access-log")
    logged = drain(server.proc)
    try:
        figures = run_load(server.base, ids, clients=16, seconds=10)
    finally:
        server.proc.terminate()
        server.proc.wait(timeout=30)
    print(figures)
    assert figures["errors"] == 0, figures["first_errors"]
    assert figures["requests"] >= 100, figures
    assert set(figures["by_kind"]) == {"api-search", "search-page", "similar", "episode-page"}
    assert server.proc.returncode == 0
    assert not [line for line in logged if "Traceback" in line or "ERROR" in line], logged[:20]
