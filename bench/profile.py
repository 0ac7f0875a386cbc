"""Where a search's time goes inside a real ``podsearch serve``: py-spy samples the server while the query mix
runs over HTTP, and each sample is put in one bucket (scoring, moments, snippets, facets, ...).

    python -m bench.run --corpus 10k --steps profile

py-spy (in the ``test`` extra) reads the server's stacks from outside, so the server runs the code it
always runs. It needs to be allowed to ptrace the server (the default for a child of the same user on most
Linux systems); without py-spy, or without the permission, the step records why it was skipped.
The flame graph (SVG) is written beside the results; the buckets go into the results.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

# (bucket, (qualified function name, file) pairs): a sample goes to the bucket of its innermost frame that
# is named here; a sample with none of them but some podsearch frame is "podsearch, other"; the rest is the
# web stack. py-spy names a frame "Class.method (package/file.py:line)".
BUCKETS: tuple[tuple[str, tuple[tuple[str, str], ...]], ...] = (
    ("highlighting (snippets, titles, moments)", (("highlight", "podsearch/answers.py"),)),
    ("moments (finding the segments)", (("find_moments", "podsearch/answers.py"),
                                        ("best_segments", "podsearch/answers.py"),
                                        ("segment_counts", "podsearch/engines/whoosh/segments.py"),
                                        ("OpenSearchEngine.segment_counts",  # its tables' _mget and reading
                                         "podsearch/engines/opensearch/__init__.py"))),
    ("passages (best transcript windows)", (("best_windows", "podsearch/engines/whoosh/fast.py"),)),
    ("relevance feedback (the model's vote)", (("rerank", "podsearch/feedback.py"),)),
    ("catalog reads for the hits", (("Catalog.episodes_by_id", "podsearch/catalog.py"),
                                    ("Catalog.segments_at", "podsearch/catalog.py"),
                                    ("Catalog.show_titles", "podsearch/catalog.py"))),
    ("spelling suggestion", (("suggestion", "podsearch/engines/spelling.py"),
                             ("suggestion", "podsearch/engines/whoosh/spelling.py"))),
    ("facets", (("WhooshEngine._facet_counts", "podsearch/engines/whoosh/__init__.py"),
                ("facet_rows", "podsearch/answers.py"))),
    ("filters", (("WhooshEngine._allowed", "podsearch/engines/whoosh/__init__.py"),)),
    ("matching and BM25F scoring (Whoosh)", (("_page", "podsearch/engines/whoosh/__init__.py"),  # either of:
                                             ("Page.__init__", "podsearch/engines/whoosh/fast.py"),  # numpy
                                             ("page", "podsearch/engines/whoosh/scoring.py"))),  # Whoosh's matchers
    ("query parsing", (("strategy", "podsearch/engines/whoosh/query.py"),)),
    ("opening the searcher", (("FileIndex.searcher", "whoosh/index.py"),
                              ("WhooshEngine._index", "podsearch/engines/whoosh/__init__.py"),
                              ("WhooshEngine._searcher", "podsearch/engines/whoosh/__init__.py"))),
    ("JSON encoding", (("jsonify", "flask/json/__init__.py"), ("dumps", "json/__init__.py"))),
)
OTHER = "podsearch, other (service, web layer, hit assembly)"
OUTSIDE = "Flask, waitress and the socket"


def _frame(frame: str) -> tuple[str, str]:
    name, _, where = frame.rpartition(" (")
    return name, where.rsplit(":", 1)[0]


def bucket_of(stack: str) -> str:
    """The bucket of one collapsed stack (``frame;frame;...`` from the outermost frame to the innermost)."""
    frames = [_frame(f) for f in stack.split(";")]
    for name, path in reversed(frames):
        for bucket, places in BUCKETS:
            if (name, path) in places:
                return bucket
    if any(path.startswith("podsearch/") for _, path in frames):
        return OTHER
    return OUTSIDE


def shares(collapsed: str) -> dict[str, Any]:
    """Samples per bucket, and their share of all samples, from py-spy's ``--format raw`` output."""
    counts: Counter[str] = Counter()
    for line in collapsed.splitlines():
        stack, _, n = line.rpartition(" ")
        if stack and n.isdigit():
            counts[bucket_of(stack)] += int(n)
    total = sum(counts.values())
    return {"samples": total,
            "buckets": {k: {"samples": v, "share": round(v / total, 4)} for k, v in counts.most_common()} if total else {}}


RATE = 200  # samples a second


def record(pid: int, out: Path, fmt: str, run: Any, rate: int = RATE) -> str | None:
    """Run ``run()`` while py-spy samples ``pid`` into ``out``; None when done, else why it was not."""
    spy = shutil.which("py-spy") or str(Path(sys.executable).with_name("py-spy"))
    if not Path(spy).exists():
        return "py-spy is not installed (it is in the test extra: pip install -e '.[test]')"
    proc = subprocess.Popen([spy, "record", "--pid", str(pid), "--rate", str(rate), "--format", fmt,
                             "--output", str(out), "--nonblocking"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    time.sleep(2.0)  # py-spy attaches within a second or so
    if proc.poll() is not None:
        return "py-spy could not attach: " + proc.stderr.read().decode(errors="replace").strip()[-300:]
    try:
        run()
    finally:
        proc.send_signal(2)  # SIGINT: py-spy writes its output and exits
        _, err = proc.communicate(timeout=120)
    if not out.exists():
        return "py-spy wrote nothing: " + err.decode(errors="replace").strip()[-300:]
    return None
