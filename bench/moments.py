"""What a listener sees of a quoted phrase or a person in a page's moments (docs/search.md, moments; issue 15).

    python -m bench.moments --data /tmp/site/data            # (read only; a copy is safer while others write)
    python -m bench.moments --data DIR --slop 3 --searches 240

Phrases: quoted phrases of 2-5 words (two of them or more not among a few stop words) taken at random from the
transcripts' segments (``--seed``), searched quoted (with ``~slop``), until ``--searches`` of them found something;
for each hit of a first page with a segment saying the phrase word for word, whether its first moment and its
snippet say it too (``stop_word_gap``: the first moment says it with another word in a stop word's place, which
the engines match). Persons: 40 speakers the transcripts label in three episodes or more, each searched as
``guest:"Name"``, ``person:"Name" word`` and ``word`` with the person filter; for each hit whose transcript labels
them, whether it shows a moment, and whether its first moment is theirs. One JSON line each, with the mean
``took_ms``.
"""

from __future__ import annotations

import argparse
import html
import json
import random
import re
import sqlite3
from pathlib import Path
from typing import Any

from podsearch.requests import SearchRequest
from podsearch.service import Library

STOP = set("a an the and or of to in on at is it that this i you we they he she was be for with as but so".split())
WORD = re.compile(r"[a-z]+(?:'[a-z]+)?")


def words_of(text: str) -> str:
    """A moment's or a segment's words, lower-cased, without marks, punctuation or entities."""
    return " ".join(WORD.findall(html.unescape(re.sub(r"<[^>]+>", "", text)).lower().replace("’", "'")))


def says(text: str, phrase: str) -> bool:
    return f" {phrase} " in f" {words_of(text)} "


def phrases(lib: Library, db: sqlite3.Connection, searches: int, slop: int, seed: int) -> dict[str, Any]:
    rows = db.execute("SELECT episode_id, seq, text FROM segments WHERE length(text) > 60").fetchall()
    rng = random.Random(seed)
    ana = lib.engine.analyzer("en")
    out = dict.fromkeys(("searches", "hits", "first_moment_says_it", "stop_word_gap", "snippet_says_it"), 0)
    took = 0.0
    while out["searches"] < searches:
        text = rng.choice(rows)[2]
        words = WORD.findall(text.lower().replace("’", "'"))
        k = rng.randint(2, 5)
        if len(words) < k + 2:
            continue
        i = rng.randrange(len(words) - k)
        chosen = words[i:i + k]
        if sum(w not in STOP for w in chosen) < 2 or any("'" in w for w in chosen):
            continue
        phrase = " ".join(chosen)
        answer = lib.search(SearchRequest(q=f'"{phrase}"' + (f"~{slop}" if slop else ""))).to_dict()
        if not answer["hits"]:
            continue
        out["searches"] += 1
        took += answer["took_ms"]
        gap = re.compile(r"(?:^| )" + " ".join(re.escape(w) if ana.texts(w) else r"\S+" for w in chosen) + r"(?: |$)")
        for hit in answer["hits"]:
            segments = db.execute("SELECT text FROM segments WHERE episode_id = ?", (hit["id"],)).fetchall()
            if not hit["moments"] or not any(says(s[0], phrase) for s in segments):
                continue
            out["hits"] += 1
            first = hit["moments"][0]["text"]
            out["first_moment_says_it"] += says(first, phrase)
            out["stop_word_gap"] += not says(first, phrase) and bool(gap.search(words_of(first)))
            out["snippet_says_it"] += says(hit["snippet"], phrase)
    return {"check": "phrases", "slop": slop, **out, "took_ms": round(took / max(1, out["searches"]), 1)}


def persons(lib: Library, db: sqlite3.Connection, seed: int) -> dict[str, Any]:
    names = [r[0] for r in db.execute("SELECT speaker FROM segments WHERE speaker != '' GROUP BY speaker HAVING "
                                      "count(DISTINCT episode_id) >= 3 AND speaker LIKE '% %' ORDER BY speaker")]
    names = random.Random(seed).sample(names, min(40, len(names)))
    out = dict.fromkeys(("searches", "hits_labelled", "with_a_moment", "first_moment_theirs"), 0)
    took = 0.0
    for name in names:
        said = db.execute("SELECT text FROM segments WHERE speaker = ? AND length(text) > 80 LIMIT 1", (name,)).fetchone()
        word = max(said[0].split(), key=len).strip(".,!?;:\"'") if said else "think"
        for req in (SearchRequest(q=f'guest:"{name}"'), SearchRequest(q=f'person:"{name}" {word}'),
                    SearchRequest(q=word, person=name)):
            answer = lib.search(req).to_dict()
            out["searches"] += 1
            took += answer["took_ms"]
            for hit in answer["hits"]:
                if db.execute("SELECT 1 FROM segments WHERE episode_id = ? AND speaker = ? LIMIT 1",
                              (hit["id"], name)).fetchone() is None:
                    continue
                out["hits_labelled"] += 1
                out["with_a_moment"] += bool(hit["moments"])
                out["first_moment_theirs"] += bool(hit["moments"]) and hit["moments"][0]["speaker"] == name
    return {"check": "persons", **out, "took_ms": round(took / max(1, out["searches"]), 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, required=True, help="a data folder (catalog and index) to search")
    parser.add_argument("--searches", type=int, default=240, help="quoted phrases that find something")
    parser.add_argument("--slop", type=int, default=0, help="search each phrase with ~SLOP")
    parser.add_argument("--seed", type=int, default=15)
    args = parser.parse_args()
    lib = Library(args.data, search_deadline=0)
    db = sqlite3.connect(f"file:{args.data / 'catalog.sqlite'}?mode=ro", uri=True)
    try:
        print(json.dumps(phrases(lib, db, args.searches, args.slop, args.seed)))
        print(json.dumps(persons(lib, db, args.seed)))
    finally:
        db.close()
        lib.close()


if __name__ == "__main__":
    main()
