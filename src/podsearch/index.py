"""The Whoosh index: schema, incremental sync from the catalog, full rebuilds, search and suggestions.

Every Whoosh call of podsearch lives here (with ``analysis.py``), so another engine could stand behind the
same interface. Facts this module respects (measured on whoosh3 3.54 and Whoosh 2.7.4):
``Searcher.refresh()`` keeps seeing deleted documents, so a fresh searcher is opened per request;
searchers are not thread-safe, the Index object is; one writer at a time; ``update_document`` twice for
one id in one writer leaves two copies, so each batch is de-duplicated; a full rebuild goes into a new
folder swapped in atomically.
"""

from __future__ import annotations

import html
import logging
import math
import os
import re
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable
from datetime import datetime
from functools import lru_cache
from pathlib import Path
from typing import Any

from whoosh import collectors, sorting
from whoosh import index as windex
from whoosh.fields import DATETIME, ID, KEYWORD, NUMERIC, STORED, TEXT, Schema
from whoosh.filedb.filestore import FileStorage
from whoosh.highlight import ContextFragmenter, HtmlFormatter, WholeFragmenter, highlight
from whoosh.idsets import BitSet
from whoosh.qparser import AndGroup, FieldAliasPlugin, MultifieldParser, OrGroup, PlusMinusPlugin
from whoosh.qparser.dateparse import DateParserPlugin
from whoosh.query import And, DateRange, NullQuery, NumericRange, Or, Prefix, Require, Term
from whoosh.query.qcore import QueryError as WhooshQueryError
from whoosh.scoring import BM25F, BM25FScorer
from whoosh.searching import ResultsPage
from whoosh.writing import LockError

from . import languages
from .analysis import mark, plain_analyzer, spoken_analyzer
from .catalog import Catalog
from .episodes import Episode, Segment
from .errors import IndexMissing, QueryError, ReindexRunning
from .facets import DocFacets, facet_rows
from .generations import Generations
from .lru import LRU
from .procs import bind_children_to_me
from .search_types import SORTS, Hit, Moment, SearchRequest, SearchResult

log = logging.getLogger(__name__)

SCHEMA_VERSION = "2"  # 2: text analysed per language (the mark), the analysis field

# Query-time field weights: title > persons, show > notes > transcript. Each field is scored with BM25 on its
# own and the scores are added, so a word in the title and the text counts twice already; measured on
# Cranfield (titles + abstracts), nDCG@10 falls from 0.371 (title 1.0) to 0.364 (1.5) and 0.334 (4.0).
FIELD_BOOSTS = {"title": 1.5, "persons": 1.3, "show": 1.3, "notes": 1.15, "transcript": 1.0}
SEARCH_FIELDS = list(FIELD_BOOSTS)
MAX_QUERY_LENGTH = 500
RELAX_BELOW = 3  # fewer all-words hits than this: fall back to any-word matching
LONG_QUERY_WORDS = 4  # plain queries longer than this are ranked on any word with a coordination bonus
FILTER_CACHE = 64  # filters whose matching documents are kept (per index generation)
PARALLEL_FROM = 200  # full rebuilds of this many episodes or more use several processes
BUILD_PROCS = 2
BUILD_BATCH = 100  # episodes handed to a worker process at a time
BUILD_LIMIT_MB = 256  # memory per indexing process before it spills a run to disk
BM25_B = 0.75
BM25_K1 = 1.2


def make_schema(lang: str = "") -> Schema:
    """The index's schema; with ``lang``, the same fields analysed for that profile (to parse queries)."""
    ana = spoken_analyzer(lang)
    return Schema(
        id=ID(stored=True, unique=True),
        show_id=ID(stored=True, sortable=True),
        show=TEXT(analyzer=ana, stored=True),
        title=TEXT(analyzer=ana, stored=True),
        persons=TEXT(analyzer=ana, stored=True),
        person_key=KEYWORD(commas=True, lowercase=True, stored=False),
        notes=TEXT(analyzer=ana),
        transcript=TEXT(analyzer=ana),
        words=TEXT(analyzer=plain_analyzer(), phrase=False),
        published=DATETIME(stored=True, sortable=True),
        year=ID(stored=False, sortable=True),
        duration=NUMERIC(stored=True, sortable=True),
        language=ID(stored=True, sortable=True),
        analysis=ID(stored=False),  # the analysis profile (languages.profile): queries are analysed per profile
        link=STORED,
        audio_url=STORED,
        content_hash=STORED,
    )


def _parse_dt(value: str | None) -> datetime | None:
    if not value:
        return None
    try:
        return datetime.strptime(value[:19], "%Y-%m-%dT%H:%M:%S")
    except ValueError:
        return None


