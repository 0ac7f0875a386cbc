"""The pure parts of ``bench/rerank.py`` (issue 15's second-round reranking variants): the passage window, the
feedback's seed weights and the two-fold cross-validation that judges a family of variants."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def rerank(monkeypatch: pytest.MonkeyPatch):  # noqa: ANN201
    monkeypatch.syspath_prepend(str(ROOT))
    import bench.rerank as module

    yield module
    sys.modules.pop("bench.rerank", None)


def test_best_window_finds_the_densest_stretch(rerank) -> None:  # noqa: ANN001
    tokens = np.array(["x"] * 50 + ["rout", "x", "rout", "node"] + ["x"] * 50 + ["rout"] + ["x"] * 20, dtype=object)
    idf = {"rout": 2.0, "node": 3.0}
    best = rerank.best_window(tokens, ["rout", "node"], idf, width=4)
    sat = lambda c: c * 2.2 / (c + 1.2)  # noqa: E731  (k1 1.2)
    assert best == pytest.approx(2.0 * sat(2) + 3.0 * sat(1))
    # one window over a short transcript: every occurrence counts
    assert rerank.best_window(tokens, ["rout"], idf, width=1000) == pytest.approx(2.0 * sat(3))
    assert rerank.best_window(tokens, ["absent"], idf, width=4) == 0.0
    assert rerank.best_window(np.array([], dtype=object), ["rout"], idf, width=4) == 0.0


def test_seed_weights_sum_to_the_seed_count(rerank) -> None:  # noqa: ANN001
    assert rerank.seed_weights([9.0, 6.0, 3.0], "equal").tolist() == [1.0, 1.0, 1.0]
    by_score = rerank.seed_weights([9.0, 6.0, 3.0], "score")
    assert by_score.sum() == pytest.approx(3) and by_score[0] == pytest.approx(1.5) and by_score[2] == pytest.approx(0.5)
    by_rank = rerank.seed_weights([9.0, 8.9, 8.8], "rank")
    assert by_rank.sum() == pytest.approx(3) and by_rank[0] == pytest.approx(2 * by_rank[1])


def test_cross_validation_measures_each_half_with_the_other_halfs_choice(rerank) -> None:  # noqa: ANN001
    rows = [{"params": "chosen", "A": 0.88, "B": 0.90, "known": 0.99},
            {"params": "fits A", "A": 0.95, "B": 0.80, "known": 0.99},
            {"params": "fits B", "A": 0.70, "B": 0.97, "known": 0.98}]
    cv = rerank.cross_validate(rows)
    assert (cv["tuned_on_A"], cv["B_of_it"]) == ("fits A", 0.80)
    assert (cv["tuned_on_B"], cv["A_of_it"]) == ("fits B", 0.70)
    assert cv["mean"] == pytest.approx(0.75)  # below the chosen row's 0.89: the family does not generalise
    tie = [{"params": "first", "A": 0.9, "B": 0.9, "known": 0.95}, {"params": "better known", "A": 0.9, "B": 0.9,
                                                                      "known": 0.99}]
    assert rerank.cross_validate(tie)["tuned_on_A"] == "better known"
