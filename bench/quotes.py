"""Known-item quotes in the forms people type them, through the search box and FTS5 (docs/search.md, the phrase
row of the query language).

    python -m bench.quotes --into /tmp/eval-data
    python -m bench.quotes --into /tmp/eval-data --opensearch-url http://127.0.0.1:9200 --opensearch-data DIR

The quote queries of ``known_items.dev.tsv`` and of our own ``bench/labels/known_ours.tsv`` (a sentence someone
remembers from an episode, in double quotes), each as written and as it may be typed or remembered: in a phone's
typographic quotes (“…”), with a final period or an ellipsis inside the quotes, with its middle word left out, and
with its two middle words swapped (the last two only for quotes of four words or more; shorter ones stay as
written), and typed without its quotes (whole, and with its middle word left out). Each is scored as its query is
(MRR@10 of the right episode), by ``Library.ranked`` (what ``/api/search`` ranks) and by FTS5 ``bm25()`` over the
same text (whose phrase is exact: a quote remembered wrong finds nothing there), on the data folder ``podsearch eval
search --into`` built (``<into>/site``). With ``--opensearch-url``, the same through an OpenSearch node holding
``--opensearch-data``'s catalog (a data folder reindexed with ``PODSEARCH_ENGINE=opensearch``).
"""

from __future__ import annotations

import argparse
import statistics
from collections.abc import Callable
from pathlib import Path

from podsearch.evaluation.podcast import fts5_for, mrr_at, read_known_items, site_data
from podsearch.evaluation.search import SearchBox

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT.parent / "shared" / "corpus"
OURS = ROOT / "bench" / "labels" / "known_ours.tsv"


def _inner(quote: str) -> list[str] | None:
    """The words of a query that is one quote of four words or more, else None."""
    words = quote.strip().strip('"').split()
    return words if quote.strip().startswith('"') and quote.strip().endswith('"') and len(words) >= 4 else None


def left_out(quote: str) -> str:
    words = _inner(quote)
    if words is None:
        return quote
    del words[len(words) // 2]
    return '"' + " ".join(words) + '"'


def swapped(quote: str) -> str:
    words = _inner(quote)
    if words is None:
        return quote
    i = len(words) // 2
    words[i], words[i + 1] = words[i + 1], words[i]
    return '"' + " ".join(words) + '"'


def _closed(quote: str, mark: str) -> str:
    return quote[:-1] + mark + '"' if quote.endswith('"') else quote


FORMS: dict[str, Callable[[str], str]] = {
    "as written": lambda q: q,
    "typographic quotes": lambda q: "“" + q.strip('"') + "”" if q.startswith('"') else q,
    "final period": lambda q: _closed(q, "."),
    "ellipsis inside": lambda q: _closed(q, "…"),
    "middle word left out": left_out,
    "two middle words swapped": swapped,
    "without quotes": lambda q: q.strip().strip('"'),
    "without quotes, word left out": lambda q: left_out(q).strip().strip('"'),
}


def quotes(corpus: Path, ours: Path = OURS) -> list[tuple[str, str]]:
    """(query, the right episode) of every quote query of the dev set and ours."""
    items = read_known_items(corpus / "eval" / "known_items.dev.tsv") + read_known_items(ours)
    return [(i.query, i.target) for i in items if i.query.strip().startswith('"')]


def figures(rows: list[tuple[str, str]], rank: Callable[[str], list[str]]) -> dict[str, float]:
    """MRR@10 of each form of the quotes, ranked by ``rank`` (a query's first ten episode ids)."""
    return {form: statistics.fmean(mrr_at(rank(make(q)), target) for q, target in rows) for form, make in FORMS.items()}


def _opensearch_box(url: str, data: Path) -> SearchBox:
    from podsearch.config import load_config
    from podsearch.service import Library

    config = load_config({"data": str(data), "engine": "opensearch", "opensearch_url": url}, environ={})
    library = Library.from_config(config)
    library.search_deadline = 0  # as SearchBox's own: the ranking, not the machine's load
    return SearchBox(data, library=library)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.quotes", description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", type=Path, default=CORPUS)
    ap.add_argument("--into", type=Path, required=True, help="the evaluation's data folder (built on first use)")
    ap.add_argument("--opensearch-url", help="also through this OpenSearch node")
    ap.add_argument("--opensearch-data", type=Path, help="the data folder whose catalog that node holds")
    args = ap.parse_args(argv)
    if args.opensearch_url and not args.opensearch_data:
        ap.error("--opensearch-url needs --opensearch-data")
    site = site_data(args.corpus / "site", args.into / "site", lambda _m: None)
    systems: dict[str, Callable[[str], list[str]]] = {}
    boxes = [SearchBox(site)]
    systems["podsearch (Whoosh)"] = lambda q: boxes[0].rank(q, 10)
    if args.opensearch_url:
        boxes.append(_opensearch_box(args.opensearch_url, args.opensearch_data))
        systems["podsearch (OpenSearch)"] = lambda q: boxes[1].rank(q, 10)
    fts = fts5_for(site)
    systems["FTS5"] = lambda q: fts.rank(q, 10)
    rows = quotes(args.corpus)
    try:
        print(f"{len(rows)} quotes; MRR@10 of the right episode")
        print(f"{'form':28s}" + "".join(f"{name:>24s}" for name in systems))
        scores = [figures(rows, rank) for rank in systems.values()]
        for form in FORMS:
            print(f"{form:28s}" + "".join(f"{s[form]:24.3f}" for s in scores))
    finally:
        for box in boxes:
            box.close()
        fts.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
