"""The OpenSearch engine on its own: a two-node cluster (two shards, a replica each) that serves every search
while a node stops, rebuilds swapped in by alias, the incremental sync, and errors that name the fix. Its search
behaviour is checked with Whoosh's by the parity suite (test_search.py, test_api.py)."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest
from conftest import require_opensearch_launcher, sample_config
from opensearch_node import Cluster, json_node, request

from podsearch.catalog import Catalog
from podsearch.documents import CatalogDocuments
from podsearch.engines import open_engine
from podsearch.engines.opensearch import STAMP_SECONDS
from podsearch.errors import EngineUnavailable, IndexMissing
from podsearch.requests import SearchRequest
from podsearch.service import Library

pytestmark = pytest.mark.opensearch


@pytest.mark.slow
def test_a_two_node_cluster_serves_every_search_while_a_node_stops(sample_data_template: Path, tmp_path: Path) -> None:
    require_opensearch_launcher()
    with Cluster.start(tmp_path / "cluster", nodes=2) as cluster:
        settings = {"engine": "opensearch", "opensearch_url": ",".join(n.url for n in cluster.nodes),
                    "opensearch_index": "two-nodes", "opensearch_shards": "2", "opensearch_replicas": "1"}
        config = sample_config(sample_data_template, settings)
        engine = open_engine(sample_data_template, config)
        with Catalog.in_dir(sample_data_template) as catalog:
            engine.sync(CatalogDocuments(catalog), full=True)
        status, shards = request(f"{cluster.url}/_cat/shards/two-nodes?format=json")
        assert len(shards) == 4 and {s["state"] for s in shards} == {"STARTED"}
        assert {s["node"] for s in shards if s["prirep"] == "p"} | {s["node"] for s in shards} == {"node-1", "node-2"}

        lib = Library.from_config(config)
        expected = {q: lib.search(SearchRequest(q=q)).total for q in ("bees", "sourdough starter", "")}
        assert all(expected.values())
        failures: list[str] = []
        done: list[float] = []
        stop = threading.Event()

        def search() -> None:
            while not stop.is_set():
                for q, total in expected.items():
                    try:
                        result = lib.search(SearchRequest(q=q))
                        if result.total != total or not result.hits:
                            failures.append(f"{q!r}: {result.total} hits, {len(result.hits)} shown")
                    except Exception as e:  # any error is a failed search
                        failures.append(f"{q!r}: {e!r}")
                    done.append(time.monotonic())

        searchers = [threading.Thread(target=search) for _ in range(2)]
        for t in searchers:
            t.start()
        time.sleep(3)
        stopped_at = time.monotonic()
        cluster.nodes[1].stop()
        time.sleep(5)
        stop.set()
        for t in searchers:
            t.join(120)
        lib.close()
        before = sum(1 for t in done if t < stopped_at)
        after = sum(1 for t in done if t >= stopped_at)
        assert failures == []
        assert before > 0 and after > 0, (before, after)
        status, health = request(f"{cluster.url}/_cluster/health")
        assert health["number_of_nodes"] == 1


def test_rebuild_swaps_the_alias_and_sync_sends_only_changes(opensearch: Cluster, sample_data: Path, tmp_path: Path) -> None:
    config = sample_config(sample_data, {"engine": "opensearch", "opensearch_url": opensearch.url,
                                          "opensearch_index": "swap"})
    engine = open_engine(sample_data, config)
    assert not engine.exists()
    with pytest.raises(IndexMissing, match="podsearch reindex"):
        engine.doc_count()
    with Catalog.in_dir(sample_data) as catalog:
        source = CatalogDocuments(catalog)
        assert engine.sync(source)["full"] == 1
        first = engine.stamp()
        assert engine.doc_count() == 36 and engine.size_bytes() > 0
        assert engine.sync(CatalogDocuments(catalog)) == {"added": 0, "updated": 0, "removed": 0}
        hashes = dict(catalog.hashes())
        gone = sorted(hashes)[0]
        del hashes[gone]
        changed = sorted(hashes)[1]
        hashes[changed] = "another hash"
        assert engine.sync(CatalogDocuments(catalog, hashes)) == {"added": 0, "updated": 1, "removed": 1}
        assert engine.doc_count() == 35 and engine.stamp() != first
        before = set(request(f"{opensearch.url}/_alias/swap")[1])
        assert engine.sync(CatalogDocuments(catalog), full=True)["full"] == 1
        after = set(request(f"{opensearch.url}/_alias/swap")[1])
        assert len(after) == 1 and after != before  # a new index behind the alias, the old one deleted
        assert request(f"{opensearch.url}/{before.pop()}")[0] == 404
        assert engine.doc_count() == 36


def test_segment_tables_are_those_of_the_served_index_through_syncs_and_a_failed_rebuild(opensearch: Cluster,
                                                                                         sample_data: Path) -> None:
    """Each document holds its transcript's table of segment terms (schema 11, ``engines/opensearch/segments.py``),
    from which a page's moments are chosen as on Whoosh (until 6 December 2026 this engine gave no counts, and every
    hit's segments were read and analysed: 0.46 s of CPU for a page of 100 hits, Whoosh's 0.13 s). The counts are
    those reading the segments gives; an episode an incremental sync sends again has the table of its new text; a
    rebuild that fails before its swap leaves the served index's tables serving; a document without a table (an
    index written before schema 11) is left out, its moments found by reading."""
    import sqlite3
    from urllib.parse import quote

    from podsearch import answers, languages
    from podsearch.documents import episode_document
    from podsearch.engines.opensearch import document_body
    from podsearch.engines.opensearch.segments import SEGMENT_TERMS

    config = sample_config(sample_data, {"engine": "opensearch", "opensearch_url": opensearch.url,
                                         "opensearch_index": "tables"})
    engine = open_engine(sample_data, config)

    def reading(catalog: Catalog, ids: list[str], terms: set[str]) -> dict[str, list[int]]:
        """Each episode's moments as reading every segment finds them."""
        eps = catalog.episodes_by_id(ids, segments_of=ids)
        return {i: [m.segment for m in answers.find_moments(ep.segments, terms, engine.analyzer(
                languages.primary(ep.language)))] for i, ep in eps.items() if ep.segments}

    def counted(ids: list[str], terms: set[str]) -> dict[str, list[int]]:
        return {i: answers.best_segments(c) for i, c in engine.segment_counts(ids, terms).items()}

    with Catalog.in_dir(sample_data) as catalog:
        engine.sync(CatalogDocuments(catalog), full=True)
        ids = sorted(catalog.hashes())
        for q in ("starter", "sourdough starter", "bees waggle dance", "rye bread", "enigma machine rotors"):
            terms = set(engine.analyzer("").texts(q))
            assert counted(ids, terms) == reading(catalog, ids, terms), q
        terms = set(engine.analyzer("").texts("sourdough starter"))
        before = counted(ids, terms)
        changed = next(i for i in ids if before.get(i))
        assert len(before) == len(reading(catalog, ids, terms)) > 10

        # an incremental sync: the changed episode's table is its new text's
        db = sqlite3.connect(catalog.path)
        with db:
            db.execute("UPDATE segments SET text = 'nothing to see here' WHERE episode_id = ? AND "
                       "(lower(text) LIKE '%starter%' OR lower(text) LIKE '%sourdough%')", (changed,))
        db.close()
        hashes = dict(catalog.hashes())
        hashes[changed] = "another hash"
        assert engine.sync(CatalogDocuments(catalog, hashes)) == {"added": 0, "updated": 1, "removed": 0}
        assert counted([changed], terms) == reading(catalog, [changed], terms) == {changed: []}
        after = counted(ids, terms)
        assert after == {**before, changed: []}

        # a rebuild that fails before its swap (a reindex killed or refused midway): the served tables still serve
        class Failing(CatalogDocuments):
            def documents(self, wanted):  # type: ignore[no-untyped-def]
                for n, doc in enumerate(super().documents(wanted)):
                    if n == 20:
                        raise RuntimeError("the reindex stopped here")
                    yield doc

        with pytest.raises(RuntimeError):
            engine.sync(Failing(catalog, hashes), full=True)
        assert counted(ids, terms) == after

        # the deadline bounds the count as on Whoosh: a page's first hits read a query's words past it, the others none
        past = time.monotonic() - 1
        assert all(c.complete for c in engine.segment_counts(ids, terms, past).values())
        none = engine.segment_counts(ids, terms, past, always=0)
        assert set(none) == set(after) and not any(c.complete or len(c.indexes) for c in none.values())

        # a document written without its table (by podsearch before schema 11): left out, read instead
        other = next(i for i in ids if after.get(i) and i != changed)
        body = document_body(episode_document(catalog.episode(other), "", hashes[other]))
        assert SEGMENT_TERMS in body
        del body[SEGMENT_TERMS]
        concrete = sorted(request(f"{opensearch.url}/_alias/tables")[1])[-1]
        status, written = request(f"{opensearch.url}/{concrete}/_doc/{quote(other, safe='')}?refresh=true", "PUT", body)
        assert status in (200, 201), written
        assert set(engine.segment_counts(ids, terms)) == set(after) - {other}
        lib = Library.from_config(config)
        try:
            served = lib.search(SearchRequest(q="sourdough starter", per_page=50)).to_dict()
            hit = next(h for h in served["hits"] if h["id"] == other)
            assert [m["segment"] for m in hit["moments"]] == after[other]
        finally:
            lib.close()

        # an index of the schema before the tables is rebuilt by the next sync, tables and all
        assert request(f"{opensearch.url}/{concrete}/_mapping", "PUT", {"_meta": {"podsearch_schema": "10"}})[0] == 200
        assert engine.sync(CatalogDocuments(catalog, hashes))["full"] == 1
        assert counted(ids, terms) == after


