"""Full rebuilds within a memory budget (engines/whoosh/build.py): segments written whenever a writer's posting
pool is full and merged by streaming give the same index as one segment written at once, never spill runs to
disk, keep the scratch space near the final index, and leave no worker behind when the rebuild is killed."""

from __future__ import annotations

import json
import logging
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from whoosh import writing

import podsearch.engines.whoosh as engine_module
from podsearch.catalog import Catalog
from podsearch.config import load_config
from podsearch.documents import CatalogDocuments
from podsearch.engines.base import EngineQuery
from podsearch.engines.whoosh import WhooshEngine, build
from podsearch.errors import ConfigError
from podsearch.reindex import import_jsonl

ROOT = Path(__file__).resolve().parents[1]
QUERIES = ["python", "open source", '"open source"', "rust OR golang", "data*", "interview", "the", "music",
           "security podcast", "linux kernel", "kubernetes -docker"]


def _contents(engine: WhooshEngine) -> dict[str, Any]:
    """Everything a search reads, keyed by episode id rather than document number: stored fields, every
    posting (weight and positions), field lengths and totals, and the sortable columns."""
    with engine._index().searcher() as s:
        r = s.reader()
        ids = {d: f["id"] for d, f in r.iter_docs()}
        schema = r.schema
        scorable = [n for n in schema.names() if schema[n].scorable]
        sortable = [n for n in schema.names() if schema[n].column_type and r.has_column(n)]
        return {
            "stored": {ids[d]: f for d, f in r.iter_docs()},
            "postings": sorted((f, t, ids[d], w, v) for f, t, d, w, v in r.iter_postings()),
            "lengths": {(ids[d], f): r.doc_field_length(d, f) for d in ids for f in scorable},
            "field_totals": {f: r.field_length(f) for f in scorable},
            "columns": {f: {ids[d]: v for d, v in enumerate(r.column_reader(f))} for f in sortable},
            "doc_count": r.doc_count(),
        }


def _answers(engine: WhooshEngine, ties: bool = True) -> dict[str, Any]:
    """Each query's total, hits (all: the sample has 36 episodes) with scores, and facets. ``ties=False``: hits
    of equal score in id order (Whoosh orders them by document number, which a parallel build assigns in
    the order its workers happen to take the batches)."""
    out = {}
    for q in QUERIES:
        res = engine.search(EngineQuery(text=q, per_page=100))
        hits = [(h.id, round(h.score, 9)) for h in res.hits]
        out[q] = (res.total, hits if ties else sorted(hits, key=lambda h: (-h[1], h[0])), res.facets)
    return out


def _rebuild(data: Path, **engine_options: Any) -> WhooshEngine:
    engine = WhooshEngine(data, **engine_options)
    with Catalog.in_dir(data) as catalog:
        engine.sync(CatalogDocuments(catalog), full=True)
    return engine


class TinyPools:
    """After ``on()``: posting pools of 0 MB whatever the budget, so every document is spilled to a run of its
    own. Records the index folder's size when the postings are written (the moment the runs and the finished
    segment both exist) and fails the build if Whoosh's own pool ever spills a run of pickled postings.
    (Worker processes inherit the settings; their counts stay in them.)"""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.monkeypatch = monkeypatch
        self.peak = self.runs = 0

    def on(self) -> None:
        patch = self.monkeypatch.setattr
        patch(build.BuildLimits, "for_memory",
              classmethod(lambda cls, memory, procs, batch=50: cls(procs=procs, pool_mb=0, batch=batch)))
        save, write = build._TermPool.save, build.write_postings

        def saving(pool: Any) -> None:
            self.runs += bool(pool.terms)
            save(pool)

        def writing_postings(fieldwriter: Any, *args: Any, **kwargs: Any) -> None:
            write(fieldwriter, *args, **kwargs)
            folder = Path(fieldwriter._storage.folder)
            self.peak = max(self.peak, _folder_bytes(folder))

        def no_runs(pool: Any) -> Any:
            raise AssertionError("Whoosh's posting pool spilled a run to disk")

        patch(build._TermPool, "save", saving)
        patch(build, "write_postings", writing_postings)
        patch(writing.PostingPool, "_new_run", no_runs)


@pytest.fixture
def tiny_pools(monkeypatch: pytest.MonkeyPatch) -> TinyPools:
    return TinyPools(monkeypatch)


def _folder_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def test_many_small_segments_merged_are_the_one_segment_index(sample_data: Path, tiny_pools: TinyPools) -> None:
    one = _rebuild(sample_data)
    assert len(one._index()._segments()) == 1
    expected, answers = _contents(one), _answers(one)
    assert expected["doc_count"] == 36 and len(expected["postings"]) > 10_000

    tiny_pools.on()
    small = _rebuild(sample_data)
    assert tiny_pools.runs == 36  # one run per episode, merged when the postings are written
    assert len(small._index()._segments()) == 1
    assert _contents(small) == expected
    assert _answers(small) == answers


