"""``podsearch eval search``: ranking quality against judged queries, beside FTS5 (a thin command)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click

SETS = ("site", "cranfield", "vaswani")


def _dir_file(directory: str | None, given: str | None, name: str) -> str:
    if given:
        return given
    if directory:
        return str(Path(directory) / name)
    raise click.UsageError(f"Give --{name.split('.')[0]} or a collection folder with --collection, "
                           "or the shared corpus with --corpus.")


@click.command("search")
@click.option("--corpus", type=click.Path(file_okay=False, exists=True),
              help="The shared corpus folder: its podcast sets (eval/, over site/) and the IR collections (ir/).")
@click.option("--sets", default=",".join(SETS), show_default=True,
              help="With --corpus: which of site, cranfield, vaswani (comma-separated).")
@click.option("--collection", type=click.Path(file_okay=False, exists=True),
              help="A folder holding docs.jsonl, queries.tsv and qrels.tsv.")
@click.option("--docs", type=click.Path(dir_okay=False, exists=True),
              help="Documents: JSON lines {id, title, text} or podsearch import lines.")
@click.option("--queries", type=click.Path(dir_okay=False, exists=True), help="Queries: 'qid<TAB>text' lines.")
@click.option("--qrels", type=click.Path(dir_okay=False, exists=True),
              help="Judgments: 'qid docid grade' or TREC 'qid 0 docid grade' lines.")
@click.option("--text-as", "text_as", type=click.Choice(["transcript", "description", "both"]), default=None,
              help="Import {id, title, text} documents with the text as the transcript or the description "
                   "[default: transcript; both with --corpus].")
@click.option("--into", "into", type=click.Path(file_okay=False),
              help="Keep the imported data in this folder and reuse it in later runs (default: a temporary "
                   "folder, removed afterwards).")
@click.option("--baseline", type=click.Choice(["fts5", "bm25", "none"]), default="fts5", show_default=True,
              help="Also score SQLite FTS5 bm25() (or bm25s's BM25) on the same text.")
@click.option("--depth", type=click.IntRange(10, 100), default=100, show_default=True,
              help="Ranks kept per query (one page of the API).")
@click.option("--per-query", is_flag=True, help="Include each query's scores in the JSON output.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def search_cmd(corpus: str | None, sets: str, collection: str | None, docs: str | None, queries: str | None,
               qrels: str | None, text_as: str | None, into: str | None, baseline: str, depth: int,
               per_query: bool, as_json: bool) -> None:
    """Run judged queries through podsearch's search box and score them, beside SQLite FTS5 bm25().

    Each query goes through the same function as /api/search, exactly as typed. With --corpus: the
    podcast sets over the site corpus (known items, MRR@10, by kind; topical queries, nDCG@10; the tags
    of the dev labels as queries, nDCG@10 over the labelled episodes; each also on two halves) and
    Cranfield and Vaswani (nDCG@10, MAP@100) with their text imported as transcripts and as
    descriptions. Otherwise your own documents, queries and judgments. Your own data folder is never
    touched; --into keeps the built data for the next run.

    \b
    Examples:
      podsearch eval search --corpus ../shared/corpus --into /tmp/eval-data
      podsearch eval search --corpus ../shared/corpus --sets site --into /tmp/eval-data --json
      podsearch eval search --collection ../shared/corpus/ir/cranfield --text-as description
      podsearch eval search --docs docs.jsonl --queries queries.tsv --qrels qrels.tsv --json
    """
    from ..errors import PodsearchError

    try:
        config = getattr(click.get_current_context().find_root().obj, "config", None)
    except PodsearchError:  # (a config that cannot be read is not this command's concern: it builds its own data)
        config = None
    if getattr(config, "engine", "whoosh") != "whoosh":  # (its figures were taken for the configured engine's)
        click.echo(f"note: eval search builds and ranks Whoosh indexes of its own; the configured engine "
                   f"({config.engine}) is not what it measures. bench.quotes --opensearch-url ranks through a node.",
                   err=True)

    def phase(msg: str) -> None:
        if not as_json and sys.stderr.isatty():
            click.echo(msg + " ...", err=True)

    try:
        if corpus:
            _corpus(Path(corpus), sets, text_as or "both", into, baseline, per_query, as_json, phase)
        else:
            _collection(collection, docs, queries, qrels, text_as or "transcript", into, baseline, depth,
                        per_query, as_json, phase)
    except PodsearchError as exc:
        raise click.ClickException(str(exc)) from None


def _corpus(corpus: Path, sets: str, text_as: str, into: str | None, baseline: str, per_query: bool,
            as_json: bool, phase: Any) -> None:
    import tempfile

    from .podcast import IR_FIELDS, collection_sets, podcast_sets

    chosen = [s.strip() for s in sets.split(",") if s.strip()]
    unknown = set(chosen) - set(SETS)
    if unknown or not chosen:
        raise click.UsageError(f"--sets takes some of {', '.join(SETS)}, not {sets!r}.")
    if baseline == "bm25":
        raise click.UsageError("With --corpus the baseline is fts5 (or none).")
    fields = IR_FIELDS if text_as == "both" else (text_as,)
    with tempfile.TemporaryDirectory(prefix="podsearch-eval-") as tmp:
        data = Path(into) if into else Path(tmp)
        results = []
        if "site" in chosen:
            results += podcast_sets(corpus, data, baseline == "fts5", phase)
        for name in ("cranfield", "vaswani"):
            if name in chosen:
                results += collection_sets(corpus / "ir" / name, data, fields, baseline == "fts5",
                                           lowercased=name == "vaswani", say=phase)
    if as_json:
        click.echo(json.dumps({r.name: r.to_dict(per_query) for r in results}, indent=2))
        return
    click.echo(f"{'set':<44} {'measure':<8} {'n':>4} {'podsearch':>9} {'FTS5':>7} {'ratio':>6}")

    def row(label: str, measure: str, n: Any, ours: float | None, fts: float | None) -> None:
        ratio = f"{ours / fts:6.3f}" if ours is not None and fts else f"{'':6}"
        fts_text = f"{fts:7.4f}" if fts is not None else f"{'-':>7}"
        click.echo(f"{label:<44} {measure:<8} {n:>4} {ours or 0:9.4f} {fts_text} {ratio}")

    for r in results:
        row(r.name, r.measure, r.queries, r.podsearch, r.fts5)
        for kind, s in r.by_kind.items():
            row(f"  {kind}", "", int(s["queries"] or 0), s["podsearch"], s["fts5"])
        for half, s in r.halves.items():
            row(f"  half {half}", "", "", s["podsearch"], s["fts5"])
        if "map@100" in r.extra:
            m = r.extra["map@100"]
            row("", "MAP@100", "", m.get("podsearch"), m.get("fts5"))
        if r.extra.get("refused"):
            click.echo(f"  {r.extra['refused']} queries refused (HTTP 400)")


def _collection(collection: str | None, docs: str | None, queries: str | None, qrels: str | None, text_as: str,
                into: str | None, baseline: str, depth: int, per_query: bool, as_json: bool, phase: Any) -> None:
    from .search import run_eval

    if text_as == "both":
        raise click.UsageError("--text-as both is for --corpus; give transcript or description.")
    result = run_eval(_dir_file(collection, docs, "docs.jsonl"), _dir_file(collection, queries, "queries.tsv"),
                      _dir_file(collection, qrels, "qrels.tsv"), data_dir=Path(into) if into else None,
                      baseline=baseline, depth=depth, text_field=text_as, on_phase=phase)
    systems = [k for k in ("podsearch", "fts5", "bm25") if k in result]
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
