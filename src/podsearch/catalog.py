"""The SQLite catalog: the source of truth for shows, episodes, transcripts and fetch state.

The Whoosh index and the similarity model are derived from it and can be rebuilt from it alone.
"""

from __future__ import annotations

import hashlib
import json
import logging
import sqlite3
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import asdict
from pathlib import Path
from typing import Any

from .episodes import Chapter, Episode, Person, Segment, Show, TranscriptLink, people_named, person_key
from .errors import PERMISSION_ADVICE, CatalogError, IndexMissing
from .names import episode_names

log = logging.getLogger(__name__)

# Each version, migrated in place on open (see Catalog._migrate):
# 2: watches, their inbox of new episodes and their pending deliveries (alerts)
# 3: feeds.origin and feeds.url (feeds that move, the config as the source of truth), the transcripts table
# 4: names (what a query may call an episode: its numbered title, its show and number), filled for every episode
# 5: people (each person's and speaker's name as shown, by its key), filled from every episode
# 6: aliases (an id a feed's item has now that names an episode stored under its old id: ingest/identity.py)
# 7: episodes.gone_since (when an episode was first found gone from its feed; NULL for one marked before schema 7)
# 8: transcripts.parser (the ingest.transcripts.PARSER_VERSION that parsed it; NULL: parsed before schema 8, older)
SCHEMA_VERSION = 8

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE IF NOT EXISTS feeds (
    source TEXT PRIMARY KEY,
    show_id TEXT,
    etag TEXT,
    last_modified TEXT,
    last_fetch REAL,
    last_status TEXT,
    last_error TEXT,
    origin TEXT,  -- 'config' (listed in the config file) or 'add' (podsearch add); NULL: registered before schema 3
    url TEXT      -- where the feed is read since it moved (301/308, itunes:new-feed-url); NULL: at its source
);
CREATE TABLE IF NOT EXISTS shows (
    id TEXT PRIMARY KEY,
    source TEXT,
    title TEXT NOT NULL,
    doc TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS episodes (
    id TEXT PRIMARY KEY,
    show_id TEXT NOT NULL REFERENCES shows(id),
    title TEXT NOT NULL,
    published TEXT,
    doc TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    gone INTEGER NOT NULL DEFAULT 0,
    added_at REAL NOT NULL,
    updated_at REAL NOT NULL,
    gone_since REAL  -- when a run first found it gone from its feed (seconds); NULL while it is in its feed
);
CREATE INDEX IF NOT EXISTS episodes_show ON episodes(show_id, published);
-- What a query may call an episode (names.py): its numbered title or label, "#<show id> <number>".
CREATE TABLE IF NOT EXISTS names (
    name TEXT NOT NULL,
    episode_id TEXT NOT NULL REFERENCES episodes(id) ON DELETE CASCADE,
    PRIMARY KEY (name, episode_id)
);
CREATE INDEX IF NOT EXISTS names_episode ON names(episode_id);
-- How a person (a feed's person or a transcript's speaker) is written, by the lower-case key that the person
-- filter and facet use (episodes.person_key): "Ian McAllister", not the key's "Ian Mcallister".
CREATE TABLE IF NOT EXISTS people (
    key TEXT PRIMARY KEY,
    name TEXT NOT NULL
);
-- An item of a show's feed whose id changed (a new guid scheme, guids added, an enclosure that moved ...) and that
-- was recognised as an episode stored under its old id (ingest/identity.py:reconcile): the item keeps that id.
CREATE TABLE IF NOT EXISTS aliases (
    show_id TEXT NOT NULL,
    alias TEXT NOT NULL,
    episode_id TEXT NOT NULL REFERENCES episodes(id) ON DELETE CASCADE,
    PRIMARY KEY (show_id, alias)
);
CREATE INDEX IF NOT EXISTS aliases_episode ON aliases(episode_id);
CREATE TABLE IF NOT EXISTS segments (
    episode_id TEXT NOT NULL REFERENCES episodes(id) ON DELETE CASCADE,
    seq INTEGER NOT NULL,
    start REAL,
    "end" REAL,
    speaker TEXT NOT NULL DEFAULT '',
    text TEXT NOT NULL,
    PRIMARY KEY (episode_id, seq)
);
CREATE TABLE IF NOT EXISTS transcripts (
    url TEXT PRIMARY KEY,  -- a transcript's URL (or local path) and the validators it was last read with
    etag TEXT,
    last_modified TEXT,
    parser INTEGER  -- the parser version that read it (ingest/transcripts.py PARSER_VERSION); NULL: before schema 8
);
CREATE TABLE IF NOT EXISTS runs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    started REAL NOT NULL,
    finished REAL,
    summary TEXT
);
CREATE TABLE IF NOT EXISTS watches (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    query TEXT NOT NULL,
    filters TEXT NOT NULL DEFAULT '{}',
    webhook TEXT NOT NULL,
    secret TEXT NOT NULL,
    created REAL NOT NULL,
    delivered INTEGER NOT NULL DEFAULT 0,
    last_delivered REAL,
    last_error TEXT
);
CREATE TABLE IF NOT EXISTS watch_inbox (
    episode_id TEXT PRIMARY KEY REFERENCES episodes(id) ON DELETE CASCADE,
    added REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS watch_deliveries (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    watch_id INTEGER NOT NULL REFERENCES watches(id) ON DELETE CASCADE,
    uid TEXT NOT NULL UNIQUE,
    created REAL NOT NULL,
    body BLOB NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0,
    last_attempt REAL,
    last_error TEXT
);
-- Every episode inserted while a watch exists is new (an update is an UPDATE): the database itself keeps
-- the list, in the transaction that stores the episode, so a run that stops before the watches were told
-- leaves it for the next run.
CREATE TRIGGER IF NOT EXISTS watch_inbox_new AFTER INSERT ON episodes WHEN EXISTS (SELECT 1 FROM watches)
BEGIN
    INSERT OR IGNORE INTO watch_inbox (episode_id, added) VALUES (NEW.id, NEW.added_at);
END;
"""

def _doc_fields(ep: Episode) -> dict[str, Any]:
    """The episode without its segments (they are many, and live in their own table)."""
    segments = ep.segments
    ep.segments = []
    try:
        return asdict(ep)
    finally:
        ep.segments = segments


def episode_hash(ep: Episode, doc: str | None = None) -> str:
    """A digest of everything the index and model see, so that unchanged episodes are skipped."""
    h = hashlib.sha256((doc if doc is not None else _episode_doc(ep)).encode("utf-8"))
    for s in ep.segments:
        h.update(f"\x1e{s.start!r}\x1f{s.end!r}\x1f{s.speaker}\x1f{s.text}".encode())
    return h.hexdigest()


def _episode_doc(ep: Episode) -> str:
    return json.dumps(_doc_fields(ep), ensure_ascii=False, sort_keys=True)


def _episode_from_row(row: sqlite3.Row, segments: list[Segment] | None = None) -> Episode:
    d = json.loads(row["doc"])
    d["persons"] = [Person(**p) for p in d.get("persons", [])]
    d["transcript_links"] = [TranscriptLink(**t) for t in d.get("transcript_links", [])]
    d["chapters"] = [Chapter(**c) for c in d.get("chapters", [])]
    d["segments"] = segments or []
    known = Episode.__dataclass_fields__
    return Episode(**{k: v for k, v in d.items() if k in known})


def _show_from_row(row: sqlite3.Row) -> Show:
    d = json.loads(row["doc"])
    d["persons"] = [Person(**p) for p in d.get("persons", [])]
    known = Show.__dataclass_fields__
    return Show(**{k: v for k, v in d.items() if k in known})


EPISODE_ORDER = " ORDER BY COALESCE(published, '') DESC, id"  # newest first, as every list of episodes


def _why(exc: sqlite3.Error) -> str:
    """What an operator does about a catalog SQLite will not open."""
    text = str(exc)
    if "readonly" in text:
        return ("; podsearch writes beside the catalog (SQLite's write-ahead log, even to read it): run it as a user "
                "who may write in the data folder")
    if "unable to open" in text:  # (a catalog this user may not read: until 6 December 2026 said without advice)
        return ("; podsearch reads and writes the catalog and beside it (SQLite's write-ahead log, even to read it): "
                + PERMISSION_ADVICE)
    if "malformed" in text or "not a database" in text:
        return ("; the file is damaged: put back a copy (docs/operations.md, *Backups*), or move it away and run "
                "'podsearch reindex' to read the feeds again (imported episodes and watches are then lost)")
    return ""


class Catalog:
    """A connection to the catalog file. One per thread; cheap to open."""

    FILENAME = "catalog.sqlite"
    # The write-ahead log grows to the largest transaction (an import of 100,000 episodes: 5.9 GB) and, while
    # another connection is open (the server's), keeps that size; it is cut back to this after a checkpoint.
    WAL_LIMIT_BYTES = 64 << 20

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.db = sqlite3.connect(self.path, timeout=30, isolation_level=None, check_same_thread=False)
        except (OSError, sqlite3.Error) as exc:  # a folder that cannot be made, a file not writable
            why = _why(exc) if isinstance(exc, sqlite3.Error) else ""
            raise CatalogError(f"Cannot open the catalog {self.path}: {exc}{why}") from None
        self.db.row_factory = sqlite3.Row
        try:
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.execute("PRAGMA synchronous=NORMAL")
            self.db.execute(f"PRAGMA journal_size_limit={int(self.WAL_LIMIT_BYTES)}")
            self.db.execute("PRAGMA foreign_keys=ON")
            self.db.executescript(SCHEMA)  # also the migration: every table and trigger is "IF NOT EXISTS"
            self.db.execute("INSERT OR IGNORE INTO meta VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))
            self._migrate()
        except sqlite3.Error as exc:  # (until 5 December 2026 a traceback, from every command, `stats` too)
            self.db.close()
            raise CatalogError(f"Cannot open the catalog {self.path}: {exc}{_why(exc)}") from None
        except BaseException:
            self.db.close()
            raise

    def schema_version(self) -> int:
        return int(self.db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()[0])

    def _migrate(self) -> None:
        """Bring a catalog written by an older podsearch to this schema, in place, in one transaction."""
        if self.schema_version() == SCHEMA_VERSION:
            return
        if self.schema_version() > SCHEMA_VERSION:
            raise CatalogError(f"{self.path} was written by a newer podsearch (catalog schema "
                               f"{self.schema_version()}, this one knows {SCHEMA_VERSION}); upgrade podsearch.")
        with self.transaction():
            version = self.schema_version()  # again, inside the lock: another process may have done it
            # < 2: the watches' tables and trigger are made by SCHEMA above ("IF NOT EXISTS").
            if version < 3:  # a schema-2 catalog of a podsearch without feed origins (or schema 1)
                columns = {r["name"] for r in self.db.execute("PRAGMA table_info(feeds)")}
                for column in ("origin", "url"):
                    if column not in columns:
                        self.db.execute(f"ALTER TABLE feeds ADD COLUMN {column} TEXT")
            if version < 4:  # the names table is made by SCHEMA; the episodes stored before it get theirs
                rows = self.db.execute("SELECT id, title, show_id, json_extract(doc, '$.number') FROM episodes")
                for row in rows.fetchall():
                    self._name(row[0], row[1], row[2], row[3] if isinstance(row[3], int) else None)
            # < 6: the aliases table is made by SCHEMA (no episode had one before)
            if version < 7 and "gone_since" not in {r["name"] for r in self.db.execute("PRAGMA table_info(episodes)")}:
                # (an episode marked gone before keeps NULL: when it left was not recorded)
                self.db.execute("ALTER TABLE episodes ADD COLUMN gone_since REAL")
            if version < 8 and "parser" not in {r["name"] for r in self.db.execute("PRAGMA table_info(transcripts)")}:
                # (a transcript stored before keeps NULL: parsed by an older parser, read again by the next reindex)
                self.db.execute("ALTER TABLE transcripts ADD COLUMN parser INTEGER")
            if version < 5:  # the people table is made by SCHEMA; the episodes stored before it give theirs
                self._people(p["name"] for (doc,) in self.db.execute("SELECT doc FROM episodes").fetchall()
                             for p in json.loads(doc).get("persons", []))
                self._people(r[0] for r in self.db.execute("SELECT DISTINCT speaker FROM segments WHERE speaker != ''"))
            self.db.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", (str(SCHEMA_VERSION),))
        if version < SCHEMA_VERSION:
            log.info("catalog %s: schema %d migrated to %d", self.path, version, SCHEMA_VERSION)

    @classmethod
    def in_dir(cls, data_dir: Path | str) -> Catalog:
        return cls(Path(data_dir) / cls.FILENAME)

    @classmethod
    def existing(cls, data_dir: Path | str) -> Catalog:
        """The data folder's catalog, for a command that only reads it: IndexMissing when there is none (``feeds``
        and ``watch list`` on a mistyped ``--data`` made a folder and an empty catalog there, and said nothing)."""
        path = Path(data_dir) / cls.FILENAME
        if not path.exists():
            raise IndexMissing(f"No catalog in {data_dir}. Run 'podsearch reindex' first.")
        return cls(path)

    def close(self) -> None:
        self.db.close()

    def __enter__(self) -> Catalog:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- transactions -------------------------------------------------------------------------
    def transaction(self) -> _Transaction:
        return _Transaction(self.db)

    # -- feeds ----------------------------------------------------------------------------------
    def feed_state(self, source: str) -> dict[str, Any] | None:
        row = self.db.execute("SELECT * FROM feeds WHERE source = ?", (source,)).fetchone()
        return dict(row) if row else None

    def set_feed_state(self, source: str, **fields: Any) -> None:
        self.db.execute("INSERT OR IGNORE INTO feeds (source) VALUES (?)", (source,))
        for key, value in fields.items():
            if key not in {"show_id", "etag", "last_modified", "last_fetch", "last_status", "last_error", "origin", "url"}:
                raise ValueError(key)
            self.db.execute(f"UPDATE feeds SET {key} = ? WHERE source = ?", (value, source))

    def feeds(self) -> list[dict[str, Any]]:
        return [dict(r) for r in self.db.execute("SELECT * FROM feeds ORDER BY source")]

    def feed_at(self, url: str) -> dict[str, Any] | None:
        """The feed now read at ``url`` (after a move), if any."""
        row = self.db.execute("SELECT * FROM feeds WHERE url = ? ORDER BY source LIMIT 1", (url,)).fetchone()
        return dict(row) if row else None

    def delete_feed(self, source: str) -> None:
        self.db.execute("DELETE FROM feeds WHERE source = ?", (source,))

    # -- transcript validators -------------------------------------------------------------------
    def transcript_state(self, url: str) -> dict[str, Any] | None:
        """The validators a transcript was last read with and the version of the parser that read it (``parser``;
        None before schema 8); None: never recorded, e.g. before schema 3."""
        row = self.db.execute("SELECT etag, last_modified, parser FROM transcripts WHERE url = ?", (url,)).fetchone()
        return dict(row) if row else None

    def set_transcript_state(self, url: str, etag: str | None, last_modified: str | None, parser: int | None) -> None:
        self.db.execute("INSERT INTO transcripts (url, etag, last_modified, parser) VALUES (?, ?, ?, ?) "
                        "ON CONFLICT(url) DO UPDATE SET etag = excluded.etag, last_modified = excluded.last_modified, "
                        "parser = excluded.parser", (url, etag, last_modified, parser))

    # -- shows --------------------------------------------------------------------------------
    def upsert_show(self, show: Show) -> None:
        self.db.execute(
            "INSERT INTO shows (id, source, title, doc) VALUES (?, ?, ?, ?) "
            "ON CONFLICT(id) DO UPDATE SET source=excluded.source, title=excluded.title, doc=excluded.doc",
            (show.id, show.source, show.title, json.dumps(asdict(show), ensure_ascii=False)),
        )

    def show(self, show_id: str) -> Show | None:
        row = self.db.execute("SELECT * FROM shows WHERE id = ?", (show_id,)).fetchone()
        return _show_from_row(row) if row else None

    def shows(self) -> list[Show]:
        return [_show_from_row(r) for r in self.db.execute("SELECT * FROM shows ORDER BY title")]

    def show_id_for_source(self, source: str) -> str | None:
        row = self.db.execute("SELECT show_id FROM feeds WHERE source = ?", (source,)).fetchone()
        return row["show_id"] if row and row["show_id"] else None

    def feeds_of_show(self, show_id: str) -> list[dict[str, Any]]:
        return [dict(r) for r in self.db.execute("SELECT * FROM feeds WHERE show_id = ? ORDER BY source", (show_id,))]

    def shows_like(self, title: str, link: str) -> list[str]:
        """Ids of the shows with this title, or this (non-empty) home page."""
        rows = self.db.execute("SELECT id FROM shows WHERE lower(title) = lower(?) OR "
                               "(? != '' AND json_extract(doc, '$.link') = ?) ORDER BY id", (title, link, link))
        return [r["id"] for r in rows]

    def delete_show_if_empty(self, show_id: str) -> bool:
        if self.db.execute("SELECT 1 FROM episodes WHERE show_id = ? LIMIT 1", (show_id,)).fetchone():
            return False
        self.db.execute("DELETE FROM shows WHERE id = ?", (show_id,))
        return True

    def shows_with_guid(self, guid: str) -> list[str]:
        """Ids of the shows whose feed declared this podcast:guid."""
        rows = self.db.execute("SELECT id FROM shows WHERE json_extract(doc, '$.guid') = ? ORDER BY id", (guid,))
        return [r["id"] for r in rows]

    def show_id_taken(self, show_id: str, source: str) -> bool:
        row = self.db.execute("SELECT source FROM shows WHERE id = ?", (show_id,)).fetchone()
        return bool(row) and row["source"] != source

    # -- episodes -------------------------------------------------------------------------------
    def _pairs_in(self, sql: str, keys: Iterable[str]) -> dict[str, str]:
        """{first column: second} of ``sql`` (a SELECT of two columns ending ``IN``) over ``keys``, 500 at a time."""
        keys = list(dict.fromkeys(keys))
        out: dict[str, str] = {}
        for start in range(0, len(keys), 500):
            chunk = keys[start:start + 500]
            out.update({r[0]: r[1] for r in self.db.execute(f"{sql} ({','.join('?' * len(chunk))})", chunk)})
        return out

    def owners(self, episode_ids: Iterable[str]) -> dict[str, str]:
        """{episode id: its show id} for the ids the catalog holds."""
        return self._pairs_in("SELECT id, show_id FROM episodes WHERE id IN", episode_ids)

    def episode_keys(self, show_id: str) -> list[dict[str, Any]]:
        """What may recognise each episode of a show whose item changed its id (``ingest.identity.reconcile``): id,
        title, published, audio_url, link, transcript URLs and show notes (as text), and whether it is gone, in one
        read of the show's rows."""
        rows = self.db.execute("SELECT id, title, published, json_extract(doc, '$.audio_url'), json_extract(doc, "
                               "'$.link'), json_extract(doc, '$.transcript_links'), json_extract(doc, "
                               "'$.description_text'), gone FROM episodes WHERE show_id = ?", (show_id,))
        return [{"id": r[0], "title": r[1], "published": r[2], "audio_url": r[3] or "", "link": r[4] or "",
                 "transcripts": [t.get("url", "") for t in json.loads(r[5] or "[]")], "notes": r[6] or "",
                 "gone": bool(r[7])} for r in rows]

    def aliases(self, show_id: str, ids: Iterable[str]) -> dict[str, str]:
        """{item id: the id of the episode it is stored as} for the ids of ``show_id``'s items that are aliases."""
        ids = list(dict.fromkeys(ids))
        out: dict[str, str] = {}
        for start in range(0, len(ids), 500):
            chunk = ids[start:start + 500]
            rows = self.db.execute(f"SELECT alias, episode_id FROM aliases WHERE show_id = ? AND alias IN "
                                   f"({','.join('?' * len(chunk))})", (show_id, *chunk))
            out.update({r[0]: r[1] for r in rows})
        return out

    def add_alias(self, show_id: str, alias: str, episode_id: str) -> None:
        self.db.execute("INSERT INTO aliases (show_id, alias, episode_id) VALUES (?, ?, ?) ON CONFLICT(show_id, alias) "
                        "DO UPDATE SET episode_id = excluded.episode_id", (show_id, alias, episode_id))

    def episode_count(self, show_id: str) -> int:
        return self.db.execute("SELECT COUNT(*) FROM episodes WHERE show_id = ?", (show_id,)).fetchone()[0]

    def episode_counts(self) -> dict[str, tuple[int, int]]:
        """{show id: (episodes, of which gone)}."""
        rows = self.db.execute("SELECT show_id, COUNT(*), SUM(gone) FROM episodes GROUP BY show_id")
        return {r[0]: (r[1], r[2] or 0) for r in rows}

    def episode_owner(self, episode_id: str) -> str | None:
        row = self.db.execute("SELECT show_id FROM episodes WHERE id = ?", (episode_id,)).fetchone()
        return row["show_id"] if row else None

    def upsert_episode(self, ep: Episode) -> str:
        """Store an episode with its segments. Returns 'new', 'updated' or 'unchanged'."""
        doc = _episode_doc(ep)
        digest = episode_hash(ep, doc)
        now = time.time()
        row = self.db.execute("SELECT content_hash, gone FROM episodes WHERE id = ?", (ep.id,)).fetchone()
        if row and row["content_hash"] == digest:
            if row["gone"]:  # back in its feed
                self.db.execute("UPDATE episodes SET gone = 0, gone_since = NULL WHERE id = ?", (ep.id,))
            return "unchanged"
        if row:
            self.db.execute(
                "UPDATE episodes SET show_id=?, title=?, published=?, doc=?, content_hash=?, gone=0, gone_since=NULL, "
                "updated_at=? WHERE id=?",
                (ep.show_id, ep.title, ep.published, doc, digest, now, ep.id),
            )
            self.db.execute("DELETE FROM segments WHERE episode_id = ?", (ep.id,))
        else:
            self.db.execute(
                "INSERT INTO episodes (id, show_id, title, published, doc, content_hash, gone, added_at, updated_at) "
                "VALUES (?, ?, ?, ?, ?, ?, 0, ?, ?)",
                (ep.id, ep.show_id, ep.title, ep.published, doc, digest, now, now),
            )
        self.db.executemany(
            'INSERT INTO segments (episode_id, seq, start, "end", speaker, text) VALUES (?, ?, ?, ?, ?, ?)',
            [(ep.id, i, s.start, s.end, s.speaker, s.text) for i, s in enumerate(ep.segments)],
        )
        self._name(ep.id, ep.title, ep.show_id, ep.number)
        self._people(people_named(ep))
        return "updated" if row else "new"

    def _name(self, episode_id: str, title: str, show_id: str, number: int | None) -> None:
        """What a query may call the episode (``names.episode_names``), in place of what it was called."""
        self.db.execute("DELETE FROM names WHERE episode_id = ?", (episode_id,))
        self.db.executemany("INSERT OR IGNORE INTO names (name, episode_id) VALUES (?, ?)",
                            [(name, episode_id) for name in episode_names(title, show_id, number)])

    def _people(self, names: Iterable[str]) -> None:
        """Record how these people are written. A spelling with a capital replaces one without ("ian mcallister"
        then "Ian McAllister"); otherwise the first spelling stays."""
        self.db.executemany(
            "INSERT INTO people (key, name) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET name = excluded.name "
            "WHERE people.name = lower(people.name) AND excluded.name != lower(excluded.name)",
            [(person_key(name), name.strip()) for name in dict.fromkeys(names) if name.strip()])

    def person_names(self, keys: Iterable[str]) -> dict[str, str]:
        """{key: the name as written} of the people with these keys that the catalog knows."""
        return self._pairs_in("SELECT key, name FROM people WHERE key IN", keys)

    def mark_gone(self, show_id: str, keep_ids: Iterable[str], prune: bool = False) -> int:
        """Mark (or with prune, delete) the episodes of a show that are no longer in its feed; one newly marked is
        gone since now, one marked already keeps its date.

        Returns how many were newly marked (or deleted), so that repeated runs do not count them again.
        """
        keep = set(keep_ids)
        now = time.time()
        rows = self.db.execute("SELECT id, gone FROM episodes WHERE show_id = ?", (show_id,)).fetchall()
        changed = 0
        for row in rows:
            if row["id"] in keep:
                continue
            if prune:
                self.db.execute("DELETE FROM episodes WHERE id = ?", (row["id"],))
                changed += 1
            elif not row["gone"]:
                self.db.execute("UPDATE episodes SET gone = 1, gone_since = ? WHERE id = ?", (now, row["id"]))
                changed += 1
        return changed

    def prune_gone(self, show_id: str) -> int:
        """Delete the episodes of a show marked gone; returns how many."""
        return self.db.execute("DELETE FROM episodes WHERE show_id = ? AND gone = 1", (show_id,)).rowcount

    def prune_unfed(self) -> int:
        """Delete the episodes marked gone of shows no feed reads any more (a feed the config dropped, or removed,
        on an earlier run); returns how many."""
        return self.db.execute("DELETE FROM episodes WHERE gone = 1 AND show_id NOT IN "
                               "(SELECT show_id FROM feeds WHERE show_id IS NOT NULL)").rowcount

    def delete_episode(self, episode_id: str) -> None:
        self.db.execute("DELETE FROM episodes WHERE id = ?", (episode_id,))

    def episode(self, episode_id: str, with_segments: bool = True) -> Episode | None:
        row = self.db.execute("SELECT * FROM episodes WHERE id = ?", (episode_id,)).fetchone()
        if row is None:
            return None
        return _episode_from_row(row, self.segments(episode_id) if with_segments else None)

    def is_gone(self, episode_id: str) -> bool:
        """Whether the episode left its feed (kept, marked gone: docs/ingest.md); False for one not stored."""
        return self.left_feed(episode_id)[0]

    def left_feed(self, episode_id: str) -> tuple[bool, float | None]:
        """Whether the episode left its feed, and when a run first found it gone (seconds since the epoch; None if
        it is in its feed, or was marked gone before the catalog kept that: schema 7)."""
        row = self.db.execute("SELECT gone, gone_since FROM episodes WHERE id = ?", (episode_id,)).fetchone()
        if not (row and row[0]):
            return False, None
        return True, row[1]

    def segments(self, episode_id: str, first: int = 0, stop: int | None = None) -> list[Segment]:
        """The episode's segments, or those at places ``first`` to ``stop`` (from 0; one part of an episode page)."""
        cursor = self.db.cursor()
        cursor.row_factory = None  # plain tuples: a search reads every segment of its ten hits
        if first or stop is not None:
            rows = cursor.execute('SELECT text, start, "end", speaker FROM segments WHERE episode_id = ? AND seq >= ? '
                                  'AND seq < ? ORDER BY seq', (episode_id, first, stop if stop is not None else 1 << 62))
        else:
            rows = cursor.execute(
                'SELECT text, start, "end", speaker FROM segments WHERE episode_id = ? ORDER BY seq', (episode_id,)
            )
        return [Segment(*r) for r in rows]

    def segment_starts(self, episode_id: str, first: int = 0, stop: int | None = None) -> list[float | None]:
        """The start of each of the episode's segments at places ``first`` to ``stop`` (from 0; default every one),
        in order: an episode page reads those of its part (every one of a hostile transcript's 300,000 took 0.11 s
        until 6 December 2026)."""
        return [r[0] for r in self.db.execute("SELECT start FROM segments WHERE episode_id = ? AND seq >= ? AND seq < ? "
                                              "ORDER BY seq", (episode_id, first, stop if stop is not None else 1 << 62))]

    def segment_playing(self, episode_id: str, t: float) -> int:
        """The place of the segment playing at second ``t`` (-1: none starts by then): the first of those that start
        in the latest whole second at or before ``t``, read in the order of the transcript (one whose times go back
        counts the last such run), as the tests' ``ListedTimes.playing`` (conftest.py) reads a list; three aggregates
        in SQLite."""
        sec = "CAST(start AS INTEGER)"  # (truncated as Python's int() is)
        where = f"episode_id = ? AND start IS NOT NULL AND {sec} <= ?"
        last = self.db.execute(f"SELECT MAX(seq) FROM segments WHERE {where}", (episode_id, t)).fetchone()[0]
        if last is None:
            return -1
        second = self.db.execute(f"SELECT {sec} FROM segments WHERE episode_id = ? AND seq = ?",
                                 (episode_id, last)).fetchone()[0]
        other = self.db.execute(f"SELECT MAX(seq) FROM segments WHERE {where} AND seq < ? AND {sec} != ?",
                                (episode_id, t, last, second)).fetchone()[0]
        return self.db.execute(f"SELECT MIN(seq) FROM segments WHERE episode_id = ? AND seq > ? AND seq <= ? "
                               f"AND start IS NOT NULL AND {sec} = ?",
                               (episode_id, -1 if other is None else other, last, second)).fetchone()[0]

    def segment_seconds_before(self, episode_id: str, first: int, seconds: set[int]) -> set[int]:
        """Which of ``seconds`` (whole) a segment before place ``first`` starts in (a page's anchors are unique)."""
        if not seconds or first <= 0:
            return set()
        rows = self.db.execute("SELECT DISTINCT CAST(start AS INTEGER) FROM segments WHERE episode_id = ? AND seq < ? "
                               "AND start IS NOT NULL AND CAST(start AS INTEGER) BETWEEN ? AND ?",
                               (episode_id, first, min(seconds), max(seconds)))
        return {r[0] for r in rows} & seconds

    def text_between(self, episode_id: str, lo: float, hi: float) -> str:
        """The text of the episode's segments that start from second ``lo`` to ``hi``, in order, joined by spaces
        (the segments' text is read for those alone)."""
        rows = self.db.execute("SELECT text FROM segments WHERE episode_id = ? AND start >= ? AND start <= ? "
                               "ORDER BY seq", (episode_id, lo, hi))
        return " ".join(r[0] for r in rows)

    def segment_count(self, episode_id: str) -> int:
        return self.db.execute("SELECT COUNT(*) FROM segments WHERE episode_id = ?", (episode_id,)).fetchone()[0]

    def speaker_turns(self, episode_ids: list[str], speaks: Callable[[str], bool]) -> dict[str, list[int]]:
        """{episode id: the places of its segments, in order, whose speaker ``speaks`` says is the one asked for}
        of the episodes of ``episode_ids`` that label such a speaker (their places alone are read)."""
        out: dict[str, list[int]] = {}
        for episode_id in dict.fromkeys(episode_ids):
            names = [r[0] for r in self.db.execute("SELECT DISTINCT speaker FROM segments WHERE episode_id = ? "
                                                   "AND speaker != ''", (episode_id,)) if speaks(r[0])]
            if names:
                marks = ",".join("?" * len(names))
                out[episode_id] = [r[0] for r in self.db.execute(
                    f"SELECT seq FROM segments WHERE episode_id = ? AND speaker IN ({marks}) ORDER BY seq",
                    (episode_id, *names))]
        return out

    def segments_at(self, wanted: dict[str, list[int]]) -> dict[tuple[str, int], Segment]:
        """{(episode id, place in its segment list): segment} of the segments asked for (those that exist)."""
        cursor = self.db.cursor()
        cursor.row_factory = None
        out: dict[tuple[str, int], Segment] = {}
        for episode_id, places in wanted.items():
            if not places:
                continue
            marks = ",".join("?" * len(places))
            rows = cursor.execute(f'SELECT seq, text, start, "end", speaker FROM segments '
                                  f'WHERE episode_id = ? AND seq IN ({marks})', (episode_id, *places))
            for seq, *rest in rows:
                out[episode_id, seq] = Segment(*rest)
        return out

    def episodes_by_id(self, ids: list[str], segments_of: Iterable[str] = ()) -> dict[str, Episode]:
        """The episodes of ``ids`` (those that exist), with the segments of those in ``segments_of``: what one page
        of search results shows, in one call. (The segments are read an episode at a time: over the table's
        (episode_id, seq) key that is twice as fast as one ``IN (...)`` query, measured on the site corpus.)"""
        if not ids:
            return {}
        marks = ",".join("?" * len(ids))
        rows = self.db.execute(f"SELECT * FROM episodes WHERE id IN ({marks})", ids).fetchall()
        wanted = set(segments_of)
        return {r["id"]: _episode_from_row(r, self.segments(r["id"]) if r["id"] in wanted else None) for r in rows}

    def show_ids(self, ids: list[str]) -> dict[str, str]:
        """{episode id: its show's id} of the episodes of ``ids`` that exist, in one read."""
        if not ids:
            return {}
        marks = ",".join("?" * len(ids))
        return {r[0]: r[1] for r in self.db.execute(f"SELECT id, show_id FROM episodes WHERE id IN ({marks})", ids)}

    def show_titles(self) -> dict[str, str]:
        """{show id: title} of every show, in one read."""
        return {r[0]: r[1] for r in self.db.execute("SELECT id, title FROM shows")}

    def episodes(self, show_id: str | None = None, with_segments: bool = False,
                 include_gone: bool = True) -> Iterator[Episode]:
        sql = "SELECT * FROM episodes"
        where, args = [], []
        if show_id is not None:
            where.append("show_id = ?")
            args.append(show_id)
        if not include_gone:
            where.append("gone = 0")
        if where:
            sql += " WHERE " + " AND ".join(where)
        sql += EPISODE_ORDER
        for row in self.db.execute(sql, args).fetchall():
            yield _episode_from_row(row, self.segments(row["id"]) if with_segments else None)

    def episode_ids(self) -> list[str]:
        """Every episode's id, in the order of :meth:`episodes`: a pass over the catalog a chunk at a time."""
        return [r[0] for r in self.db.execute("SELECT id FROM episodes" + EPISODE_ORDER)]

    def summaries(self) -> dict[str, tuple[str, str, str | None, str, str]]:
        """{episode id: (title, show id, published, link, language)} in one query, for lists of episodes."""
        rows = self.db.execute("SELECT id, title, show_id, published, json_extract(doc, '$.link'), "
                               "json_extract(doc, '$.language') FROM episodes")
        return {r[0]: (r[1], r[2], r[3], r[4] or "", r[5] or "") for r in rows}

    def called(self, names: list[str], limit: int) -> list[str]:
        """The ids of the episodes (not gone) that any of ``names`` calls (``names.episode_names``), in the
        order of the names: an index lookup per name."""
        found: list[str] = []
        for name in names:
            rows = self.db.execute("SELECT n.episode_id FROM names n JOIN episodes e ON e.id = n.episode_id "
                                   "WHERE n.name = ? AND e.gone = 0 ORDER BY n.episode_id LIMIT ?", (name, limit))
            found += [r[0] for r in rows if r[0] not in found]
        return found[:limit]

    def hashes(self) -> dict[str, str]:
        """{episode id: content hash} of every episode: what the index must match."""
        return {r["id"]: r["content_hash"] for r in self.db.execute("SELECT id, content_hash FROM episodes")}

    def segment_end(self, episode_id: str, start: float) -> float | None:
        """When the first segment starting at ``start`` ends (None when unknown)."""
        row = self.db.execute('SELECT "end" FROM segments WHERE episode_id = ? AND start = ? ORDER BY seq LIMIT 1',
                              (episode_id, start)).fetchone()
        return row[0] if row else None

    def has_transcript(self, episode_id: str) -> bool:
        return self.db.execute("SELECT 1 FROM segments WHERE episode_id = ? LIMIT 1", (episode_id,)).fetchone() is not None

    def counts(self) -> dict[str, int]:
        one = self.db.execute
        return {
            "shows": one("SELECT COUNT(*) FROM shows").fetchone()[0],
            "episodes": one("SELECT COUNT(*) FROM episodes").fetchone()[0],
            "episodes_gone": one("SELECT COUNT(*) FROM episodes WHERE gone = 1").fetchone()[0],
            "with_transcript": one("SELECT COUNT(DISTINCT episode_id) FROM segments").fetchone()[0],
            "segments": one("SELECT COUNT(*) FROM segments").fetchone()[0],
            "feeds": one("SELECT COUNT(*) FROM feeds").fetchone()[0],
        }

    # -- runs -----------------------------------------------------------------------------------
    def start_run(self) -> int:
        cur = self.db.execute("INSERT INTO runs (started) VALUES (?)", (time.time(),))
        return int(cur.lastrowid)

    def finish_run(self, run_id: int, summary: dict[str, Any]) -> None:
        self.db.execute("UPDATE runs SET finished = ?, summary = ? WHERE id = ?",
                        (time.time(), json.dumps(summary), run_id))

    def abort_run(self, run_id: int, why: str) -> None:
        """A run that stopped on an error: it stays unfinished (the last reindex is the last that finished), with
        why."""
        self.db.execute("UPDATE runs SET summary = ? WHERE id = ?", (json.dumps({"aborted": why}), run_id))

    def last_run(self) -> dict[str, Any] | None:
        row = self.db.execute("SELECT * FROM runs WHERE finished IS NOT NULL ORDER BY id DESC LIMIT 1").fetchone()
        if row is None:
            return None
        return {"started": row["started"], "finished": row["finished"], **json.loads(row["summary"] or "{}")}

    def unfinished_since(self) -> list[dict[str, Any]]:
        """The runs started after the last that finished and not finished themselves, oldest first: ``started`` and
        ``aborted`` (why it stopped; "" when it was killed, or is running now)."""
        rows = self.db.execute("SELECT started, summary FROM runs WHERE finished IS NULL AND id > "
                               "COALESCE((SELECT MAX(id) FROM runs WHERE finished IS NOT NULL), 0) ORDER BY id").fetchall()
        return [{"started": row["started"], "aborted": json.loads(row["summary"] or "{}").get("aborted", "")}
                for row in rows]

    # -- watches (podsearch.watches) ------------------------------------------------------------
    def add_watch(self, query: str, filters: dict[str, Any], webhook: str, secret: str) -> int:
        cur = self.db.execute("INSERT INTO watches (query, filters, webhook, secret, created) VALUES (?, ?, ?, ?, ?)",
                              (query, json.dumps(filters, sort_keys=True), webhook, secret, time.time()))
        return int(cur.lastrowid)

    def watches(self) -> list[dict[str, Any]]:
        """Every watch with its pending deliveries counted, oldest first."""
        rows = self.db.execute("SELECT w.*, (SELECT COUNT(*) FROM watch_deliveries d WHERE d.watch_id = w.id) AS pending "
                               "FROM watches w ORDER BY w.id").fetchall()
        return [{**dict(r), "filters": json.loads(r["filters"] or "{}")} for r in rows]

    def remove_watch(self, watch_id: int) -> bool:
        """Remove a watch and its pending deliveries; the inbox goes with the last watch."""
        with self.transaction():
            removed = self.db.execute("DELETE FROM watches WHERE id = ?", (watch_id,)).rowcount > 0
            if not self.db.execute("SELECT 1 FROM watches LIMIT 1").fetchone():
                self.db.execute("DELETE FROM watch_inbox")
        return removed

    def watch_inbox(self) -> list[dict[str, Any]]:
        """The episodes added since the watches were last told: id, when added, show and date."""
        rows = self.db.execute("SELECT i.episode_id AS id, i.added, e.show_id, e.published FROM watch_inbox i "
                               "JOIN episodes e ON e.id = i.episode_id ORDER BY i.added, i.episode_id")
        return [dict(r) for r in rows]

    def queue_deliveries(self, deliveries: Iterable[tuple[int, str, bytes]], told: Iterable[str]) -> None:
        """Store (watch id, delivery uid, body) to send and take the episodes ``told`` out of the inbox, at once."""
        with self.transaction():
            now = time.time()
            self.db.executemany("INSERT INTO watch_deliveries (watch_id, uid, created, body) VALUES (?, ?, ?, ?)",
                                [(w, uid, now, body) for w, uid, body in deliveries])
            self.db.executemany("DELETE FROM watch_inbox WHERE episode_id = ?", [(i,) for i in told])

    def pending_deliveries(self) -> list[dict[str, Any]]:
        """Deliveries not yet answered with a 2xx, oldest first, with their watch's webhook and secret."""
        rows = self.db.execute("SELECT d.id, d.watch_id, d.uid, d.body, d.attempts, w.webhook, w.secret "
                               "FROM watch_deliveries d JOIN watches w ON w.id = d.watch_id ORDER BY d.id")
        return [dict(r) for r in rows]

    def delivery_done(self, delivery_id: int, watch_id: int) -> None:
        with self.transaction():
            self.db.execute("DELETE FROM watch_deliveries WHERE id = ?", (delivery_id,))
            self.db.execute("UPDATE watches SET delivered = delivered + 1, last_delivered = ?, last_error = NULL "
                            "WHERE id = ?", (time.time(), watch_id))

    def delivery_failed(self, delivery_id: int, watch_id: int, error: str) -> None:
        with self.transaction():
            self.db.execute("UPDATE watch_deliveries SET attempts = attempts + 1, last_attempt = ?, last_error = ? "
                            "WHERE id = ?", (time.time(), error, delivery_id))
            self.db.execute("UPDATE watches SET last_error = ? WHERE id = ?", (error, watch_id))


class _Transaction:
    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db

    def __enter__(self) -> None:
        self.db.execute("BEGIN IMMEDIATE")

    def __exit__(self, exc_type: object, *rest: object) -> None:
        self.db.execute("ROLLBACK" if exc_type else "COMMIT")
