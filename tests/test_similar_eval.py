"""``podsearch eval similar`` on the site corpus: our model beats the baselines on every metric (slow).

The site catalog is built once per session by the real ingest (25 local feeds and their transcripts) into a
temporary folder. Whoosh's ``more_like`` needs the full-text index, whose build is too slow for this test;
its figures come from ``podsearch eval similar`` over a reindexed data folder (docs/similar.md).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from podsearch.evaluation.similar import evaluate, read_pairs, read_tags

pytestmark = pytest.mark.slow

BASELINES = ["by_date", "tfidf_default", "tfidf_sublinear", "random"]


@pytest.fixture(scope="session")
def site_data(corpus: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    from podsearch.catalog import Catalog
    from podsearch.config import load_config
    from podsearch.reindex import ingest

    data = tmp_path_factory.mktemp("site") / "data"
    feeds = sorted(str(p) for p in (corpus / "site" / "feeds").glob("*.xml"))
    config = load_config({"data": str(data)}, environ={})
    with Catalog.in_dir(data) as catalog:
        report = ingest(config, catalog, feeds)
    assert report.feeds == 25 and report.feeds_failed == 0
    return data


def test_ours_beats_every_baseline_on_the_dev_labels(site_data: Path, corpus: Path):
    result = evaluate(site_data, read_pairs(corpus / "eval" / "related_pairs.dev.tsv"),
                      read_tags(corpus / "eval" / "btc_tags.dev.tsv"), BASELINES)
    figures = json.dumps(result.systems, indent=1)
    assert result.episodes == 1869
    assert result.systems["ours"]["pairs"] == 115 and result.systems["ours"]["episodes"] == 209
    assert result.beats_baselines() == {"recall@10": True, "mrr@10": True, "p@5": True}, figures
    assert result.systems["ours"]["recall@10"] >= 0.5 and result.systems["ours"]["p@5"] >= 0.45, figures


def test_cli_prints_json(site_data: Path, corpus: Path, runner):
    from podsearch.evaluation.cli_similar import similar_cmd

    result = runner.invoke(similar_cmd, ["--data", str(site_data), "--tags", str(corpus / "eval" / "btc_tags.dev.tsv"),
                                         "--baselines", "by_date,random", "--json"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    out = json.loads(result.output)
    assert set(out["systems"]) == {"ours", "by_date", "random"}
    assert out["ours_beats_every_baseline"] == {"p@5": True}
