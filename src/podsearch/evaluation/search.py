"""TREC-style evaluation of search: documents, queries and graded judgments in, nDCG@10 and MAP out.

Formats (the ones of ``../shared/corpus/ir/*`` and of TREC):

- documents: JSON lines, either IR-collection lines ``{"id", "title", "text"}`` or podsearch import lines
  (``{"id", "title", "show", "description", "transcript" | "segments", ...}``, see ``ingest/jsonl.py``);
- queries: ``qid<TAB>text`` per line;
- judgments: ``qid docid grade`` (3 columns) or TREC qrels ``qid 0 docid grade`` (4 columns), tabs or spaces.
  A grade of 0 or less is "not relevant".

The documents go through the same path as a site's episodes (:func:`podsearch.reindex.import_jsonl`), and
each query goes through ``Library.search`` (what ``/api/search`` runs) exactly as typed, so the figures
describe what the search box does. SQLite FTS5 ``bm25()`` over the same text (:mod:`.fts5`) ranks the same
documents as the baseline (or bm25s's BM25, k1=1.2, b=0.75, English stop words).
"""

from __future__ import annotations

import html
import json
import logging
import math
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import PodsearchError

if TYPE_CHECKING:
    from ..engines.whoosh.ranking import Ranking
    from ..feedback import Feedback
    from ..service import Library

log = logging.getLogger(__name__)

PAGE = 100  # the API's largest page
DEPTH = 100  # ranks kept per query (MAP is computed over them): the API's largest page
Qrels = dict[str, dict[str, int]]
Run = dict[str, list[str]]


class EvalInputError(PodsearchError):
    """An evaluation input file is missing or malformed."""


@dataclass
class Scores:
    ndcg10: float
    map: float
    queries: int
    seconds: float = 0.0
    per_query: dict[str, dict[str, float]] = field(default_factory=dict)

    def to_dict(self, per_query: bool = False) -> dict[str, Any]:
        out: dict[str, Any] = {"ndcg@10": round(self.ndcg10, 4), "map": round(self.map, 4),
                               "queries": self.queries, "seconds": round(self.seconds, 2)}
        if per_query:
            out["per_query"] = self.per_query
        return out


# -- reading -------------------------------------------------------------------------------------
def _lines(path: Path | str) -> Iterator[tuple[int, str]]:
    path = Path(path)
    if not path.is_file():
        raise EvalInputError(f"{path}: no such file")
    with open(path, encoding="utf-8-sig", errors="replace") as fh:
        for n, line in enumerate(fh, 1):
            if line.strip() and not line.startswith("#"):
                yield n, line.rstrip("\n")


def read_queries(path: Path | str) -> dict[str, str]:
    """``qid<TAB>text`` lines (a space also separates the id when there is no tab)."""
    out: dict[str, str] = {}
    for n, line in _lines(path):
        qid, sep, text = line.partition("\t")
        if not sep:
            qid, _, text = line.strip().partition(" ")
        if n == 1 and (qid.strip().lower(), text.strip().lower()) == ("qid", "query"):
            continue  # a header row
        if not qid.strip() or not text.strip():
            raise EvalInputError(f"{path}: line {n}: expected 'query id<TAB>query text'")
        out[qid.strip()] = text.strip()
    return out


def read_qrels(path: Path | str) -> Qrels:
    """``qid docid grade`` or TREC ``qid iteration docid grade`` lines."""
    out: Qrels = {}
    for n, line in _lines(path):
        cols = line.split()
        if len(cols) == 3:
            qid, docid, grade = cols
        elif len(cols) == 4:
            qid, _, docid, grade = cols
        else:
            raise EvalInputError(f"{path}: line {n}: expected 'qid docid grade' or 'qid 0 docid grade'")
        try:
            out.setdefault(qid, {})[docid] = int(float(grade))
        except ValueError:
            if n == 1 and qid.lower() == "qid":
                continue  # a header row
            raise EvalInputError(f"{path}: line {n}: the grade {grade!r} is not a number") from None
    return out


def read_docs(path: Path | str) -> Iterator[dict[str, Any]]:
    for n, line in _lines(path):
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise EvalInputError(f"{path}: line {n}: not JSON ({exc.msg})") from None
        if not isinstance(obj, dict) or obj.get("id") in (None, ""):
            raise EvalInputError(f"{path}: line {n}: expected an object with an id")
        obj["id"] = str(obj["id"])
        yield obj


