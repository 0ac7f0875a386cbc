"""The site feeds move: indexed at one address, then listed at another, twice, through the real CLI.

The 25 site feeds (1,869 episodes) are indexed from their files, then the config lists the very same feeds
over HTTP (a feed server on 127.0.0.1), then at another port of 127.0.0.1 (a move to another host). After
each `podsearch reindex` it records the exit status and what the data folder holds: shows, episodes (and
how many are marked gone), index documents (a duplicate id fails), feeds registered, and which episode
ids changed. Before podsearch knew moves, the second step gave 50 shows and 3,738 episodes, and exited 1
on every later run.

    python tests/soak/moves.py
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
if str(HERE.parent) not in sys.path:
    sys.path.insert(0, str(HERE.parent))

from conftest import CORPUS  # noqa: E402
from feedserver import FeedServer  # noqa: E402
from soak.state import index_docs  # noqa: E402

from podsearch.catalog import Catalog  # noqa: E402


def folder(data: Path) -> dict[str, Any]:
    with Catalog.in_dir(data) as cat:
        counts = cat.counts()
        ids = {r[0] for r in cat.db.execute("SELECT id FROM episodes")}
        feeds = len(cat.feeds())
    return {"shows": counts["shows"], "episodes": counts["episodes"], "gone": counts["episodes_gone"],
            "index_documents": len(index_docs(data)), "feeds": feeds, "ids": ids}


def step(name: str, workdir: Path, data: Path, feeds: list[str]) -> dict[str, Any]:
    config = workdir / f"{name}.toml"
    config.write_text("allow_private_hosts = true\nfeeds = [\n" + "".join(f'  "{f}",\n' for f in feeds) + "]\n",
                      encoding="utf-8")
    started = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "podsearch", "--config", str(config), "--data", str(data), "-q",
                           "reindex", "--json"], capture_output=True, text=True, timeout=3600)
    seconds = time.monotonic() - started
    report = json.loads(proc.stdout) if proc.stdout.strip() else {}
    return {"step": name, "exit": proc.returncode, "seconds": round(seconds, 1), **folder(data),
            "moves": len(report.get("moves", [])), "dropped": len(report.get("feeds_dropped", [])),
            "errors": report.get("errors", [])[:5], "stderr": proc.stderr[-1000:] if proc.returncode else ""}


def run(corpus: Path, workdir: Path, log=print) -> dict[str, Any]:
    files = sorted((corpus / "site" / "feeds").glob("*.xml"))
    data = workdir / "data"
    first, second = FeedServer(corpus).start(), FeedServer(corpus).start()
    steps = []
    try:
        for name, feeds in (("files", [str(f) for f in files]),
                            ("http", [first.url(f) for f in files]),
                            ("other-port", [second.url(f) for f in files])):
            result = step(name, workdir, data, feeds)
            if steps:
                result["ids_changed"] = len(steps[0]["ids"] ^ result["ids"])
            steps.append(result)
            log(json.dumps({k: v for k, v in result.items() if k != "ids"}))
    finally:
        first.stop()
        second.stop()
    for s in steps:
        s.pop("ids")
    problems = [f"{s['step']}: {problem}" for s in steps for problem in (
        [f"exit {s['exit']}"] if s["exit"] else []) + (
        [f"{s['shows']} shows, {s['episodes']} episodes, {s['index_documents']} documents"]
        if (s["shows"], s["episodes"], s["index_documents"], s["gone"]) != (25, 1869, 1869, 0) else []) + (
        [f"{s['ids_changed']} episode ids changed"] if s.get("ids_changed") else [])]
    return {"steps": steps, "problems": problems}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument("--workdir", type=Path, default=None, help="default: a new temporary folder")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="podsearch-moves-") as tmp:
        summary = run(args.corpus, args.workdir or Path(tmp), log=lambda line: print(line, file=sys.stderr))
    print(json.dumps(summary, indent=2))
    sys.exit(1 if summary["problems"] else 0)


if __name__ == "__main__":
    main()