def test_an_answer_past_its_deadline_says_so_on_opensearch(opensearch: Cluster, sample_data: Path) -> None:
    """A search whose answer came back past its deadline (a node slow to answer, a search that began late) was not
    said to be cut short on OpenSearch: its ``timeout`` is best effort, and the shards had answered "timed_out":
    false. Whoosh says so of matching that ran past the deadline, and the answer tells the person; so does
    OpenSearch's now, and it stops there (no any-word reading, no spelling suggestion past the deadline)."""
    from podsearch.engines.base import EngineQuery

    config = sample_config(sample_data, {"engine": "opensearch", "opensearch_url": opensearch.url,
                                         "opensearch_index": "late", "search_deadline": "1"})
    lib = Library.from_config(config)
    with Catalog.in_dir(sample_data) as catalog:
        lib.engine.sync(CatalogDocuments(catalog), full=True)
    try:
        whole = lib.engine.search(EngineQuery(text="volcano", deadline=time.monotonic() + 30))
        assert whole.total and not whole.timed_out
        client, searched = lib.engine.client, lib.engine.client.search
        late: list[float] = []

        def slow(index: str, body: dict, params: dict | None = None) -> dict:  # the answer's searches come late
            answer = searched(index, body, params)
            deadline = getattr(client._within, "deadline", None)
            if "from" in body and deadline is not None:
                time.sleep(max(0.0, deadline + 0.05 - time.monotonic()))
                late.append(time.monotonic() - deadline)
            return answer

        client.search = slow
        cut = lib.search(SearchRequest(q="volcano"))
        assert late and cut.timed_out and cut.hits and cut.to_dict()["total_relation"] == "gte"
        assert len(late) == 1  # (nothing more was asked for this answer past its deadline)
        assert lib.load.snapshot()["timed_out"] == 1
    finally:
        lib.close()
        request(f"{opensearch.url}/late-*", "DELETE")


