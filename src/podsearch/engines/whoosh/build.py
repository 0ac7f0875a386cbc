"""Full rebuilds of the Whoosh index within a memory budget, with scratch space below the final index size.

Whoosh's own writer keeps postings in a pool and, whenever the pool is full, spills it to disk as a sorted run
of pickled ``(field, term, document, weight, value)`` tuples, one pickle per posting; at the end the runs are
merged posting by posting into the segment. Pickled postings are about ten times the size of the compressed
segment (32 GB of runs for a 3 GB index at 100,000 episodes), and writing the segment read each posting's
field length back from disk. Here each writer (a worker process, or the rebuilding process itself):

- keeps its pool per term (a term's documents, weights and positions in lists: no sorting of postings, and
  about half the memory of a tuple per posting);
- when the pool reaches its share of the memory budget, writes it out as a *run*: the terms in order, each
  with its postings, pickled a term at a time and compressed in chunks of about a megabyte. A run is
  smaller than the segment it becomes (Whoosh compresses each block of 128 postings on its own);
- at the end merges its runs term by term (each term's postings from the runs in document order, since
  one writer numbers its documents in order) and writes them into its segment a block at a time, with the
  field lengths read once into memory. Disk then holds the runs and the segment being written, nothing
  else, and the runs are deleted as soon as the segment is done.

The per-document data (stored fields, lengths, sortable columns) goes straight into the segment as documents
are added, as in Whoosh. The parent of the worker processes reads the documents, sends them in batches over a
bounded queue, and commits the workers' segments (one each) into the index's table of contents.
"""

from __future__ import annotations

import heapq
import logging
import multiprocessing
import operator
import os
import pickle
import queue
import struct
import traceback
import zlib
from array import array
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from itertools import accumulate, chain, repeat
from typing import Any

from whoosh.analysis import RegexTokenizer
from whoosh.analysis.analyzers import CompositeAnalyzer
from whoosh.codec.whoosh3 import LENGTHS_COLUMN, _lenfield
from whoosh.formats import Frequency, Positions
from whoosh.system import pack_uint
from whoosh.util import random_name
from whoosh.util.numeric import byte_to_length
from whoosh.writing import SegmentWriter

from ...languages import ascii_fold, lower
from .analysis import AsciiFoldingFilter, SpokenAnalyzer, WordsLowercaseFilter

log = logging.getLogger(__name__)

BASE_MB = 160  # memory of a writer process before its posting pool (Python, Whoosh, the analysers, the merge)
PARENT_MB = 200  # memory of the rebuilding process besides the writers: catalog reads, batches in flight
POOL_MB_RANGE = (16, 512)  # a writer's posting pool (by the estimate below) is kept within these
PARALLEL_POOL_MB = 64  # below this pool per process, one process with a bigger pool does better
POOL_RSS_FACTOR = 1.6  # real memory of a posting pool per megabyte of the estimate (measured)
TERM_BYTES = 400  # estimated memory of a term new to the pool (its key, two arrays and a list), plus its text
POSTING_BYTES = 20  # estimated memory of one posting (document and weight in arrays, a list slot), plus its value
VALUE_BYTES = 33  # a value's bytes object, besides its length (no cost for the shared empty one)
CHUNK_BYTES = 1 << 20  # uncompressed size of a run's chunks
RUN_COMPRESSION = 1  # zlib level of the runs (written once, read once)
PARENT_CHECK_EVERY = 1 << 16  # terms written between checks that the parent process is still alive
_WAIT = 1.0  # seconds between checks of the workers (parent) or of the parent (workers) while waiting
_CHUNK_HEADER = struct.Struct("!I")


@dataclass(frozen=True)
class BuildLimits:
    """How a full rebuild divides its memory: writer processes, each one's posting pool, the batch size."""

    procs: int
    pool_mb: int
    batch: int = 50

    @classmethod
    def for_memory(cls, memory_mb: int, procs: int, batch: int = 50) -> BuildLimits:
        """The limits that keep a rebuild within about ``memory_mb`` (0: two processes with 256 MB pools).

        Each writer costs ``BASE_MB`` plus ``POOL_RSS_FACTOR`` times its pool; the parent ``PARENT_MB``. Fewer
        processes are used when the budget cannot give each a pool of ``PARALLEL_POOL_MB`` (small pools mean
        many runs); the pool is capped, since bigger pools hardly shorten the build.
        """
        low, high = POOL_MB_RANGE
        if memory_mb <= 0:
            return cls(procs=procs, pool_mb=256, batch=batch)
        while procs > 1 and (memory_mb - PARENT_MB) / procs - BASE_MB < PARALLEL_POOL_MB * POOL_RSS_FACTOR:
            procs -= 1
        writers_mb = memory_mb - (PARENT_MB if procs > 1 else 0)
        pool = int((writers_mb / procs - BASE_MB) / POOL_RSS_FACTOR)
        return cls(procs=procs, pool_mb=max(low, min(high, pool)), batch=batch)