def episode_document(ep: Episode, show_title: str, content_hash: str) -> dict[str, Any]:
    published = _parse_dt(ep.published)
    lang = languages.primary(ep.language)
    key = languages.profile(lang)
    persons = [p.name for p in ep.persons]
    speakers = sorted({s.speaker for s in ep.segments if s.speaker} - set(persons))
    doc: dict[str, Any] = {
        "id": ep.id,
        "show_id": ep.show_id,
        "show": mark(key, show_title),
        "title": mark(key, ep.title),
        "persons": mark(key, ", ".join(persons)),
        "person_key": ",".join(p.lower().replace(",", " ") for p in persons + speakers),
        "notes": mark(key, ep.description_text),
        "transcript": mark(key, ep.transcript_text),
        "words": unique_words(ep.title, show_title, ep.description_text, ep.transcript_text),
        "year": published.strftime("%Y") if published else "unknown",
        "language": lang,
        "analysis": key,
        "link": ep.link,
        "audio_url": ep.audio_url,
        "content_hash": content_hash,
    }
    if key != "en":  # the stored fields are shown as written, without the mark
        doc.update(_stored_show=show_title, _stored_title=ep.title, _stored_persons=", ".join(persons))
    if published:
        doc["published"] = published
    if ep.duration is not None:
        doc["duration"] = int(ep.duration)
    return doc


_WORD = re.compile(r"\w+")


def unique_words(*texts: str) -> str:
    """Each word once: the spelling and typeahead field only needs document frequencies, and a
    transcript repeats its words many times over (this halves the analysis of that field)."""
    return " ".join(dict.fromkeys(_WORD.findall(" ".join(texts).lower())))


