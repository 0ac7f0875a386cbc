"""``podsearch eval search``: ranking quality against TREC-style judgments (a thin command)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click


def _dir_file(directory: str | None, given: str | None, name: str) -> str:
    if given:
        return given
    if directory:
        return str(Path(directory) / name)
    raise click.UsageError(f"Give --{name.split('.')[0]} or a collection folder with --collection.")


@click.command("search")
@click.option("--collection", type=click.Path(file_okay=False, exists=True),
              help="A folder holding docs.jsonl, queries.tsv and qrels.tsv.")
@click.option("--docs", type=click.Path(dir_okay=False, exists=True),
              help="Documents: JSON lines {id, title, text} or podsearch import lines.")
@click.option("--queries", type=click.Path(dir_okay=False, exists=True), help="Queries: 'qid<TAB>text' lines.")
@click.option("--qrels", type=click.Path(dir_okay=False, exists=True),
              help="Judgments: 'qid docid grade' or TREC 'qid 0 docid grade' lines.")
@click.option("--into", "into", type=click.Path(file_okay=False),
              help="Keep the imported index in this folder (default: a temporary folder, removed afterwards).")
@click.option("--baseline", type=click.Choice(["bm25", "none"]), default="bm25", show_default=True,
              help="Also score a standard BM25 (bm25s, k1=1.2, b=0.75) on the same documents.")
@click.option("--depth", type=click.IntRange(10, 10000), default=1000, show_default=True,
              help="Ranks kept per query.")
@click.option("--per-query", is_flag=True, help="Include each query's scores in the JSON output.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def search_cmd(collection: str | None, docs: str | None, queries: str | None, qrels: str | None,
               into: str | None, baseline: str, depth: int, per_query: bool, as_json: bool) -> None:
    """Import documents, run the queries through podsearch's search, score nDCG@10 and MAP.

    The documents are imported through the same JSON-lines path as a site's episodes, into a temporary
    data folder (your own data is not touched). Use your own queries and judgments to check that
    search suits your listeners.

    \b
    Examples:
      podsearch eval search --collection ../shared/corpus/ir/cranfield
      podsearch eval search --docs docs.jsonl --queries queries.tsv --qrels qrels.tsv --json
    """
    from ..errors import PodsearchError
    from .search import run_eval

    def phase(msg: str) -> None:
        if not as_json and sys.stderr.isatty():
            click.echo(msg + " ...", err=True)

    try:
        result = run_eval(_dir_file(collection, docs, "docs.jsonl"), _dir_file(collection, queries, "queries.tsv"),
                          _dir_file(collection, qrels, "qrels.tsv"), data_dir=Path(into) if into else None,
                          baseline=baseline, depth=depth, on_phase=phase)
    except PodsearchError as exc:
        raise click.ClickException(str(exc)) from None
    systems = [k for k in ("podsearch", "bm25") if k in result]
    if as_json:
        out = {k: v for k, v in result.items() if k not in systems}
        out.update({k: result[k].to_dict(per_query) for k in systems})
        click.echo(json.dumps(out, indent=2))
        return
    click.echo(f"{result['documents']} documents, {result['queries']} queries "
               f"({result['judged_queries']} with judgments), imported in {result['import_seconds']} s")
    click.echo(f"{'system':<12} {'nDCG@10':>8} {'MAP':>8} {'seconds':>8}")
    for name in systems:
        s = result[name]
        click.echo(f"{name:<12} {s.ndcg10:>8.4f} {s.map:>8.4f} {s.seconds:>8.2f}")
