"""The Whoosh engine: podsearch's embedded default, and the only place that imports Whoosh.

Facts this engine respects (measured on whoosh3 3.54 and Whoosh 2.7.4): ``Searcher.refresh()`` keeps seeing
deleted documents, so a reader is opened again whenever the index's generation on disk moved; readers and
searchers are not thread-safe (this engine reads plain files: seek then read), the Index object is, so each
thread keeps its own reader of the current generation (opening one reads every segment's table of terms: a
tenth of a site search's time); one writer at a time; ``update_document`` twice for one id in one writer leaves
two copies, so each batch is de-duplicated; a full rebuild goes into a new generation folder swapped in atomically.
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import replace
from itertools import islice
from pathlib import Path
from typing import Any

from whoosh import collectors
from whoosh import index as windex
from whoosh.filedb.filestore import FileStorage
from whoosh.idsets import BitSet
from whoosh.query import And, AndMaybe, ConstantScoreQuery, DateRange, Every, MultiTerm, Not, NullQuery, NumericRange, Or, Term
from whoosh.searching import Searcher
from whoosh.writing import LockError

from ... import languages
from ...episodes import person_keys
from ...errors import PERMISSION_ADVICE, DataUnreadable, IndexMissing, PodsearchError, QueryError, ReindexRunning
from ...generations import Generations
from ...lru import LRU
from ...procs import bind_children_to_me
from .. import compounds
from ..base import (
    INCREMENTAL,
    DocumentSource,
    EngineHit,
    EngineQuery,
    EngineResult,
    Filters,
    SegmentCounts,
    TextAnalyzer,
    sync_plan,
)
from ..querytext import EVERY_WORD, SUGGEST_BELOW, any_word_first, check_text
from . import fast, spelling
from .analysis import SpokenAnalyzer, profile_analyzer
from .bounds import bound
from .build import BuildLimits, ParallelWriter, SerialWriter
from .facets import DocFacets
from .query import parse, query_terms, strategy
from .ranking import RANKING, Ranking
from .schema import SCHEMA_VERSION, make_schema, whoosh_fields
from .scoring import Expired, run, weighting
from .segments import segment_counts

log = logging.getLogger(__name__)

FILTER_CACHE = 64  # filters whose matching documents are kept (per index generation)
BOUND_CACHE = 256  # queries with expanding parts whose bounded form (or refusal) is kept
EXPANSION_CACHE = 1024  # expanding parts (a field's "kube*") whose words are kept per index generation
# Typeahead: a prefix that starts more than MANY_WORDS words of the index has its most frequent ones kept (per index
# generation): reading each word's frequency costs ~50 us, and "s" starts 6,290 words at 10,000 episodes (0.36 s).
MANY_WORDS = 256
TITLE_WORDS = 64  # title words a typeahead prefix is looked up with
TERMS_CACHE = 2048  # more than every one- and two-letter prefix (and the few longer ones) with that many words
APART_CACHE = 4096  # words and pairs whose other spelling (compounds.apart) is kept per index generation
PARALLEL_FROM = 200  # full rebuilds of this many episodes or more use several processes
BUILD_PROCS = 2
BUILD_BATCH = 50  # episodes handed to a worker process at a time
BUILD_LIMIT_MB = 256  # memory of an incremental writer's posting pool before it spills a run to disk


def _present(path: Path) -> bool:
    """Whether the generation folder holds an index; True for one whose table of contents cannot be read (Whoosh's
    ``exists_in`` opens it and raises) and for one this user may not list: it is there, and opening it says why it
    cannot be read."""
    if _unlisted(path) is not None:
        return True
    try:
        return windex.exists_in(str(path))
    except MemoryError:
        raise
    except Exception:
        return True


def _unlisted(path: Path) -> OSError | None:
    """Why the folder cannot be listed (a folder this user may not read), None if it can be or is not there.
    (Whoosh's storage lists a folder it may not read as empty: until 6 December 2026 such an index was "No index in
    ...; run 'podsearch reindex' first", and ``stats`` said 0 documents, exit 0.)"""
    try:
        os.listdir(path)
    except FileNotFoundError:
        return None
    except OSError as exc:
        return exc
    return None


def unreadable(path: Path | None, exc: BaseException) -> DataUnreadable:
    """The error of an index generation whose files cannot be read, naming it and what to do: a file damaged or cut
    short is rebuilt by a reindex; one this user may not read needs another user or the right to read it."""
    refused = isinstance(exc, PermissionError)
    return DataUnreadable(f"The search index in {path} cannot be read ({type(exc).__name__}: {exc}); "
                          + (f"{PERMISSION_ADVICE}." if refused else "run 'podsearch reindex' to rebuild it."),
                          "The search index cannot be read; the server's log says why.")


class WhooshEngine:
    """The live index in ``<data>/index/``; thread-safe (a searcher per call over its thread's own reader)."""

    name = "whoosh"

    def __init__(self, data_dir: Path | str, ranking: Ranking = RANKING, build_memory: int = 0) -> None:
        self.generations = Generations(Path(data_dir) / "index")
        self.ranking = ranking  # how searches rank (ranking.py); bench/ranking.py measures variants
        self.build_memory = build_memory  # MB a full rebuild may use (BuildLimits.for_memory); 0: no limit
        self._lock = threading.Lock()
        self._ix: Any = None
        self._stamp: tuple[str, float] = ("", 0.0)
        self._doc_facets: tuple[Any, DocFacets] | None = None
        self._filter_cache: LRU[tuple[Any, ...], BitSet] = LRU(FILTER_CACHE)
        self._bound_cache: LRU[tuple[Any, ...], Any] = LRU(BOUND_CACHE)
        self._expansions: tuple[tuple[Any, ...], dict[tuple[str, str], Any]] = ((), {})  # one generation's parts
        self._terms_cache: LRU[tuple[Any, ...], list[str]] = LRU(TERMS_CACHE)
        self._apart_cache: LRU[tuple[Any, ...], str] = LRU(APART_CACHE)
        self._local = threading.local()  # this thread's (index, reader)

    # -- opening --------------------------------------------------------------------------------
    def exists(self) -> bool:
        path = self.generations.current()
        return path is not None and _present(path)

    def _index(self) -> Any:
        stamp = self.generations.stamp()
        with self._lock:
            if self._ix is None or stamp != self._stamp:
                path = self.generations.current()
                if path is None or not _present(path):
                    raise IndexMissing(
                        f"No index in {self.generations.root.parent}. Run 'podsearch reindex' first.")
                # Read segments through plain file reads, not mmap: this Whoosh copies each mmapped part it
                # opens into a BytesIO, i.e. the whole index (660 MB at 10k episodes) on every new searcher.
                try:
                    self._ix = FileStorage(str(path), supports_mmap=False).open_index()
                except MemoryError:
                    raise
                except Exception as exc:  # a table of contents cut short or damaged, a folder it may not read
                    raise unreadable(path, _unlisted(path) or exc) from None
                self._stamp = stamp
            return self._ix

    def stamp(self) -> tuple[str, float]:
        return self.generations.stamp()

    def _searcher(self, weighting: Any = None) -> Any:
        """A searcher over this thread's reader, opened again when the live generation is another or a writer
        committed to it since (``latest_generation``: a listing of the folder). Closing it keeps the reader."""
        ix = self._index()
        held = getattr(self._local, "reader", None)
        if held is None or held[0] is not ix or held[1].generation() != ix.latest_generation():
            if held is not None:
                held[1].close()
                self._local.reader = None
            try:
                held = self._local.reader = (ix, ix.reader())
            except MemoryError:
                raise
            except Exception as exc:  # a segment cut short or damaged (Whoosh reads each one's tables here)
                raise unreadable(self.generations.current(), exc) from None
        return Searcher(held[1], closereader=False, fromindex=ix,
                        **({"weighting": weighting} if weighting is not None else {}))

    def schema_version(self) -> str:
        """The schema version of the live index ("1" for an index written before versions were kept apart)."""
        path = self.generations.current()
        marker = path / "SCHEMA_VERSION" if path else None
        return marker.read_text().strip() if marker and marker.exists() else "1"

    def plan(self, full: bool = False) -> str:
        return sync_plan(full, self.exists(), self.schema_version, SCHEMA_VERSION)

    def health(self) -> dict[str, Any]:
        return {}  # (an index in the data folder: open, or /readyz is not ready)

    def doc_count(self) -> int:
        ix = self._index()
        try:
            return ix.doc_count()  # (Whoosh opens a reader of every segment for it)
        except MemoryError:
            raise
        except Exception as exc:
            raise unreadable(self.generations.current(), exc) from None

    def size_bytes(self) -> int:
        path = self.generations.current()
        return sum(f.stat().st_size for f in path.iterdir()) if path else 0

    def cleanup(self) -> None:
        """Remove generation folders a killed run left half-written."""
        self.generations.cleanup()

    # -- writing --------------------------------------------------------------------------------
    def sync(self, source: DocumentSource, full: bool = False, progress: Callable[[int], None] | None = None,
             hashes: dict[str, str] | None = None) -> dict[str, int]:
        """Bring the index in line with ``source``: add new, update changed, delete removed documents.

        With ``full`` (or when there is no index yet) everything is written into a new generation folder
        that is then swapped in atomically. ``hashes``: the source's, when the caller has read them.
        """
        wanted = source.hashes() if hashes is None else hashes
        if self.plan(full) != INCREMENTAL:
            return self._rebuild(source, wanted, progress)
        try:
            ix = self._index()
            with self._searcher() as s:
                have = {f["id"]: f.get("content_hash") for f in s.all_stored_fields()}
        except MemoryError:
            raise
        except Exception as exc:  # an index that cannot be read is rebuilt, as one of an older schema is
            if isinstance(exc, PodsearchError) and not isinstance(exc, DataUnreadable):
                raise
            why = exc if isinstance(exc, DataUnreadable) else unreadable(self.generations.current(), exc)
            log.warning("%s; rebuilding it in full", str(why).split("; run ", 1)[0])
            return self._rebuild(source, wanted, progress)
        changed = [i for i, h in wanted.items() if have.get(i) != h]
        removed = [i for i in have if i not in wanted]
        if not changed and not removed:
            return {"added": 0, "updated": 0, "removed": 0}
        try:
            writer = ix.writer(timeout=5.0)
        except LockError:
            raise ReindexRunning("The index is locked by another writer; is another reindex running?") from None
        try:
            for episode_id in removed:
                writer.delete_by_term("id", episode_id)
            self._write(writer, source, changed, progress, update=True)
            writer.commit()
        except BaseException:
            # A commit that failed (a full disk) has closed the writer already: cancelling it again raised "This
            # writer is closed", which hid the cause (a traceback, and `stats` said that line). The half-written
            # segment is in the live folder, which the table of contents does not list: removed now, so that the
            # disk has its room back at once (until 5 December 2026 it stayed until the next commit that worked).
            with contextlib.suppress(Exception):
                if not writer.is_closed:
                    writer.cancel()
            _drop_unlisted_segments(ix)
            raise
        added = sum(1 for i in changed if i not in have)
        return {"added": added, "updated": len(changed) - added, "removed": len(removed)}

    def _rebuild(self, source: DocumentSource, wanted: dict[str, str],
                 progress: Callable[[int], None] | None) -> dict[str, int]:
        path = self.generations.new()
        ix = windex.create_in(str(path), make_schema())
        (path / "SCHEMA_VERSION").write_text(SCHEMA_VERSION)
        writer = self._bulk_writer(ix, len(wanted))
        try:
            self._write(writer, source, list(wanted), progress, update=False)
            # One segment per process (merged from the segments it wrote within its memory: build.py).
            writer.commit()
        except BaseException:
            writer.cancel()
            raise
        self.generations.publish(path)
        return {"added": len(wanted), "updated": 0, "removed": 0, "full": 1}

    def _bulk_writer(self, ix: Any, count: int) -> Any:
        """The writer of a full rebuild: several processes for big ones (analysis is the costly part and runs
        in parallel), within the memory budget (build.py)."""
        limits = BuildLimits.for_memory(self.build_memory, min(BUILD_PROCS, os.cpu_count() or 1), BUILD_BATCH)
        # The workers are forked; forking a process that runs other threads (the server's scheduler,
        # waitress) can deadlock the child on a lock held by another thread, so only a lone thread forks.
        alone = threading.active_count() == 1
        parallel = count >= PARALLEL_FROM and limits.procs > 1 and alone
        log.info("index: full rebuild of %d episodes: %s, posting pools of %d MB", count,
                 f"{limits.procs} writer processes" if parallel else "1 writer process", limits.pool_mb)
        if parallel:
            bind_children_to_me()  # the workers must not outlive a killed reindex (procs.py)
            return ParallelWriter(ix, limits)
        return SerialWriter(ix, limits)

    @staticmethod
    def _write(writer: Any, source: DocumentSource, ids: Iterable[str], progress: Callable[[int], None] | None,
               update: bool) -> None:
        add = writer.update_document if update else writer.add_document
        for doc in source.documents(dict.fromkeys(ids)):  # de-duplicated: one update per id per writer
            add(**whoosh_fields(doc))
            if progress:
                progress(1)

    # -- searching ------------------------------------------------------------------------------
    @staticmethod
    def profiles(searcher: Any, language: str = "") -> list[str]:
        """The analysis profiles a query is parsed for: the asked language's, else those in the index."""
        if language:
            return [languages.profile(language)]
        try:
            keys = [k.decode() if isinstance(k, bytes) else str(k) for k in searcher.reader().lexicon("analysis")]
        except Exception:  # an index without the field (schema 1): English only
            keys = []
        return keys or ["en"]

    def rank(self, text: str, limit: int = 1000, plain: bool = False) -> list[tuple[str, float]]:
        """(episode id, score) best first, with the search box's query logic; for evaluation."""
        with self._searcher(weighting(self.ranking)) as s:
            profiles = self.profiles(s)
            first, fallback = strategy(text, plain, profiles, self.ranking, self._apart(s, text, profiles, None))
            hits = run(s.search, first, limit=limit)
            if fallback is not None and len(hits) < self.ranking.relax_below:
                hits = run(s.search, fallback, limit=limit)
            return [(h["id"], float(h.score or 0.0)) for h in hits]

    def warm(self) -> None:
        """Read the per-generation facet values, spelling lexicon, document ids and the date order (newest first:
        the feeds') now rather than in the first search."""
        with self._searcher() as s:
            self._facet_counts(s, ())
            spelling.lexicon(s.reader())
            fast.doc_ids(s.reader())
            fast.date_places(s.reader(), newest=True)

    def _facet_counts(self, searcher: Any, docnums: Iterable[int]) -> dict[str, dict[str, int]]:
        """Show, year, language and person counts over the matching documents.

        Whoosh's ``groupedby`` reads a column value per match (and for persons, every person's postings)
        inside its scoring loop; instead each document's facet values are read once per index generation
        (document numbers are stable within one) and counted by :class:`DocFacets`.
        """
        reader = searcher.reader()
        key = (self.stamp()[0], reader.generation(), reader.doc_count_all())
        with self._lock:
            cached = self._doc_facets
        if cached is None or cached[0] != key:
            cached = (key, DocFacets(_doc_facet_values(reader), reader.doc_count_all()))
            with self._lock:
                self._doc_facets = cached
        return cached[1].count(docnums)

    def search(self, q: EngineQuery) -> EngineResult:
        text = q.text.strip()
        check_text(text)
        with self._searcher(weighting(self.ranking)) as s:
            profiles = self.profiles(s, q.filters.language)
            apart = self._apart(s, text, profiles, q.deadline) if text else ()
            query, fallback = strategy(text, False, profiles, self.ranking, apart) if text else (None, None)
            notes: list[str] = []
            if query is not None:
                try:
                    query, notes = self._bounded(s, query, q.deadline)
                except Expired:
                    return EngineResult(total=0, hits=[], timed_out=True)
            asked, terms = query, query_terms(query) if query is not None else {}
            looks_for_words = any(terms.values())  # (not -rust, published:2024)
            filt = _filter(q.filters)
            if query is None:
                query = filt or Every()
                filt = None
            elif filt is not None:
                filt = self._allowed(s, filt)
                if not filt:  # (Whoosh takes an empty set for no filter at all)
                    query, fallback, filt = NullQuery(), None, None
            sortedby: str | None = None  # by score
            if q.sort == "date" or (not looks_for_words and q.sort != "oldest"):  # (listed newest first)
                sortedby = "newest"
            elif q.sort == "oldest":
                sortedby = "oldest"
            relaxed = False
            found, timed_out = run(_page, query, s, q.page, q.per_page, filt, sortedby, q.deadline)
            all_words = found.total
            few = found.total < self.ranking.relax_below
            if fallback is not None and not timed_out and few and repr(fallback) != repr(query):
                try:
                    fallback, fallback_notes = self._bounded(s, fallback, q.deadline)
                except Expired:
                    fallback, timed_out = None, True
                if fallback is not None:
                    found2, timed_out = run(_page, fallback, s, q.page, q.per_page, filt, sortedby, q.deadline)
                    if found2.total > found.total:
                        found, query, relaxed, notes = found2, fallback, True, fallback_notes
            facets = self._facet_counts(s, found.results.docs()) if q.facets else {}
            suggestion = ""
            any_word = bool(text) and any_word_first(text, self.ranking.long_query_words)
            if q.suggest and text and not timed_out and (all_words < SUGGEST_BELOW or any_word):
                every = replace(self.ranking, long_query_words=EVERY_WORD)

                def count(words: str) -> int:  # episodes holding every word, with the request's filters, bounded
                    try:  # as the search is (a pattern the suggestion keeps expands no further than the search's)
                        first = self._bounded(s, strategy(words, False, profiles, every)[0], q.deadline)[0]
                    except (Expired, QueryError):
                        return 0
                    return int(run(_page, first, s, 1, 1, filt, None, q.deadline)[0].total)

                suggestion = spelling.suggestion(s, text, profiles, count, None if any_word else all_words)
            # Whoosh clamps a page past the last one to the last page: a page past the end has no hits.
            past_end = (q.page - 1) * q.per_page >= found.total
            hits = [] if past_end else [EngineHit(id=h["id"], score=float(h.score or 0.0)) for h in found]
            terms = terms if query is asked else query_terms(query)  # (the fallback's, or the filter's)
            return EngineResult(total=found.total, hits=hits, terms=terms, facets=facets,
                                suggestion=suggestion, relaxed=relaxed, all_words=all_words if relaxed else None,
                                timed_out=timed_out, notes=notes)

    def passages(self, ids: list[str], terms: list[str], width: int) -> list[float]:
        """The best transcript windows, from the index's positions (``fast.best_windows``); the document numbers
        from the generation's id list (``fast.doc_ids``)."""
        if not ids or not terms:
            return [0.0] * len(ids)
        with self._searcher() as s:
            numbers = fast.doc_ids(s.reader())[1]
            docnums = [numbers.get(e) for e in ids]
            return fast.best_windows(s, "transcript", docnums, sorted(set(terms)), width,
                                     self.ranking.fields).tolist()

    def _apart(self, searcher: Any, text: str, profiles: list[str], deadline: float | None) -> tuple[tuple[str, str], ...]:
        """The words of ``text`` to read both ways, one word or two (``compounds.apart``), each decision kept per index
        generation; the phrase counts stop at ``compounds.count_deadline`` (what a cut count decides: ``apart``)."""
        reader = searcher.reader()
        generation = (self.stamp()[0], reader.generation(), reader.doc_count_all(), tuple(profiles))
        counts = _Counts(searcher, [profile_analyzer(k) for k in profiles], profiles, self.ranking,
                         compounds.count_deadline(deadline))
        return compounds.apart(text, counts, self._apart_cache, generation)

    def _bounded(self, searcher: Any, query: Any, deadline: float | None) -> tuple[Any, list[str]]:
        """The query with its expansions bounded (``bounds.bound``), kept per index generation: the same
        wildcard asked again (a crawler's favourite) costs a lookup, and so does the same refusal."""
        if not _expands(query):
            return query, []
        reader = searcher.reader()
        generation = (self.stamp()[0], reader.generation(), reader.doc_count_all())
        key = (*generation, repr(query))
        found = self._bound_cache.get(key)
        if found is None:
            scope, seen = self._expansions
            if scope != generation or len(seen) > EXPANSION_CACHE:
                seen = {}
                self._expansions = (generation, seen)
            try:
                found = bound(query, reader, deadline, seen)
            except QueryError as exc:
                found = exc
            self._bound_cache.put(key, found)
        if isinstance(found, QueryError):
            raise QueryError(str(found))
        return found

    def _allowed(self, searcher: Any, filt: Any) -> BitSet:
        """The documents a filter lets through, kept per index generation for the filters asked most recently
        (a show's page, a year's archive): a date range alone reads hundreds of range terms."""
        reader = searcher.reader()
        key = (self.stamp()[0], reader.generation(), reader.doc_count_all(), repr(filt))
        docs = self._filter_cache.get(key)
        if docs is None:
            docs = BitSet(run(searcher.docs_for_query, filt), size=reader.doc_count_all())
            self._filter_cache.put(key, docs)
        return docs

    # -- typeahead ----------------------------------------------------------------------------
    def suggest(self, prefix: str, limit: int = 8, deadline: float | None = None) -> dict[str, list[tuple[str, str]]]:
        prefix = prefix.strip().lower()
        last = languages.words(prefix)
        word = last[-1] if last else prefix
        with self._searcher() as s:
            # The title words the prefix starts, the first TITLE_WORDS of them: "s" starts 1,000 at 10,000 episodes,
            # and each read costs (a page of eight titles needs few of them).
            started = list(islice(s.reader().expand_prefix("title", word), TITLE_WORDS))
            titles: Any = ConstantScoreQuery(Or([Term("title", t) for t in started])) if started else NullQuery()
            if len(last) > 1:  # the words before the last rank the titles that hold them (or whose show does) first,
                # and among them those where the last is a whole word ("practical ai 2": #2 before #20-#299)
                said = {t for key in self.profiles(s) for t in profile_analyzer(key).texts(" ".join(last[:-1]))}
                ranks = [Term(f, t) for t in sorted(said) for f in ("title", "show")] + [Term("title", word, boost=0.05)]
                titles = AndMaybe(titles, Or(ranks))
            # (Whoosh's default collector "replaces" the matcher as its top fills, which drops the optional part)
            top = collectors.TopCollector(limit=limit, usequality=False, replace=0)
            s.search_with_collector(titles, top)
            episodes = [(hit["id"], hit["title"]) for hit in top.results()]
            persons = self._frequent(s, "person_key", prefix, 3)
            terms = self._frequent(s, "words", word, limit)
        return {"episode": episodes, "person": [("", key) for key in persons],
                "term": [("", term) for term in terms]}

    def _frequent(self, searcher: Any, field: str, prefix: str, limit: int) -> list[str]:
        """The ``limit`` most frequent terms of a field that start with ``prefix``; kept per index generation when
        the prefix starts many, so a keystroke costs at most one such reading per prefix and generation."""
        reader = searcher.reader()
        key = (self.stamp()[0], reader.generation(), reader.doc_count_all(), field, prefix, limit)
        found = self._terms_cache.get(key)
        lexicon = spelling.loaded(reader) if field == "words" and prefix else None
        if found is None and lexicon is not None:  # (the words and their episodes in memory, made by warm: the
            # first keystroke of a letter read the frequency of every word it starts, 0.5-3 s on the site corpus
            # under load, until 5 December 2026; a word of ``words`` is held once an episode, its weight its count)
            group = lexicon.groups.get(prefix[:1])
            if group is None:
                return []
            likely = sorted(((int(n), w) for w, n in zip(group[0], group[1].tolist()) if w.startswith(prefix)),
                            reverse=True)[:4 * limit + 8]  # (ranked again by their episodes, as below)
            found = [w for _, w in sorted(((searcher.doc_frequency(field, w), w) for _, w in likely), reverse=True)[:limit]]
        if found is None:
            words = list(reader.expand_prefix(field, prefix))  # (listing them is cheap; their frequencies are not)
            ranked = sorted(((searcher.doc_frequency(field, w), _text(w)) for w in words), reverse=True)
            found = [word for _, word in ranked[:limit]]
            if len(words) > MANY_WORDS:
                self._terms_cache.put(key, found)
        return found

    def segment_counts(self, ids: list[str], terms: set[str], deadline: float | None = None,
                       cjk: dict[str, tuple[frozenset[str], ...]] | None = None,
                       always: int | None = None) -> dict[str, SegmentCounts]:
        if not ids or not terms:
            return {}
        with self._searcher() as s:
            return segment_counts(s, ids, terms, deadline, cjk, always)

    def analyzer(self, language: str) -> TextAnalyzer:
        return profile_analyzer(languages.profile(language))

    def read_as(self, language: str = "") -> list[str]:
        with self._searcher() as s:
            return self.profiles(s, language)

    # -- similar baseline ---------------------------------------------------------------------
    def more_like(self, episode_id: str, text: str, k: int = 10) -> list[tuple[str, float]]:
        """Whoosh's own ``more_like`` over the transcript (a baseline for the similar model).

        The transcript is not stored in the index, so the caller passes the episode's text.
        """
        with self._searcher() as s:
            docnum = s.document_number(id=episode_id)
            if docnum is None:
                return []
            hits = s.more_like(docnum, "transcript", text=text, top=k)
            return [(h["id"], float(h.score)) for h in hits]


class _Counts:
    """:class:`compounds.Counts` over one searcher: a word's episodes from the ``words`` field (every word of an
    episode once), a phrase's from a search of the quoted words."""

    def __init__(self, searcher: Any, analyzers: list[SpokenAnalyzer], profiles: list[str], ranking: Ranking,
                 deadline: float | None) -> None:
        self.searcher, self.analyzers, self.profiles, self.ranking = searcher, analyzers, profiles, ranking
        self.deadline, self.timed_out = deadline, False

    def stop_word(self, word: str) -> bool:
        return not any(a.texts(word) for a in self.analyzers)

    def frequencies(self, words: list[str]) -> dict[str, int]:
        return {w: int(self.searcher.doc_frequency("words", w)) for w in words}

    def phrase(self, first: str, second: str, enough: int) -> int:
        query = parse(f'"{first} {second}"', profiles=self.profiles, ranking=self.ranking)
        found = 0
        for found, _ in enumerate(self.searcher.docs_for_query(query), 1):  # (lazily: matched as counted)
            if found >= enough:
                break
            if found % 64 == 0 and self.deadline is not None and time.monotonic() > self.deadline:
                self.timed_out = True
                return 0
        return found


def _drop_unlisted_segments(ix: Any) -> None:
    """Remove the files of the segments the index's table of contents does not list (what a commit that failed
    wrote). Readers open the listed ones only; the reindex lock keeps other writers out."""
    try:
        toc = ix._read_toc()
        windex.clean_files(ix.storage, ix.indexname, toc.generation, toc.segments)
    except Exception as exc:  # (the cause being raised is the one to say; the next commit cleans up too)
        log.warning("could not remove the segment a failed index write left: %s", exc)


def _page(query: Any, searcher: Any, pagenum: int, pagelen: int, filt: Any, sortedby: str | None,
          deadline: float | None = None) -> tuple[Any, bool]:
    """(one page, whether the deadline cut it short), in numpy (``fast.Page``: every match scored at once, the
    same scores as Whoosh's matchers): ranked by score, or by date, ``"newest"`` or ``"oldest"`` first
    (``fast.date_places``: the episodes without a date after every dated one, so that a feed of the newest
    matches shows a new dated episode first)."""
    places = fast.date_places(searcher.reader(), sortedby == "newest") if sortedby else None
    found = fast.Page(searcher, query, pagenum, pagelen, filt, deadline, places)
    return found, found.timed_out


def _expands(query: Any) -> bool:
    """Whether a query has a part that expands to the words it matches (wildcard, prefix, fuzzy, range, a
    field's ``*``)."""
    return (isinstance(query, MultiTerm) or (isinstance(query, Every) and bool(query.fieldname))
            or any(_expands(c) for c in query.children()))


def _filter(f: Filters) -> Any:
    parts = []
    if f.shows:
        parts.append(Or([Term("show_id", s) for s in f.shows]))
    if f.person:
        parts.append(Or([Term("person_key", key) for key in person_keys(f.person)]))
    if f.published_from or f.published_to:
        parts.append(DateRange("published", f.published_from, f.published_to))
    if f.duration_min is not None or f.duration_max is not None:
        parts.append(NumericRange("duration", f.duration_min, f.duration_max))
    if f.no_duration:
        parts.append(Not(Every("duration")))
    if f.language:
        parts.append(Term("language", f.language))
    if f.ids:
        parts.append(Or([Term("id", i) for i in f.ids]))
    if not parts:
        return None
    return parts[0] if len(parts) == 1 else And(parts)


def _doc_facet_values(reader: Any) -> dict[str, list[tuple[str, ...]]]:
    """Per facet, each document's values: read from the columns and the person postings."""
    n = reader.doc_count_all()
    out: dict[str, list[tuple[str, ...]]] = {}
    for facet, field in (("show", "show_id"), ("year", "year"), ("language", "language")):
        column = list(reader.column_reader(field)) if reader.has_column(field) else [None] * n
        out[facet] = [(_text(v),) if v not in (None, "", b"") else () for v in column]
    persons: list[list[str]] = [[] for _ in range(n)]
    for term in reader.lexicon("person_key"):
        name = _text(term)
        for docnum in reader.postings("person_key", term).all_ids():
            persons[docnum].append(name)
    out["person"] = [tuple(p) for p in persons]
    return out


def _text(value: Any) -> str:
    return value.decode("utf-8") if isinstance(value, bytes) else str(value)


__all__ = ["WhooshEngine", "parse"]