def test_an_unreachable_cluster_is_a_clear_error(sample_data: Path) -> None:
    from opensearch_node import free_port

    config = sample_config(sample_data, {"engine": "opensearch", "opensearch_url": f"http://127.0.0.1:{free_port()}",
                                         "opensearch_timeout": "2"})
    with pytest.raises(EngineUnavailable, match="unavailable"):
        open_engine(sample_data, config).exists()


def test_a_refused_connection_to_the_only_node_fails_at_once(sample_data: Path) -> None:
    """Nothing listens at the one node's address (it is stopped): a request was tried 3 times more, 1.75 s of pauses,
    before its 503. Now it fails at once, saying the connection was refused; a search is a 503 that says so, never a
    500. With other nodes to try, the tries after a pause stay."""
    from opensearch_node import free_port

    from podsearch.engines.opensearch.client import ClientOptions, OpenSearchClient
    from podsearch.web.app import create_app

    one = OpenSearchClient(ClientOptions(urls=(f"http://127.0.0.1:{free_port()}",)))
    started = time.monotonic()
    with pytest.raises(EngineUnavailable, match="connection refused"):
        one.request("GET", "/")
    assert time.monotonic() - started < 0.5

    two = OpenSearchClient(ClientOptions(urls=(f"http://127.0.0.1:{free_port()}", f"http://127.0.0.1:{free_port()}"),
                                         backoff=0.1))
    started = time.monotonic()
    with pytest.raises(EngineUnavailable, match="unavailable"):
        two.request("GET", "/")
    assert time.monotonic() - started >= 0.1 + 0.2 + 0.4  # (three pauses, then every node tried again)

    config = sample_config(sample_data, {"engine": "opensearch", "opensearch_url": f"http://127.0.0.1:{free_port()}"})
    client = create_app(config).test_client()
    for path in ("/api/v1/search?q=volcano", "/api/v1/suggest?q=vol", "/readyz"):
        started = time.monotonic()
        answer = client.get(path)
        assert answer.status_code == 503, path
        assert time.monotonic() - started < 1.0, path
    assert "connection refused" in client.get("/api/v1/search?q=bread").get_json()["error"]["message"]


