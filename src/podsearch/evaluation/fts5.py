"""The baseline of ``podsearch eval search``: SQLite FTS5 ``bm25()`` over the same text, in the same run.

What a ten-line FTS5 setup does: one column holding the title, the notes and the transcript of a document,
the ``porter`` tokenizer (over ``unicode61``: lower case, accents folded, Porter stems, no stop words),
the query's words ORed (a quoted phrase kept as a phrase), ranked by ``bm25()`` (k1 = 1.2, b = 0.75). This
is the baseline named in ``../shared/corpus/eval/SEARCH.md`` (its pools were built with it).

The table lives in a file when a path is given (kept with the evaluation's data folder and reused while
the documents are the same: the digest of their ids and texts is stored beside them), else in memory.
"""

from __future__ import annotations

import hashlib
import logging
import re
import sqlite3
from collections.abc import Iterable
from pathlib import Path

log = logging.getLogger(__name__)

_WORD = re.compile(r"\w+")


def fts5_or_query(text: str) -> str:
    """``text`` as an FTS5 query: its words ORed, each quoted (so AND, OR, NOT, NEAR are words); a part in
    double quotes stays a phrase (one of the ORed terms)."""
    terms = []
    parts = text.split('"')
    for i, part in enumerate(parts):
        words = _WORD.findall(part)
        if i % 2 and i < len(parts) - 1 and words:  # inside a closed pair of quotes
            terms.append('"' + " ".join(words) + '"')
        else:
            terms.extend(f'"{w}"' for w in words)
    return " OR ".join(dict.fromkeys(terms))


class FTS5Baseline:
    """An FTS5 table of ``(id, text)`` rows ranked by ``bm25()``."""

    def __init__(self, path: Path | str | None = None) -> None:
        self.path = Path(path) if path else None
        self.db = sqlite3.connect(str(self.path) if self.path else ":memory:")

    def close(self) -> None:
        self.db.close()

    def build(self, docs: Iterable[tuple[str, str]]) -> bool:
        """Fill the table (unless it already holds exactly these documents); True when it was (re)built."""
        rows = list(docs)
        digest = hashlib.sha256()
        for doc_id, text in rows:
            digest.update(doc_id.encode() + b"\0" + text.encode() + b"\0")
        stamp = digest.hexdigest()
        db = self.db
        db.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT)")
        found = db.execute("SELECT value FROM meta WHERE key = 'digest'").fetchone()
        if found and found[0] == stamp:
            return False
        db.execute("DROP TABLE IF EXISTS docs")
        db.execute("CREATE VIRTUAL TABLE docs USING fts5(id UNINDEXED, body, tokenize = 'porter')")
        with db:
            db.executemany("INSERT INTO docs (id, body) VALUES (?, ?)", rows)
            db.execute("INSERT OR REPLACE INTO meta VALUES ('digest', ?)", (stamp,))
        return True

    def rank(self, text: str, depth: int) -> list[str]:
        """Document ids, best first (``bm25()`` is lower for better matches)."""
        match = fts5_or_query(text)
        if not match:
            return []
        rows = self.db.execute("SELECT id FROM docs WHERE docs MATCH ? ORDER BY bm25(docs), rowid LIMIT ?",
                               (match, depth)).fetchall()
        return [r[0] for r in rows]
