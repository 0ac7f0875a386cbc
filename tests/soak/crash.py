"""kill -9 a real ``podsearch reindex`` at chosen points and check what it leaves behind.

A *scenario* is a data folder indexed from an older version of some feeds (the base) while the feed server
now serves newer versions (new episodes, a changed one, a removed one), so that a reindex has work in each
phase: fetching, index writing, model fitting (or folding in the new episodes) and saving. ``reference`` is
what one uninterrupted reindex of the base gives. Each trial copies the base, starts ``podsearch -v reindex``
(``--full`` on every other round of the four phases), waits for the log line of the phase to hit, sleeps a
random part of that phase's length (measured once, uninterrupted), sends SIGKILL and records the phase the
last log line names. Then:

- the catalog passes ``PRAGMA integrity_check``;
- a fresh Library answers a search and a similar query from the last good index and model (each is the
  base's or the reference's, never anything in between);
- the next reindex completes and the folder then holds exactly the reference (catalog content, index
  documents, model neighbours), with no half-written generation folder left.

Run more trials than CI does with ``python tests/soak/crash.py --runs 100`` (see docs/reliability.md).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
if str(HERE.parent) not in sys.path:  # run as a script: find feedserver.py next to the tests
    sys.path.insert(0, str(HERE.parent))

from faultserver import FaultServer  # noqa: E402
from soak.state import generation_dirs, index_docs, integrity, model_neighbours, snapshot  # noqa: E402

from podsearch.config import load_config  # noqa: E402
from podsearch.reindex import reindex  # noqa: E402
from podsearch.requests import SearchRequest  # noqa: E402
from podsearch.sample import sample_feeds  # noqa: E402
from podsearch.service import Library  # noqa: E402

SITE_SHOWS = ["afk", "spotlight", "rfc"]
PHASES = {  # log line (from podsearch.reindex at -v) -> phase name
    "reindex: reading": "fetching",
    "reindex: writing the index": "index",
    "reindex: fitting the similarity model": "model-fit",  # a refit, or (next line) new episodes folded in:
    "reindex: folding": "model-fit",  # either way the model's work before its save
    "reindex: saving the similarity model": "model-save",
    "reindex: finished": "finished",
}
TARGETS = ["fetching", "index", "model-fit", "model-save"]
_ITEM = re.compile(rb"<item>.*?</item>\s*", re.S)


def _items(xml: bytes) -> list[re.Match[bytes]]:
    return list(_ITEM.finditer(xml))


def older_version(show: str, xml: bytes) -> bytes:
    """The feed as it was before: one show had fewer episodes, one had a title since corrected, one had one more."""
    items = _items(xml)
    if show == "rfc":  # three episodes are new since
        return xml[:items[0].start()] + xml[items[3].start():]
    if show == "spotlight":  # a title was corrected since
        return xml.replace(b"<title>Spotlight", b"<title>Spotlite", 1) if b"<title>Spotlight" in xml else xml
    return xml


def newer_version(show: str, xml: bytes) -> bytes:
    """The feed now: for afk, its oldest episode left the feed."""
    if show == "afk":
        last = _items(xml)[-1]
        return xml[:last.start()] + xml[last.end():]
    return xml


@dataclass
class Scenario:
    """A feed server over the corpus, a config file, the base folder and the reference state."""

    corpus: Path
    workdir: Path
    server: FaultServer = field(init=False)
    config_file: Path = field(init=False)
    base: Path = field(init=False)
    reference: dict[str, Any] = field(init=False)
    base_state: dict[str, Any] = field(init=False)
    durations: dict[str, float] = field(default_factory=dict)

    def start(self) -> Scenario:
        self.server = FaultServer(self.corpus).start()
        feeds = {show: (self.corpus / "site" / "feeds" / f"{show}.xml").read_bytes() for show in SITE_SHOWS}
        paths = {show: f"/site/feeds/{show}.xml" for show in SITE_SHOWS}
        urls = [self.server.url(f"site/feeds/{show}.xml") for show in SITE_SHOWS]
        self.config_file = self.workdir / "podsearch.toml"
        self.config_file.write_text("allow_private_hosts = true\nfetch_timeout = 10.0\nfeeds = [\n" + "".join(
            f'  "{f}",\n' for f in [*sample_feeds(), *urls]) + "]\n", encoding="utf-8")
        self.base = self.workdir / "base"
        for show in SITE_SHOWS:
            self.server.files[paths[show]] = older_version(show, feeds[show])
        _check(reindex(self.config(self.base)))
        self.base_state = snapshot(self.base)
        for show in SITE_SHOWS:
            self.server.files[paths[show]] = newer_version(show, feeds[show])
        ref = self.copy_base("reference")
        _check(reindex(self.config(ref)))
        self.reference = snapshot(ref)
        if self.reference == self.base_state:
            raise RuntimeError("the newer feeds changed nothing: the scenario would test nothing")
        return self

    def stop(self) -> None:
        self.server.stop()

    def config(self, data: Path):
        return load_config({"config": str(self.config_file), "data": str(data)}, environ={})

    def copy_base(self, name: str) -> Path:
        target = self.workdir / name
        if target.exists():
            shutil.rmtree(target)
        shutil.copytree(self.base, target)
        return target

    def command(self, data: Path, full: bool) -> list[str]:
        return [sys.executable, "-m", "podsearch", "--config", str(self.config_file), "--data", str(data), "-v",
                "reindex", *(["--full"] if full else [])]

    def calibrate(self) -> dict[str, float]:
        """Run one reindex of the base uninterrupted and time its phases from the log lines."""
        data = self.copy_base("calibration")
        lines = _LogReader(subprocess.Popen(self.command(data, False), stderr=subprocess.PIPE, stdout=subprocess.DEVNULL))
        lines.proc.wait(timeout=300)
        lines.join()
        seen = [(t, phase) for t, phase in lines.phases()]
        for (t0, phase), (t1, _) in zip(seen, seen[1:]):
            self.durations[phase] = t1 - t0
        missing = set(TARGETS) - set(self.durations)
        if missing or lines.proc.returncode != 0:
            raise RuntimeError(f"calibration run exited {lines.proc.returncode}, phases missing: {missing}\n{lines.text()}")
        shutil.rmtree(data)
        return self.durations


def _stat(pid: int) -> tuple[int, int] | None:
    """(parent pid, start time in clock ticks) of a live process, or None when it is gone (or a zombie)."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text[text.rindex(")") + 2:].split()  # after "pid (comm) "
    if fields[0] == "Z":
        return None
    return int(fields[1]), int(fields[19])