def test_a_search_whose_context_was_lost_with_a_node_is_asked_again() -> None:
    """When a node stops between a search's query and fetch phases, OpenSearch answers 404
    search_phase_execution_exception "No search context found" (seen in the two-node test above): the client asks
    again, as for a lost shard; a 404 for a missing index is still an error at once. A server on 127.0.0.1 answers
    with the node's own bodies."""
    from podsearch.engines.opensearch.client import ClientOptions, OpenSearchClient
    from podsearch.errors import EngineRequestError

    lost = {"error": {"root_cause": [{"type": "search_context_missing_exception",
                                      "reason": "No search context found for id [112]"}],
                      "type": "search_phase_execution_exception", "reason": "all shards failed",
                      "phase": "fetch"}, "status": 404}
    missing = {"error": {"type": "index_not_found_exception", "reason": "no such index [gone]"}, "status": 404}
    ok = {"took": 1, "_shards": {"total": 2, "successful": 2, "failed": 0}, "hits": {"total": {"value": 0}, "hits": []}}
    asked: list[str] = []

    def answer(_method: str, path: str) -> tuple[int, dict]:
        asked.append(path.split("?")[0])
        return ((404, missing) if path.startswith("/gone/")
                else (404, lost) if asked.count("/live/_search") == 1 else (200, ok))

    with json_node(answer) as url:
        client = OpenSearchClient(ClientOptions(urls=(url,), backoff=0.01))
        assert client.search("live", {"query": {"match_all": {}}}) == ok
        assert asked == ["/live/_search", "/live/_search"]
        with pytest.raises(EngineRequestError, match="index_not_found_exception|no such index"):
            client.search("gone", {"query": {"match_all": {}}})
        assert asked.count("/gone/_search") == 1
        client.close()


@pytest.fixture
def hung_node():
    """A node that takes connections and requests and never answers (a stopped process: `kill -STOP`)."""
    import socket

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)  # (never accepted: the kernel completes the connections and keeps what they send)
    yield f"http://127.0.0.1:{listener.getsockname()[1]}"
    listener.close()


def test_a_hung_node_holds_a_search_no_longer_than_its_deadline(hung_node: str) -> None:
    """Stopped with SIGSTOP, a node held every search (and /readyz, /similar) for 122 s: four tries of the 30 s
    read timeout. A search now waits until its deadline and a second more; a request without one is not tried
    again after a read timeout (a hung node is no overloaded one)."""
    from podsearch.engines.base import EngineQuery
    from podsearch.engines.opensearch import OpenSearchEngine
    from podsearch.engines.opensearch.client import ClientOptions, OpenSearchClient

    engine = OpenSearchEngine(ClientOptions(urls=(hung_node,), timeout=30.0, backoff=0.01))
    started = time.monotonic()
    with pytest.raises(EngineUnavailable, match="did not answer within the search's deadline|no answer within"):
        engine.search(EngineQuery(text="volcano", deadline=time.monotonic() + 0.5))
    assert time.monotonic() - started < 4.0
    client = OpenSearchClient(ClientOptions(urls=(hung_node,), timeout=1.0, retries=3, backoff=0.01))
    started = time.monotonic()
    with pytest.raises(EngineUnavailable, match=r"no answer within 1 s"):
        client.request("GET", "/_cluster/health")
    assert time.monotonic() - started < 2.5  # (one try, not four)