# -- the posting pool and its runs ---------------------------------------------------------------------

Term = tuple[str, bytes, Any, Any, list[bytes]]  # field, term, documents (array "I"), weights (array "d"), values


class _TermPool:
    """Postings by term, spilled to compressed runs when ``full``; takes Whoosh's pool's place in a writer."""

    def __init__(self, tempstore: Any, limit_bytes: int) -> None:
        self.tempstore = tempstore
        self.limit = limit_bytes
        self.terms: dict[tuple[str, bytes], tuple[Any, Any, list[bytes]]] = {}
        self.size = 0
        self.runs: list[str] = []
        self.fieldnames: set[str] = set()

    def add(self, item: tuple[str, bytes, int, float, bytes]) -> None:
        field, text, docnum, weight, value = item
        entry = self.terms.get((field, text))
        if entry is None:
            entry = self.terms[(field, text)] = (array("I"), array("d"), [])
            self.size += TERM_BYTES + len(text)
            self.fieldnames.add(field)
        entry[0].append(docnum)
        entry[1].append(weight)
        entry[2].append(value)
        self.size += POSTING_BYTES + (VALUE_BYTES + len(value) if value else 0)

    def full(self) -> bool:
        return self.size >= self.limit

    def _sorted(self) -> Iterator[Term]:
        for key in sorted(self.terms):
            docs, weights, values = self.terms[key]
            yield key[0], key[1], docs, weights, values

    def save(self) -> None:
        """Write the pool out as a run and empty it."""
        if not self.terms:
            return
        name = f"{random_name()}.terms"
        with self.tempstore.create_file(name).raw_file() as fh:
            chunk: list[tuple[Any, ...]] = []
            size = 0
            for field, text, docs, weights, values in self._sorted():
                deltas = array("I", map(operator.sub, docs, chain((0,), docs)))
                plain = weights.count(1.0) == len(weights)
                chunk.append((field, text, deltas.tobytes(), None if plain else weights.tobytes(), values))
                size += 64 + len(text) + 12 * len(docs) + sum(map(len, values))
                if size >= CHUNK_BYTES:
                    _write_chunk(fh, chunk)
                    chunk, size = [], 0
            if chunk:
                _write_chunk(fh, chunk)
        self.runs.append(name)
        self.terms = {}
        self.size = 0

    def iter_terms(self) -> Iterator[Term]:
        """Every term with all its postings, in order: the runs merged, with what is still in memory."""
        sources: list[Iterable[Term]] = [self._read_run(name) for name in self.runs]
        if self.terms:
            sources.append(self._sorted())
        if len(sources) == 1:
            yield from sources[0]
            return
        merged = heapq.merge(*[_numbered(source, i) for i, source in enumerate(sources)])
        current: Term | None = None
        for field, text, _, docs, weights, values in merged:
            if current is not None and current[0] == field and current[1] == text:
                current[2].extend(docs)  # later runs hold later documents
                current[3].extend(weights)
                current[4].extend(values)
                continue
            if current is not None:
                yield current
            current = (field, text, docs, weights, values)
        if current is not None:
            yield current

    def _read_run(self, name: str) -> Iterator[Term]:
        with self.tempstore.open_file(name).raw_file() as fh:
            while header := fh.read(_CHUNK_HEADER.size):
                (length,) = _CHUNK_HEADER.unpack(header)
                for field, text, deltas, weights, values in pickle.loads(zlib.decompress(fh.read(length))):
                    steps = array("I")
                    steps.frombytes(deltas)
                    docs = array("I", accumulate(steps))
                    ws = array("d")
                    if weights is None:
                        ws.extend(repeat(1.0, len(docs)))
                    else:
                        ws.frombytes(weights)
                    yield field, text, docs, ws, values

    def cleanup(self) -> None:
        for name in self.runs:
            try:
                self.tempstore.delete_file(name)
            except OSError:
                pass
        self.runs = []
        self.terms = {}


