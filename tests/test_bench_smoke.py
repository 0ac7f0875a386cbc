"""The benchmark harness on a CI-sized corpus, so it never rots (the full run is `make bench`).

Three small site feeds are ingested by podsearch, resampled into 60 short synthetic episodes, and every
step of ``python -m bench.run`` runs against the real parts: podsearch builds in child processes, a real
``podsearch serve`` on 127.0.0.1, SQLite FTS5, tantivy, scikit-learn and Whoosh more_like.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PHASES = ("parse", "catalog", "index", "model", "neighbours")
LATENCIES = ("search_http", "search_inprocess", "search_fts5", "search_tantivy", "similar_http", "similar_http_first",
             "similar_inprocess",
             "similar_sklearn_tfidf", "similar_whoosh_more_like", "http_floor")


@pytest.fixture(scope="module")
def smoke(corpus: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[dict, Path]:
    work = tmp_path_factory.mktemp("bench")
    results = work / "results" / "smoke.json"
    subprocess.run([sys.executable, "-m", "bench.run", "--corpus", "60", "--site", str(corpus / "site"),
                    "--shows", "afk,backstage,bigtent", "--max-segments", "20", "--rounds", "1",
                    "--similar-samples", "10", "--more-like-samples", "3", "--work", str(work),
                    "--results", str(results)], cwd=ROOT, check=True, timeout=900)
    return json.loads(results.read_text()), work


def _positive(value: object) -> bool:
    return isinstance(value, (int, float)) and math.isfinite(value) and value > 0


def test_build_figures_by_phase(smoke: tuple[dict, Path]) -> None:
    r, _ = smoke
    build = r["podsearch_build"]
    assert build["episodes"] == 60 and build["errors"] == 0
    assert set(build["seconds"]) == set(PHASES)
    assert all(v >= 0 for v in build["seconds"].values()) and build["seconds"]["index"] > 0
    assert sum(build["seconds"].values()) <= build["total_s"] * 1.05
    assert all(_positive(build[k]) for k in ("index_bytes", "model_bytes", "catalog_bytes"))
    assert _positive(build["memory_mb"]["peak"])
    assert _positive(r["whoosh_single_writer"]["index_s"]) and r["whoosh_single_writer"]["procs"] == 1
    inc = r["podsearch_incremental"]
    assert inc["new"] == 10 and inc["index"]["added"] == 10 and _positive(inc["total_s"])
    for peer in ("fts5_build", "tantivy_build"):
        assert _positive(r[peer]["total_s"]) and _positive(r[peer]["bytes"])


def test_latencies_are_sane(smoke: tuple[dict, Path]) -> None:
    r, _ = smoke
    for key in LATENCIES:
        s = r[key]
        assert s["n"] > 0 and 0 < s["p50"] <= s["p99"] <= s["max"], key
    assert r["search_http"]["errors"] == 0
    assert r["similar_http"]["errors"] == 0 and r["similar_http"]["empty"] < r["similar_http"]["n"]
    assert _positive(r["server_memory_mb"]["rss"])


def test_every_engine_got_the_same_documents_and_questions(smoke: tuple[dict, Path]) -> None:
    totals = smoke[0]["per_query_totals"]
    assert len(totals) >= 30
    # A quoted phrase means the same to all three engines: the counts must agree where it occurs.
    phrase = totals['"open source"']
    assert phrase["podsearch"] > 0 and phrase["podsearch"] == phrase["fts5"] == phrase["tantivy"]
    for engine in ("podsearch", "fts5", "tantivy"):
        assert sum(1 for t in totals.values() if isinstance(t[engine], int) and t[engine] > 0) >= 5, engine


def test_figures_targets_and_plots(smoke: tuple[dict, Path]) -> None:
    r, work = smoke
    for name, value in r["figures"].items():
        assert value is None or (isinstance(value, (int, float)) and math.isfinite(value)), name
    assert all(r["figures"][k] is not None for k in r["targets"])
    assert set(r["targets"]) >= {"search_http_p50_ms", "similar_http_p50_ms", "server_rss_mb"}
    out = work / "png"
    done = subprocess.run([sys.executable, "-m", "bench.report", "--results", str(work / "results"), "--out", str(out)],
                          cwd=ROOT, check=True, capture_output=True, text=True, timeout=120)
    assert "| episodes | 60 |" in done.stdout
    if "buckets" in r.get("search_profile", {}):
        assert "| matching and BM25F scoring (Whoosh) |" in done.stdout
    for name in ("build.png", "search.png", "similar.png", "per_query.png"):
        assert (out / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_profile_says_where_the_server_spends_its_time(smoke: tuple[dict, Path]) -> None:
    """py-spy sampled the real server through the query mix; the samples are bucketed and the flame graph kept."""
    r, work = smoke
    prof = r["search_profile"]
    if "could not attach" in prof.get("skipped", ""):
        pytest.skip(f"this machine does not let py-spy read another process: {prof['skipped']}")
    assert "skipped" not in prof, prof.get("skipped")
    buckets = prof["buckets"]
    assert prof["samples"] > 0 and sum(b["samples"] for b in buckets.values()) == prof["samples"]
    assert buckets["matching and BM25F scoring (Whoosh)"]["samples"] > 0
    assert abs(sum(b["share"] for b in buckets.values()) - 1) < 0.01
    assert (work / "results" / prof["flamegraph"]).read_text()[:200].lstrip().startswith("<?xml")


def test_profile_buckets_take_the_innermost_named_frame(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(ROOT))
    from bench.profile import OTHER, OUTSIDE, bucket_of, shares

    web = "Thread.run (threading.py:982);WSGITask.execute (waitress/task.py:435);Flask.wsgi_app (flask/app.py:1511)"
    search = web + ";search (podsearch/web/api.py:87);Library.search (podsearch/service.py:100)"
    engine = search + ";WhooshEngine.search (podsearch/engines/whoosh/__init__.py:216)"
    scoring = engine + (";run (podsearch/engines/whoosh/scoring.py:70);page (podsearch/engines/whoosh/scoring.py:80)"
                        ";Collector.run (whoosh/collectors.py:150)")
    moments = search + ";search_answer (podsearch/answers.py:140);_hit (podsearch/answers.py:160);" \
        "find_moments (podsearch/answers.py:300)"
    highlighted = moments + ";highlight (podsearch/answers.py:200);_match_spans (podsearch/answers.py:220)"
    assert bucket_of(scoring) == "matching and BM25F scoring (Whoosh)"
    numpy = engine + ";_page (podsearch/engines/whoosh/__init__.py:380);Page.__init__ (podsearch/engines/whoosh/fast.py:355)"
    assert bucket_of(numpy + ";Evaluator.run (podsearch/engines/whoosh/fast.py:150)") == "matching and BM25F scoring (Whoosh)"
    assert bucket_of(moments + ";SpokenAnalyzer.texts (podsearch/engines/whoosh/analysis.py:245)") == \
        "moments (finding the segments)"
    assert bucket_of(highlighted) == "highlighting (snippets, titles, moments)"
    counts = search + ";search_answer (podsearch/answers.py:140);WhooshEngine.segment_counts " \
        "(podsearch/engines/whoosh/__init__.py:349);segment_counts (podsearch/engines/whoosh/segments.py:22);" \
        "doc_positions (podsearch/engines/whoosh/fast.py:131)"
    assert bucket_of(counts) == "moments (finding the segments)"
    tables = search + ";search_answer (podsearch/answers.py:140);OpenSearchEngine.segment_counts " \
        "(podsearch/engines/opensearch/__init__.py:780);read_table (podsearch/engines/opensearch/segments.py:90)"
    assert bucket_of(tables) == "moments (finding the segments)"
    assert bucket_of(search) == OTHER
    assert bucket_of(web) == OUTSIDE
    counted = shares(f"{scoring} 3\n{web} 1\n")
    assert counted["samples"] == 4 and counted["buckets"][OUTSIDE] == {"samples": 1, "share": 0.25}


def test_a_site_folder_without_feeds_is_a_clear_error(tmp_path: Path) -> None:
    """A wrong ``--site`` (or ``--shows``) ingested nothing, cached an empty corpus, and failed later in the
    resampling with "empty range for randrange()"; it is now said at once, and nothing is cached."""
    work = tmp_path / "work"
    done = subprocess.run([sys.executable, "-m", "bench.run", "--corpus", "60", "--site", str(tmp_path / "nowhere"),
                           "--steps", "build", "--work", str(work), "--results", str(tmp_path / "r.json")],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode != 0
    assert f"no site corpus feeds in {tmp_path / 'nowhere' / 'feeds'}" in done.stderr
    assert "Traceback" not in done.stderr
    assert not (work / "site.jsonl").exists()