def test_a_hung_node_holds_typeahead_and_readyz_no_longer_than_their_bounds(opensearch: Cluster,
                                                                            sample_data: Path) -> None:
    """Typeahead and /readyz asked the cluster with no deadline: a node stopped (SIGSTOP) right after the served
    index's stamp was read held each for ``opensearch_timeout`` (30 s), and four such requests, anyone's, held every
    worker. Typeahead now gives up at the search's deadline (and the client's second of grace), /readyz's count at
    the stamp's 3 s, each a 503 that says why."""
    from podsearch.engines.opensearch import STAMP_TIMEOUT
    from podsearch.engines.opensearch.client import GRACE

    config = sample_config(sample_data, {"engine": "opensearch", "opensearch_url": opensearch.url,
                                          "opensearch_index": "hung-typeahead", "opensearch_timeout": "20",
                                          "search_deadline": "0.5"})
    lib = Library.from_config(config)
    with Catalog.in_dir(sample_data) as catalog:
        lib.engine.sync(CatalogDocuments(catalog), full=True)
    node = opensearch.nodes[0]
    try:
        for ask, bound, said in ((lambda: lib.suggest("bee"), 0.5 + GRACE, "deadline|no answer within"),
                                 (lib.ready, STAMP_TIMEOUT, "no answer within 3 s")):
            assert lib.suggest("sour") and lib.ready()["episodes"] == 36  # (the stamp read now: fresh for a second)
            with node.paused():
                started = time.monotonic()
                with pytest.raises(EngineUnavailable, match=said):
                    ask()
                waited = time.monotonic() - started
            assert waited < bound + 2.0 < 20, (ask, waited)  # (not the 20 s of opensearch_timeout)
            time.sleep(1.1)  # (the failure is said again for a second)
        assert lib.suggest("sour") and lib.ready()["episodes"] == 36  # back with the node
    finally:
        lib.close()


def test_a_hung_node_holds_a_pages_segment_tables_no_longer_than_the_searchs_deadline(opensearch: Cluster,
                                                                                      sample_data: Path) -> None:
    """The hits' tables of segment terms (one ``_mget``) waited the stamp's 3 s whatever the search's deadline: a slow
    node held the page past it, then every hit's segments were read from the catalog. It waits the time the search
    has left now (a floor past it), and the hits whose tables did not come have no moments, the answer cut short."""
    from podsearch.engines.base import EngineQuery
    config = sample_config(sample_data, {"engine": "opensearch", "opensearch_url": opensearch.url,
                                          "opensearch_index": "hung-tables"})
    engine = open_engine(sample_data, config)
    with Catalog.in_dir(sample_data) as catalog:
        engine.sync(CatalogDocuments(catalog), full=True)
    try:
        found = engine.search(EngineQuery(text="volcano", deadline=time.monotonic() + 30))
        ids, terms = [h.id for h in found.hits], found.terms["transcript"]
        assert ids and terms and all(c.complete for c in engine.segment_counts(ids, terms).values())
        for left in (0.4, -0.2):  # (time left, or the deadline passed already: the floor)
            # the stamp read now, fresh for a second, so that the tables alone wait for the node (a stamp kept from
            # before could expire while the node is stopped, and its read wait the stamp's 3 s: CI, once)
            time.sleep(STAMP_SECONDS)
            engine.stamp()
            with opensearch.nodes[0].paused():
                started = time.monotonic()
                counts = engine.segment_counts(ids, terms, deadline=started + left)
                waited = time.monotonic() - started
            assert waited < max(left, 0.25) + 0.6, waited  # (TABLES_FLOOR, 0.25 s; not the stamp's 3 s)
            assert set(counts) == set(ids)
            if not all(c.complete for c in counts.values()):  # (cut short: counts of no segment, no moments;
                # in one CI run of the whole suite the node still answered the tables in time, so both may be seen)
                assert not any(c.complete or len(c.indexes) for c in counts.values())
    finally:
        request(f"{opensearch.url}/hung-tables-*", "DELETE")