def _children(pid: int) -> set[int] | None:
    """The children of ``pid`` from /proc/<pid>/task/*/children (None where the kernel does not say)."""
    out: set[int] = set()
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return out
    for task in tasks:
        try:
            out.update(int(c) for c in Path(f"/proc/{pid}/task/{task}/children").read_text().split())
        except FileNotFoundError:
            return None if task == tasks[0] and not out else out
        except OSError:
            continue
    return out


def descendants(pid: int) -> dict[int, int]:
    """{pid: start time} of every live process below ``pid`` (children, their children...)."""
    found: dict[int, int] = {}
    frontier = [pid]
    while frontier:
        parent = frontier.pop()
        children = _children(parent)
        if children is None:  # no children files here: scan every process for its parent
            children = {int(e) for e in os.listdir("/proc") if e.isdigit() and (st := _stat(int(e))) and st[0] == parent}
        for child in children:
            if child not in found and (st := _stat(child)) is not None:
                found[child] = st[1]
                frontier.append(child)
    return found


def survivors(seen: dict[int, int]) -> list[int]:
    """The processes of ``seen`` still alive (the same process: same pid and start time)."""
    return [pid for pid, start in seen.items() if (st := _stat(pid)) is not None and st[1] == start]


class ChildWatcher(threading.Thread):
    """Records every process below ``pid`` while it runs (polled every 20 ms): what must not outlive it."""

    def __init__(self, pid: int) -> None:
        super().__init__(daemon=True)
        self.pid = pid
        self.seen: dict[int, int] = {}
        self._stop_event = threading.Event()
        self.start()

    def run(self) -> None:
        while not self._stop_event.wait(0.02) and _stat(self.pid) is not None:
            self.seen.update(descendants(self.pid))

    def stop(self) -> dict[int, int]:
        self._stop_event.set()
        self.join(timeout=5)
        return self.seen


