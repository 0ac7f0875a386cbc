"""``podsearch eval similar`` on the site corpus: our model beats the baselines on every metric (slow).

The site catalog is built once per session by the real ingest (25 local feeds and their transcripts) into a
temporary folder; the model is fitted once, by the command. Whoosh's ``more_like`` needs the full-text
index, whose build is too slow for this test; its figures come from ``podsearch eval similar`` over a
reindexed data folder (docs/similar.md).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

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


def test_ours_beats_every_baseline_on_the_dev_labels(site_data: Path, corpus: Path, runner):
    """One fit, through the command as a user runs it: every system on every metric, in one JSON."""
    from podsearch.evaluation.cli_similar import similar_cmd

    result = runner.invoke(similar_cmd, ["--data", str(site_data), "--pairs", str(corpus / "eval" / "related_pairs.dev.tsv"),
                                         "--tags", str(corpus / "eval" / "btc_tags.dev.tsv"),
                                         "--baselines", ",".join(BASELINES), "--json"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    out = json.loads(result.output)
    figures = json.dumps(out["systems"], indent=1)
    ours = out["systems"]["ours"]
    assert out["episodes"] == 1869 and set(out["systems"]) == {"ours", *BASELINES}
    assert ours["pairs"] == 115 and ours["episodes"] == 209
    assert out["ours_beats_every_baseline"] == {"recall@10": True, "mrr@10": True, "p@5": True}, figures
    # dev figures of this model (docs/similar.md, fourth round): recall@10 0.6435, MRR@10 0.3520, P@5 0.5608; the
    # aims (issue 16: recall@10 >= 0.80, P@5 >= 0.55 on the held-out split) are checked elsewhere, so this guards
    # against sliding back instead.
    assert ours["recall@10"] >= 0.62 and ours["mrr@10"] >= 0.33 and ours["p@5"] >= 0.54, figures
    # no reason shown on the site corpus is one of the language's most common words on its own
    assert ours["reasons_general_share"] == 0.0 and ours["reasons_per_neighbour"] >= 1.5, figures