def test_one_request_at_a_time_waits_for_a_hung_nodes_stamp(opensearch: Cluster, sample_data: Path) -> None:
    """Every request (an episode page's cache version too) read the served index's stamp once it was a second old:
    with a stopped node each waited the stamp's 3 s, so four held every worker and /healthz waited behind them. One
    reads it now; the others meanwhile answer with the last stamp, or the failure of the last read."""
    config = sample_config(sample_data, {"engine": "opensearch", "opensearch_url": opensearch.url,
                                          "opensearch_index": "hung-stamp"})
    engine = open_engine(sample_data, config)
    with Catalog.in_dir(sample_data) as catalog:
        engine.sync(CatalogDocuments(catalog), full=True)
    known = engine.stamp()
    outcome: list[object] = []

    def read() -> None:
        try:
            outcome.append(engine.stamp())
        except EngineUnavailable as exc:
            outcome.append(exc)

    with opensearch.nodes[0].paused():
        time.sleep(1.1)  # (the stamp is no longer fresh)
        reader = threading.Thread(target=read)
        reader.start()
        time.sleep(0.5)  # (the reader waits for the node: 3 s)
        assert reader.is_alive()
        assert engine.stamp() == known  # at once, while the reader waits
        assert reader.is_alive()
        reader.join(10)
        assert len(outcome) == 1 and isinstance(outcome[0], EngineUnavailable)
        with pytest.raises(EngineUnavailable):  # the last read's failure, said by the others too
            engine.stamp()
    time.sleep(1.1)
    assert engine.stamp() == known  # read again with the node back


def test_did_you_mean_stops_at_the_deadline_on_opensearch(opensearch: Cluster, sample_data: Path) -> None:
    """"Did you mean" asked the cluster with no deadline: 12 typos made 85 requests one after the other, which ended
    0.7 s past a 0.3 s deadline (site corpus), and the answer said it was in time. Past the deadline the vocabulary
    now asks the cluster nothing and knows no word, and a search whose suggestion it cut says ``timed_out``."""
    from opensearch_node import free_port

    from podsearch.engines.base import EngineQuery
    from podsearch.engines.opensearch import OpenSearchEngine, OpenSearchVocabulary
    from podsearch.engines.opensearch.client import ClientOptions
    from podsearch.engines.spelling import suggestion

    config = sample_config(sample_data, {"engine": "opensearch", "opensearch_url": opensearch.url,
                                          "opensearch_index": "spelling-deadline"})
    engine = open_engine(sample_data, config)
    with Catalog.in_dir(sample_data) as catalog:
        engine.sync(CatalogDocuments(catalog), full=True)
    in_time = engine.search(EngineQuery(text="fermentaton", deadline=time.monotonic() + 60))
    assert in_time.suggestion == "fermentation" and not in_time.timed_out
    vocabulary = OpenSearchVocabulary(engine, ["en"], deadline=time.monotonic() + 60)

    def found(words: str) -> int:  # (the episodes holding every word: those that say "fermentation")
        return int("fermentation" in words)

    assert vocabulary.held(["fermentation"])["fermentation"] > 0
    assert "fermentation" in vocabulary.candidates(["fermentaton"])["fermentaton"]
    assert suggestion("fermentaton", vocabulary, found, None) == "fermentation" and not vocabulary.expired()

    # past the deadline: nothing asked (a cluster that is not there would raise EngineUnavailable), no word known
    gone = OpenSearchEngine(ClientOptions(urls=(f"http://127.0.0.1:{free_port()}",), retries=0))
    late = OpenSearchVocabulary(gone, ["en"], deadline=time.monotonic() - 0.001)
    assert late.expired()
    assert late.held(["fermentation"]) == {} and late.candidates(["fermentaton"]) == {}
    assert late.languages_of(["fermentation"]) == {"fermentation": []} and not late.in_language([("fermentation", None)])
    assert suggestion("fermentaton", late, found, None) == ""