def import_line(doc: dict[str, Any], show: str = "Evaluation", text_field: str = "transcript") -> dict[str, Any]:
    """An IR document ``{id, title, text}`` as a podsearch import line; import lines pass through.

    The text becomes the episode's transcript (the field that holds most of a podcast's words), or with
    ``text_field="description"`` its show notes.
    """
    if any(k in doc for k in ("transcript", "segments", "description", "show")):
        return doc
    text = " ".join(str(doc.get("text") or "").split())
    if text_field == "description":
        text = html.escape(text, quote=False)  # the description is read as HTML
    return {"id": doc["id"], "title": str(doc.get("title") or ""), "show": show, text_field: text}


def doc_text(doc: dict[str, Any]) -> str:
    """All the searchable text of a document, for the baseline."""
    parts = [doc.get("title"), doc.get("show"), doc.get("description"), doc.get("text"), doc.get("transcript")]
    for seg in doc.get("segments") or []:
        if isinstance(seg, dict):
            parts.append(seg.get("text"))
    for p in doc.get("persons") or []:
        parts.append(p.get("name") if isinstance(p, dict) else p)
    return " ".join(str(p) for p in parts if p)


# -- measures ------------------------------------------------------------------------------------
def ndcg_at(ranked: list[str], judged: dict[str, int], k: int = 10) -> float:
    """nDCG@k with gains 2^grade - 1 (graded judgments) and log2 discounts."""
    def dcg(grades: Iterable[int]) -> float:
        return sum((2 ** g - 1) / math.log2(i + 2) for i, g in enumerate(grades) if g > 0)

    ideal = dcg(sorted(judged.values(), reverse=True)[:k])
    if ideal <= 0:
        return 0.0
    return dcg(judged.get(d, 0) for d in ranked[:k]) / ideal


def average_precision(ranked: list[str], judged: dict[str, int]) -> float:
    relevant = {d for d, g in judged.items() if g > 0}
    if not relevant:
        return 0.0
    found, total = 0, 0.0
    for i, d in enumerate(ranked, 1):
        if d in relevant:
            found += 1
            total += found / i
    return total / len(relevant)


def evaluate(run: Run, qrels: Qrels, seconds: float = 0.0) -> Scores:
    """Mean nDCG@10 and MAP over the queries that have at least one relevant document."""
    per: dict[str, dict[str, float]] = {}
    for qid, judged in qrels.items():
        if not any(g > 0 for g in judged.values()):
            continue
        ranked = run.get(qid, [])
        per[qid] = {"ndcg@10": round(ndcg_at(ranked, judged), 4), "ap": round(average_precision(ranked, judged), 4)}
    n = len(per)
    return Scores(ndcg10=sum(p["ndcg@10"] for p in per.values()) / n if n else 0.0,
                  map=sum(p["ap"] for p in per.values()) / n if n else 0.0, queries=n, seconds=seconds,
                  per_query=per)


# -- runs ----------------------------------------------------------------------------------------
def bm25_run(docs: list[dict[str, Any]], queries: dict[str, str], depth: int = DEPTH) -> Run:
    """The baseline: bm25s's BM25 (Robertson, k1=1.2, b=0.75) with its English stop words."""
    try:
        import bm25s
    except ImportError:
        raise EvalInputError("The bm25 baseline needs bm25s: pip install bm25s (or --baseline none).") from None
    ids = [d["id"] for d in docs]
    retriever = bm25s.BM25(k1=1.2, b=0.75, method="robertson")
    retriever.index(bm25s.tokenize([doc_text(d) for d in docs], stopwords="en", show_progress=False),
                    show_progress=False)
    qids = list(queries)
    tokens = bm25s.tokenize([queries[q] for q in qids], stopwords="en", show_progress=False)
    k = min(depth, len(ids))
    results, scores = retriever.retrieve(tokens, k=k, show_progress=False, n_threads=1)
    run: Run = {}
    for row, qid in enumerate(qids):
        run[qid] = [ids[int(j)] for j, s in zip(results[row], scores[row]) if s > 0]
    return run


class SearchBox:
    """Queries through ``Library.search`` (the function behind ``/api/search``), exactly as typed; with
    ``ranking`` and ``feedback``, ranked with those settings instead of podsearch's (``bench/ranking.py``)."""

    def __init__(self, data_dir: Path, ranking: Ranking | None = None, feedback: Feedback | None = None,
                 library: Library | None = None) -> None:
        from ..service import Library

        # No deadline: the figures measure the ranking, not how much a loaded machine reads in a second.
        self.library = library or Library(data_dir, search_deadline=0)
        if ranking is not None:
            self.library.engine.ranking = ranking  # type: ignore[attr-defined]  (the Whoosh engine's settings)
        if feedback is not None:
            self.library.feedback = feedback
        self.refused: dict[str, str] = {}

    def rank(self, text: str, depth: int = PAGE) -> list[str]:
        """Episode ids of the first page of ``min(depth, 100)`` hits, in the order ``Library.search`` shows them
        (``Library.ranked``: the same request, engine and feedback, without building snippets and moments); a
        query the API answers with 400 ranks nothing (and is remembered in ``refused``)."""
        from ..errors import QueryError
        from ..requests import SearchRequest

        try:
            result = self.library.ranked(SearchRequest(q=text, per_page=min(depth, PAGE)))
        except QueryError as exc:
            self.refused[text] = str(exc)
            return []
        return [h.id for h in result.hits]

    def close(self) -> None:
        self.library.close()


