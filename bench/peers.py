"""The engines people would choose instead, fed the same documents and asked the same questions.

Search: SQLite FTS5 (``bm25()`` with podsearch's field weights, ``snippet()``, a per-show count like
podsearch's facet) and tantivy (its Python bindings; top 10, count, a snippet per hit, a per-show
aggregation). Similar: plain scikit-learn TF-IDF (cosine against every episode at query time) and
Whoosh's ``more_like`` (``WhooshEngine.more_like`` over a podsearch index). All in-process.
Documents come from podsearch's own JSON-lines parser, so every engine indexes the same text.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .queries import Query, fts5_match, tantivy_text

FIELDS = ("title", "show", "persons", "notes", "transcript")
WEIGHTS = {"title": 1.5, "show": 1.3, "persons": 1.3, "notes": 1.15, "transcript": 1.0}  # podsearch's boosts


@dataclass
class Doc:
    id: str
    show_id: str
    show: str
    title: str
    persons: str
    notes: str
    transcript: str
    year: int  # 0: no date


def documents(jsonl: Path) -> Iterator[Doc]:
    from podsearch.errors import PodsearchError
    from podsearch.ingest.jsonl import read_jsonl

    for item in read_jsonl(jsonl):
        if isinstance(item, PodsearchError):
            continue
        ep = item.episode
        yield Doc(ep.id, ep.show_id, item.show.title, ep.title, ", ".join(p.name for p in ep.persons),
                  ep.description_text, ep.transcript_text, int(ep.published[:4]) if ep.published else 0)


class FTS5:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.db: sqlite3.Connection | None = None

    def build(self, jsonl: Path) -> float:
        started = time.perf_counter()
        self.path.unlink(missing_ok=True)
        db = sqlite3.connect(self.path)
        db.execute("PRAGMA journal_mode=OFF")
        db.execute("PRAGMA synchronous=OFF")
        db.execute("CREATE VIRTUAL TABLE docs USING fts5(id UNINDEXED, show_id UNINDEXED, year UNINDEXED, "
                   "title, show, persons, notes, transcript, tokenize='porter unicode61')")
        with db:
            db.executemany("INSERT INTO docs VALUES (?,?,?,?,?,?,?,?)",
                           ((d.id, d.show_id, d.year, d.title, d.show, d.persons, d.notes, d.transcript)
                            for d in documents(jsonl)))
        db.execute("INSERT INTO docs(docs) VALUES('optimize')")
        db.commit()
        db.close()
        return time.perf_counter() - started

    def open(self) -> None:
        self.db = sqlite3.connect(self.path, check_same_thread=False)

    def search(self, q: Query) -> dict[str, Any]:
        assert self.db is not None
        where, args = "docs MATCH ?", [fts5_match(q)]
        if q.show:
            where += " AND show_id = ?"
            args.append(q.show)
        if q.years:
            where += " AND year BETWEEN ? AND ?"
            args += [q.years[0], q.years[1]]
        weights = ", ".join(["0", "0", "0"] + [str(WEIGHTS[f]) for f in FIELDS])
        hits = self.db.execute(
            f"SELECT id, title, snippet(docs, -1, '<mark>', '</mark>', '…', 24), bm25(docs, {weights}) AS score "
            f"FROM docs WHERE {where} ORDER BY score LIMIT 10", args).fetchall()
        shows = self.db.execute(f"SELECT show_id, count(*) FROM docs WHERE {where} GROUP BY show_id", args).fetchall()
        return {"total": sum(n for _, n in shows), "ids": [h[0] for h in hits], "snippets": [h[2] for h in hits]}

    def size(self) -> int:
        return self.path.stat().st_size


class Tantivy:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.index: Any = None
        self.schema: Any = None

    def _schema(self) -> Any:
        import tantivy

        b = tantivy.SchemaBuilder()
        b.add_text_field("id", stored=True, tokenizer_name="raw")
        b.add_text_field("show_id", stored=True, tokenizer_name="raw", fast=True)
        for name in FIELDS:  # stored: tantivy's snippets are cut from the stored text
            b.add_text_field(name, stored=True, tokenizer_name="en_stem")
        b.add_integer_field("year", indexed=True, fast=True)
        return b.build()

    def build(self, jsonl: Path, threads: int = 2) -> float:
        import shutil

        import tantivy

        started = time.perf_counter()
        shutil.rmtree(self.path, ignore_errors=True)
        self.path.mkdir(parents=True)
        self.schema = self._schema()
        index = tantivy.Index(self.schema, path=str(self.path))
        writer = index.writer(heap_size=256 * 1024 * 1024, num_threads=threads)
        for d in documents(jsonl):
            writer.add_document(tantivy.Document(id=d.id, show_id=d.show_id, title=d.title, show=d.show,
                                                 persons=d.persons, notes=d.notes, transcript=d.transcript,
                                                 year=d.year))
        writer.commit()
        writer.wait_merging_threads()
        return time.perf_counter() - started

    def open(self) -> None:
        import tantivy

        self.schema = self._schema()
        self.index = tantivy.Index(self.schema, path=str(self.path))
        self.index.reload()

    def search(self, q: Query) -> dict[str, Any]:
        import tantivy

        searcher = self.index.searcher()
        query = self.index.parse_query(tantivy_text(q), list(FIELDS), field_boosts=WEIGHTS)
        parts = [(tantivy.Occur.Must, query)]
        if q.show:
            parts.append((tantivy.Occur.Must, tantivy.Query.term_query(self.schema, "show_id", q.show)))
        if q.years:
            parts.append((tantivy.Occur.Must, tantivy.Query.range_query(
                self.schema, "year", tantivy.FieldType.Integer, q.years[0], q.years[1])))
        if len(parts) > 1:
            query = tantivy.Query.boolean_query(parts)
        result = searcher.search(query, 10, count=True)
        snippets = tantivy.SnippetGenerator.create(searcher, query, self.schema, "transcript")
        ids, texts = [], []
        for _, address in result.hits:
            doc = searcher.doc(address)
            ids.append(doc["id"][0])
            texts.append(snippets.snippet_from_doc(doc).to_html())
        facets = searcher.aggregate(query, {"shows": {"terms": {"field": "show_id", "size": 20}}})
        return {"total": result.count, "ids": ids, "snippets": texts, "facets": facets}

    def size(self) -> int:
        return sum(f.stat().st_size for f in self.path.rglob("*") if f.is_file())


class SklearnTfidf:
    """Plain TF-IDF over title + notes + transcript; neighbours by cosine against every row at query time."""

    def __init__(self) -> None:
        self.matrix: Any = None
        self.position: dict[str, int] = {}

    def fit(self, jsonl: Path) -> float:
        from sklearn.feature_extraction.text import TfidfVectorizer

        started = time.perf_counter()
        ids, texts = [], []
        for d in documents(jsonl):
            ids.append(d.id)
            texts.append(f"{d.title}\n{d.notes}\n{d.transcript}")
        vectorizer = TfidfVectorizer(stop_words="english", sublinear_tf=True, min_df=2, max_df=0.5,
                                     dtype=np.float32)
        self.matrix = vectorizer.fit_transform(texts).tocsr()
        self.position = {episode_id: i for i, episode_id in enumerate(ids)}
        self.ids = ids
        return time.perf_counter() - started

    def similar(self, episode_id: str, k: int = 10) -> list[str]:
        i = self.position[episode_id]
        sims = (self.matrix @ self.matrix[i].T).toarray().ravel()
        sims[i] = -1
        top = np.argpartition(-sims, k)[:k]
        return [self.ids[j] for j in top[np.argsort(-sims[top])]]
