"""Generation folders: the CURRENT pointer, swapped atomically, and the stamp readers compare."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from podsearch.generations import Generations


def test_stamp_follows_every_publish_even_within_one_clock_tick(tmp_path: Path) -> None:
    gens = Generations(tmp_path / "index")
    assert gens.stamp() == ("", 0.0) and gens.current() is None
    seen = []
    for _ in range(3):  # back to back: the pointer's mtime may not move, its inode does
        final = gens.publish(gens.new())
        assert gens.current() == final
        seen.append(gens.stamp()[0])
        assert gens.stamp()[0] == final.name  # asked twice: the same answer
    assert len(set(seen)) == 3
    other = Generations(tmp_path / "index")  # another reader (another process) sees the same
    assert other.stamp() == gens.stamp()
    gens.pointer.unlink()
    assert gens.stamp() == ("", 0.0)


def test_a_run_stopped_by_ctrl_c_removes_its_half_written_generation_and_says_why(config, tmp_path: Path) -> None:
    """Ctrl-C (KeyboardInterrupt) during a reindex, import or remove left the generation folder it was writing (as
    big as the index) until the next run, and the run recorded as "killed, or running now": only an ``Exception``
    was cleaned up after. Now an interrupted run cleans up as a failed one does and is recorded as interrupted;
    the live index is untouched."""
    import pytest

    from podsearch import reindex as pipeline
    from podsearch.catalog import Catalog

    data = config.data_dir
    live = Generations(data / "index").current()

    def interrupted(data_dir: Path, *args: object, **kwargs: object) -> None:
        Generations(data_dir / "index").new()  # a rebuild under way
        Generations(data_dir / "model").new()
        raise KeyboardInterrupt

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(pipeline, "rebuild_derived", interrupted)
        with pytest.raises(KeyboardInterrupt):
            pipeline.locked_run(config, lambda catalog, report: None)
    assert not list((data / "index").glob("*.tmp")) and not list((data / "model").glob("*.tmp"))
    assert Generations(data / "index").current() == live
    with Catalog.existing(data) as catalog:
        assert [run["aborted"] for run in catalog.unfinished_since()] == ["interrupted (Ctrl-C)"]
    assert not (data / "reindex.lock").read_text()  # the lock let go: the next run is not told of a dead holder


def test_a_killed_runs_folder_is_removed_when_its_pid_now_belongs_to_another_process(tmp_path: Path) -> None:
    """A ``.tmp`` generation is kept while the process named in it runs. A pid is used again once its process is
    gone (32768 pids by default): a folder of a killed reindex whose pid a later process got (a ``podsearch
    serve``, any daemon) stayed, as big as the index, for as long as that process ran. Now a process that started
    after the folder was last written is not its maker; the folder of a live maker is still kept."""
    import os
    import subprocess
    import sys
    import time

    gens = Generations(tmp_path / "index")
    sleeper = [sys.executable, "-c", "import time; time.sleep(60)"]
    older = subprocess.Popen(sleeper)  # started before its folder: the maker, still running
    time.sleep(0.5)
    kept = gens.root / f"gen-{time.strftime('%Y%m%d-%H%M%S')}-{older.pid}-000001.tmp"
    kept.mkdir(parents=True)
    newer = subprocess.Popen(sleeper)  # the pid of a run killed a minute ago, used again now
    abandoned = gens.root / f"gen-{time.strftime('%Y%m%d-%H%M%S', time.localtime(time.time() - 60))}-{newer.pid}-000002.tmp"
    abandoned.mkdir()
    (abandoned / "_MAIN_1.toc").write_text("half")
    past = time.time() - 60
    os.utime(abandoned / "_MAIN_1.toc", (past, past))
    os.utime(abandoned, (past, past))
    try:
        time.sleep(0.2)
        gens.cleanup()
        assert kept.is_dir()
        assert not abandoned.exists()
    finally:
        for proc in (older, newer):
            proc.kill()
            proc.wait()
    gens.cleanup()
    assert not kept.exists()  # its maker gone


def test_a_generation_renamed_but_never_made_live_is_removed_not_the_previous_one(tmp_path: Path) -> None:
    """``publish`` renames the finished folder, then points CURRENT at it. A run killed between the two left a
    finished folder nobody reads; being the newest, the next clean-up kept it and removed the previous generation
    (kept on purpose for requests in flight) instead. Now a finished folder made after the live one is removed."""
    import os

    gens = Generations(tmp_path / "model")
    names = ["gen-20261205-203001-101-000001", "gen-20261205-203002-102-000002", "gen-20261205-203003-103-000003"]
    for name in names:
        (gens.root / name).mkdir(parents=True)
        (gens.root / name / "params.json").write_text("{}")
    for i, name in enumerate(names):  # made in that order
        os.utime(gens.root / name, (1_700_000_000 + i, 1_700_000_000 + i))
    gens.pointer.write_text(names[1] + "\n")  # the third was renamed, the pointer never written: killed
    gens.cleanup()
    assert sorted(p.name for p in gens.root.iterdir() if p.is_dir()) == names[:2]
    assert gens.current() == gens.root / names[1]
    final = gens.publish(gens.new())  # the next run: the live one and the previous one stay
    assert sorted(p.name for p in gens.root.iterdir() if p.is_dir()) == sorted([names[1], final.name])


def _episodes(first: int, count: int, word: str) -> str:
    """JSON lines of ``count`` episodes with transcripts long enough that a full rebuild takes a few seconds."""
    import json
    import random

    rng = random.Random(first)
    lines = []
    for i in range(first, first + count):
        text = "\n\n".join(" ".join(f"w{rng.randrange(3000)}" for _ in range(60)) for _ in range(20))
        lines.append(json.dumps({"id": f"e{i}", "show": f"Show {i % 5}", "title": f"Episode {i} {word}",
                                 "transcript": text}))
    return "\n".join(lines) + "\n"


def test_a_run_stopped_by_sigterm_removes_its_half_written_generation_and_ends_by_the_signal(tmp_path: Path) -> None:
    """SIGTERM (systemd's stop, ``docker stop``) ended a reindex, import or remove at once, as ``kill -9`` does: the
    generation it was writing (as big as the index) stayed until the next run, which took over its lock. Now the
    run cleans up as after Ctrl-C, says so in one line and ends by the signal (a shell's status 143); the lock is
    let go, the run is recorded as interrupted and the last finished index keeps serving. A real ``podsearch
    import --full`` in its own process group, stopped while it writes its index; the group is signalled, as
    systemd does: the index writer processes die with no traceback."""
    import json
    import os
    import signal
    import subprocess
    import sys
    import time

    from podsearch.catalog import Catalog

    data = tmp_path / "data"
    (tmp_path / "old.jsonl").write_text(_episodes(0, 150, "heron"), encoding="utf-8")
    (tmp_path / "new.jsonl").write_text(_episodes(150, 150, "pangolin"), encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}

    def podsearch(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "podsearch", "--data", str(data), *args], env=env,
                              capture_output=True, text=True, timeout=300)

    assert podsearch("import", str(tmp_path / "old.jsonl")).returncode == 0
    live = Generations(data / "index").current(), Generations(data / "model").current()
    proc = subprocess.Popen([sys.executable, "-m", "podsearch", "--data", str(data), "import", "--full",
                             str(tmp_path / "new.jsonl")], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, start_new_session=True)
    deadline = time.monotonic() + 120
    while (proc.poll() is None and time.monotonic() < deadline
           and not any(p.name.endswith(".tmp") for p in (data / "index").iterdir())):
        time.sleep(0.002)
    assert proc.poll() is None, "the import finished before its index build was seen"
    time.sleep(0.3)  # into the build
    os.killpg(proc.pid, signal.SIGTERM)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == -signal.SIGTERM, (proc.returncode, err)
    assert not list((data / "index").glob("*.tmp")) and not list((data / "model").glob("*.tmp"))
    assert err.strip().splitlines() == ["Stopped by SIGTERM: the run was cut short; no half-written index or model "
                                        "is left, and the last finished ones are served."], err
    assert (Generations(data / "index").current(), Generations(data / "model").current()) == live
    assert not (data / "reindex.lock").read_text()  # let go: the next run is not told of a dead holder
    assert subprocess.run(["pgrep", "-g", str(proc.pid)], capture_output=True).returncode == 1  # no writer left
    with Catalog.existing(data) as catalog:
        assert [run["aborted"] for run in catalog.unfinished_since()] == ["interrupted (SIGTERM)"]
    for word, total in (("heron", 150), ("pangolin", 0)):  # the last finished index answers
        found = podsearch("search", word, "--json")
        assert found.returncode == 0 and json.loads(found.stdout)["total"] == total, found.stderr
    again = podsearch("import", str(tmp_path / "new.jsonl"))
    assert again.returncode == 0 and "took it over" not in again.stderr, again.stderr


def test_a_scheduled_reindex_still_running_when_serve_stops_is_stopped_and_cleans_up(tmp_path: Path) -> None:
    """``serve`` gives a scheduled reindex in progress ``shutdown_timeout`` to finish; one still running then was left
    to die with the process, and the generation it was writing (as big as the index) stayed until the next run,
    which took over its lock. Now the server's stop stops it at its next step, and it cleans up as a reindex
    stopped by SIGTERM does: its half-written generation removed, the lock let go, the run recorded as
    interrupted, the scheduler's thread ended. (A real scheduler thread rebuilding a real index, stopped with no
    time left to finish.)"""
    import shutil
    import time

    from podsearch.catalog import Catalog
    from podsearch.config import load_config
    from podsearch.reindex import import_jsonl
    from podsearch.server import ReindexScheduler

    data = tmp_path / "data"
    config = load_config({"data": str(data)}, environ={})
    (tmp_path / "eps.jsonl").write_text(_episodes(0, 150, "heron"), encoding="utf-8")
    import_jsonl(config, tmp_path / "eps.jsonl")
    shutil.rmtree(data / "index")  # the next run rebuilds the index in full, in a generation folder of its own
    scheduler = ReindexScheduler(config, 0.01)
    scheduler.start()
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not list(data.glob("index/*.tmp")):
        time.sleep(0.002)
    assert list(data.glob("index/*.tmp")) and not scheduler.runs, "the scheduled run was not seen building its index"
    scheduler.stop(0)
    assert not scheduler.is_alive()
    assert not list(data.glob("index/*.tmp")) and not list(data.glob("model/*.tmp"))
    assert scheduler.runs == 1 and scheduler.last_outcome == "interrupted (SIGTERM)"
    assert not (data / "reindex.lock").read_text()  # let go: the next run is not told of a dead holder
    with Catalog.existing(data) as catalog:
        assert [run["aborted"] for run in catalog.unfinished_since()] == ["interrupted (SIGTERM)"]


class _SlowTranscripts:
    """A feed of ``count`` episodes on 127.0.0.1 whose transcripts answer after ``delay`` seconds (a real HTTP server
    in threads); ``asked`` counts the transcript requests, ``waiting`` the requests it holds now (the client's
    connection open: one the client closes ends its wait at once)."""

    def __init__(self, count: int, delay: float) -> None:
        import threading
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        self.delay, self.asked = delay, 0
        self.feed_delay, self.feed_asked = 0.0, 0
        self.waiting = 0
        lock = threading.Lock()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - quiet
                pass

            def wait(self, seconds: float) -> bool:
                """Wait ``seconds`` unless the client closes the connection first (then False)."""
                import select
                import socket
                import time

                with lock:
                    outer.waiting += 1
                try:
                    end = time.monotonic() + seconds
                    while time.monotonic() < end:
                        if (select.select([self.connection], [], [], 0.02)[0]
                                and not self.connection.recv(1, socket.MSG_PEEK)):
                            return False
                    return True
                except OSError:
                    return False
                finally:
                    with lock:
                        outer.waiting -= 1

            def do_GET(self) -> None:  # noqa: N802 - http.server's naming
                if self.path == "/feed.xml":
                    outer.feed_asked += 1
                    if not self.wait(outer.feed_delay):
                        return
                    body, kind = outer.feed(), "application/rss+xml"
                elif self.path.startswith("/t/"):
                    outer.asked += 1
                    if not self.wait(outer.delay):
                        return
                    body = f"WEBVTT\n\n00:00:00.000 --> 00:00:05.000\npangolin number {self.path[3:-4]}\n".encode()
                    kind = "text/vtt"
                else:
                    self.send_error(404)
                    return
                try:
                    self.send_response(200)
                    self.send_header("Content-Type", kind)
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                except OSError:  # the reindex left
                    pass

        self.count = count
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def feed(self) -> bytes:
        items = "".join(
            f"<item><title>Episode {i}</title><guid>ep-{i}</guid><pubDate>Mon, 01 Jun 2026 10:{i:02d}:00 GMT</pubDate>"
            f'<enclosure url="{self.url}/a/{i}.mp3" type="audio/mpeg" length="1"/>'
            f'<podcast:transcript url="{self.url}/t/{i}.vtt" type="text/vtt"/></item>' for i in range(self.count))
        return (f'<?xml version="1.0"?><rss version="2.0" xmlns:podcast="https://podcastindex.org/namespace/1.0">'
                f"<channel><title>Slow Show</title><link>{self.url}/</link><description>d</description>{items}"
                "</channel></rss>").encode()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def test_a_reindex_stopped_while_it_fetches_transcripts_ends_at_once_and_the_next_run_fetches_them(
        tmp_path: Path) -> None:
    """A reindex stopped by SIGTERM while it fetched transcripts waited, before it cleaned up, for every fetch its
    pool had started: with 8 fetch workers and transcripts that take 3 s, two at a time per host, 10 s (18 s with
    4 workers and 10 s transcripts), longer than ``docker stop`` waits before SIGKILL. Now no other fetch starts
    and those in flight are left after ``STOP_GRACE``: it ends within a second or so, leaves nothing half-written
    and nothing of the feed stored, and the next run fetches every transcript. (A real ``podsearch reindex`` and a
    real slow HTTP server.)"""
    import json
    import os
    import signal
    import subprocess
    import sys
    import time

    from podsearch.catalog import Catalog

    data = tmp_path / "data"
    slow = _SlowTranscripts(40, 3.0)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path), "PODSEARCH_FEEDS": f"{slow.url}/feed.xml",
           "PODSEARCH_ALLOW_PRIVATE_HOSTS": "1", "PODSEARCH_FETCH_WORKERS": "8"}
    try:
        proc = subprocess.Popen([sys.executable, "-m", "podsearch", "--data", str(data), "reindex"], env=env,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 60
        while proc.poll() is None and time.monotonic() < deadline and not slow.asked:
            time.sleep(0.01)
        assert proc.poll() is None and slow.asked, "the reindex was not seen fetching transcripts"
        time.sleep(0.5)  # every worker has a fetch in flight or waits for its turn on the host
        stopped = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=60)
        took = time.monotonic() - stopped
        assert proc.returncode == -signal.SIGTERM, (proc.returncode, err)
        assert took < 5, f"{took:.1f} s from SIGTERM to exit"
        assert "Stopped by SIGTERM" in err, err
        assert not list(data.glob("index/*.tmp")) and not list(data.glob("model/*.tmp"))
        assert not (data / "reindex.lock").read_text()
        with Catalog.existing(data) as catalog:
            assert [run["aborted"] for run in catalog.unfinished_since()] == ["interrupted (SIGTERM)"]
            assert catalog.hashes() == {}  # nothing of the feed stored half: its episodes wait for their fetches
        slow.delay = 0.0
        again = subprocess.run([sys.executable, "-m", "podsearch", "--data", str(data), "reindex"], env=env,
                               capture_output=True, text=True, timeout=120)
        assert again.returncode == 0 and "took it over" not in again.stderr, again.stderr
        found = subprocess.run([sys.executable, "-m", "podsearch", "--data", str(data), "search", "pangolin",
                                "--json"], env=env, capture_output=True, text=True, timeout=60)
        assert json.loads(found.stdout)["total"] == 40, found.stderr  # every transcript read by the next run
    finally:
        slow.close()



def _stop_when(scheduler: Any, seen: Callable[[], bool], data: Path) -> None:
    """Start ``scheduler`` (a ``server.ReindexScheduler``), stop it (as the server's stop does) half a second after
    ``seen()``, and check that its run ended within 5 s, cleaned up (the lock free) and was recorded as stopped."""
    import time

    scheduler.start()
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not seen():
        time.sleep(0.01)
    assert seen(), "the scheduled run was not seen fetching"
    time.sleep(0.5)
    stopped = time.monotonic()
    scheduler.stop(0)
    took = time.monotonic() - stopped
    assert not scheduler.is_alive() and took < 5, f"{took:.1f} s"
    assert scheduler.last_outcome == "interrupted (SIGTERM)"
    assert not (data / "reindex.lock").read_text()

def test_a_scheduled_reindex_stopped_while_it_fetches_transcripts_stops_within_a_second_or_so(tmp_path: Path) -> None:
    """The server's stop of a scheduled reindex fetching transcripts was seen only when the next fetch ended, and
    the run then waited for every fetch its pool had started (10 s and more with slow transcript hosts, the whole
    of ``server.STOP_WAIT``). Now the run looks for the stop while it waits and leaves the fetches in flight after
    ``STOP_GRACE``."""

    from podsearch.catalog import Catalog
    from podsearch.config import load_config
    from podsearch.server import ReindexScheduler

    data = tmp_path / "data"
    slow = _SlowTranscripts(40, 3.0)
    try:
        config = load_config({"data": str(data)}, environ={
            "PODSEARCH_FEEDS": f"{slow.url}/feed.xml", "PODSEARCH_ALLOW_PRIVATE_HOSTS": "1",
            "PODSEARCH_FETCH_WORKERS": "8"})
        _stop_when(ReindexScheduler(config, 0.01), lambda: slow.asked, data)
        with Catalog.existing(data) as catalog:
            assert catalog.hashes() == {}
    finally:
        slow.close()


def test_a_stopped_run_holds_no_connection_to_a_slow_host(tmp_path: Path) -> None:
    """A run stopped while it fetched left its fetches in flight to end in their threads: each kept its connection to
    the slow host until the host answered or ``fetch_timeout`` passed (30 s by default), in a server that had stopped
    the run (and in any run whose transcript loop an error ended). Now their connections are shut as they are left
    (``Fetcher.abandon``): the host sees them closed within a second of the stop. A real scheduler against a real
    HTTP server that holds its answers 60 s, counting the connections it holds: transcripts, then a feed."""
    import time

    from podsearch.config import load_config
    from podsearch.server import ReindexScheduler

    for case in ("transcripts", "feed"):
        data = tmp_path / case
        slow = _SlowTranscripts(40, 60.0 if case == "transcripts" else 0.0)
        slow.feed_delay = 60.0 if case == "feed" else 0.0
        try:
            config = load_config({"data": str(data)}, environ={
                "PODSEARCH_FEEDS": f"{slow.url}/feed.xml", "PODSEARCH_ALLOW_PRIVATE_HOSTS": "1",
                "PODSEARCH_FETCH_WORKERS": "8"})
            _stop_when(ReindexScheduler(config, 0.01), lambda held=slow: held.waiting > 0, data)
            stopped = time.monotonic()
            while slow.waiting and time.monotonic() < stopped + 5:
                time.sleep(0.01)
            took = time.monotonic() - stopped
            assert not slow.waiting, f"{case}: {slow.waiting} connections still open {took:.1f} s after the stop"
        finally:
            slow.close()


def test_a_scheduled_reindex_stopped_while_it_fetches_a_slow_feed_stops_within_a_second_or_so(tmp_path: Path) -> None:
    """A feed is fetched in the run's own thread: the server's stop of a scheduled run was seen only once the feed
    had answered (up to fetch_timeout, 30 s by default, longer than ``server.STOP_WAIT``). Now the run waits for
    the feed's fetch in another thread and looks for the stop meanwhile (``ingest.extras.waiting``)."""

    from podsearch.config import load_config
    from podsearch.server import ReindexScheduler

    data = tmp_path / "data"
    slow = _SlowTranscripts(3, 0.0)
    slow.feed_delay = 8.0
    try:
        config = load_config({"data": str(data)}, environ={
            "PODSEARCH_FEEDS": f"{slow.url}/feed.xml", "PODSEARCH_ALLOW_PRIVATE_HOSTS": "1"})
        _stop_when(ReindexScheduler(config, 0.01), lambda: slow.feed_asked, data)
    finally:
        slow.close()


def _fit_catalog(tmp_path: Path, count: int) -> Any:
    """A catalog of ``count`` episodes with transcripts of 1,200 words (:func:`_episodes`), nothing else built."""
    from podsearch.catalog import Catalog
    from podsearch.reindex import import_lines

    (tmp_path / "fit.jsonl").write_text(_episodes(0, count, "heron"), encoding="utf-8")
    catalog = Catalog.in_dir(tmp_path / "data")
    import_lines(catalog, tmp_path / "fit.jsonl")
    return catalog


def test_every_stage_of_the_models_fit_looks_for_a_stop_at_least_every_few_tenths_of_a_second(tmp_path: Path) -> None:
    """The fit tells its progress, where a scheduled run the server stops ends (``server.StoppableRun``), after it
    has counted every episode and after it has weighed them: a stop waited for the rest (75 s of the site corpus's
    fit of 90 s before the first; 10 s of LSA, then the neighbours and the save, after). Now it is told a step at
    least every few tenths of a second in every stage: reading, counting, the runs, the weighting, the LSA (its
    products and factorisations one by one), the neighbours, the reranking. A real fit (with LSA) over a real
    catalog of 1,000 episodes, each pause between two calls of its progress measured."""
    import time

    from podsearch.similar import ModelParams, SimilarModel

    catalog = _fit_catalog(tmp_path, 1000)
    calls: list[tuple[float, str]] = []
    started = time.perf_counter()
    try:
        SimilarModel.fit(catalog, ModelParams(lsa_components=50),
                         progress=lambda stage: calls.append((time.perf_counter(), stage)))
    finally:
        catalog.close()
    ended = time.perf_counter()
    times = [started, *(t for t, _ in calls), ended]
    longest = max(b - a for a, b in zip(times, times[1:]))
    assert longest < min(0.8, (ended - started) / 5), (f"{longest:.2f} s without a step in a fit of "
                                                      f"{ended - started:.1f} s")
    assert {"vectorized", "weighted", "step"} <= {stage for _, stage in calls}


def test_the_lsa_is_computed_with_its_steps_as_scikit_learns_truncated_svd_computes_it() -> None:
    """The LSA's randomized SVD is computed here a product or factorisation at a time (a step between each, where a
    stopped fit ends), as ``TruncatedSVD(algorithm="randomized", n_iter=5, random_state=0)`` computes it: the same
    numbers, the same fitted object (its ``transform`` folds episodes in)."""
    import numpy as np
    import scipy.sparse as sp
    from sklearn.decomposition import TruncatedSVD

    from podsearch.similar.weighting import randomized_svd

    steps = []
    for shape in ((400, 900), (900, 400)):  # (the wide case transposed, as scikit-learn does)
        matrix = sp.random(*shape, density=0.05, format="csr", dtype=np.float32, random_state=7)
        ours, transformed = randomized_svd(matrix, 20, lambda: steps.append(1))
        theirs = TruncatedSVD(20, algorithm="randomized", n_iter=5, random_state=0)
        assert np.array_equal(transformed, theirs.fit_transform(matrix))
        for name in ("components_", "singular_values_", "explained_variance_", "explained_variance_ratio_"):
            assert np.array_equal(getattr(ours, name), getattr(theirs, name)), name
        assert np.array_equal(ours.transform(matrix[:5]), theirs.transform(matrix[:5]))
    assert len(steps) >= 2 * 14


def test_a_scheduled_reindex_stopped_while_it_fits_the_model_cleans_up_and_keeps_the_model_before(tmp_path: Path) -> None:
    """The server's stop of a scheduled run fitting the similarity model was seen once the fit had counted every
    episode (75 s into the site corpus's fit of 90 s; the fit's own steps are measured by
    ``test_every_stage_of_the_models_fit_looks_for_a_stop_at_least_every_few_tenths_of_a_second``). A stop in the fit
    cleans up as any: the lock free, no ``.tmp`` folder, the model fitted before still the one served. (A real
    scheduler refitting a real model of 660 episodes: 60 added to 600, too many to fold in.)"""
    import logging
    import threading
    import time

    from podsearch.catalog import Catalog
    from podsearch.config import load_config
    from podsearch.reindex import import_jsonl, import_lines
    from podsearch.server import ReindexScheduler

    data = tmp_path / "data"
    config = load_config({"data": str(data)}, environ={})
    (tmp_path / "old.jsonl").write_text(_episodes(0, 600, "heron"), encoding="utf-8")
    (tmp_path / "new.jsonl").write_text(_episodes(600, 60, "pangolin"), encoding="utf-8")
    import_jsonl(config, tmp_path / "old.jsonl")
    live = Generations(data / "model").current()
    with Catalog.existing(data) as catalog:
        import_lines(catalog, tmp_path / "new.jsonl")
    fitting = threading.Event()

    class Seen(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            if "fitting the similarity model" in record.getMessage():
                fitting.set()

    seen = Seen()
    logging.getLogger("podsearch.reindex").addHandler(seen)
    level = logging.getLogger("podsearch.reindex").level
    logging.getLogger("podsearch.reindex").setLevel(logging.INFO)
    try:
        scheduler = ReindexScheduler(config, 0.01)
        scheduler.start()
        assert fitting.wait(120), "the scheduled run was not seen fitting the model"
        time.sleep(0.3)  # into the counting of the episodes' terms
        assert scheduler.runs == 0, "the fit ended before the stop"
        stopped = time.monotonic()
        scheduler.stop(0)
        took = time.monotonic() - stopped
    finally:
        logging.getLogger("podsearch.reindex").removeHandler(seen)
        logging.getLogger("podsearch.reindex").setLevel(level)
    assert not scheduler.is_alive() and took < 2.5, f"{took:.1f} s"
    assert scheduler.last_outcome == "interrupted (SIGTERM)"
    assert not (data / "reindex.lock").read_text()
    assert not list(data.glob("index/*.tmp")) and not list(data.glob("model/*.tmp"))
    assert Generations(data / "model").current() == live  # the model fitted before is the one served