class SearchIndex:
    """The live index in ``<data>/index/``; thread-safe (one searcher per call)."""

    def __init__(self, data_dir: Path | str) -> None:
        self.generations = Generations(Path(data_dir) / "index")
        self._lock = threading.Lock()
        self._ix: Any = None
        self._stamp: tuple[str, float] = ("", 0.0)
        self._doc_facets: tuple[Any, DocFacets] | None = None
        self._filter_cache: LRU[tuple[Any, ...], BitSet] = LRU(FILTER_CACHE)

    # -- opening --------------------------------------------------------------------------------
    def exists(self) -> bool:
        path = self.generations.current()
        return path is not None and windex.exists_in(str(path))

    def _index(self) -> Any:
        stamp = self.generations.stamp()
        with self._lock:
            if self._ix is None or stamp != self._stamp:
                path = self.generations.current()
                if path is None or not windex.exists_in(str(path)):
                    raise IndexMissing(
                        f"No index in {self.generations.root.parent}. Run 'podsearch reindex' first.")
                # Read segments through plain file reads, not mmap: this Whoosh copies each mmapped part it
                # opens into a BytesIO, i.e. the whole index (660 MB at 10k episodes) on every new searcher.
                self._ix = FileStorage(str(path), supports_mmap=False).open_index()
                self._stamp = stamp
            return self._ix

    def generation(self) -> str:
        return self.generations.stamp()[0]

    def schema_version(self) -> str:
        """The schema version of the live index ("1" for an index written before versions were kept apart)."""
        path = self.generations.current()
        marker = path / "SCHEMA_VERSION" if path else None
        return marker.read_text().strip() if marker and marker.exists() else "1"

    def doc_count(self) -> int:
        return self._index().doc_count()

    def size_bytes(self) -> int:
        path = self.generations.current()
        return sum(f.stat().st_size for f in path.iterdir()) if path else 0

    # -- writing --------------------------------------------------------------------------------
    def sync(self, catalog: Catalog, full: bool = False, progress: Callable[[int], None] | None = None,
             hashes: dict[str, str] | None = None) -> dict[str, int]:
        """Bring the index in line with the catalog: add new, update changed, delete removed episodes.

        With ``full`` (or when there is no index yet) everything is written into a new generation folder
        that is then swapped in atomically. ``hashes``: the catalog's, when the caller has read them.
        """
        wanted = catalog.hashes() if hashes is None else hashes
        if full or not self.exists() or self.schema_version() != SCHEMA_VERSION:
            return self._rebuild(catalog, wanted, progress)
        ix = self._index()
        with ix.searcher() as s:
            have = {f["id"]: f.get("content_hash") for f in s.all_stored_fields()}
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
            self._write(writer, catalog, changed, wanted, progress, update=True)
            writer.commit()
        except BaseException:
            writer.cancel()
            raise
        added = sum(1 for i in changed if i not in have)
        return {"added": added, "updated": len(changed) - added, "removed": len(removed)}

    def _rebuild(self, catalog: Catalog, wanted: dict[str, str],
                 progress: Callable[[int], None] | None) -> dict[str, int]:
        path = self.generations.new()
        ix = windex.create_in(str(path), make_schema())
        (path / "SCHEMA_VERSION").write_text(SCHEMA_VERSION)
        writer = self._bulk_writer(ix, len(wanted))
        try:
            self._write(writer, catalog, list(wanted), wanted, progress, update=False)
            # Small indexes are merged into one segment; big ones keep one segment per process, since
            # merging them would rewrite every posting once more for little gain at search time.
            writer.commit(optimize=len(wanted) < PARALLEL_FROM, merge=len(wanted) < PARALLEL_FROM)
        except BaseException:
            writer.cancel()
            raise
        self.generations.publish(path)
        return {"added": len(wanted), "updated": 0, "removed": 0, "full": 1}

    @staticmethod
    def _bulk_writer(ix: Any, count: int) -> Any:
        """A multi-process writer for big rebuilds (analysis is the costly part and runs in parallel)."""
        procs = min(BUILD_PROCS, os.cpu_count() or 1)
        # Whoosh forks its workers; forking a process that runs other threads (the server's scheduler,
        # waitress) can deadlock the child on a lock held by another thread, so only a lone thread forks.
        alone = threading.active_count() == 1
        if count >= PARALLEL_FROM and procs > 1 and alone:
            bind_children_to_me()  # the workers must not outlive a killed reindex (procs.py)
            return ix.writer(procs=procs, batchsize=BUILD_BATCH, limitmb=BUILD_LIMIT_MB, multisegment=True)
        return ix.writer(limitmb=BUILD_LIMIT_MB)

    @staticmethod
    def _write(writer: Any, catalog: Catalog, ids: Iterable[str], hashes: dict[str, str],
               progress: Callable[[int], None] | None, update: bool) -> None:
        shows = {s.id: s.title for s in catalog.shows()}
        for episode_id in dict.fromkeys(ids):  # de-duplicated: one update per id per writer
            ep = catalog.episode(episode_id)
            if ep is None:
                continue
            doc = episode_document(ep, shows.get(ep.show_id, ep.show_id), hashes[episode_id])
            (writer.update_document if update else writer.add_document)(**doc)
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

    @staticmethod
    def _parser(schema: Schema, relaxed: bool) -> MultifieldParser:
        group = OrGroup if relaxed else AndGroup
        parser = MultifieldParser(SEARCH_FIELDS, schema, fieldboosts=FIELD_BOOSTS, group=group)
        # +word / -word only at the start of a word: "real-gas" and "wi-fi" are words, not "NOT gas".
        parser.add_plugin(PlusMinusPlugin(plusexpr=r"(?:^|(?<=[\s(]))\+(?=\w)", minusexpr=r"(?:^|(?<=[\s(]))-(?=\w)"))
        parser.add_plugin(FieldAliasPlugin({"persons": ["person", "speaker", "guest", "host"],
                                            "notes": ["notes", "description"], "show": ["podcast"]}))
        parser.add_plugin(DateParserPlugin(free=False))
        return parser

    def parse(self, text: str, relaxed: bool = False, plain: bool = False, profiles: list[str] | None = None) -> Any:
        """The query for ``text``: all words (or any word with ``relaxed``); ``plain`` ignores query syntax.

        With several analysis ``profiles`` (languages), the text is analysed for each, and each reading
        only matches the episodes of its profile: ``Or(Require(q_de, analysis:de), Require(q_en, analysis:en))``,
        so an episode is scored once, on the reading of its own language.
        """
        if len(text) > MAX_QUERY_LENGTH:
            raise QueryError(f"The query is {len(text)} characters long; the limit is {MAX_QUERY_LENGTH}.")
        return _parse_cached(text, relaxed, plain, tuple(profiles or ["en"]))

    @classmethod
    def _parse(cls, text: str, relaxed: bool, plain: bool, profiles: tuple[str, ...]) -> Any:
        typed = plain_words(text) if plain else _lenient(text)
        readings: dict[str, tuple[Any, list[str]]] = {}  # languages that read the text alike share one query
        for key in profiles:
            try:
                q = cls._parser(_query_schema(key), relaxed).parse(typed)
            except Exception as exc:  # Whoosh's parser raises assorted errors on odd input
                raise QueryError(f"Cannot read the query {text!r}: {exc}") from None
            if len(profiles) == 1:
                return q
            if q is not NullQuery:
                readings.setdefault(repr(q), (q, []))[1].append(key)
        parts = [Require(q, Term("analysis", keys[0]) if len(keys) == 1 else Or([Term("analysis", k) for k in keys]))
                 for q, keys in readings.values()]
        return Or(parts) if len(parts) > 1 else (parts[0] if parts else NullQuery)

    def _strategy(self, text: str, plain: bool, profiles: list[str] | None = None) -> tuple[Any, Any]:
        """(first query, fallback query or None) for the text typed.

        Short plain queries want every word (the fallback is any word); long ones (sentences, pasted
        questions) are ranked on any word with a coordination bonus straight away.
        """
        p = profiles
        if plain or not has_syntax(text):
            if len(re.findall(r"\w+", text)) > LONG_QUERY_WORDS:
                return self.parse(text, relaxed=True, plain=True, profiles=p), None
            return self.parse(text, plain=plain, profiles=p), self.parse(text, relaxed=True, plain=plain, profiles=p)
        if _OPERATORS.search(text):  # the person said how to combine the words: no second guessing
            return self.parse(text, profiles=p), None
        return self.parse(text, profiles=p), self.parse(text, relaxed=True, profiles=p)

    def rank(self, text: str, limit: int = 1000, plain: bool = False) -> list[tuple[str, float]]:
        """(episode id, score) best first, with the search box's query logic; for evaluation."""
        ix = self._index()
        with ix.searcher(weighting=weighting()) as s:
            first, fallback = self._strategy(text, plain, self.profiles(s))
            hits = _run(s.search, first, limit=limit)
            if fallback is not None and len(hits) < RELAX_BELOW:
                hits = _run(s.search, fallback, limit=limit)
            return [(h["id"], float(h.score or 0.0)) for h in hits]

    def warm(self) -> None:
        """Read the per-generation facet values now rather than in the first search."""
        with self._index().searcher() as s:
            self._facet_counts(s, ())

    def _facet_counts(self, searcher: Any, docnums: Iterable[int]) -> dict[str, dict[str, int]]:
        """Show, year, language and person counts over the matching documents.

        Whoosh's ``groupedby`` reads a column value per match (and for persons, every person's postings)
        inside its scoring loop; instead each document's facet values are read once per index generation
        (document numbers are stable within one) and counted by :class:`podsearch.facets.DocFacets`.
        """
        reader = searcher.reader()
        key = (self.generation(), reader.generation(), reader.doc_count_all())
        with self._lock:
            cached = self._doc_facets
        if cached is None or cached[0] != key:
            cached = (key, DocFacets(_doc_facet_values(reader), reader.doc_count_all()))
            with self._lock:
                self._doc_facets = cached
        return cached[1].count(docnums)

    def search(self, catalog: Catalog, req: SearchRequest) -> SearchResult:
        started = time.perf_counter()
        _validate(req)
        ix = self._index()
        text = req.q.strip()
        with ix.searcher(weighting=weighting()) as s:
            profiles = self.profiles(s, req.language)
            query, fallback = self._strategy(text, plain=False, profiles=profiles) if text else (None, None)
            filt = self._filter(req)
            if query is None:
                query = filt or _every()
                filt = None
            elif filt is not None:
                filt = self._allowed(s, filt)
                if not filt:  # (Whoosh takes an empty set for no filter at all)
                    query, fallback, filt = NullQuery(), None, None
            sortedby: Any = None
            if req.sort == "date" or (not text and req.sort != "oldest"):
                sortedby = sorting.FieldFacet("published", reverse=True)
            elif req.sort == "oldest":
                sortedby = "published"
            relaxed = False
            page = _run(_page, query, s, req.page, req.per_page, filt, sortedby)
            if fallback is not None and page.total < RELAX_BELOW and repr(fallback) != repr(query):
                page2 = _run(_page, fallback, s, req.page, req.per_page, filt, sortedby)
                if page2.total > page.total:
                    page, query, relaxed = page2, fallback, True
            results = page.results
            facets = facet_rows(catalog, self._facet_counts(s, results.docs()))
            suggestion = ""
            if text and (page.total < RELAX_BELOW or relaxed):
                suggestion = self._suggestion(s, query, text)
            terms = _query_terms(query)
            hits = [self._hit(catalog, hit, terms) for hit in page]
            total = page.total
        return SearchResult(query=req.q, total=total, page=req.page, per_page=req.per_page, hits=hits,
                            facets=facets, suggestion=suggestion, relaxed=relaxed,
                            took_ms=round((time.perf_counter() - started) * 1000, 2))

    def _allowed(self, searcher: Any, filt: Any) -> BitSet:
        """The documents a filter lets through, kept per index generation for the filters asked most recently
        (a show's page, a year's archive): a date range alone reads hundreds of range terms."""
        reader = searcher.reader()
        key = (self.generation(), reader.generation(), reader.doc_count_all(), repr(filt))
        docs = self._filter_cache.get(key)
        if docs is None:
            docs = BitSet(_run(searcher.docs_for_query, filt), size=reader.doc_count_all())
            self._filter_cache.put(key, docs)
        return docs

    def _filter(self, req: SearchRequest) -> Any:
        parts = []
        if req.shows:
            parts.append(Or([Term("show_id", s) for s in req.shows]))
        if req.person:
            parts.append(Term("person_key", req.person.strip().lower()))
        if req.published_from or req.published_to:
            start = _date(req.published_from, "published_from")
            end = _date(req.published_to, "published_to", end=True)
            parts.append(DateRange("published", start, end))
        if req.duration_min is not None or req.duration_max is not None:
            parts.append(NumericRange("duration", req.duration_min, req.duration_max))
        if req.language:
            lang = languages.primary(req.language)
            if not lang:
                raise QueryError(f"language must be a language code such as en, de or pt-BR, not {req.language!r}.")
            parts.append(Term("language", lang))
        if not parts:
            return None
        return parts[0] if len(parts) == 1 else And(parts)

    def _suggestion(self, searcher: Any, query: Any, text: str) -> str:
        try:
            corrector = searcher.corrector("words")
            words = re.findall(r"\w+", text.lower())
            changed = False
            out = []
            for w in words:
                if len(w) < 3 or searcher.doc_frequency("words", w) > 0:
                    out.append(w)
                    continue
                # prefix=1: only words with the same first letter are compared (a whole-vocabulary scan of a
                # multilingual site took seconds; a typo in the first letter is rare)
                sugg = corrector.suggest(w, limit=1, maxdist=2, prefix=1)
                if sugg:
                    out.append(sugg[0])
                    changed = True
                else:
                    out.append(w)
            return " ".join(out) if changed else ""
        except Exception:  # a suggestion is a nicety; never fail the search for it
            log.exception("spelling suggestion failed for %r", text)
            return ""

    def _hit(self, catalog: Catalog, hit: Any, terms: dict[str, set[str]]) -> Hit:
        fields = hit.fields()
        episode_id = fields["id"]
        ep = catalog.episode(episode_id, with_segments=False)
        notes = ep.description_text if ep else ""
        key = languages.profile(fields.get("language", ""))
        segments = catalog.segments(episode_id) if (terms.get("transcript")) else []
        moments = find_moments(segments, terms.get("transcript", set()), chapters=ep.chapters if ep else [], lang=key)
        title_terms = terms.get("title", set())
        title_html = _highlight(fields.get("title", ""), title_terms, whole=True, lang=key)
        snippet = ""
        note_terms = terms.get("notes", set())
        if notes and note_terms:
            snippet = _highlight(notes, note_terms, lang=key)
        if not snippet and moments:
            snippet = moments[0].text
        if not snippet:
            snippet = html.escape(_shorten(notes or (segments[0].text if segments else ""), 240))
        published = fields.get("published")
        return Hit(
            id=episode_id, title=fields.get("title", ""), show=fields.get("show", ""),
            show_id=fields.get("show_id", ""),
            published=published.strftime("%Y-%m-%dT%H:%M:%SZ") if published else None,
            url=fields.get("link", ""), audio_url=fields.get("audio_url", ""), duration=fields.get("duration"),
            score=round(float(hit.score or 0.0), 4), snippet=snippet, title_html=title_html, moments=moments,
            language=fields.get("language", ""),
        )

    # -- suggestions for typeahead ------------------------------------------------------------
    def suggest(self, catalog: Catalog, prefix: str, limit: int = 8) -> list[dict[str, str]]:
        prefix = prefix.strip().lower()
        if not prefix:
            return []
        if len(prefix) > 100:
            raise QueryError("The prefix is longer than 100 characters.")
        out: list[dict[str, str]] = []
        seen: set[str] = set()

        def add(kind: str, text: str, **extra: str) -> None:
            key = kind + text.lower()
            if key not in seen and len(out) < limit:
                seen.add(key)
                out.append({"kind": kind, "text": text, **extra})

        ix = self._index()
        last = re.findall(r"\w+", prefix)
        word = last[-1] if last else prefix
        with ix.searcher() as s:
            for show in catalog.shows():
                if show.title.lower().startswith(prefix) or any(w.startswith(prefix) for w in show.title.lower().split()):
                    add("show", show.title, id=show.id)
            for hit in s.search(Prefix("title", word), limit=limit):
                add("episode", hit["title"], id=hit["id"])
            persons = sorted(((s.doc_frequency("person_key", t), t.decode() if isinstance(t, bytes) else t)
                              for t in s.reader().expand_prefix("person_key", prefix)), reverse=True)
            for _, name in persons[:3]:
                add("person", name.title())
            terms = sorted(((s.doc_frequency("words", t), t.decode() if isinstance(t, bytes) else t)
                            for t in s.reader().expand_prefix("words", word)), reverse=True)
            for _, term in terms[:limit]:
                add("term", term)
        return out

    # -- similar baseline ---------------------------------------------------------------------
    def more_like(self, episode_id: str, text: str, k: int = 10) -> list[tuple[str, float]]:
        """Whoosh's own ``more_like`` over the transcript (a baseline for the similar model).

        The transcript is not stored in the index, so the caller passes the episode's text.
        """
        ix = self._index()
        with ix.searcher() as s:
            docnum = s.document_number(id=episode_id)
            if docnum is None:
                return []
            hits = s.more_like(docnum, "transcript", text=text, top=k)
            return [(h["id"], float(h.score)) for h in hits]


