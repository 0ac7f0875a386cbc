"""What a data folder holds, in comparable form: catalog content, index documents, model neighbours.

Used by the reliability tests and the soak scripts to say "this folder holds exactly what that one does"
and "this folder is intact".
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from podsearch.catalog import Catalog
from podsearch.engines.whoosh import WhooshEngine
from podsearch.generations import Generations
from podsearch.similar import SimilarModel


def catalog_dump(data: Path, show_ids: set[str] | None = None) -> dict[str, list[tuple]]:
    """Shows, episodes (without their times), segments and feed state (without fetch times)."""
    with Catalog.in_dir(data) as cat:
        q = cat.db.execute
        shows = [tuple(r) for r in q("SELECT id, source, title, doc FROM shows ORDER BY id")]
        episodes = [tuple(r) for r in q("SELECT id, show_id, title, published, doc, content_hash, gone "
                                         "FROM episodes ORDER BY id")]
        segments = [tuple(r) for r in q('SELECT s.episode_id, e.show_id, s.seq, s.start, s."end", s.speaker, s.text '
                                         "FROM segments s JOIN episodes e ON e.id = s.episode_id ORDER BY 1, 3")]
        feeds = [tuple(r) for r in q("SELECT source, show_id, etag, last_modified, last_status, last_error "
                                      "FROM feeds ORDER BY source")]
    if show_ids is not None:
        return {"shows": [s for s in shows if s[0] in show_ids], "episodes": [e for e in episodes if e[1] in show_ids],
                "segments": [s for s in segments if s[1] in show_ids]}
    return {"shows": shows, "episodes": episodes, "segments": segments, "feeds": feeds}


def integrity(data: Path) -> str:
    """SQLite's own check of the catalog file ("ok" when intact)."""
    db = sqlite3.connect(data / Catalog.FILENAME)
    try:
        return db.execute("PRAGMA integrity_check").fetchone()[0]
    finally:
        db.close()


def index_docs(data: Path) -> dict[str, str]:
    """{episode id: content hash} of the live index; a duplicate id is an error."""
    ix = WhooshEngine(data)._index()
    with ix.searcher() as s:
        fields = list(s.all_stored_fields())
    docs = {f["id"]: f.get("content_hash", "") for f in fields}
    if len(docs) != len(fields):
        raise AssertionError(f"the index holds {len(fields)} documents for {len(docs)} ids")
    return docs


def model_neighbours(data: Path, k: int = 10) -> dict[str, list[tuple[str, float]]]:
    """{episode id: its k nearest (id, score rounded)} from the live similarity model."""
    model = SimilarModel.load(Generations(data / "model"))
    out = {}
    for i, episode_id in enumerate(model.ids):
        row = [(model.ids[j], round(float(s), 5)) for j, s in zip(model.neigh_idx[i][:k], model.neigh_score[i][:k])
               if j >= 0]
        out[episode_id] = row
    return out


def snapshot(data: Path) -> dict[str, Any]:
    """Everything a reindex produces, for comparing two folders."""
    return {"catalog": catalog_dump(data), "index": index_docs(data), "model": model_neighbours(data)}


def generation_dirs(data: Path) -> dict[str, list[str]]:
    """The folders under index/ and model/ (generations, and any ``.tmp`` left behind)."""
    out = {}
    for part in ("index", "model"):
        root = data / part
        out[part] = sorted(p.name for p in root.iterdir() if p.is_dir()) if root.is_dir() else []
    return out


def disk_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in Path(path).rglob("*") if p.is_file())