def _write_chunk(fh: Any, chunk: list[tuple[Any, ...]]) -> None:
    data = zlib.compress(pickle.dumps(chunk, pickle.HIGHEST_PROTOCOL), RUN_COMPRESSION)
    fh.write(_CHUNK_HEADER.pack(len(data)))
    fh.write(data)


def _numbered(source: Iterable[Term], i: int) -> Iterator[tuple[str, bytes, int, list[int], list[float], list[bytes]]]:
    for field, text, docs, weights, values in source:
        yield field, text, i, docs, weights, values


# -- writing a segment -----------------------------------------------------------------------------------


class _Lengths:
    """Field lengths of the segment's documents, read once into memory (Whoosh's writer reads a document's
    length back from the file for every posting it writes)."""

    _DECODE = [None] + [byte_to_length(b) for b in range(1, 256)]

    def __init__(self, perdoc: Any) -> None:
        self._perdoc = perdoc

    def reader(self, fieldname: str) -> Any:
        column = self._perdoc._cached_reader(_lenfield(fieldname), LENGTHS_COLUMN)
        if column is None:
            return None
        data, decode = bytes(column), self._DECODE
        return lambda docnum: decode[data[docnum]]


def write_postings(fieldwriter: Any, schema: Any, lengths: _Lengths, terms: Iterable[Term],
                   alive: Any = None) -> None:
    """Write every term's postings into a Whoosh (``whoosh3`` codec) field writer a block at a time.

    What ``FieldWriter.add_postings`` does posting by posting, with the same blocks, block statistics and
    term infos (a test compares the result with Whoosh's own writer's).
    """
    lastfield = None
    length_of: Any = None
    for n, (field, text, docs, weights, values) in enumerate(terms):
        if alive is not None and n % PARENT_CHECK_EVERY == 0:
            alive()
        if field != lastfield:
            if lastfield is not None:
                fieldwriter.finish_field()
            fieldwriter.start_field(field, schema[field])
            length_of = lengths.reader(field)
            lastfield = field
        fieldwriter.start_term(text)
        pw = fieldwriter._postwriter
        step = pw._blocklimit
        for start in range(0, len(docs), step):
            ids, ws = docs[start:start + step], weights[start:start + step]
            pw._ids = ids
            pw._weights = array("f", ws)
            pw._values = [v for v in values[start:start + step] if v]
            pw._maxweight = max(0, max(ws))
            found = [x for x in map(length_of, ids) if x] if length_of is not None else []
            pw._minlength = min(found) if found else None
            pw._maxlength = max(found) if found else 0
            if start + step < len(docs):
                pw._write_block()
        fieldwriter.finish_term()
    if lastfield is not None:
        fieldwriter.finish_field()


def _positions_by_texts(field: Any) -> bool:
    return (type(field.format) is Positions and field.format.field_boost == 1.0
            and type(field.analyzer) is SpokenAnalyzer)


class _PositionsIndex:
    """``field.index`` of a field with positions and the spoken analyser, from the analyser's ``texts_at`` (each
    word analysed once per process) instead of a token object per word through Whoosh's ``Positions.word_values``:
    the same ``(term, frequency, weight, positions)`` items, byte for byte (tests/test_engine_build.py). The
    transcripts' analysis was most of a writer's time."""

    def __init__(self, analyzer: SpokenAnalyzer) -> None:
        self.analyzer = analyzer

    def __call__(self, value: Any, **kwargs: Any) -> Iterator[tuple[bytes, int, float, bytes]]:
        if not isinstance(value, str):
            raise ValueError(f"{value!r} is not a string")
        places: dict[str, list[int]] = {}
        for text, pos in zip(*self.analyzer.texts_at(value)):
            found = places.get(text)
            if found is None:
                places[text] = [pos]
            else:
                found.append(pos)
        for text, found in places.items():
            deltas = [found[0], *map(operator.sub, found[1:], found)]
            yield text.encode("utf-8"), len(found), float(len(found)), pack_uint(len(deltas)) + pickle.dumps(deltas, 2)