class SpokenBM25F(BM25F):
    """Whoosh's BM25F with the Robertson-Sparck Jones idf, log(1 + (N - n + 0.5) / (n + 0.5)).

    Whoosh's own idf, log(N / (n + 1)) + 1, gives a word found in every document a weight of 1, which lets
    the common words of long queries outvote the rare ones.
    """

    def idf(self, searcher: Any, fieldname: str, text: str) -> float:
        parent = searcher.get_parent()
        n = parent.doc_frequency(fieldname, text)
        total = parent.doc_count_all()
        return math.log(1.0 + (total - n + 0.5) / (n + 0.5))

    def scorer(self, searcher: Any, fieldname: str, text: str, qf: int = 1) -> Any:
        if not searcher.schema[fieldname].scorable:
            return super().scorer(searcher, fieldname, text, qf)
        return _LengthCachedScorer(searcher, fieldname, text, self._field_B.get(fieldname, self.B), self.K1, qf=qf)


class _LengthCachedScorer(BM25FScorer):
    """Whoosh's BM25F scorer, reading field lengths from an array kept per segment (segments never change)
    instead of a column read per document and field."""

    def setup(self, searcher: Any, fieldname: str, text: str) -> Any:
        plain = super().setup(searcher, fieldname, text)
        self.dfl = _field_lengths(searcher.reader(), fieldname).__getitem__
        return plain

    def score(self, matcher: Any) -> float:
        tf = matcher.weight()
        k1 = self.K1
        return self.idf * tf * (k1 + 1) / (tf + k1 * ((1 - self.B) + self.B * self.dfl(matcher.id()) / self.avgfl))