def run_queries(rank: Callable[[str, int], list[str]], queries: dict[str, str], depth: int) -> tuple[Run, float]:
    """Every query ranked to ``depth``, and the seconds it took."""
    started = time.perf_counter()
    run = {qid: rank(text, depth) for qid, text in queries.items()}
    return run, time.perf_counter() - started


def podsearch_run(data_dir: Path, queries: dict[str, str], depth: int = DEPTH) -> Run:
    """Each query through ``Library.search`` (what ``/api/search`` runs), exactly as typed; ``depth`` is
    capped at the API's largest page (100)."""
    box = SearchBox(data_dir)
    try:
        return run_queries(box.rank, queries, depth)[0]
    finally:
        box.close()


def load_docs(docs_path: Path | str, data_dir: Path, show: str = "Evaluation",
              text_field: str = "transcript") -> list[dict[str, Any]]:
    """Import the documents into ``data_dir`` through the JSON-lines path; returns them as read."""
    from ..config import load_config
    from ..reindex import import_jsonl

    docs = list(read_docs(docs_path))
    if not docs:
        raise EvalInputError(f"{docs_path}: no documents")
    data_dir.mkdir(parents=True, exist_ok=True)
    converted = data_dir / "eval-import.jsonl"
    with open(converted, "w", encoding="utf-8") as fh:
        for doc in docs:
            fh.write(json.dumps(import_line(doc, show, text_field), ensure_ascii=False) + "\n")
    report = import_jsonl(load_config({"data": str(data_dir)}, environ={}), converted)
    if report.errors:
        raise EvalInputError(f"{docs_path}: {len(report.errors)} documents could not be imported, "
                             f"the first: {report.errors[0]}")
    return docs


BASELINES = ("fts5", "bm25", "none")


def run_eval(docs_path: Path | str, queries_path: Path | str, qrels_path: Path | str, *,
             data_dir: Path | None = None, baseline: str = "fts5", depth: int = DEPTH, text_field: str = "transcript",
             on_phase: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Import, search, score; the baseline (``fts5``: SQLite FTS5 bm25() over the same text, ``bm25``:
    bm25s) is scored on the same documents."""
    from .fts5 import FTS5Baseline

    if baseline not in BASELINES:
        raise EvalInputError(f"baseline must be one of {', '.join(BASELINES)}, not {baseline!r}")
    queries = read_queries(queries_path)
    qrels = read_qrels(qrels_path)
    judged = {q for q, j in qrels.items() if any(g > 0 for g in j.values())}
    missing = judged - set(queries)
    if missing:
        log.warning("%d judged queries have no text in %s; they score 0", len(missing), queries_path)
    say = on_phase or (lambda _msg: None)
    with tempfile.TemporaryDirectory(prefix="podsearch-eval-") as tmp:
        data = Path(data_dir) if data_dir else Path(tmp) / "data"
        say(f"importing {docs_path}")
        started = time.perf_counter()
        docs = load_docs(docs_path, data, text_field=text_field)
        import_seconds = time.perf_counter() - started
        say(f"searching {len(queries)} queries")
        started = time.perf_counter()
        run = podsearch_run(data, queries, depth)
        ours = evaluate(run, qrels, time.perf_counter() - started)
    out: dict[str, Any] = {"documents": len(docs), "queries": len(queries), "judged_queries": len(judged),
                           "import_seconds": round(import_seconds, 2), "podsearch": ours}
    say(f"{baseline} baseline")
    started = time.perf_counter()
    if baseline == "bm25":
        out["bm25"] = evaluate(bm25_run(docs, queries, depth), qrels, time.perf_counter() - started)
    elif baseline == "fts5":
        fts = FTS5Baseline()
        try:
            fts.build((d["id"], doc_text(d)) for d in docs)
            base_run = {qid: fts.rank(text, min(depth, 100)) for qid, text in queries.items()}
        finally:
            fts.close()
        out["fts5"] = evaluate(base_run, qrels, time.perf_counter() - started)
    return out
