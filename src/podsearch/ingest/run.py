"""One run's ingest: feeds and their transcripts and chapters read into the catalog.

Nothing here touches the index or the model (:mod:`podsearch.reindex` brings them in line afterwards).
"""

from __future__ import annotations

import logging
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

from .. import languages
from ..catalog import Catalog
from ..config import Config
from ..episodes import Episode
from ..errors import FetchError, PodsearchError, TranscriptError
from ..progress import Progress
from ..report import Report
from ..sources import all_sources
from .chapters import parse_chapters
from .feeds import parse_feed, slugify
from .fetch import Fetcher, FetchLimits, read_local
from .transcripts import decode_bytes, parse_transcript, pick_order

log = logging.getLogger(__name__)


def _is_url(source: str) -> bool:
    return urlsplit(source).scheme.lower() in {"http", "https"}


class FeedIngest:
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


def ingest(config: Config, catalog: Catalog, sources: list[str] | None = None, *, prune: bool = False,
           progress: Progress | None = None, report: Report | None = None) -> Report:
    """Read feeds (default: every known source) and their transcripts into ``catalog``; nothing else.

    The index and the model are left alone (:func:`reindex` brings them in line afterwards).
    """
    progress = progress or Progress()
    report = report or Report()
    started = time.perf_counter()
    worker = FeedIngest(config, catalog, report, progress, prune=prune)
    sources = sources if sources is not None else all_sources(config, catalog)
    log.info("reindex: reading %d feeds", len(sources))
    try:
        worker.run(sources)
    finally:
        worker.close()
    report.seconds["ingest"] = round(time.perf_counter() - started, 3)
    return report