_LENGTHS: OrderedDict[tuple[str, str, int], list[int]] = OrderedDict()
_LENGTHS_LOCK = threading.Lock()


def _field_lengths(reader: Any, fieldname: str) -> list[int]:
    """Every document's length in ``fieldname``, for one segment's reader (kept for the 64 latest)."""
    segment = reader.segment()
    key = (segment.segment_id() if segment is not None else str(id(reader)), fieldname, reader.doc_count_all())
    with _LENGTHS_LOCK:
        found = _LENGTHS.get(key)
    if found is None:
        found = [reader.doc_field_length(d, fieldname, 1) for d in range(reader.doc_count_all())]
        with _LENGTHS_LOCK:
            _LENGTHS[key] = found
            while len(_LENGTHS) > 64:
                _LENGTHS.popitem(last=False)
    return found


def weighting() -> BM25F:
    return SpokenBM25F(B=BM25_B, K1=BM25_K1)


_OPERATORS = re.compile(r"(?:^|\s)[-+]\w|\b(?:AND|OR|NOT|ANDNOT|ANDMAYBE)\b")
_SYNTAX = re.compile(r'["():\[\]{}^~*?]|(?:^|\s)[-+]\w|\b(?:AND|OR|NOT|ANDNOT|ANDMAYBE)\b')