def _plain_frequencies(field: Any) -> bool:
    """A field of frequencies whose analyser is a regular expression's matches lower-cased and folded as the analysis
    does (``analysis.plain_analyzer``: the spelling field; until 6 December 2026, Whoosh schema 16, its lower case
    and folding were Whoosh's own filters)."""
    if type(field.format) is not Frequency or field.format.field_boost != 1.0:
        return False
    items = getattr(field.analyzer, "items", None)
    return (type(field.analyzer) is CompositeAnalyzer and [type(item) for item in items or ()]
            == [RegexTokenizer, WordsLowercaseFilter, AsciiFoldingFilter]
            and not items[0].gaps and items[0].expression.groups == 0)


class _FrequencyIndex:
    """``field.index`` of a :func:`_plain_frequencies` field: each word's term made once per process rather than a
    token object per word through three generators; the same items as Whoosh's ``Frequency.word_values``."""

    LIMIT = 200_000  # words remembered

    def __init__(self, analyzer: Any) -> None:
        self.findall = analyzer.items[0].expression.findall
        self.terms: dict[str, str] = {}

    def __call__(self, value: Any, **kwargs: Any) -> Iterator[tuple[bytes, int, float, bytes]]:
        if not isinstance(value, str):
            raise ValueError(f"{value!r} is not a string")
        terms, counts = self.terms, {}
        if len(terms) > self.LIMIT:
            terms.clear()
        for word in self.findall(value):
            term = terms.get(word)
            if term is None:
                term = terms[word] = ascii_fold(lower(word))
            counts[term] = counts.get(term, 0) + 1
        for term, count in counts.items():
            yield term.encode("utf-8"), count, float(count), pack_uint(count)


class _SegmentWriter(SegmentWriter):
    """Whoosh's segment writer with the pool above, written as separate files (no compound file: that would
    copy the segment once more)."""

    def __init__(self, ix: Any, pool_mb: float) -> None:
        super().__init__(ix, _lk=False, compound=False)
        self.pool = _TermPool(self._tempstorage, int(pool_mb * 1024 * 1024))
        self.runs_written = 0
        for field in self.schema:  # this writer's own copy of the schema (read from the index's table of contents)
            if _positions_by_texts(field):
                field.index = _PositionsIndex(field.analyzer)
            elif _plain_frequencies(field):
                field.index = _FrequencyIndex(field.analyzer)

    def add(self, fields: dict[str, Any]) -> None:
        self.add_document(**fields)
        if self.pool.full():
            self.pool.save()
            self.runs_written += 1

    def finish(self, alive: Any = None) -> Any:
        """Write the postings, close the segment's files and return it (None if no document was added)."""
        if not self._added:
            self._close_segment()
            return None
        self.perdocwriter.close()
        perdoc = self.per_document_reader()
        try:
            write_postings(self.fieldwriter, self.schema, _Lengths(perdoc), self.pool.iter_terms(), alive)
        finally:
            perdoc.close()
            self._close_segment()  # closes the field writer, deletes the runs
        return self.get_segment()


# -- the rebuild: in this process, or in workers fed by the parent ---------------------------------------


class SerialWriter:
    """A full rebuild in this process: ``add_document``, then ``commit`` (or ``cancel``)."""

    def __init__(self, ix: Any, limits: BuildLimits) -> None:
        self.lock = ix.writer()  # holds the index's lock; commits the table of contents
        self.writer = _SegmentWriter(ix, limits.pool_mb)

    def add_document(self, **fields: Any) -> None:
        self.writer.add(fields)

    def commit(self) -> None:
        segment = self.writer.finish()
        _commit(self.lock, [segment] if segment is not None else [])

    def cancel(self) -> None:
        try:
            if not self.writer.is_closed:
                self.writer._close_segment()
        except (OSError, ValueError):
            # A segment whose writing failed (a full disk: EFBIG, ENOSPC) fails to close again ("I/O operation on
            # closed file"), which replaced the error being handled, the one that says why; the half-written
            # generation is removed by the next run.
            pass
        finally:
            self.lock.cancel()


