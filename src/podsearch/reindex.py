"""The pipeline: feeds into the catalog, then the Whoosh index and the similarity model.

The CLI (and a scheduler) call :func:`reindex`; :func:`import_jsonl` is the same for JSON-lines exports.
"""

from __future__ import annotations

import json
import logging
import re
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from . import languages
from .catalog import Catalog
from .config import Config
from .documents import CatalogDocuments
from .engines import Engine, open_engine
from .episodes import Chapter, Episode
from .errors import ConfigError, FetchError, PodsearchError, TranscriptError
from .generations import Generations
from .ingest.feeds import parse_feed, slugify
from .ingest.fetch import Fetcher, FetchLimits, read_local
from .ingest.jsonl import read_jsonl
from .ingest.transcripts import decode_bytes, parse_transcript, pick_order
from .lock import ReindexLock
from .progress import Progress
from .similar import ModelParams, SimilarModel, fold_in_catalog, hashes_digest, same_params
from .watches import notify

log = logging.getLogger(__name__)


@dataclass
class Report:
    feeds: int = 0
    feeds_unchanged: int = 0
    feeds_failed: int = 0
    new: int = 0
    updated: int = 0
    unchanged: int = 0
    gone: int = 0
    transcripts_fetched: int = 0
    transcripts_failed: int = 0
    transcripts_empty: int = 0  # served but blank: a warning, not a failure (the publisher's file is empty)
    index: dict[str, int] = field(default_factory=dict)
    model: str = ""
    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    seconds: dict[str, float] = field(default_factory=dict)
    # Watches (podsearch.watches), when there are any: counts and failed deliveries. A failed delivery is kept
    # for the next run and does not make the run failed: the feeds, the index and the model are fine.
    webhooks: dict[str, int] = field(default_factory=dict)
    webhook_errors: list[str] = field(default_factory=list)

    @property
    def failed(self) -> bool:
        return bool(self.feeds_failed or self.transcripts_failed or self.errors)

    @property
    def exit_code(self) -> int:
        return 1 if self.failed else 0

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "failed": self.failed}


def data_paths(data_dir: Path) -> dict[str, Path]:
    return {"catalog": data_dir / Catalog.FILENAME, "index": data_dir / "index", "model": data_dir / "model"}


def all_sources(config: Config, catalog: Catalog) -> list[str]:
    """Feeds from the config, then feeds registered with ``podsearch add``, without repeats."""
    sources = list(config.feeds)
    for row in catalog.feeds():
        if row["source"] not in sources and not row["source"].startswith("import:"):
            sources.append(row["source"])
    return sources


def known_sources(config: Config) -> list[str]:
    """Every feed a reindex would read: the config's and those registered with ``podsearch add``."""
    if config.feeds:
        return list(config.feeds)
    path = config.data_dir / Catalog.FILENAME
    if not path.exists():
        return []
    with Catalog(path) as catalog:
        return all_sources(config, catalog)


def add_feed(config: Config, source: str) -> str:
    """Register a feed (an http(s) URL or a local file) for the next reindex; returns it as stored."""
    if "://" not in source:
        path = Path(source).expanduser()
        if not path.is_file():
            raise ConfigError(f"{source} is neither an http(s) URL nor a file")
        source = str(path.resolve())
    elif not re.match(r"^https?://", source, re.I):
        raise ConfigError("only http(s) URLs and local paths can be added")
    with Catalog.in_dir(config.data_dir) as catalog:
        catalog.set_feed_state(source)
    return source


def _is_url(source: str) -> bool:
    return urlsplit(source).scheme.lower() in {"http", "https"}


