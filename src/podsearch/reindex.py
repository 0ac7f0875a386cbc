"""The pipeline: feeds into the catalog, then the Whoosh index and the similarity model.

The CLI (and a scheduler) call :func:`reindex`; :func:`import_jsonl` is the same for JSON-lines exports.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from .catalog import Catalog
from .config import Config
from .documents import CatalogDocuments
from .engines import Engine, open_engine
from .errors import PodsearchError, Terminated
from .generations import Generations
from .ingest.jsonl import ImportedLine, read_jsonl
from .ingest.run import ingest
from .lock import ReindexLock
from .progress import Progress
from .report import Report
from .similar import ModelParams, SimilarModel, fold_in_catalog, hashes_digest, same_params
from .similar.persist import damage
from .sources import check_removable, drop_feed, find_feed
from .watches import notify

__all__ = ["Report", "data_paths", "import_jsonl", "import_lines", "ingest", "locked_run", "rebuild_derived",
           "reindex", "remove_feed", "tell_watches"]

log = logging.getLogger(__name__)


def data_paths(data_dir: Path) -> dict[str, Path]:
    return {"catalog": data_dir / Catalog.FILENAME, "index": data_dir / "index", "model": data_dir / "model"}


def rebuild_derived(data_dir: Path, catalog: Catalog, report: Report, progress: Progress,
                    full: bool = False, params: ModelParams | None = None, engine: Engine | None = None) -> None:
    """Bring the index (of ``engine``, default the data folder's Whoosh index) and the similarity model in line
    with the catalog."""
    started = time.perf_counter()
    index = engine or open_engine(data_dir)
    generations = Generations(data_dir / "model")
    # Folders a killed run left half-written are removed here, not only at the next full rebuild.
    index.cleanup()
    generations.cleanup()
    hashes = catalog.hashes()  # read once: the catalog does not change while the reindex lock is held
    total = len(hashes)
    log.info("reindex: writing the index: %s", index.plan(full))
    progress.phase("index", total)
    report.index = index.sync(CatalogDocuments(catalog, hashes), full=full, progress=progress.advance, hashes=hashes)
    report.seconds["index"] = round(time.perf_counter() - started, 3)
    started = time.perf_counter()
    params = params or ModelParams()
    saved = SimilarModel.saved_params(generations) or {}
    damaged = damage(generations)  # a file cut short: refitted, not left "unchanged" (a stat per file)
    if damaged:
        log.warning("the similarity model's files are not as saved (%s); refitting it", damaged)
    if not full and same_params(saved, params) and saved.get("digest") == hashes_digest(hashes) and not damaged:
        report.model = "unchanged"
    elif total == 0:
        report.model = "empty catalog"
    elif not full and (folded := fold_in_catalog(generations, catalog, params, hashes=hashes)) is not None:
        # Only episodes were added, few since the last fit: folded into the saved model, saved as a new generation.
        log.info("reindex: saving the similarity model with the new episodes folded in")
        folded.save(generations)
        report.model = f"folded in {folded.folded - int(saved.get('folded', 0))}"
    else:
        log.info("reindex: fitting the similarity model")
        progress.phase("similarity model", None)
        # (each stage of the fit a step, where a scheduled run the server stops ends: server.StoppableRun)
        model = SimilarModel.fit(catalog, params, progress=lambda _stage: progress.advance(0), hashes=hashes)
        log.info("reindex: saving the similarity model")
        model.save(generations)
        report.model = "refitted"
    report.seconds["model"] = round(time.perf_counter() - started, 3)


def tell_watches(config: Config, catalog: Catalog, report: Report, progress: Progress) -> None:
    """POST the new episodes each watch matches (podsearch.watches); in the report, not in its failures."""
    started = time.perf_counter()
    progress.phase("watches", None)
    outcome = notify(config, catalog)
    if outcome is not None:
        report.webhooks = outcome.counts()
        report.webhook_errors = outcome.errors
        report.seconds["webhooks"] = round(time.perf_counter() - started, 3)


# The signals a service manager or a closed terminal stops a process with (systemd and ``docker stop`` send SIGTERM).
# By default they end the process at once, as ``kill -9`` does: until 6 December 2026 a run stopped so left the
# generation it was writing (as big as the index) until the next run, which took over its lock.
STOP_SIGNALS = (signal.SIGTERM, signal.SIGHUP)


@contextlib.contextmanager
def stop_signals_raise() -> Iterator[None]:
    """Within it, a stop signal raises :class:`Terminated` in this process's main thread, so that a run cleans up
    as after Ctrl-C. Only in the main thread (Python runs handlers there alone: a run of the server's scheduler
    is stopped by the server's own handler) and only for a signal left at its default action (one a caller
    ignores or handles stays so). A signal repeated while the run cleans up is ignored; a process forked meanwhile
    (the index writers, the model's counting processes) dies of it as before (its parent cleans up)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    owner = os.getpid()
    raised = False

    def stop(signum: int, _frame: object) -> None:
        nonlocal raised
        if os.getpid() != owner:  # a forked child: the default action (a traceback from every worker otherwise)
            signal.signal(signum, signal.SIG_DFL)
            os.kill(os.getpid(), signum)
            return
        if not raised:
            raised = True
            raise Terminated(signum)

    previous = {sig: signal.getsignal(sig) for sig in STOP_SIGNALS}
    for sig, handler in previous.items():
        if handler is signal.SIG_DFL:
            signal.signal(sig, stop)
    try:
        yield
    finally:
        for sig, handler in previous.items():
            if handler is signal.SIG_DFL:
                signal.signal(sig, handler)


def locked_run(config: Config, work: Callable[[Catalog, Report], None], *, full: bool = False,
               wait: bool = False, progress: Progress | None = None) -> Report:
    """The skeleton of every run that changes a data folder: under the reindex lock, ``work`` changes the
    catalog, then the index and the model are brought in line, the watches are told of new episodes, and the
    run is recorded with its report."""
    progress = progress or Progress()
    data_dir = config.data_dir
    report = Report()
    with stop_signals_raise(), ReindexLock(data_dir, wait=wait) as lock:
        if lock.taken_over:
            report.notes.append(lock.taken_over)  # (docs/cli.md: a note, as the other things a run repaired)
        catalog = Catalog.in_dir(data_dir)
        run_id = catalog.start_run()
        try:
            work(catalog, report)
            rebuild_derived(data_dir, catalog, report, progress, full=full, engine=open_engine(data_dir, config))
            tell_watches(config, catalog, report, progress)
            catalog.finish_run(run_id, report.to_dict())
            log.info("reindex: finished")
        except BaseException as exc:  # (`stats` said the run before "ok", as if this one had not been)
            # BaseException: Ctrl-C (KeyboardInterrupt) and SIGTERM (Terminated) too, which until 5 and 6 December
            # 2026 left the half-written generation (as big as the index) and the run recorded as "killed, or
            # running now".
            for folder in ("index", "model"):  # what this run half wrote (a full disk has its room back at once)
                Generations(data_dir / folder).drop_unfinished()
            why = ("interrupted (Ctrl-C)" if isinstance(exc, KeyboardInterrupt) else f"interrupted ({exc.name})"
                   if isinstance(exc, Terminated) else str(exc) or type(exc).__name__)
            try:
                catalog.abort_run(run_id, why)
            except sqlite3.Error as failed:  # (a full disk: the error being handled is the one that says why)
                log.warning("the run's failure could not be recorded in the catalog: %s", failed)
            raise
        finally:
            progress.done()
            catalog.close()
    return report


def reindex(config: Config, *, full: bool = False, prune: bool = False, wait: bool = False,
            progress: Progress | None = None, sources: list[str] | None = None) -> Report:
    """Fetch every feed into the catalog, then update the index and refit the model."""
    progress = progress or Progress()

    def work(catalog: Catalog, report: Report) -> None:
        ingest(config, catalog, sources, prune=prune, progress=progress, report=report)

    return locked_run(config, work, full=full, wait=wait, progress=progress)


def import_lines(catalog: Catalog, path: Path | str, *, progress: Progress | None = None,
                 report: Report | None = None) -> Report:
    """Store the episodes of a JSON-lines export in ``catalog``; a bad line is reported and the rest go in."""
    progress = progress or Progress()
    report = report or Report()
    if not Path(path).is_file():
        raise PodsearchError(f"{path}: no such file")
    started = time.perf_counter()
    progress.phase(f"import {path}", None)
    shows_seen: set[str] = set()
    lines_of: dict[str, int] = {}  # {episode id: the line that stored it}
    fed: dict[str, str] = {}  # {show id: its feed} of the shows a feed is read into

    def feed_of(show_id: str) -> str:
        if show_id not in fed:
            feeds = catalog.feeds_of_show(show_id)
            fed[show_id] = feeds[0]["source"] if feeds else ""
        return fed[show_id]

    with catalog.transaction():
        for item in read_jsonl(path):
            if isinstance(item, PodsearchError):
                report.errors.append(str(item))
                continue
            refused = _fed_already(item, catalog.episode_owner(item.episode.id), feed_of)
            if refused:
                report.errors.append(f"{path}: line {item.line_no}: {refused}")
                continue
            earlier = lines_of.get(item.episode.id)
            if earlier is not None:  # (until 5 December 2026 the last line silently won: "1 updated")
                report.warnings.append(f"{path}: line {item.line_no}: the id {item.episode.id!r} is also on line "
                                       f"{earlier}; an id is one episode: line {item.line_no} replaces line {earlier}")
            lines_of[item.episode.id] = item.line_no
            if item.show.id not in shows_seen:
                catalog.upsert_show(item.show)
                shows_seen.add(item.show.id)
            outcome = catalog.upsert_episode(item.episode)
            setattr(report, outcome, getattr(report, outcome) + 1)
            progress.advance()
    report.seconds["ingest"] = round(time.perf_counter() - started, 3)
    return report


def import_jsonl(config: Config, path: Path | str, *, full: bool = False, wait: bool = False,
                 progress: Progress | None = None) -> Report:
    """Import a JSON-lines export into the catalog, then update the index and the model."""
    progress = progress or Progress()
    if not Path(path).is_file():
        raise PodsearchError(f"{path}: no such file")

    def work(catalog: Catalog, report: Report) -> None:
        import_lines(catalog, path, progress=progress, report=report)

    return locked_run(config, work, full=full, wait=wait, progress=progress)


def _fed_already(item: ImportedLine, owner: str | None, feed_of: Callable[[str], str]) -> str:
    """Why an imported line may not be stored ("" if it may): a feed's episodes and shows are the feed's. An imported
    line with a feed episode's id took it over (a later feed run then stored the feed's episode under another id),
    and one whose show was a feed's show was marked gone by the feed's next run."""
    if owner is not None and feed_of(owner):
        return (f"the id {item.episode.id!r} is an episode of the show {owner!r}, read from the feed "
                f"{feed_of(owner)}; an import cannot replace it (give the line another id)")
    if feed_of(item.show.id):
        return (f"the show {item.show.id!r} is read from the feed {feed_of(item.show.id)}; an import cannot add to it "
                f"(give the line another show or show_id)")
    return ""


def remove_feed(config: Config, source: str, *, prune: bool = False, wait: bool = False,
                progress: Progress | None = None) -> Report:
    """Stop reading a feed registered with ``podsearch add`` (or left in the catalog): its episodes are kept,
    marked gone (deleted with ``prune``), and the index and the model follow. A feed the config file lists
    is refused: the config says what is read."""
    # (Catalog.existing: on a mistyped --data, "No catalog in ...", and nothing made there; until 5 December 2026
    # the folder and an empty catalog were made, then "No feed")
    with Catalog.existing(config.data_dir) as catalog:  # refuse before taking the lock
        check_removable(config, find_feed(catalog, source))

    def work(catalog: Catalog, report: Report) -> None:
        row = find_feed(catalog, source)
        note = drop_feed(catalog, row, prune=prune, read_now=set())
        report.feeds_dropped.append(row["source"])
        report.notes.append(f"removed {note}")

    return locked_run(config, work, wait=wait, progress=progress)