class ParallelWriter:
    """A full rebuild in ``limits.procs`` forked worker processes, each writing one segment.

    The workers are forked when this object is made (by a process with a single thread: see the caller), and
    fed batches of documents: each batch is written to a file in the index's temporary folder and its name
    put on a bounded queue. (A message that small is written to the pipe at once; a batch itself, several
    megabytes, would not be, and a worker reading a batch half-written by a parent that was killed meanwhile
    would wait for the rest forever.) Workers exit when the parent is gone (they check while waiting for
    work and while writing), so a killed rebuild leaves no worker behind.
    """

    def __init__(self, ix: Any, limits: BuildLimits) -> None:
        self.limits = limits
        self.lock = ix.writer()
        self.tempstore = self.lock.temp_storage()
        ctx = multiprocessing.get_context("fork")
        self.jobs: Any = ctx.Queue(limits.procs * 2)
        self.results: Any = ctx.Queue()
        self.batch: list[dict[str, Any]] = []
        args = (ix.storage.folder, ix.indexname, self.jobs, self.results, limits.pool_mb, os.getpid())
        self.procs = [ctx.Process(target=_worker, args=args, daemon=True) for _ in range(limits.procs)]
        for proc in self.procs:
            proc.start()

    def add_document(self, **fields: Any) -> None:
        self.batch.append(fields)
        if len(self.batch) >= self.limits.batch:
            self._send_batch()

    def _send_batch(self) -> None:
        name = f"{random_name()}.batch"
        with self.tempstore.create_file(name).raw_file() as fh:
            pickle.dump(self.batch, fh, pickle.HIGHEST_PROTOCOL)
        self.batch = []
        self._send(name)

    def _send(self, item: str | None) -> None:
        while True:
            try:
                self.jobs.put(item, timeout=_WAIT)
                return
            except queue.Full:
                self._check_workers()

    def _check_workers(self) -> None:
        """Raise if a worker failed (with its traceback when it could send one)."""
        dead = [p for p in self.procs if p.exitcode not in (None, 0)]
        if not dead:
            return
        why = f"exit code {dead[0].exitcode}"
        try:
            while True:
                kind, payload = self.results.get_nowait()
                if kind == "error":
                    why = payload
                    break
        except queue.Empty:
            pass
        raise RuntimeError(f"an index writer process failed: {why}")

    def commit(self) -> None:
        if self.batch:
            self._send_batch()
        for _ in self.procs:
            self._send(None)
        segments: list[Any] = []
        for _ in self.procs:
            while True:
                try:
                    kind, payload = self.results.get(timeout=_WAIT)
                    break
                except queue.Empty:
                    self._check_workers()
            if kind == "error":
                raise RuntimeError(f"an index writer process failed: {payload}")
            if payload is not None:
                segments.append(payload)
        for proc in self.procs:
            proc.join()
        self._close_queues()
        _commit(self.lock, segments)

    def _close_queues(self) -> None:
        """End the queues' feeder threads: the process is then alone again, so that what follows may fork (the
        similarity fit's counting processes)."""
        for q in (self.jobs, self.results):
            q.close()
            q.join_thread()

    def cancel(self) -> None:
        for proc in self.procs:
            if proc.is_alive():
                proc.kill()
        for proc in self.procs:
            proc.join()
        self.jobs.cancel_join_thread()
        self._close_queues()
        self.lock.cancel()


def _commit(lock: Any, segments: list[Any]) -> None:
    """Write the table of contents listing ``segments`` with Whoosh's (empty) writer ``lock``; release it."""
    lock._close_segment()
    lock._commit_toc(segments)
    lock._finish()  # also removes the temporary folder the runs were in


def _worker(folder: str, indexname: str, jobs: Any, results: Any, pool_mb: float, parent: int) -> None:
    """A writer process: documents from ``jobs`` (names of batch files; None: finish) into one segment, put on
    ``results``; exits when the process ``parent`` is gone."""
    from whoosh.filedb.filestore import FileStorage

    def alive() -> None:
        if os.getppid() != parent:
            os._exit(1)

    try:
        ix = FileStorage(folder).open_index(indexname)
        writer = _SegmentWriter(ix, pool_mb)
        tempstore = writer.temp_storage()
        while True:
            try:
                name = jobs.get(timeout=_WAIT)
            except queue.Empty:
                alive()
                continue
            if name is None:
                break
            with tempstore.open_file(name).raw_file() as fh:
                batch = pickle.load(fh)
            tempstore.delete_file(name)
            for fields in batch:
                writer.add(fields)
            alive()
        runs = writer.runs_written
        segment = writer.finish(alive)
        log.debug("index writer %d: %d documents, %d runs", os.getpid(), writer.docnum, runs)
        results.put(("done", segment))
    except BaseException:
        results.put(("error", traceback.format_exc()))
        raise