def wait_for_no_survivors(seen: dict[int, int], timeout: float = 10.0) -> list[int]:
    """Wait up to ``timeout`` for every process of ``seen`` to be gone; returns those still alive."""
    deadline = time.monotonic() + timeout
    while (alive := survivors(seen)) and time.monotonic() < deadline:
        time.sleep(0.05)
    return alive


class _LogReader(threading.Thread):
    """Collects a process's stderr lines with the time each arrived."""

    def __init__(self, proc: subprocess.Popen) -> None:
        super().__init__(daemon=True)
        self.proc = proc
        self.lines: list[tuple[float, str]] = []
        self.cond = threading.Condition()
        self.start()

    def run(self) -> None:
        assert self.proc.stderr is not None
        for raw in self.proc.stderr:
            with self.cond:
                self.lines.append((time.monotonic(), raw.decode("utf-8", "replace").rstrip()))
                self.cond.notify_all()
        with self.cond:
            self.cond.notify_all()

    def phases(self) -> list[tuple[float, str]]:
        with self.cond:
            return [(t, name) for t, line in self.lines for key, name in PHASES.items() if key in line]

    def wait_for(self, phase: str, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        with self.cond:
            while not any(name == phase for _, name in self.phases()):
                left = deadline - time.monotonic()
                if left <= 0 or (not self.is_alive() and self.proc.poll() is not None):
                    return False
                self.cond.wait(min(left, 0.2))
        return True

    def text(self) -> str:
        with self.cond:
            return "\n".join(line for _, line in self.lines)


@dataclass
class Trial:
    n: int
    full: bool
    target: str
    delay: float
    phase: str = ""  # the phase the last log line named when the process died
    killed: bool = False
    index_was: str = ""  # "base" or "reference": which good index served after the kill
    model_was: str = ""
    seconds: float = 0.0


def run_trial(scenario: Scenario, n: int, rng: random.Random) -> Trial:
    started = time.monotonic()
    target = TARGETS[n % len(TARGETS)]
    # Up to 80% of the phase's measured length: on a busy machine a phase may run faster than it did once.
    # Every phase is hit both in an incremental run and a --full one (which rebuilds into a new generation).
    full = (n // len(TARGETS)) % 2 == 1
    # A save takes a few milliseconds, an incremental one (new episodes folded in) under 2 ms on a fast machine:
    # within 1 ms of its folder appearing, or the process may have finished.
    length = (0.004 if full else 0.001) if target == "model-save" else 0.8 * scenario.durations[target]
    trial = Trial(n=n, full=full, target=target, delay=rng.uniform(0, length))
    data = scenario.copy_base(f"trial-{n}")
    reader = _LogReader(subprocess.Popen(scenario.command(data, trial.full), stderr=subprocess.PIPE,
                                         stdout=subprocess.DEVNULL))
    if target == "model-save":
        # Saving takes a few milliseconds, less than a log line takes to arrive: watch the folder instead.
        # Polling costs CPU the reindex needs: sleep through most of the fit first.
        if (reader.wait_for("model-fit", timeout=300) and not time.sleep(0.6 * scenario.durations["model-fit"])
                and _wait_for_tmp(data / "model", reader.proc)):
            time.sleep(trial.delay)
    elif reader.wait_for(target, timeout=300):
        time.sleep(trial.delay)
    if reader.proc.poll() is None:
        os.kill(reader.proc.pid, signal.SIGKILL)
        trial.killed = True
    reader.proc.wait(timeout=60)
    reader.join(timeout=10)
    phases = reader.phases()
    trial.phase = phases[-1][1] if phases else "starting"
    if not trial.killed and reader.proc.returncode != 0:
        raise AssertionError(f"trial {n}: reindex exited {reader.proc.returncode}\n{reader.text()}")
    check_after_kill(scenario, data, trial)
    _check(reindex(scenario.config(data)))
    after = snapshot(data)
    for part in ("catalog", "index", "model"):
        if after[part] != scenario.reference[part]:
            raise AssertionError(f"trial {n} ({trial.phase}, full={trial.full}): the {part} after recovery differs "
                                 "from an uninterrupted run")
    leftovers = [name for names in generation_dirs(data).values() for name in names if name.endswith(".tmp")]
    if leftovers:
        raise AssertionError(f"trial {n}: half-written generations left after recovery: {leftovers}")
    shutil.rmtree(data)
    trial.seconds = round(time.monotonic() - started, 2)
    return trial


def _wait_for_tmp(root: Path, proc: subprocess.Popen, timeout: float = 120.0) -> bool:
    """Poll (without sleeping) until a ``.tmp`` generation folder appears under ``root``."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            if any(name.endswith(".tmp") for name in os.listdir(root)):
                return True
        except FileNotFoundError:
            pass
        time.sleep(0.001)
    return False


def check_after_kill(scenario: Scenario, data: Path, trial: Trial) -> None:
    """The catalog is intact and the last good index and model serve."""
    status = integrity(data)
    if status != "ok":
        raise AssertionError(f"trial {trial.n}: catalog integrity_check says {status!r}")
    docs = index_docs(data)
    trial.index_was = _which(docs, scenario, "index")
    neighbours = model_neighbours(data)
    trial.model_was = _which(neighbours, scenario, "model")
    library = Library(data)
    try:
        result = library.search(SearchRequest(q="open source"))
        if not result.hits:
            raise AssertionError(f"trial {trial.n}: a search after the kill found nothing")
        some = next(iter(neighbours))
        if not library.similar(some, 5).similar:
            raise AssertionError(f"trial {trial.n}: similar after the kill found nothing")
    finally:
        library.close()


def _which(value: Any, scenario: Scenario, part: str) -> str:
    if value == scenario.base_state[part]:
        return "base"
    if value == scenario.reference[part]:
        return "reference"
    raise AssertionError(f"after the kill the {part} is neither the last good one nor the new one")


def _check(report) -> None:
    if report.failed:
        raise RuntimeError(f"reindex failed: {report.errors}")


def run(corpus: Path, workdir: Path, runs: int, seed: int, log=print) -> dict[str, Any]:
    rng = random.Random(seed)
    scenario = Scenario(corpus, workdir).start()
    try:
        durations = scenario.calibrate()
        log(f"phase lengths (s): {json.dumps({k: round(v, 3) for k, v in durations.items()})}")
        trials = []
        for n in range(runs):
            trial = run_trial(scenario, n, rng)
            log(f"trial {n:3d}: full={trial.full!s:5} target={trial.target:10} delay={trial.delay:.3f}s "
                f"-> killed in {trial.phase if trial.killed else 'nothing (it had finished)'}; served index="
                f"{trial.index_was}, model={trial.model_was}; {trial.seconds:.1f}s")
            trials.append(trial)
    finally:
        scenario.stop()
    return {
        "runs": runs,
        "seed": seed,
        "killed": sum(t.killed for t in trials),
        "phases": dict(Counter(t.phase for t in trials if t.killed)),
        "served_after_kill": dict(Counter(f"index={t.index_was}, model={t.model_was}" for t in trials)),
        "phase_seconds": {k: round(v, 3) for k, v in durations.items()},
        "trial_seconds_mean": round(sum(t.seconds for t in trials) / max(1, len(trials)), 2),
    }


def run_site_kills(corpus: Path, workdir: Path, kills: int, seed: int, log=print) -> dict[str, Any]:
    """The whole site corpus (25 feeds read as files) under a running server that four clients search all along:
    one full reindex timed, then ``kills`` of ``reindex --full`` killed with SIGKILL at random moments of that
    length, each checked for processes that outlive it, then one more reindex, which must exit 0."""
    from conftest import start_server
    from soak.load import Tally, client, drain, episode_ids

    rng = random.Random(seed)
    feeds = sorted(str(p) for p in (corpus / "site" / "feeds").glob("*.xml"))
    config = workdir / "site.toml"
    config.write_text("feeds = [\n" + "".join(f'  "{f}",\n' for f in feeds) + "]\n", encoding="utf-8")
    data = workdir / "data"
    command = [sys.executable, "-m", "podsearch", "--config", str(config), "--data", str(data), "-v", "reindex"]

    def reindex_run(*args: str) -> tuple[int, float, str]:
        started = time.monotonic()
        proc = subprocess.run([*command, *args], capture_output=True, text=True, timeout=1800)
        return proc.returncode, time.monotonic() - started, proc.stderr

    code, first_seconds, err = reindex_run()
    if code != 0:
        raise RuntimeError(f"the first reindex exited {code}: {err[-2000:]}")
    code, full_seconds, err = reindex_run("--full")
    if code != 0:
        raise RuntimeError(f"the timed --full reindex exited {code}: {err[-2000:]}")
    log(f"first reindex {first_seconds:.1f} s, reindex --full {full_seconds:.1f} s")
    ids = episode_ids(data)
    live = start_server(data, "--no-access-log")
    drain(live.proc)
    tally, stop = Tally(), threading.Event()
    port = int(live.base.rsplit(":", 1)[1])
    clients = [threading.Thread(target=client, args=("127.0.0.1", port, ids, stop, tally, n), daemon=True)
               for n in range(4)]
    for c in clients:
        c.start()
    trials: list[dict[str, Any]] = []
    try:
        for n in range(kills):
            proc = subprocess.Popen([*command, "--full"], stderr=subprocess.PIPE, stdout=subprocess.DEVNULL)
            watcher, reader = ChildWatcher(proc.pid), _LogReader(proc)
            delay = rng.uniform(0.05, 0.95) * full_seconds
            time.sleep(delay)
            killed = proc.poll() is None
            if killed:
                os.kill(proc.pid, signal.SIGKILL)
            proc.wait(timeout=60)
            seen = watcher.stop()
            reader.join(timeout=10)
            alive = wait_for_no_survivors(seen)
            phases = reader.phases()
            trial = {"n": n, "delay_s": round(delay, 1), "killed": killed,
                     "phase": phases[-1][1] if phases else "starting", "children_seen": len(seen),
                     "survivors": len(alive), "requests_so_far": sum(len(v) for v in tally.latencies.values()),
                     "client_errors_so_far": len(tally.errors)}
            for pid in alive:  # not to leave them behind on the machine; counted as a failure above
                os.kill(pid, signal.SIGKILL)
            trials.append(trial)
            log(json.dumps(trial))
        code, last_seconds, err = reindex_run()
    finally:
        stop.set()
        for c in clients:
            c.join(timeout=60)
        live.stop()
    counts = snapshot_counts(data)
    summary = {
        "kills": sum(t["killed"] for t in trials), "phases": dict(Counter(t["phase"] for t in trials if t["killed"])),
        "survivors": sum(t["survivors"] for t in trials), "children_seen": [t["children_seen"] for t in trials],
        "last_exit": code, "last_seconds": round(last_seconds, 1),
        "last_took_over": "ended without releasing its lock" in err, **counts,
        "requests": sum(len(v) for v in tally.latencies.values()), "client_errors": len(tally.errors),
        "first_client_errors": tally.errors[:5], "first_seconds": round(first_seconds, 1),
        "full_seconds": round(full_seconds, 1), "integrity": integrity(data),
    }
    problems = []
    if summary["survivors"]:
        problems.append("processes of a killed reindex survived it")
    if code != 0:
        problems.append(f"the reindex after the kills exited {code}: {err[-1000:]}")
    if summary["client_errors"]:
        problems.append("searches failed while reindexes were killed")
    summary["problems"] = problems
    return summary


def snapshot_counts(data: Path) -> dict[str, int]:
    from podsearch.catalog import Catalog

    with Catalog.in_dir(data) as cat:
        counts = cat.counts()
    docs = index_docs(data)
    return {"shows": counts["shows"], "episodes": counts["episodes"], "index_documents": len(docs)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--site-kills", type=int, default=0,
                        help="instead: the whole site corpus under a searched server, N reindexes killed, one more")
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--seed", type=int, default=int(time.time()))
    parser.add_argument("--corpus", type=Path, default=HERE.parents[2] / "shared" / "corpus")
    parser.add_argument("--workdir", type=Path, default=None, help="default: a new temporary folder")
    args = parser.parse_args()
    import tempfile

    with tempfile.TemporaryDirectory(prefix="podsearch-crash-") as tmp:
        if args.site_kills:
            summary = run_site_kills(args.corpus, args.workdir or Path(tmp), args.site_kills, args.seed,
                                     log=lambda line: print(line, file=sys.stderr))
        else:
            summary = run(args.corpus, args.workdir or Path(tmp), args.runs, args.seed)
    print(json.dumps(summary, indent=2))
    sys.exit(1 if summary.get("problems") else 0)


if __name__ == "__main__":
    main()