class _Ingest:
    """One reindex's ingest of feeds into the catalog."""

    def __init__(self, config: Config, catalog: Catalog, report: Report, progress: Progress,
                 prune: bool = False) -> None:
        self.config = config
        self.catalog = catalog
        self.report = report
        self.progress = progress
        self.prune = prune
        timeout = float(config.fetch_timeout)
        base = dict(connect_timeout=min(10.0, timeout), read_timeout=timeout, total_timeout=timeout * 2,
                    allow_private=bool(config.allow_private_hosts))
        self.feed_fetcher = Fetcher(FetchLimits(max_bytes=int(config.max_feed_bytes), **base))
        self.item_fetcher = Fetcher(FetchLimits(max_bytes=int(config.max_transcript_bytes), **base))

    def close(self) -> None:
        self.feed_fetcher.close()
        self.item_fetcher.close()

    def run(self, sources: list[str]) -> None:
        self.progress.phase("feeds", len(sources))
        for source in sources:
            self.report.feeds += 1
            try:
                self.feed(source)
            except PodsearchError as exc:
                self.report.feeds_failed += 1
                self.report.errors.append(f"feed {source}: {exc}")
                log.warning("feed %s failed: %s", source, exc)
                self.catalog.set_feed_state(source, last_fetch=time.time(), last_status="failed", last_error=str(exc))
            self.progress.advance()

    def _show_id(self, source: str, title: str) -> str:
        known = self.catalog.show_id_for_source(source)
        if known:
            return known
        candidate = slugify(title)
        n = 2
        while self.catalog.show_id_taken(candidate, source):
            candidate = f"{slugify(title)}-{n}"
            n += 1
        return candidate

    def feed(self, source: str) -> None:
        state = self.catalog.feed_state(source) or {}
        result = self.feed_fetcher.fetch_any(source, etag=state.get("etag"),
                                             last_modified=state.get("last_modified"))
        if result.not_modified and state.get("show_id") and state.get("last_status") == "ok":
            self.report.feeds_unchanged += 1
            count = sum(1 for _ in self.catalog.episodes(state["show_id"]))
            self.report.unchanged += count
            self.catalog.set_feed_state(source, last_fetch=time.time())
            return
        if result.not_modified:  # the last run failed after fetching: read it again in full
            result = self.feed_fetcher.fetch_any(source)
        base = result.url if _is_url(result.url) else str(Path(source).expanduser())
        probe = parse_feed(result.content, source, base_url=base, content_type=result.content_type)
        show_id = self._show_id(source, probe.show.title)
        parsed = parse_feed(result.content, source, base_url=base, show_id=show_id,
                            content_type=result.content_type) if show_id != probe.show.id else probe
        self.report.warnings.extend(parsed.warnings)
        episodes = self._qualify_ids(parsed.episodes, show_id)
        missing = self._attach_transcripts(source, episodes)
        # A transcript or chapters that failed are tried again next time, so the next run must not be
        # answered "304 Not Modified" and skip the feed: keep no validators until everything was read.
        etag, last_modified = (result.etag, result.last_modified) if not missing else (None, None)
        with self.catalog.transaction():
            self.catalog.upsert_show(parsed.show)
            for ep in episodes:
                outcome = self.catalog.upsert_episode(ep)
                setattr(self.report, outcome, getattr(self.report, outcome) + 1)
            self.report.gone += self.catalog.mark_gone(show_id, [e.id for e in episodes], prune=self.prune)
            self.catalog.set_feed_state(source, show_id=show_id, etag=etag, last_modified=last_modified,
                                        last_fetch=time.time(), last_status="ok", last_error=None)

    def _qualify_ids(self, episodes: list[Episode], show_id: str) -> list[Episode]:
        """An id already owned by another show (one guid in two feeds) is qualified with this show's id."""
        for ep in episodes:
            owner = self.catalog.episode_owner(ep.id)
            if owner is not None and owner != show_id:
                ep.id = f"{show_id}/{ep.id}"
        return episodes

    def _attach_transcripts(self, source: str, episodes: list[Episode]) -> int:
        """Fetch what each episode still needs: its transcript and its JSON chapters.

        An episode whose links did not change keeps what the catalog already holds, so an unchanged
        episode in a changed feed costs no request; what is still missing (a failure last time) is tried again.
        Returns how many episodes still miss something (a transcript or chapters that could not be read).
        """
        todo: list[tuple[Episode, bool, bool]] = []
        for ep in episodes:
            old = self.catalog.episode(ep.id)
            same = old is not None and old.transcript_links == ep.transcript_links
            if same:
                ep.segments, ep.transcript_source = old.segments, old.transcript_source
            if same and ep.chapters_url and old.chapters_url == ep.chapters_url:
                ep.chapters = old.chapters
            if same and not ep.language and ep.segments:
                # As for a fetched transcript below: a kept one says the language the same way, run after run.
                ep.language = languages.detect_language(ep.transcript_text)
            need_transcript = bool(ep.transcript_links) and not ep.segments
            need_chapters = bool(ep.chapters_url) and not ep.chapters
            if need_transcript or need_chapters:
                todo.append((ep, need_transcript, need_chapters))
        if not todo:
            return 0
        missing = 0
        self.progress.phase(f"transcripts of {source}", len(todo))
        with ThreadPoolExecutor(max_workers=max(1, int(self.config.fetch_workers))) as pool:
            for (ep, _, _), extras in zip(todo, pool.map(lambda job: self._fetch_episode_extras(*job), todo)):
                if extras.transcript:
                    name = f"transcripts_{extras.transcript}"
                    setattr(self.report, name, getattr(self.report, name) + 1)
                self.report.errors.extend(f"feed {source}: episode {ep.id!r}: {p}" for p in extras.problems)
                self.report.warnings.extend(f"feed {source}: episode {ep.id!r}: {w}" for w in extras.warnings)
                missing += bool(extras.problems)
                self.progress.advance()
                if not ep.language and ep.segments:
                    # Feeds that declare no language were only guessed from titles and notes; the transcript says more.
                    ep.language = languages.detect_language(ep.transcript_text)
        return missing

    def _get(self, url: str, local: bool) -> tuple[bytes, str, str]:
        """(body, served type, served charset); the charset is what the server declared, if anything."""
        if local:
            return read_local(url, int(self.config.max_transcript_bytes)), "", ""
        result = self.item_fetcher.fetch(url, trusted=False)
        return result.content, result.content_type or "", result.charset or ""

    def _fetch_episode_extras(self, ep: Episode, need_transcript: bool, need_chapters: bool) -> _Extras:
        """Runs in a worker thread: sets ep.segments / ep.chapters, and says how it went (counted by the caller)."""
        extras = _Extras()
        if need_transcript:
            tried: list[str] = []
            empty: list[str] = []
            for link in pick_order(ep.transcript_links):
                try:
                    data, served_type, charset = self._get(link.url, link.local)
                    if not decode_bytes(data, charset).strip():
                        empty.append(link.url)
                        continue
                    # The feed's type names the format; the server's charset says how to read the bytes.
                    mime = (link.type or served_type) + (f"; charset={charset}" if charset else "")
                    ep.segments = parse_transcript(data, mime, url=link.url)
                    ep.transcript_source = link.url
                    extras.transcript = "fetched"
                    break
                except (FetchError, TranscriptError) as exc:
                    tried.append(str(exc))
            else:
                if tried:
                    extras.transcript = "failed"
                    extras.problems.append("no transcript could be read: " + "; ".join(tried + [
                        f"empty transcript ({url})" for url in empty]))
                else:
                    extras.transcript = "empty"
                    extras.warnings.append("the transcript is empty (" + ", ".join(empty) + "); episode kept without one")
        if need_chapters:
            try:
                data, _, _ = self._get(ep.chapters_url, ep.chapters_local)
                ep.chapters = parse_chapters(data)
            except (PodsearchError, ValueError) as exc:
                extras.problems.append(f"chapters {ep.chapters_url}: {exc}")
        return extras