def has_syntax(text: str) -> bool:
    """Whether the text uses query syntax (quotes, operators, field:, -word...)."""
    return bool(_SYNTAX.search(text))


def plain_words(text: str) -> str:
    """The text as plain words: operators lower-cased, syntax characters removed."""
    text = re.sub(r'["():\[\]{}^~*?]', " ", text)
    text = re.sub(r"(?:^|(?<=\s))[-+]+", " ", text)
    return re.sub(r"\b(AND|OR|NOT|ANDNOT|ANDMAYBE|TO)\b", lambda m: m.group(1).lower(), text)


def _run(method: Callable[..., Any], query: Any, *args: Any, **kwargs: Any) -> Any:
    """Run a search; a query Whoosh refuses at run time (a phrase on a field without positions, say,
    ``year:"2023 2024"``) is the person's mistake, reported as such rather than as a server error."""
    try:
        return method(query, *args, **kwargs)
    except WhooshQueryError as exc:
        raise QueryError(f"This query cannot be run: {exc}") from None


def _page(query: Any, searcher: Any, pagenum: int, pagelen: int, filt: Any, sortedby: Any) -> Any:
    """One page of results, with the exact total and the set of all matching documents (for the facets).

    Ranked by score, every match is scored in one pass that also keeps the matching documents. (Whoosh's
    own top-N collector skips low-scoring blocks, then runs the query again to count the matches and a
    third time, without the filter, when asked for them.)
    """
    if sortedby is not None:
        return searcher.search_page(query, pagenum, pagelen=pagelen, filter=filt, sortedby=sortedby)
    collector: Any = _TopAndMatches(pagenum * pagelen)
    if filt is not None:
        collector = collectors.FilterCollector(collector, allow=filt)
    searcher.search_with_collector(query, collector)
    return ResultsPage(collector.results(), pagenum, pagelen)


