"""Same answers before and after a change: a snapshot of what the search and /similar answer, and a comparison.

    python -m bench.identity snapshot DATA OUT.json      # the bench mix, the dev queries and syntax cases
    python -m bench.identity compare BEFORE.json AFTER.json [--keys total,ids,scores,facets]

A refactor that must not change ranking is checked by taking a snapshot with the old code (a worktree of the
old commit first on PYTHONPATH) and one with the new, over the same data folder, and comparing: ids, scores,
totals, facets, the any-word fallback, suggestions and the moments picked (start, speaker) by default;
snippets with ``--keys snippets``.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path
from typing import Any

from .corpus import SITE
from .queries import MIX, real_queries

EVAL = SITE.parent / "eval"
SYNTAX = ['bitcoin -lightning', 'title:generics', 'person:"mat ryer"', 'go OR rust', 'kube*', '"type parameters" go',
          'kubernetis docker', 'schnorr AND musig', 'the', 'lightnin', 'TO BE OR NOT TO BE']
OTHERS: list[dict[str, Any]] = [
    {"q": "python", "sort": "date"}, {"q": "python", "sort": "oldest"}, {"q": "docker", "page": 2},
    {"q": "", "shows": ["go-time"]}, {"q": "privacy", "language": "en"},
    {"q": "", "published_from": "2020", "published_to": "2020"},
    {"q": "mining", "duration_min": 600, "duration_max": 4000}]
DEFAULT_KEYS = ("total", "ids", "scores", "facets", "relaxed", "suggestion", "moments", "error")


def requests() -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for q in MIX:
        kw: dict[str, Any] = {"q": q.text}
        if q.show:
            kw["shows"] = [q.show]
        if q.years:
            kw["published_from"], kw["published_to"] = str(q.years[0]), str(q.years[1])
        out.append(kw)
    out += [{"q": q} for q in real_queries(EVAL)]
    return out + [{"q": q} for q in SYNTAX] + OTHERS


def snapshot(data: Path, out: Path) -> None:
    try:
        from podsearch.requests import SearchRequest
    except ImportError:  # code from before the request module
        from podsearch.search_types import SearchRequest  # type: ignore[no-redef]
    from podsearch.service import Library

    lib = Library(data)
    started = time.perf_counter()
    searches = []
    for kw in requests():
        try:
            a = lib.search(SearchRequest(**kw))
            searches.append({"req": kw, "total": a.total, "relaxed": a.relaxed, "suggestion": a.suggestion,
                             "ids": [h.id for h in a.hits], "scores": [h.score for h in a.hits], "facets": a.facets,
                             "moments": [[(m.start, m.speaker) for m in h.moments] for h in a.hits],
                             "snippets": [h.snippet for h in a.hits]})
        except Exception as exc:  # an error is an answer too: it must stay the same
            searches.append({"req": kw, "error": f"{type(exc).__name__}: {exc}"})
    ids = sorted(lib.model().position)
    similar = [{"id": i, "items": [(s.id, s.score, s.reasons) for s in lib.similar(i, 10).similar]}
               for i in random.Random(0).sample(ids, min(20, len(ids)))]
    out.write_text(json.dumps({"search": searches, "similar": similar}, indent=1), encoding="utf-8")
    print(f"{len(searches)} searches, {len(similar)} similar in {time.perf_counter() - started:.1f} s")


def compare(before: Path, after: Path, keys: tuple[str, ...]) -> int:
    a, b = (json.loads(p.read_text(encoding="utf-8")) for p in (before, after))
    differences = 0
    for x, y in zip(a["search"], b["search"]):
        for key in keys:
            if x.get(key) != y.get(key):
                differences += 1
                print(f"{x['req']} {key}\n  before: {str(x.get(key))[:300]}\n  after:  {str(y.get(key))[:300]}")
    for x, y in zip(a["similar"], b["similar"]):
        if x != y:
            differences += 1
            print(f"similar {x['id']} differs")
    print(f"differences: {differences} in {len(a['search'])} searches and {len(a['similar'])} /similar answers")
    return 1 if differences else 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.identity", description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="command", required=True)
    snap = sub.add_parser("snapshot")
    snap.add_argument("data", type=Path)
    snap.add_argument("out", type=Path)
    comp = sub.add_parser("compare")
    comp.add_argument("before", type=Path)
    comp.add_argument("after", type=Path)
    comp.add_argument("--keys", default=",".join(DEFAULT_KEYS))
    args = ap.parse_args(argv)
    if args.command == "snapshot":
        snapshot(args.data, args.out)
        return 0
    return compare(args.before, args.after, tuple(args.keys.split(",")))


if __name__ == "__main__":
    sys.exit(main())