def test_with_the_cluster_down_what_does_not_search_is_still_answered(sample_data: Path) -> None:
    """/similar, an episode's JSON and the shows come from the catalog and the model, not the cluster; with the
    cluster down they were 503s, because the cache's version asked the cluster for its stamp. A search is a 503
    that says so."""
    from urllib.parse import quote

    from opensearch_node import free_port

    from podsearch.web.app import create_app

    config = sample_config(sample_data, {"engine": "opensearch", "opensearch_url": f"http://127.0.0.1:{free_port()}",
                                         "opensearch_timeout": "2"})
    client = create_app(config).test_client()
    episode = Catalog(sample_data / "catalog.sqlite").episode_ids()[0]
    for path in (f"/similar/{quote(episode, safe='')}", f"/api/episodes/{quote(episode, safe='')}", "/api/shows"):
        assert client.get(path).status_code == 200, path
    down = client.get("/api/search?q=volcano")
    assert down.status_code == 503 and "unavailable" in down.get_json()["error"]["message"]


def test_an_index_name_opensearch_refuses_is_a_setting_refused(runner, sample_data: Path) -> None:
    """`PODSEARCH_OPENSEARCH_INDEX=Bad_Name podsearch search x` exited 1, as a failure; a refused setting exits 2."""
    from podsearch.cli import main

    result = runner.invoke(main, ["--data", str(sample_data), "search", "x"],
                           env={"PODSEARCH_ENGINE": "opensearch", "PODSEARCH_OPENSEARCH_URL": "http://127.0.0.1:9",
                                "PODSEARCH_OPENSEARCH_INDEX": "Bad_Name"})
    assert result.exit_code == 2 and "PODSEARCH_OPENSEARCH_INDEX: bad value for opensearch_index" in result.output


def test_the_server_starts_with_the_cluster_down_and_says_it_is_not_ready(sample_data: Path, caplog) -> None:
    """``serve`` warms the engine before it listens: with the cluster down at its start the warm raised
    EngineUnavailable and serve ended in a traceback (5 December 2026), where /readyz should say 503 and what does
    not search be answered. Now the warm says it once in the log, as a missing index."""
    import logging

    from opensearch_node import free_port

    from podsearch.web.app import create_app

    config = sample_config(sample_data, {"engine": "opensearch", "opensearch_url": f"http://127.0.0.1:{free_port()}",
                                         "opensearch_timeout": "2"})
    app = create_app(config)
    library = app.extensions["podsearch"]
    assert isinstance(library, Library)
    with caplog.at_level(logging.INFO, logger="podsearch.service"):
        library.warm()
        library.warm()
    said = [r for r in caplog.records if "nothing to warm" in r.getMessage()]
    assert len(said) == 1 and said[0].levelno == logging.ERROR and "unavailable" in said[0].getMessage()
    ready = app.test_client().get("/readyz")
    assert ready.status_code == 503 and ready.get_json()["error"]["code"] == "engine_unavailable"


def test_stats_with_the_cluster_down_prints_every_other_figure_and_exits_1(runner, sample_data: Path) -> None:
    """As for a Whoosh index that cannot be read: the catalog's and the model's figures, ``index_error`` saying the
    cluster is unavailable, exit 1. Until 5 December 2026 stats said that line alone, and ``--json`` printed
    nothing a monitor could read."""
    import json

    from opensearch_node import free_port

    from podsearch.cli import main

    env = {"PODSEARCH_ENGINE": "opensearch", "PODSEARCH_OPENSEARCH_URL": f"http://127.0.0.1:{free_port()}",
           "PODSEARCH_OPENSEARCH_TIMEOUT": "2"}
    result = runner.invoke(main, ["--data", str(sample_data), "stats", "--json"], env=env)
    assert result.exit_code == 1, result.output
    figures = json.loads(result.stdout)
    assert figures["episodes"] == 36 and figures["engine"] == "opensearch" and figures["model_generation"]
    assert figures["index_documents"] == 0 and "unavailable" in figures["index_error"]
    text = runner.invoke(main, ["--data", str(sample_data), "stats"], env=env)
    assert text.exit_code == 1 and "episodes: 36" in text.output and "index: OpenSearch at" in text.output
