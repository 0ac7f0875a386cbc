"""Benchmark corpora: the shared site corpus as JSON-lines, and synthetic corpora resampled from it.

``site_jsonl`` runs podsearch's own feed ingest over the 25 site feeds (local files, a generated TOML
config) into a scratch catalog and exports every episode as one JSON line in the ``podsearch import``
format (segments with times and speakers, persons, notes, dates). ``synthetic_jsonl`` then writes any
number of episodes from that export, deterministically (``random.Random(seed)``):

- each synthetic episode copies a *template* episode drawn uniformly from the real ones, so shows keep
  their share of episodes and each episode its length (segment count), persons, notes and date shape;
- its transcript is the template's number of segments, each drawn from the pool of all segments
  (speaker + text) of the template's show, so the vocabulary and the speakers of each show are kept
  while no two episodes have the same text; times are laid end to end at 2.5 words a second;
- its title is the template's title plus two words drawn from the show's notes; dates move back a week
  per copy of the template; ids are ``syn:<n>``.

``max_segments`` shortens transcripts (the CI smoke run uses it to stay within seconds).
"""

from __future__ import annotations

import json
import logging
import random
import re
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

# The shared corpus beside the checkout (../shared/corpus); `--site` names another place.
SITE = Path(__file__).resolve().parent.parent.parent / "shared" / "corpus" / "site"
WORDS_PER_SECOND = 2.5
_WORD = re.compile(r"[A-Za-z][A-Za-z'-]{3,}")


def site_feeds(site: Path = SITE, shows: list[str] | None = None) -> list[Path]:
    """The site corpus's feed files (of ``shows`` only, when given); none is an error (a wrong ``--site`` or
    ``--shows`` gave an empty corpus, and the synthetic corpora drawn from it failed far from the cause)."""
    feeds = sorted((site / "feeds").glob("*.xml"))
    chosen = [f for f in feeds if shows is None or f.stem in shows]
    if not chosen:
        raise SystemExit(f"no site corpus feeds in {site / 'feeds'}" + (f" named {', '.join(shows)}" if shows else "")
                         + " (give the corpus folder with --site)")
    return chosen


def write_config(path: Path, data_dir: Path, feeds: list[Path]) -> Path:
    """A podsearch TOML config for the site feeds (the bench's own, like /tmp/site.toml)."""
    lines = [f"data = {json.dumps(str(data_dir))}", "feeds = ["]
    lines += [f"  {json.dumps(str(f))}," for f in feeds]
    lines.append("]")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def episode_line(ep: Any, show_title: str) -> dict[str, Any]:
    """One episode in the ``podsearch import`` JSON-lines format."""
    return {
        "id": ep.id, "show_id": ep.show_id, "show": show_title, "title": ep.title, "link": ep.link,
        "description": ep.description_html, "published": ep.published, "duration": ep.duration,
        "language": ep.language or "en",
        "persons": [{"name": p.name, "role": p.role} for p in ep.persons],
        "segments": [{"start": s.start, "end": s.end, "speaker": s.speaker, "text": s.text} for s in ep.segments],
    }


def site_jsonl(work: Path, site: Path = SITE, shows: list[str] | None = None) -> tuple[Path, dict[str, Any]]:
    """Ingest the site feeds with podsearch and export them; cached in ``work`` (returns path and facts)."""
    from podsearch.catalog import Catalog
    from podsearch.config import load_config
    from podsearch.reindex import ingest

    name = "site" if shows is None else "site-" + "-".join(sorted(shows))
    out, meta_path = work / f"{name}.jsonl", work / f"{name}.meta.json"
    if out.exists() and meta_path.exists():
        return out, json.loads(meta_path.read_text())
    scratch = work / f"{name}-ingest"
    scratch.mkdir(parents=True, exist_ok=True)
    config_path = write_config(work / f"{name}.toml", scratch, site_feeds(site, shows))
    config = load_config({"config": str(config_path)}, environ={})
    started = time.perf_counter()
    with Catalog.in_dir(scratch) as catalog:
        report = ingest(config, catalog)
        ingest_s = time.perf_counter() - started
        titles = {s.id: s.title for s in catalog.shows()}
        count = 0
        with open(out.with_suffix(".tmp"), "w", encoding="utf-8") as fh:
            for ep in catalog.episodes(with_segments=True):
                fh.write(json.dumps(episode_line(ep, titles.get(ep.show_id, ep.show_id))) + "\n")
                count += 1
    out.with_suffix(".tmp").replace(out)
    meta = {"episodes": count, "feeds": report.feeds, "feed_ingest_s": round(ingest_s, 2),
            "bytes": out.stat().st_size, "errors": len(report.errors), "config": str(config_path)}
    meta_path.write_text(json.dumps(meta, indent=1))
    return out, meta