def test_parallel_rebuild_in_small_segments_answers_as_one_segment(sample_data: Path, tiny_pools: TinyPools,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    answers = _answers(_rebuild(sample_data), ties=False)
    tiny_pools.on()
    monkeypatch.setattr(engine_module, "PARALLEL_FROM", 10)
    monkeypatch.setattr(engine_module, "BUILD_BATCH", 4)
    threads = threading.active_count()
    parallel = _rebuild(sample_data)  # two worker processes, each spilling runs and merging them
    assert threading.active_count() == threads  # the queues' threads gone: the fit after it may fork
    assert len(parallel._index()._segments()) == 2  # one per worker
    assert _answers(parallel, ties=False) == answers
    folder = parallel.generations.current()
    assert folder is not None and not any(p.suffix == ".run" for p in folder.rglob("*"))
    assert not (folder / "MAIN.tmp").exists()  # the temporary folder went with the writer


def test_scratch_space_stays_within_twice_the_final_index(sample_data: Path, tiny_pools: TinyPools) -> None:
    tiny_pools.on()
    engine = _rebuild(sample_data)
    final = engine.size_bytes()
    # 36 runs of one episode each and the segment written from them: the folder never held the index twice
    # over, although one-episode runs compress worst.
    assert tiny_pools.runs == 36
    assert 0 < tiny_pools.peak <= 2 * final, (tiny_pools.peak, final)


def test_memory_budget_sets_processes_and_pools() -> None:
    default = build.BuildLimits.for_memory(0, 2)
    assert (default.procs, default.pool_mb) == (2, 256)
    small = build.BuildLimits.for_memory(400, 2)  # too little for two writers: one, with what is left
    assert small.procs == 1 and build.POOL_MB_RANGE[0] <= small.pool_mb < 256
    roomy = build.BuildLimits.for_memory(8192, 2)
    assert (roomy.procs, roomy.pool_mb) == (2, build.POOL_MB_RANGE[1])
    for budget in (300, 600, 1000, 1500, 2048):
        limits = build.BuildLimits.for_memory(budget, 2)
        used = limits.procs * (build.BASE_MB + limits.pool_mb * build.POOL_RSS_FACTOR)
        used += build.PARENT_MB if limits.procs > 1 else 0
        assert used <= max(budget, build.BASE_MB + build.POOL_MB_RANGE[0] * build.POOL_RSS_FACTOR) + 1, budget


@pytest.mark.parametrize("raw, mb", [("0", 0), ("700", 700), ("512M", 512), ("2G", 2048), ("2gb", 2048), (1500, 1500)])
def test_build_memory_setting(raw: Any, mb: int) -> None:
    assert load_config({"build_memory": raw}, environ={}).build_memory == mb
    if isinstance(raw, str):
        assert load_config(environ={"PODSEARCH_BUILD_MEMORY": raw}).build_memory == mb


@pytest.mark.parametrize("raw", ["lots", "-5", "2T", "1.5G"])
def test_bad_build_memory_is_refused(raw: str) -> None:
    with pytest.raises(ConfigError, match="build_memory"):
        load_config(environ={"PODSEARCH_BUILD_MEMORY": raw})


def _episodes(n: int, segments: int) -> list[dict]:
    words = "otters beavers herons kingfishers muskrats voles stoats badgers".split()
    return [{"id": f"ep-{i}", "show": "Riverbank", "title": f"Episode {i}",
             "segments": [{"start": s * 10.0, "end": s * 10.0 + 9, "text": f"{words[(i + s) % 8]} and "
                           f"{words[(i * s) % 8]} number {i}-{s} " * 8} for s in range(segments)]}
            for i in range(n)]


def test_the_budget_reaches_the_rebuild(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    lines = tmp_path / "a.jsonl"
    lines.write_text("".join(json.dumps(e) + "\n" for e in _episodes(220, 2)))
    with caplog.at_level(logging.INFO, logger="podsearch.engines.whoosh"):
        import_jsonl(load_config({"data": str(tmp_path / "small"), "build_memory": "300M"}, environ={}), lines)
        import_jsonl(load_config({"data": str(tmp_path / "big")}, environ={}), lines)
    said = [r.getMessage() for r in caplog.records if "full rebuild" in r.getMessage()]
    assert len(said) == 2 and "1 writer process" in said[0] and "2 writer processes" in said[1], said


def _descendants(pid: int) -> set[int]:
    found, todo = set(), [pid]
    while todo:
        for task in Path(f"/proc/{todo.pop()}/task").glob("*/children"):
            try:
                kids = [int(c) for c in task.read_text().split()]
            except OSError:
                kids = []
            found.update(kids)
            todo.extend(kids)
    return found


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_a_killed_rebuild_leaves_no_worker_behind(tmp_path: Path) -> None:
    lines = tmp_path / "a.jsonl"
    lines.write_text("".join(json.dumps(e) + "\n" for e in _episodes(1500, 30)))
    script = ("import sys; from podsearch.config import load_config; from podsearch.reindex import import_jsonl; "
              "import_jsonl(load_config({'data': sys.argv[1]}, environ={}), sys.argv[2])")
    proc = subprocess.Popen([sys.executable, "-c", script, str(tmp_path / "data"), str(lines)], cwd=ROOT)
    try:
        deadline = time.monotonic() + 120
        workers: set[int] = set()
        while len(workers) < 2 and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.2)
            workers = _descendants(proc.pid)
        assert len(workers) >= 2, "the rebuild did not start its writer processes"
        time.sleep(1.0)  # the workers are busy with documents
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        deadline = time.monotonic() + 15
        while any(Path(f"/proc/{w}").exists() and "zombie" not in _state(w) for w in workers):
            assert time.monotonic() < deadline, "writer processes outlived the killed rebuild"
            time.sleep(0.2)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def _state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/status").read_text().split("State:", 1)[1].split("\n", 1)[0]
    except (OSError, IndexError):
        return "zombie"


def test_memory_option_of_import_bounds_the_rebuild(tmp_path: Path, runner: Any,
                                                    caplog: pytest.LogCaptureFixture) -> None:
    from podsearch.cli import main

    lines = tmp_path / "a.jsonl"
    lines.write_text("".join(json.dumps(e) + "\n" for e in _episodes(220, 2)))
    with caplog.at_level(logging.INFO, logger="podsearch.engines.whoosh"):
        result = runner.invoke(main, ["--data", str(tmp_path / "d"), "-q", "import", "--memory", "300M", str(lines)])
    assert result.exit_code == 0, result.output
    said = [r.getMessage() for r in caplog.records if "full rebuild" in r.getMessage()]
    assert len(said) == 1 and "1 writer process" in said[0], said
    bad = runner.invoke(main, ["--data", str(tmp_path / "e"), "-q", "import", "--memory", "lots", str(lines)])
    assert bad.exit_code == 2 and "build_memory" in bad.output, bad.output
    assert not (tmp_path / "e" / "catalog.sqlite").exists()


def test_fast_field_indexing_gives_whooshs_own_items(sample_data: Path) -> None:
    """The writers index the fields with positions from ``SpokenAnalyzer.texts`` (build._PositionsIndex) and the
    spelling field by remembered words (build._FrequencyIndex), not Whoosh's token-by-token ``word_values``: the
    same items, byte for byte, for every field of every sample episode and for text in other languages, CJK and
    marked text included."""
    from podsearch.engines.whoosh.analysis import MARK
    from podsearch.engines.whoosh.schema import make_schema, whoosh_fields

    schema = make_schema()
    fast = [name for name in schema.names() if build._positions_by_texts(schema[name])]
    assert {"title", "notes", "transcript"} <= set(fast) and "words" not in fast
    assert build._plain_frequencies(schema["words"]) and not build._plain_frequencies(schema["transcript"])
    fast.append("words")
    values = []
    with Catalog.in_dir(sample_data) as catalog:
        docs = CatalogDocuments(catalog)
        for doc in docs.documents(list(docs.hashes())):
            fields = whoosh_fields(doc)
            values += [(name, fields[name]) for name in fast if fields.get(name)]
    values += [("transcript", f"{MARK}de{MARK}Die Häuser und die Bäume, über das Wetter: und wieder und wieder"),
               ("transcript", f"{MARK}ja{MARK}東京でポッドキャストを聞く。東京 東京"),
               ("notes", "Don't stop: http/2, docker-sponsored, e-mail e-mail, l'homme, C++ and C#, 3.14 and 3.14"),
               ("notes", "𝐞𝐞𝐧 𝐚𝐟𝐥𝐞𝐯𝐞𝐫𝐢𝐧𝐠, İstanbul, die Straße nach Ørsted, æble, ½ and x², ÉCOLE")]
    assert len(values) > 100
    for name, value in values:
        field = schema[name]
        ours = build._FrequencyIndex if name == "words" else build._PositionsIndex
        assert list(ours(field.analyzer)(value)) == list(field.index(value)), (name, value[:80])
        if name == "notes":
            assert list(build._FrequencyIndex(schema["words"].analyzer)(value)) == list(schema["words"].index(value))