@dataclass
class _Extras:
    transcript: str = ""  # "fetched", "failed", "empty" or "" (nothing asked)
    problems: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def parse_chapters(data: bytes) -> list[Chapter]:
    """The Podcasting 2.0 JSON chapters format: {"chapters": [{"startTime", "title", ...}]}."""
    try:
        doc = json.loads(data.decode("utf-8-sig", errors="replace"))
    except json.JSONDecodeError as exc:
        raise ValueError(f"chapters are not JSON ({exc.msg})") from None
    out = []
    for ch in (doc.get("chapters") if isinstance(doc, dict) else None) or []:
        if not isinstance(ch, dict) or ch.get("toc") is False:
            continue
        try:
            start = float(ch.get("startTime", 0))
        except (TypeError, ValueError):
            continue
        end = ch.get("endTime")
        try:
            end = float(end) if end is not None else None
        except (TypeError, ValueError):
            end = None
        out.append(Chapter(start=start, end=end, title=str(ch.get("title") or ""), url=str(ch.get("url") or ""),
                           img=str(ch.get("img") or "")))
    out.sort(key=lambda c: c.start)
    return out


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
    log.info("reindex: writing the index (%s)", "full rebuild" if full or not index.exists() else "incremental")
    progress.phase("index", total)
    report.index = index.sync(CatalogDocuments(catalog, hashes), full=full, progress=progress.advance, hashes=hashes)
    report.seconds["index"] = round(time.perf_counter() - started, 3)
    started = time.perf_counter()
    params = params or ModelParams()
    saved = SimilarModel.saved_params(generations) or {}
    if not full and same_params(saved, params) and saved.get("digest") == hashes_digest(hashes):
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
        model = SimilarModel.fit(catalog, params, hashes=hashes)
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