@dataclass
class _ShowPool:
    title: str
    segments: list[tuple[str, str]] = field(default_factory=list)  # (speaker, text)
    words: list[str] = field(default_factory=list)


def _read_lines(path: Path) -> Iterator[dict[str, Any]]:
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                yield json.loads(line)


def _pools(base: Path) -> tuple[list[dict[str, Any]], dict[str, _ShowPool]]:
    templates: list[dict[str, Any]] = []
    pools: dict[str, _ShowPool] = {}
    for rec in _read_lines(base):
        pool = pools.setdefault(rec["show_id"], _ShowPool(rec["show"]))
        pool.segments.extend((s.get("speaker") or "", s["text"]) for s in rec["segments"] if s.get("text"))
        pool.words.extend(_WORD.findall(re.sub(r"<[^>]+>", " ", rec.get("description") or "") + " " + rec["title"]))
        templates.append({**rec, "segments": len(rec["segments"])})
    for pool in pools.values():
        if not pool.words:
            pool.words = ["episode"]
    return templates, pools


def synthetic_lines(base: Path, count: int, seed: int = 20240501, start: int = 0,
                    max_segments: int | None = None) -> Iterator[dict[str, Any]]:
    """``count`` synthetic episodes resampled from the JSON-lines export ``base`` (see the module doc)."""
    templates, pools = _pools(base)
    rng = random.Random(f"{seed}:{start}")
    for n in range(start, start + count):
        tpl = templates[rng.randrange(len(templates))]
        pool = pools[tpl["show_id"]]
        copies = n // len(templates)
        wanted = max(1, tpl["segments"])
        if max_segments:
            wanted = min(wanted, max_segments)
        segments, clock = [], 0.0
        for _ in range(wanted if pool.segments else 0):
            speaker, text = pool.segments[rng.randrange(len(pool.segments))]
            length = max(1.0, len(text.split()) / WORDS_PER_SECOND)
            segments.append({"start": round(clock, 1), "end": round(clock + length, 1), "speaker": speaker, "text": text})
            clock += length
        published = tpl.get("published")
        if published:
            when = datetime.strptime(published[:19], "%Y-%m-%dT%H:%M:%S") - timedelta(weeks=copies)
            published = when.strftime("%Y-%m-%dT%H:%M:%SZ")
        extra = " ".join(rng.choice(pool.words) for _ in range(2))
        yield {
            "id": f"syn:{n}", "show_id": tpl["show_id"], "show": tpl["show"], "title": f"{tpl['title']}: {extra}",
            "link": f"https://example.org/{tpl['show_id']}/syn-{n}", "description": tpl.get("description") or "",
            "published": published, "duration": int(clock) or None, "language": tpl.get("language") or "en",
            "persons": tpl.get("persons") or [], "segments": segments,
        }


def synthetic_jsonl(base: Path, out: Path, count: int, seed: int = 20240501, start: int = 0,
                    max_segments: int | None = None) -> tuple[Path, dict[str, Any]]:
    """Write :func:`synthetic_lines` to ``out`` (reused when it exists with the same recipe)."""
    recipe = {"base": str(base), "base_bytes": base.stat().st_size, "count": count, "seed": seed, "start": start,
              "max_segments": max_segments}
    meta_path = out.with_suffix(".meta.json")
    if out.exists() and meta_path.exists():
        meta = json.loads(meta_path.read_text())
        if meta.get("recipe") == recipe:
            return out, meta
    started = time.perf_counter()
    tmp = out.with_suffix(".tmp")
    with open(tmp, "w", encoding="utf-8") as fh:
        for rec in synthetic_lines(base, count, seed, start, max_segments):
            fh.write(json.dumps(rec) + "\n")
    tmp.replace(out)
    meta = {"recipe": recipe, "episodes": count, "bytes": out.stat().st_size,
            "generate_s": round(time.perf_counter() - started, 2)}
    meta_path.write_text(json.dumps(meta, indent=1))
    return out, meta

