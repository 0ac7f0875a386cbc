"""The podcast relevance sets of the shared corpus, and the search box measured on them.

``../shared/corpus/eval/SEARCH.md`` describes the sets: known-item queries (one right episode each, scored
by MRR@10, also by kind: topic, quote, person, typo) and topical queries with graded judgments (nDCG@10,
unjudged = 0), both over the site corpus (``site/feeds/*.xml``, 1,869 episodes). The classic collections
(Cranfield, Vaswani) are kept as guards, imported once with their text as the episodes' transcripts and
once as their descriptions.

Every query goes through :meth:`podsearch.service.Library.search`, the function behind ``/api/search``,
exactly as typed (no lowercasing, query syntax read as the search box reads it); a query the search box
refuses (HTTP 400) ranks nothing and is counted. SQLite FTS5 ``bm25()`` ranks the same text in the same run
(:mod:`podsearch.evaluation.fts5`).

The data folders (the site's catalog and index, each collection's import, the FTS5 tables) are kept in a
folder the caller names and reused while their sources and podsearch's index schema are unchanged, so a
second run only searches.

Each set is also scored on two halves (alternate queries, per kind for the known items), so that a change
tuned on one half can be checked on the other.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .fts5 import FTS5Baseline
from .search import (
    PAGE,
    EvalInputError,
    Qrels,
    Run,
    SearchBox,
    average_precision,
    import_line,
    ndcg_at,
    read_docs,
    read_qrels,
    read_queries,
    run_queries,
)

if TYPE_CHECKING:
    from ..engines.whoosh.ranking import Ranking
    from ..feedback import Feedback

log = logging.getLogger(__name__)

IR_FIELDS = ("transcript", "description")


@dataclass
class KnownItem:
    qid: str
    kind: str
    query: str
    target: str


@dataclass
class SetScores:
    """One measure of one set, for podsearch and for FTS5, over all queries and on the two halves."""

    name: str
    measure: str
    queries: int
    podsearch: float
    fts5: float | None
    halves: dict[str, dict[str, float | None]] = field(default_factory=dict)
    by_kind: dict[str, dict[str, float | None]] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)  # MAP, refused queries, seconds
    per_query: dict[str, dict[str, float]] = field(default_factory=dict)

    def to_dict(self, per_query: bool = False) -> dict[str, Any]:
        out: dict[str, Any] = {"measure": self.measure, "queries": self.queries,
                               "podsearch": _r(self.podsearch), "fts5": _r(self.fts5)}
        if self.halves:
            out["halves"] = {h: {k: _r(v) for k, v in s.items()} for h, s in self.halves.items()}
        if self.by_kind:
            out["by_kind"] = {h: {k: _r(v) for k, v in s.items()} for h, s in self.by_kind.items()}
        out.update(self.extra)
        if per_query:
            out["per_query"] = self.per_query
        return out


def _r(value: float | None) -> float | None:
    return None if value is None else round(value, 4)


def _mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else 0.0


# -- the sets --------------------------------------------------------------------------------------
def read_known_items(path: Path | str) -> list[KnownItem]:
    """``qid<TAB>kind<TAB>query<TAB>target_guid`` rows (a header row is skipped)."""
    path = Path(path)
    if not path.is_file():
        raise EvalInputError(f"{path}: no such file")
    out = []
    for n, line in enumerate(path.read_text(encoding="utf-8-sig").splitlines(), 1):
        if not line.strip() or line.startswith("#") or (n == 1 and line.lower().startswith("qid\t")):
            continue
        cols = line.split("\t")
        if len(cols) != 4 or not all(c.strip() for c in cols):
            raise EvalInputError(f"{path}: line {n}: expected 'qid<TAB>kind<TAB>query<TAB>target_guid'")
        out.append(KnownItem(*(c.strip() for c in cols)))
    return out


def halves(qids: list[str], kinds: dict[str, str] | None = None) -> dict[str, set[str]]:
    """Two halves of the queries: alternate ones in qid order (within each kind, when kinds are given)."""
    out: dict[str, set[str]] = {"A": set(), "B": set()}
    seen: dict[str, int] = {}
    for qid in sorted(qids):
        kind = kinds.get(qid, "") if kinds else ""
        out["AB"[seen.get(kind, 0) % 2]].add(qid)
        seen[kind] = seen.get(kind, 0) + 1
    return out


def mrr_at(ranked: list[str], target: str, k: int = 10) -> float:
    top = ranked[:k]
    return 1.0 / (top.index(target) + 1) if target in top else 0.0


# -- the systems ------------------------------------------------------------------------------------
# -- data folders -----------------------------------------------------------------------------------
def _stamp(paths: list[Path], extra: str = "") -> str:
    """What the sources are: names, sizes and modification times (a change means a rebuild)."""
    h = hashlib.sha256(extra.encode())
    for p in sorted(paths):
        st = p.stat()
        h.update(f"{p.name}\0{st.st_size}\0{st.st_mtime_ns}\0".encode())
    return h.hexdigest()


def _fresh(data_dir: Path, stamp: str) -> bool:
    marker = data_dir / "eval-source.stamp"
    return marker.is_file() and marker.read_text().strip() == stamp


def _sync_index(data_dir: Path) -> None:
    """The index and the similarity model in line with the catalog, as a reindex leaves them (a no-op when
    they are; the index is rebuilt when its schema changed, the model refitted when its parameters did)."""
    from ..catalog import Catalog
    from ..progress import Progress
    from ..reindex import Report, rebuild_derived

    with Catalog.in_dir(data_dir) as catalog:
        rebuild_derived(data_dir, catalog, Report(), Progress())


def site_data(site: Path, data_dir: Path, say: Callable[[str], None]) -> Path:
    """The site corpus (``site/feeds/*.xml`` and the transcripts they link) in ``data_dir``, kept between runs."""
    from ..catalog import Catalog
    from ..config import load_config
    from ..reindex import ingest

    feeds = sorted((site / "feeds").glob("*.xml"))
    if not feeds:
        raise EvalInputError(f"{site}/feeds: no feeds (*.xml)")
    stamp = _stamp(feeds)
    if not _fresh(data_dir, stamp):
        say(f"reading {len(feeds)} feeds of {site}")
        data_dir.mkdir(parents=True, exist_ok=True)
        config = load_config({"data": str(data_dir)}, environ={})
        with Catalog.in_dir(data_dir) as catalog:
            report = ingest(config, catalog, [str(f) for f in feeds], prune=True)
        if report.feeds_failed or report.errors:
            raise EvalInputError(f"{site}: {report.feeds_failed} feeds failed: {report.errors[:1]}")
        (data_dir / "eval-source.stamp").write_text(stamp)
    say(f"indexing {data_dir} and fitting its model (when changed)")
    _sync_index(data_dir)
    return data_dir


def collection_data(docs_path: Path, data_dir: Path, text_field: str, say: Callable[[str], None]) -> Path:
    """An IR collection imported with its text as the episodes' ``transcript`` or ``description``."""
    from ..config import load_config
    from ..reindex import import_jsonl

    if text_field not in IR_FIELDS:
        raise EvalInputError(f"the text goes into one of {', '.join(IR_FIELDS)}, not {text_field!r}")
    stamp = _stamp([docs_path], text_field)
    if not _fresh(data_dir, stamp):
        say(f"importing {docs_path} as {text_field}")
        data_dir.mkdir(parents=True, exist_ok=True)
        converted = data_dir / "eval-import.jsonl"
        with open(converted, "w", encoding="utf-8") as fh:
            for doc in read_docs(docs_path):
                fh.write(json.dumps(import_line(doc, text_field=text_field), ensure_ascii=False) + "\n")
        report = import_jsonl(load_config({"data": str(data_dir)}, environ={}), converted)
        if report.errors:
            raise EvalInputError(f"{docs_path}: {len(report.errors)} documents could not be imported: "
                                 f"{report.errors[0]}")
        (data_dir / "eval-source.stamp").write_text(stamp)
    _sync_index(data_dir)
    return data_dir


def catalog_texts(data_dir: Path) -> list[tuple[str, str]]:
    """(id, title + notes + transcript) of every episode: the FTS5 baseline's one column."""
    from ..catalog import Catalog

    with Catalog.in_dir(data_dir) as catalog:
        return [(ep.id, "\n".join(t for t in (ep.title, ep.description_text, ep.transcript_text) if t))
                for ep in catalog.episodes(with_segments=True)]


def fts5_for(data_dir: Path) -> FTS5Baseline:
    baseline = FTS5Baseline(data_dir / "eval-fts5.sqlite")
    baseline.build(catalog_texts(data_dir))
    return baseline


# -- scoring ----------------------------------------------------------------------------------------
def score_known_items(items: list[KnownItem], runs: dict[str, Run], name: str = "known items") -> SetScores:
    kinds = {i.qid: i.kind for i in items}
    split = halves([i.qid for i in items], kinds)
    per = {sys: {i.qid: mrr_at(run.get(i.qid, []), i.target) for i in items} for sys, run in runs.items()}

    def mean(system: str, qids: set[str] | None = None) -> float | None:
        if system not in per:
            return None
        return _mean([v for q, v in per[system].items() if qids is None or q in qids])

    by_kind = {k: {"queries": float(sum(1 for i in items if i.kind == k)),
                   "podsearch": mean("podsearch", {q for q, kk in kinds.items() if kk == k}),
                   "fts5": mean("fts5", {q for q, kk in kinds.items() if kk == k})}
               for k in sorted(set(kinds.values()))}
    return SetScores(name=name, measure="MRR@10", queries=len(items), podsearch=mean("podsearch") or 0.0,
                     fts5=mean("fts5"), halves={h: {"podsearch": mean("podsearch", q), "fts5": mean("fts5", q)}
                                                for h, q in split.items()},
                     by_kind=by_kind,
                     per_query={q: {s: round(per[s][q], 4) for s in per} for q in kinds})


def score_graded(name: str, qrels: Qrels, runs: dict[str, Run], split: bool = True) -> SetScores:
    judged = [q for q, j in qrels.items() if any(g > 0 for g in j.values())]
    per = {sys: {q: ndcg_at(run.get(q, []), qrels[q]) for q in judged} for sys, run in runs.items()}
    parts = halves(judged) if split else {}

    def mean(system: str, qids: set[str] | None = None) -> float | None:
        if system not in per:
            return None
        return _mean([v for q, v in per[system].items() if qids is None or q in qids])

    return SetScores(name=name, measure="nDCG@10", queries=len(judged), podsearch=mean("podsearch") or 0.0,
                     fts5=mean("fts5"),
                     halves={h: {"podsearch": mean("podsearch", q), "fts5": mean("fts5", q)} for h, q in parts.items()},
                     per_query={q: {s: round(per[s][q], 4) for s in per} for q in judged})


# -- the tags as topical queries ---------------------------------------------------------------------
TAGS_FILE = "btc_tags.dev.tsv"
TAG_QUERY_EPISODES = 3  # a tag given to fewer episodes is no query: nDCG@10 of one or two relevant is mostly luck


def tag_topics(path: Path) -> tuple[set[str], dict[str, str], Qrels]:
    """The labels of ``eval similar`` read as a third topical set, a guard beside the graded one: each tag given
    to at least ``TAG_QUERY_EPISODES`` episodes is a query (its words: ``soft-fork-activation`` is searched as
    ``soft fork activation``) whose relevant episodes are those with the tag (grade 1). Only 209 episodes are
    labelled, so a ranking is scored on its labelled episodes only (the condensed list, as ``eval similar``'s
    P@5): an unlabelled episode is unknown, not wrong. Returns (the labelled episodes, the queries, the qrels)."""
    from .similar import read_tags

    labels = read_tags(path)
    by_tag: dict[str, set[str]] = {}
    for guid, tags in labels.items():
        for tag in tags:
            by_tag.setdefault(tag, set()).add(guid)
    chosen = sorted(t for t, guids in by_tag.items() if len(guids) >= TAG_QUERY_EPISODES)
    queries = {t: " ".join(t.replace("-", " ").split()) for t in chosen}
    qrels: Qrels = {t: dict.fromkeys(by_tag[t], 1) for t in chosen}
    return set(labels), queries, qrels


def condensed(rank: Callable[[str, int], list[str]], keep: set[str]) -> Callable[[str, int], list[str]]:
    """``rank`` with only the episodes of ``keep`` left, in its order (the condensed list)."""
    return lambda text, depth: [d for d in rank(text, depth) if d in keep]


# -- the whole evaluation ----------------------------------------------------------------------------
def podcast_sets(corpus: Path, data: Path, baseline: bool = True, say: Callable[[str], None] = lambda _m: None,
                 ranking: Ranking | None = None, feedback: Feedback | None = None) -> list[SetScores]:
    """Known items (MRR@10) and topical queries (nDCG@10) over the site corpus, and the tags of the dev labels
    as topical queries (nDCG@10 over the labelled episodes: :func:`tag_topics`) when their file is there."""
    evals = corpus / "eval"
    items = read_known_items(evals / "known_items.dev.tsv")
    topical = read_queries(evals / "topical_queries.dev.tsv")
    qrels = read_qrels(evals / "topical_qrels.dev.tsv")
    site = site_data(corpus / "site", data / "site", say)
    systems: dict[str, Callable[[str, int], list[str]]] = {}
    box = SearchBox(site, ranking, feedback)
    systems["podsearch"] = box.rank
    fts = None
    if baseline:
        say("FTS5 baseline over the site (when changed)")
        fts = fts5_for(site)
        systems["fts5"] = fts.rank
    out = []
    try:
        known = {i.qid: i.query for i in items}
        runs, seconds = {}, {}
        for name, rank in systems.items():
            say(f"known items: {name}")
            runs[name], seconds[name] = run_queries(rank, known, 10)
        scores = score_known_items(items, runs)
        scores.extra = {"seconds": {k: round(v, 2) for k, v in seconds.items()}, "refused": len(box.refused)}
        out.append(scores)
        runs, seconds = {}, {}
        for name, rank in systems.items():
            say(f"topical: {name}")
            runs[name], seconds[name] = run_queries(rank, topical, 10)
        scores = score_graded("topical", qrels, runs)
        scores.extra = {"seconds": {k: round(v, 2) for k, v in seconds.items()}}
        out.append(scores)
        if (evals / TAGS_FILE).is_file():
            tagged, queries, tag_qrels = tag_topics(evals / TAGS_FILE)
            runs, seconds = {}, {}
            for name, rank in systems.items():
                say(f"tag topics: {name}")
                runs[name], seconds[name] = run_queries(condensed(rank, tagged), queries, PAGE)
            scores = score_graded("tag topics", tag_qrels, runs)
            scores.extra = {"seconds": {k: round(v, 2) for k, v in seconds.items()}, "labelled": len(tagged)}
            out.append(scores)
    finally:
        box.close()
        if fts is not None:
            fts.close()
    return out


def collection_sets(folder: Path, data: Path, fields: tuple[str, ...] = IR_FIELDS, baseline: bool = True,
                    lowercased: bool = False, say: Callable[[str], None] = lambda _m: None,
                    ranking: Ranking | None = None, feedback: Feedback | None = None) -> list[SetScores]:
    """One IR collection (``docs.jsonl``, ``queries.tsv``, ``qrels.tsv``) imported per text field."""
    queries = read_queries(folder / "queries.tsv")
    qrels = read_qrels(folder / "qrels.tsv")
    out = []
    fts_run: Run | None = None
    for text_field in fields:
        target = collection_data(folder / "docs.jsonl", data / f"{folder.name}-{text_field}", text_field, say)
        box = SearchBox(target, ranking, feedback)
        try:
            say(f"{folder.name} ({text_field}): podsearch")
            runs = {}
            runs["podsearch"], seconds = run_queries(box.rank, queries, PAGE)
            variants = {"": runs}
            if lowercased:
                low, _ = run_queries(box.rank, {q: t.lower() for q, t in queries.items()}, PAGE)
                variants[", queries lowercased"] = {"podsearch": low}
            if baseline:
                if fts_run is None:  # the same text whatever field it went to: one baseline run
                    say(f"{folder.name}: FTS5 baseline")
                    fts = fts5_for(target)
                    try:
                        fts_run, _ = run_queries(fts.rank, queries, PAGE)
                    finally:
                        fts.close()
                for runs_ in variants.values():
                    runs_["fts5"] = fts_run
            for suffix, runs_ in variants.items():
                scores = score_graded(f"{folder.name} ({text_field}{suffix})", qrels, runs_, split=False)
                scores.extra = {"map@100": {s: round(_map(r, qrels), 4) for s, r in runs_.items()},
                                "seconds": round(seconds, 2), "refused": len(box.refused)}
                out.append(scores)
        finally:
            box.close()
    return out


def _map(run: Run, qrels: Qrels) -> float:
    judged = [q for q, j in qrels.items() if any(g > 0 for g in j.values())]
    return _mean([average_precision(run.get(q, []), qrels[q]) for q in judged])
