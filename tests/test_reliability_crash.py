"""Crash safety: ``kill -9`` a real ``podsearch reindex`` in each phase, 20 times (the harness is tests/soak/crash.py).

After each kill the catalog is intact, a Library serves the last good index and model, and the next reindex
gives exactly what an uninterrupted run gives. ``python tests/soak/crash.py --runs 100`` runs more.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from soak import crash

RUNS = 20


@pytest.mark.slow
def test_kill_9_at_random_points_loses_nothing(corpus: Path, tmp_path: Path) -> None:
    lines: list[str] = []
    summary = crash.run(corpus, tmp_path, RUNS, seed=8, log=lines.append)
    print("\n".join(lines))
    assert summary["killed"] >= RUNS - 2, summary  # a trial whose process had already exited cannot be killed
    phases = summary["phases"]
    assert phases.get("fetching", 0) >= 3 and phases.get("index", 0) >= 3, summary
    assert phases.get("model-fit", 0) + phases.get("model-save", 0) >= 6, summary
    # Kills before the index commit must have left the old index serving, later ones the new one: both happen.
    served = " ".join(summary["served_after_kill"])
    assert "index=base" in served and "index=reference" in served, summary