class _TopAndMatches(collectors.TopCollector):
    """The top ``limit`` by score, plus every matching document number, in one pass.

    Whoosh's collectors "replace" the matcher as the top fills up: an ``a OR b`` whose parts can no longer
    reach the top alone becomes ``a AND b``, which is right for the top and wrong for the count (every
    document only one part matches is dropped). Here the matcher is never replaced.
    """

    def __init__(self, limit: int) -> None:
        super().__init__(limit=limit, usequality=False, replace=0)

    def _collect(self, global_docnum: int, score: float) -> Any:
        self.docset.add(global_docnum)
        return super()._collect(global_docnum, score)

    def all_ids(self) -> Any:
        return self.docset


def _lenient(text: str) -> str:
    """Repair what people type: unbalanced quotes and brackets are dropped rather than refused."""
    if text.count('"') % 2:
        text = text.replace('"', " ")
    if text.count("(") != text.count(")"):
        text = text.replace("(", " ").replace(")", " ")
    if text.count("[") != text.count("]"):
        text = text.replace("[", " ").replace("]", " ")
    return text


def _every() -> Any:
    from whoosh.query import Every
    return Every()


def _date(value: str, name: str, end: bool = False) -> datetime | None:
    if not value:
        return None
    for fmt, pad in (("%Y-%m-%d", None), ("%Y-%m", "month"), ("%Y", "year")):
        try:
            dt = datetime.strptime(value, fmt)
        except ValueError:
            continue
        if end:
            if pad == "year":
                dt = dt.replace(month=12, day=31)
            elif pad == "month":
                nxt = dt.replace(year=dt.year + dt.month // 12, month=dt.month % 12 + 1)
                dt = datetime.fromordinal(nxt.toordinal() - 1)
            dt = dt.replace(hour=23, minute=59, second=59)
        return dt
    raise QueryError(f"{name} must be a date like 2024-05-01, 2024-05 or 2024, not {value!r}.")


def _validate(req: SearchRequest) -> None:
    if req.page < 1:
        raise QueryError("page must be 1 or more.")
    if not 1 <= req.per_page <= 100:
        raise QueryError("per_page must be between 1 and 100.")
    if req.page * req.per_page > 10000:
        raise QueryError("Results past the first 10,000 are not served; narrow the query.")
    if req.sort not in SORTS:
        raise QueryError(f"sort must be one of {', '.join(SORTS)}, not {req.sort!r}.")
    for name in ("duration_min", "duration_max"):
        value = getattr(req, name)
        if value is not None and value < 0:
            raise QueryError(f"{name} must be 0 or more seconds.")


def _query_terms(query: Any) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for fieldname, text in query.iter_all_terms(phrases=True):
        if isinstance(text, bytes):
            text = text.decode("utf-8", "replace")
        out.setdefault(fieldname, set()).add(str(text))
    return out


def _doc_facet_values(reader: Any) -> dict[str, list[tuple[str, ...]]]:
    """Per facet, each document's values: read from the columns and the person postings."""
    n = reader.doc_count_all()
    out: dict[str, list[tuple[str, ...]]] = {}
    for facet, field in (("show", "show_id"), ("year", "year"), ("language", "language")):
        column = list(reader.column_reader(field)) if reader.has_column(field) else [None] * n
        out[facet] = [(_facet_key(v),) if v not in (None, "", b"") else () for v in column]
    persons: list[list[str]] = [[] for _ in range(n)]
    for term in reader.lexicon("person_key"):
        name = _facet_key(term)
        for docnum in reader.postings("person_key", term).all_ids():
            persons[docnum].append(name)
    out["person"] = [tuple(p) for p in persons]
    return out


def _facet_key(value: Any) -> str:
    return value.decode("utf-8") if isinstance(value, bytes) else str(value)


@lru_cache(maxsize=512)
def _parse_cached(text: str, relaxed: bool, plain: bool, profiles: tuple[str, ...]) -> Any:
    """Parsed queries are kept: a query is parsed once per language in the index (queries are immutable)."""
    return SearchIndex._parse(text, relaxed, plain, profiles)


_ANALYZERS: dict[str, Any] = {}
_QUERY_SCHEMAS: dict[str, Schema] = {}


def _analyzer(lang: str = "en") -> Any:
    """The analyzer of one profile, for highlights and moments (the text has no mark)."""
    ana = _ANALYZERS.get(lang)
    if ana is None:
        ana = _ANALYZERS[lang] = spoken_analyzer(lang)
    return ana


def _query_schema(key: str) -> Schema:
    """The schema with its text fields analysed for profile ``key``: the query parser reads fields from it."""
    schema = _QUERY_SCHEMAS.get(key)
    if schema is None:
        schema = _QUERY_SCHEMAS[key] = make_schema(key)
    return schema


class _MarkFormatter(HtmlFormatter):
    def __init__(self) -> None:
        super().__init__(tagname="mark", between=" … ")

    def format_token(self, text: str, token: Any, replace: bool = False) -> str:
        return "<mark>" + html.escape(token.text if replace else text[token.startchar:token.endchar]) + "</mark>"


def _highlight(text: str, terms: set[str], whole: bool = False, lang: str = "en") -> str:
    if not text:
        return ""
    if terms:
        fragmenter = WholeFragmenter() if whole else ContextFragmenter(maxchars=240, surround=80)
        out = highlight(text, terms, _analyzer(lang), fragmenter, _MarkFormatter(), top=2)
        if out:
            return out
    return html.escape(text if whole else _shorten(text, 240))


def _shorten(text: str, n: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 1].rsplit(" ", 1)[0] + "…"


def _english_term_bound(terms: set[str]) -> Callable[[str], tuple[int, int]]:
    """Cheap upper bounds, before analysis, on how many of the (stemmed) terms a segment holds and on how many
    of its tokens are one of them.

    English stems differ from their words only in the last letter or so ("studi", "happi", "hope"), so each
    term without its last letter must appear in the text (apostrophes dropped, as the analyzer does), once
    for each word that gives it. Text with other than ASCII letters may hold them all: accent folding could
    match it (and then a word gives at most two tokens per character, joined and in parts, plus one).
    """
    keys = [t[: max(2, len(t) - 1)] for t in terms if t]
    loose = _any_term_bound(terms)

    def bound(text: str) -> tuple[int, int]:
        low = text.lower().replace("'", "").replace("\u2019", "")
        if not low.isascii():
            return loose(text)
        counts = [low.count(k) for k in keys]
        return sum(1 for c in counts if c), sum(counts)

    return bound


def _any_term_bound(terms: set[str]) -> Callable[[str], tuple[int, int]]:
    """The loose bounds for any language: every term, and at most two tokens per character plus one."""
    return lambda text: (len(terms), 2 * len(text) + 1)


def find_moments(segments: list[Segment], terms: set[str], chapters: list[Any] | None = None,
                 top: int = 3, lang: str = "en") -> list[Moment]:
    """The transcript segments that match the query's terms best, with their times and speakers.

    A segment scores 10 per distinct query term it holds, plus log1p(its tokens that are query terms) minus
    log1p(its words) / 2: distinct terms count most, repeats a little, long segments a little less. Segments
    are analysed best bound first (the bound from substring tests of the terms, which also bound the repeats),
    and the search stops once the top ``top`` cannot change: a few segments of a long transcript, not all
    that hold a term.
    """
    if not segments or not terms:
        return []
    analyzer = _analyzer(lang)
    count_bound = _english_term_bound(terms) if lang in ("", "en") else _any_term_bound(terms)
    order = []
    for i, seg in enumerate(segments):
        n, repeats = count_bound(seg.text)
        if n:
            length = math.log1p(len(seg.text.split())) * 0.5
            order.append((n * 10 + math.log1p(repeats) - length, i, length))
    order.sort(key=lambda p: (-p[0], p[1]))
    scored: list[tuple[float, int]] = []
    for bound, i, length in order:
        if len(scored) >= top and scored[top - 1][0] > bound:
            break
        matched = [t for t in analyzer.texts(segments[i].text) if t in terms]
        if not matched:
            continue
        scored.append((len(set(matched)) * 10 + math.log1p(len(matched)) - length, i))
        scored.sort(key=lambda p: (-p[0], p[1]))
        del scored[top:]
    moments = []
    for _, i in scored[:top]:
        seg = segments[i]
        chapter = ""
        for ch in chapters or []:
            if seg.start is not None and ch.start <= seg.start:
                chapter = ch.title
        moments.append(Moment(start=seg.start, speaker=seg.speaker,
                              text=_highlight(seg.text, terms, lang=lang), chapter=chapter))
    return moments