def ingest(config: Config, catalog: Catalog, sources: list[str] | None = None, *, prune: bool = False,
           progress: Progress | None = None, report: Report | None = None) -> Report:
    """Read feeds (default: every known source) and their transcripts into ``catalog``; nothing else.

    The index and the model are left alone (:func:`reindex` brings them in line afterwards).
    """
    progress = progress or Progress()
    report = report or Report()
    started = time.perf_counter()
    worker = _Ingest(config, catalog, report, progress, prune=prune)
    sources = sources if sources is not None else all_sources(config, catalog)
    log.info("reindex: reading %d feeds", len(sources))
    try:
        worker.run(sources)
    finally:
        worker.close()
    report.seconds["ingest"] = round(time.perf_counter() - started, 3)
    return report


def reindex(config: Config, *, full: bool = False, prune: bool = False, wait: bool = False,
            progress: Progress | None = None, sources: list[str] | None = None) -> Report:
    """Fetch every feed into the catalog, then update the index and refit the model."""
    progress = progress or Progress()
    data_dir = config.data_dir
    report = Report()
    with ReindexLock(data_dir, wait=wait):
        catalog = Catalog.in_dir(data_dir)
        run_id = catalog.start_run()
        try:
            ingest(config, catalog, sources, prune=prune, progress=progress, report=report)
            rebuild_derived(data_dir, catalog, report, progress, full=full, engine=open_engine(data_dir, config))
            tell_watches(config, catalog, report, progress)
            catalog.finish_run(run_id, report.to_dict())
            log.info("reindex: finished")
        finally:
            progress.done()
            catalog.close()
    return report


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
    with catalog.transaction():
        for item in read_jsonl(path):
            if isinstance(item, PodsearchError):
                report.errors.append(str(item))
                continue
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
    report = Report()
    data_dir = config.data_dir
    if not Path(path).is_file():
        raise PodsearchError(f"{path}: no such file")
    with ReindexLock(data_dir, wait=wait):
        catalog = Catalog.in_dir(data_dir)
        run_id = catalog.start_run()
        try:
            import_lines(catalog, path, progress=progress, report=report)
            rebuild_derived(data_dir, catalog, report, progress, full=full, engine=open_engine(data_dir, config))
            tell_watches(config, catalog, report, progress)
            catalog.finish_run(run_id, report.to_dict())
        finally:
            progress.done()
            catalog.close()
    return report
