"""``podsearch eval search``: the measures, the file formats, and the ranking against a standard BM25."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from click.testing import CliRunner

from podsearch.evaluation.cli_search import search_cmd
from podsearch.evaluation.search import (
    EvalInputError,
    average_precision,
    import_line,
    ndcg_at,
    read_qrels,
    read_queries,
    run_eval,
)

DOCS = [
    {"id": "d1", "title": "Bees and pollination", "text": "Honeybees dance to tell the hive where the flowers are."},
    {"id": "d2", "title": "Volcano gases", "text": "Sulfur dioxide rises from the lava lake of the volcano."},
    {"id": "d3", "title": "Sourdough", "text": "A starter of wild yeasts and lactic acid bacteria raises the bread."},
    {"id": "d4", "title": "Coffee roasting", "text": "First crack tells the roaster the coffee beans are nearly done."},
    {"id": "d5", "title": "Kimchi", "text": "Lactic acid bacteria ferment cabbage for the winter."},
]


def make_collection(folder: Path, trec: bool = False) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "docs.jsonl").write_text("".join(json.dumps(d) + "\n" for d in DOCS), encoding="utf-8")
    (folder / "queries.tsv").write_text("q1\thow do bees tell the hive about flowers\nq2\tlactic acid bacteria\n")
    rows = [("q1", "d1", 2), ("q2", "d3", 1), ("q2", "d5", 2), ("q2", "d2", 0)]
    (folder / "qrels.tsv").write_text("".join(
        (f"{q} 0 {d} {g}\n" if trec else f"{q}\t{d}\t{g}\n") for q, d, g in rows))
    return folder


def test_measures_on_a_worked_example() -> None:
    judged = {"a": 2, "b": 1, "c": 0}
    # Ranking b, a: DCG = 1/log2(2) + 3/log2(3); ideal = 3/log2(2) + 1/log2(3).
    expected = (1 + 3 / math.log2(3)) / (3 + 1 / math.log2(3))
    assert ndcg_at(["b", "a"], judged) == pytest.approx(expected)
    assert ndcg_at(["a", "b"], judged) == pytest.approx(1.0)
    assert average_precision(["x", "a", "y", "b"], judged) == pytest.approx((1 / 2 + 2 / 4) / 2)
    assert average_precision(["a"], judged) == pytest.approx(0.5)


def test_tags_become_topical_queries_scored_on_the_labelled_episodes(tmp_path: Path) -> None:
    from podsearch.evaluation.podcast import condensed, tag_topics

    (tmp_path / "tags.tsv").write_text("guid\ttags\n" + "".join(
        f"e{i}\t{tags}\n" for i, tags in enumerate(["Soft-Fork-Activation,taproot", "soft-fork-activation",
                                                       "SOFT-FORK-ACTIVATION, p2p", "taproot", "p2p"])))
    labelled, queries, qrels = tag_topics(tmp_path / "tags.tsv")
    assert labelled == {"e0", "e1", "e2", "e3", "e4"}
    # a tag of fewer than three episodes is no query; one spelt in capitals is the same tag
    assert queries == {"soft-fork-activation": "soft fork activation"}
    assert qrels == {"soft-fork-activation": {"e0": 1, "e1": 1, "e2": 1}}
    ranked = condensed(lambda text, depth: ["x9", "e3", "e0", "x1", "e1", "e2"][:depth], labelled)
    assert ranked("soft fork activation", 100) == ["e3", "e0", "e1", "e2"]  # unlabelled episodes are left out
    assert ndcg_at(ranked("", 100), qrels["soft-fork-activation"]) < 1.0


def test_reads_both_qrels_formats_and_rejects_garbage(tmp_path: Path) -> None:
    three = make_collection(tmp_path / "three")
    four = make_collection(tmp_path / "four", trec=True)
    assert read_qrels(three / "qrels.tsv") == read_qrels(four / "qrels.tsv") == {
        "q1": {"d1": 2}, "q2": {"d3": 1, "d5": 2, "d2": 0}}
    assert read_queries(three / "queries.tsv")["q2"] == "lactic acid bacteria"
    (tmp_path / "bad.tsv").write_text("q1 d1\n")
    with pytest.raises(EvalInputError, match="line 1"):
        read_qrels(tmp_path / "bad.tsv")


def test_ir_lines_become_import_lines() -> None:
    line = import_line({"id": "7", "title": "T", "text": "some  words\n here"})
    assert line == {"id": "7", "title": "T", "show": "Evaluation", "transcript": "some words here"}
    own = {"id": "e1", "title": "An episode", "show": "Mine", "segments": [{"start": 1, "text": "hi"}]}
    assert import_line(own) is own


def test_eval_finds_the_judged_documents(tmp_path: Path) -> None:
    folder = make_collection(tmp_path / "c")
    result = run_eval(folder / "docs.jsonl", folder / "queries.tsv", folder / "qrels.tsv")
    ours, base = result["podsearch"], result["fts5"]
    assert result["documents"] == 5 and ours.queries == 2
    assert ours.per_query["q1"]["ndcg@10"] == pytest.approx(1.0)
    assert ours.ndcg10 > 0.8 and base.ndcg10 > 0.5


def test_command_prints_json_for_a_site_owners_files(tmp_path: Path) -> None:
    folder = make_collection(tmp_path / "c", trec=True)
    result = CliRunner().invoke(search_cmd, ["--docs", str(folder / "docs.jsonl"), "--queries",
                                             str(folder / "queries.tsv"), "--qrels", str(folder / "qrels.tsv"),
                                             "--json", "--per-query"])
    assert result.exit_code == 0, result.output
    out = json.loads(result.output)
    assert set(out["podsearch"]) >= {"ndcg@10", "map", "per_query"} and "fts5" in out
    text = CliRunner().invoke(search_cmd, ["--collection", str(folder), "--baseline", "none"])
    assert text.exit_code == 0 and "podsearch" in text.output and "fts5" not in text.output
    missing = CliRunner().invoke(search_cmd, ["--docs", str(folder / "docs.jsonl")])
    assert missing.exit_code != 0 and "--queries" in missing.output


def test_queries_go_through_the_search_box_as_typed(tmp_path: Path) -> None:
    """A query in capitals, with operators or with an excluded word is read as the search box reads it."""
    folder = make_collection(tmp_path / "c")
    (folder / "queries.tsv").write_text("q1\tHOW DO BEES TELL THE HIVE ABOUT FLOWERS\nq2\tlactic -cabbage\n")
    result = run_eval(folder / "docs.jsonl", folder / "queries.tsv", folder / "qrels.tsv", baseline="none")
    per = result["podsearch"].per_query
    assert per["q1"]["ndcg@10"] == pytest.approx(1.0)  # capitals are words: found as the lower-case query is
    assert per["q2"]["ap"] == pytest.approx(0.5)  # d5 (kimchi: cabbage) excluded, d3 found


def test_the_fts5_baseline_ors_words_and_keeps_phrases() -> None:
    from podsearch.evaluation.fts5 import FTS5Baseline, fts5_or_query

    assert fts5_or_query('bees AND "lactic acid" NOT x') == '"bees" OR "AND" OR "lactic acid" OR "NOT" OR "x"'
    assert fts5_or_query('an "unclosed quote') == '"an" OR "unclosed" OR "quote"'
    fts = FTS5Baseline()
    assert fts.build((d["id"], d["title"] + " " + d["text"]) for d in DOCS)
    assert not fts.build((d["id"], d["title"] + " " + d["text"]) for d in DOCS)  # the same documents: kept
    assert fts.rank("lactic acid bacteria", 10)[:2] in (["d3", "d5"], ["d5", "d3"])
    assert fts.rank("roasting", 10) == ["d4"]  # porter: roasting = roast
    assert fts.rank("!!", 10) == []


@pytest.mark.slow
@pytest.mark.parametrize("text_as", ["transcript", "description"])
@pytest.mark.parametrize("name", ["cranfield", "vaswani"])
def test_ranking_beats_fts5_on_the_collections(corpus: Path, tmp_path: Path, name: str, text_as: str) -> None:
    """Through the search box, with the text imported as transcripts and as show notes; Vaswani's queries
    (written in capitals) score what their lower-case versions do."""
    from podsearch.evaluation.search import evaluate, podsearch_run

    folder = corpus / "ir" / name
    result = run_eval(folder / "docs.jsonl", folder / "queries.tsv", folder / "qrels.tsv", text_field=text_as,
                      data_dir=tmp_path / "data")
    ours, base = result["podsearch"], result["fts5"]
    print(name, text_as, ours.to_dict(), base.to_dict())
    assert ours.ndcg10 >= base.ndcg10
    assert ours.map >= base.map
    if name == "vaswani":
        lowered = {q: t.lower() for q, t in read_queries(folder / "queries.tsv").items()}
        low = evaluate(podsearch_run(tmp_path / "data", lowered), read_qrels(folder / "qrels.tsv"))
        assert low.per_query == ours.per_query


def test_eval_search_says_it_measures_its_own_whoosh_indexes_whatever_the_engine(tmp_path: Path) -> None:
    """With PODSEARCH_ENGINE=opensearch the command ran as before and printed figures nothing said were Whoosh's."""
    from podsearch.cli import main

    folder = make_collection(tmp_path / "c", trec=True)
    args = ["--data", str(tmp_path / "data"), "eval", "search", "--collection", str(folder), "--baseline", "none"]
    told = CliRunner().invoke(main, args, env={"PODSEARCH_ENGINE": "opensearch"})
    assert told.exit_code == 0 and "builds and ranks Whoosh indexes of its own" in told.stderr
    assert "note:" not in CliRunner().invoke(main, args, env={"PODSEARCH_ENGINE": "whoosh"}).stderr


def test_eval_similar_refuses_an_unknown_baseline_as_misuse(tmp_path: Path) -> None:
    """`--baselines foo` exited 1, as a failure; the other eval misuses exit 2."""
    from podsearch.cli import main

    pairs = tmp_path / "pairs.tsv"
    pairs.write_text("source\ttarget\n", encoding="utf-8")
    result = CliRunner().invoke(main, ["--data", str(tmp_path), "eval", "similar", "--pairs", str(pairs),
                                       "--baselines", "foo"])
    assert result.exit_code == 2 and "Unknown baseline(s): foo" in result.output, result.output
