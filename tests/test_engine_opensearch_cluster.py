"""The OpenSearch engine as the operator of a cluster meets it: several sites on one cluster, a rebuild whose replicas
take longer to place than a request may take, an index made read-only by a full disk (the flood-stage block). Each
on the session's real node; the walk that found them ran a three-node cluster and the site corpus."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from conftest import sample_config
from opensearch_node import Cluster, json_node, request

from podsearch.catalog import Catalog
from podsearch.documents import CatalogDocuments
from podsearch.engines import open_engine
from podsearch.requests import SearchRequest

pytestmark = pytest.mark.opensearch


def _engine(data: Path, cluster: Cluster, alias: str, **settings: str):
    return open_engine(data, sample_config(data, {"engine": "opensearch", "opensearch_url": cluster.url,
                                                  "opensearch_index": alias, **settings}))


def _served(cluster: Cluster, alias: str) -> list[str]:
    status, found = request(f"{cluster.url}/_alias/{alias}")
    return sorted(found) if status == 200 else []


def test_a_sites_cleanup_leaves_another_sites_indexes(opensearch: Cluster, sample_data_template: Path) -> None:
    """Two sites on one cluster, ``news`` and ``news-eu`` (one alias each, as docs/opensearch.md says). A reindex of
    ``news`` removes the index a killed rebuild of its own left (no alias on it), and nothing of ``news-eu``: until 6
    December 2026 it deleted every index named ``news-*`` but its own served one, ``news-eu``'s too, which then served
    nothing ("No index 'news-eu'")."""
    data = sample_data_template
    news, eu = _engine(data, opensearch, "news"), _engine(data, opensearch, "news-eu")
    try:
        with Catalog.in_dir(data) as catalog:
            eu.sync(CatalogDocuments(catalog), full=True)
            news.sync(CatalogDocuments(catalog), full=True)
            # a rebuild of news-eu under way (no alias yet) and one of news that a kill left behind
            building = "news-eu-20261206031127-b71635"
            left = "news-20261206020000-0a1b2c"
            for name in (building, left):
                assert request(f"{opensearch.url}/{name}", "PUT", {})[0] == 200
            served_eu = _served(opensearch, "news-eu")
            news.cleanup()
            assert request(f"{opensearch.url}/{left}")[0] == 404
            assert _served(opensearch, "news-eu") == served_eu and eu.doc_count() == 36
            assert request(f"{opensearch.url}/{building}")[0] == 200
            assert news.sync(CatalogDocuments(catalog)) == {"added": 0, "updated": 0, "removed": 0}
            assert eu.doc_count() == 36 and news.doc_count() == 36
    finally:
        for alias in ("news", "news-eu"):
            request(f"{opensearch.url}/{alias}-*", "DELETE")


def test_a_rebuild_waits_for_its_replicas_longer_than_a_request_may_take(opensearch: Cluster,
                                                                        sample_data_template: Path, caplog) -> None:
    """A rebuilt index waits for its replicas (``health_wait``, 60 s) before it is swapped in; the cluster answers when
    they are placed or the wait is over. The request asking waited ``opensearch_timeout`` (30 s) alone: on three nodes
    the site corpus's replica took 35-60 s, and every full rebuild (a first reindex, a schema change) ended
    "unavailable (no answer within 30 s)" with its index deleted. Here a replica that cannot be placed (one node) and a
    request time shorter than the wait: the index goes in, yellow (no index was served before it), with a warning
    that says why its replica is not placed."""
    engine = _engine(sample_data_template, opensearch, "waits", opensearch_timeout="5", opensearch_replicas="1")
    engine.health_wait = 8
    try:
        with Catalog.in_dir(sample_data_template) as catalog:
            started = time.monotonic()
            assert engine.sync(CatalogDocuments(catalog), full=True)["full"] == 1
        assert 8 <= time.monotonic() - started < 60
        assert engine.doc_count() == 36 and len(_served(opensearch, "waits")) == 1
        assert "is yellow after 8 s: 1 of its replicas not placed (" in caplog.text
        assert "already allocated to this node" in caplog.text and "served before being none" in caplog.text
    finally:
        request(f"{opensearch.url}/waits-*", "DELETE")


def test_a_rebuild_left_yellow_goes_in_only_beside_an_index_no_greener(opensearch: Cluster, sample_data_template: Path,
                                                                       caplog) -> None:
    """A rebuilt index whose replica is not placed when its wait is over (yellow) was swapped in whatever the index
    served before was, and that one deleted: a green index (every shard on two nodes) was traded for one a node's loss
    turns red. Beside a green index it is refused now, saying why its replica is not placed; beside a yellow one (or
    none) it goes in, with a warning. One node: the served index without replicas is green, a rebuild asking for one
    is yellow."""
    from podsearch.errors import EngineUnavailable

    green = _engine(sample_data_template, opensearch, "greener", opensearch_replicas="0")
    yellow = _engine(sample_data_template, opensearch, "greener", opensearch_replicas="1")
    yellow.health_wait = 1
    try:
        with Catalog.in_dir(sample_data_template) as catalog:
            green.sync(CatalogDocuments(catalog), full=True)
            served = _served(opensearch, "greener")
            with pytest.raises(EngineUnavailable, match=r"is yellow after 1 s: 1 of its replicas not placed \(.*already "
                                                        r"allocated to this node.*is green and stays served"):
                yellow.sync(CatalogDocuments(catalog), full=True)
            assert _served(opensearch, "greener") == served and green.doc_count() == 36
            status, indexes = request(f"{opensearch.url}/_cat/indices/greener-*?format=json")
            assert [i["index"] for i in indexes] == served  # (the refused one deleted)
            # the served index yellow too (a node down, say): the rebuild is no worse, and goes in
            assert request(f"{opensearch.url}/{served[0]}/_settings", "PUT",
                           {"index": {"number_of_replicas": 1}})[0] == 200
            yellow.sync(CatalogDocuments(catalog), full=True)
        assert _served(opensearch, "greener") not in ([], served) and yellow.doc_count() == 36
        assert f"served before being yellow ({served[0]})" in caplog.text
    finally:
        request(f"{opensearch.url}/greener-*", "DELETE")


def test_readyz_says_the_served_indexs_health(opensearch: Cluster, sample_data_template: Path, tmp_path: Path) -> None:
    """/readyz said "ready" and nothing of the cluster with a node of three down and the index's replica not placed
    (yellow). It says the served index's health now, with the cluster's nodes and the shards not placed; Whoosh's
    says no more than before."""
    import shutil

    from podsearch.service import Library

    data = tmp_path / "data"
    shutil.copytree(sample_data_template, data)
    settings = {"engine": "opensearch", "opensearch_url": opensearch.url, "opensearch_index": "health",
                "opensearch_replicas": "1"}
    lib = Library.from_config(sample_config(data, settings))
    lib.engine.health_wait = 0.5
    try:
        with Catalog.in_dir(data) as catalog:
            lib.engine.sync(CatalogDocuments(catalog), full=True)
        ready = lib.ready()
        assert ready["status"] == "ready" and ready["episodes"] == 36
        assert "already allocated to this node" in ready["engine"].pop("unplaced")  # (why the replica is not placed)
        assert ready["engine"] == {"engine": "opensearch", "health": "yellow", "nodes": 1, "unassigned_shards": 1,
                                   "cluster_manager": True}
    finally:
        lib.close()
        request(f"{opensearch.url}/health-*", "DELETE")
    whoosh = Library.from_config(sample_config(data, {}))
    try:
        assert "engine" not in whoosh.ready()
    finally:
        whoosh.close()


def test_readyz_on_a_yellow_index_asks_why_once_in_a_while(opensearch: Cluster) -> None:
    """Every /readyz (and stats) on a yellow index asked OpenSearch why its replicas were not placed, one allocation
    explanation a shard, each allowed 3 s: a single node whose index has replicas is yellow for good, and a load
    balancer probes every few seconds. It asks once for the index, keeps the answer ``UNPLACED_SECONDS``, and says it
    on every probe meanwhile (the node's own count of the requests it served, ``_nodes/usage``)."""
    from podsearch.engines.opensearch import OpenSearchEngine
    from podsearch.engines.opensearch.client import ClientOptions

    def explained() -> int:
        nodes = request(f"{opensearch.url}/_nodes/usage")[1]["nodes"]
        return sum(n["rest_actions"].get("cluster_allocation_explain_action", 0) for n in nodes.values())

    name = "probed-20261206000000-a1b2c3"  # (three shards, a replica each: one node places none)
    assert request(f"{opensearch.url}/{name}", "PUT", {"settings": {"index": {
        "number_of_shards": 3, "number_of_replicas": 1}}, "aliases": {"probed": {}}})[0] == 200
    engine = OpenSearchEngine(ClientOptions(urls=(opensearch.url,)), index="probed", shards=3)
    try:
        before = explained()
        said = [engine.health() for _ in range(20)]
        assert explained() - before == 1
        assert all(s["health"] == "yellow" and s["unassigned_shards"] == 3 for s in said)
        assert all("already allocated to this node" in s["unplaced"] for s in said)
    finally:
        request(f"{opensearch.url}/{name}", "DELETE")


def test_an_index_made_read_only_by_a_full_disk_is_said_at_once_and_stays_served(opensearch: Cluster,
                                                                                 sample_data_template: Path) -> None:
    """A disk past the flood-stage watermark makes its indexes read-only (``read_only_allow_delete``); OpenSearch
    refuses writes with 429, which was taken for overload: a sync sent its documents 6 times over 30 s and said
    "OpenSearch stayed too busy to index 1 documents", and a rebuild was built whole, then its swap tried four times
    and deleted with "unavailable". Now both say the disk, at once, and the old index stays served."""
    from podsearch.errors import EngineRequestError

    engine = _engine(sample_data_template, opensearch, "flooded")
    try:
        with Catalog.in_dir(sample_data_template) as catalog:
            engine.sync(CatalogDocuments(catalog), full=True)
            served = _served(opensearch, "flooded")
            assert request(f"{opensearch.url}/{served[0]}/_settings", "PUT",
                           {"index.blocks.read_only_allow_delete": True})[0] == 200
            hashes = dict(catalog.hashes())
            hashes[sorted(hashes)[0]] = "another hash"
            started = time.monotonic()
            with pytest.raises(EngineRequestError, match="read-only because a node's disk is nearly full.*Free disk"):
                engine.sync(CatalogDocuments(catalog, hashes))
            assert time.monotonic() - started < 10
            started = time.monotonic()
            with pytest.raises(EngineRequestError, match="cannot take a rebuild.*flood-stage.*Free disk"):
                engine.sync(CatalogDocuments(catalog), full=True)
            assert time.monotonic() - started < 10
        assert _served(opensearch, "flooded") == served and engine.doc_count() == 36
        status, indexes = request(f"{opensearch.url}/_cat/indices/flooded-*?format=json")
        assert [i["index"] for i in indexes] == served  # (no rebuild left behind)
    finally:
        request(f"{opensearch.url}/flooded-*/_settings", "PUT", {"index.blocks.read_only_allow_delete": None})
        request(f"{opensearch.url}/flooded-*", "DELETE")


def test_a_cluster_that_takes_no_new_index_is_said_so(opensearch: Cluster, sample_data_template: Path) -> None:
    """When every node's disk passes the flood-stage watermark OpenSearch also blocks new indexes
    (``cluster.blocks.create_index``): a site's first reindex said "HTTP 403: index_create_block_exception: blocked
    by: [FORBIDDEN/10/cluster create-index blocked (api)]" and nothing of the disk."""
    from podsearch.errors import EngineRequestError

    engine = _engine(sample_data_template, opensearch, "newsite")
    settings = f"{opensearch.url}/_cluster/settings"
    assert request(settings, "PUT", {"persistent": {"cluster.blocks.create_index": True}})[0] == 200
    try:
        with Catalog.in_dir(sample_data_template) as catalog, \
                pytest.raises(EngineRequestError, match="takes no new index.*flood-stage.*Free disk"):
            engine.sync(CatalogDocuments(catalog))
    finally:
        request(settings, "PUT", {"persistent": {"cluster.blocks.create_index": None}})
        request(f"{opensearch.url}/newsite-*", "DELETE")


def test_an_index_no_running_node_holds_is_said_so(opensearch: Cluster, sample_data_template: Path) -> None:
    """A red index (the node that held a shard left and no replica was placed on another: seen on three nodes, the
    rebuilt index's replica still copying when its primary's node was killed): searches and /readyz's count answered
    503 "OpenSearch at ... is unavailable (...: HTTP 503: search_phase_execution_exception: )", the reason empty. They
    say what is wrong now. Here the alias is moved to an index whose shard no node may hold (the same answers)."""
    from podsearch.engines.base import EngineQuery
    from podsearch.engines.opensearch import index_body
    from podsearch.errors import EngineUnavailable

    engine = _engine(sample_data_template, opensearch, "red")
    try:
        with Catalog.in_dir(sample_data_template) as catalog:
            engine.sync(CatalogDocuments(catalog), full=True)
        body = index_body(1, "0")
        body["settings"]["index"]["routing.allocation.require._name"] = "nowhere"
        assert request(f"{opensearch.url}/red-20261206033000-abcdef?wait_for_active_shards=0", "PUT", body)[0] == 200
        engine._swap("red-20261206033000-abcdef")
        missing = "no running node holds a copy of some of the index's shards"
        with pytest.raises(EngineUnavailable, match=missing):
            engine.search(EngineQuery(text="bees", deadline=time.monotonic() + 5))
        with pytest.raises(EngineUnavailable, match=missing):
            engine.doc_count()
    finally:
        request(f"{opensearch.url}/red-*", "DELETE")


def test_a_request_that_met_a_node_leaving_is_asked_again() -> None:
    """For a few seconds after a node is killed, before the cluster notices, the others answer a request that needed it
    with HTTP 500 "Node not connected": /readyz answered 500 "OpenSearch refused GET /<index>/_count" (eight times in
    the walk's 4 s), and a search whose tries met it a 500 too. It is asked again, as an answer of overload is, and
    said unavailable (503) if it lasts. A server on 127.0.0.1 answers with the shape of the node's body."""
    from podsearch.engines.opensearch.client import ClientOptions, OpenSearchClient
    from podsearch.errors import EngineUnavailable

    cause = {"type": "node_not_connected_exception", "reason": "[node-2][127.0.0.1:18653] Node not connected"}
    left = {"error": {"root_cause": [cause], "type": "search_phase_execution_exception", "reason": "all shards failed",
                      "phase": "query", "grouped": True,
                      "failed_shards": [{"shard": 0, "index": "live", "node": "n2", "reason": cause}]}, "status": 500}
    asked: list[str] = []

    def answer(_method: str, path: str) -> tuple[int, dict]:
        asked.append(path)
        return (500, left) if path.startswith("/gone") or len(asked) == 1 else (200, {"count": 36})

    with json_node(answer) as url:
        client = OpenSearchClient(ClientOptions(urls=(url,), backoff=0.01))
        assert client.request("GET", "/live/_count") == {"count": 36}
        assert asked == ["/live/_count", "/live/_count"]
        with pytest.raises(EngineUnavailable, match="Node not connected"):
            client.request("GET", "/gone/_count")
        client.close()


def test_a_search_whose_shard_ran_out_of_time_is_said_timed_out() -> None:
    """Under load (eight connections of twelve-word searches on three nodes) a search's shard ran out of its time where
    it could not answer with what it had found, and OpenSearch, partial results refused, answered "HTTP 500:
    search_phase_execution_exception: Time exceeded": podsearch answered 500. It is a search that timed out with
    nothing found now. A server on 127.0.0.1 answers with that reason (the walk's log has it, not the whole body)."""
    from podsearch.engines.base import EngineQuery
    from podsearch.engines.opensearch import OpenSearchEngine
    from podsearch.engines.opensearch.client import ClientOptions

    cause = {"type": "search_phase_execution_exception", "reason": "Time exceeded"}
    failed = {"error": {"root_cause": [cause], "type": "search_phase_execution_exception", "reason": "all shards failed",
                        "phase": "query", "grouped": True}, "status": 500}

    def answer(_method: str, path: str) -> tuple[int, dict]:
        if path.startswith("/_alias/"):
            return 200, {"live-1": {"aliases": {"live": {}}}}
        if "/_mapping" in path:
            return 200, {"live-1": {"mappings": {"_meta": {"stamp": "s", "time": 1.0}}}}
        return 500, failed

    with json_node(answer) as url:
        engine = OpenSearchEngine(ClientOptions(urls=(url,), backoff=0.01), index="live")
        try:
            result = engine.search(EngineQuery(text="", deadline=time.monotonic() + 2))
        finally:
            engine.client.close()
    assert result.timed_out and result.total == 0 and result.hits == []


def test_documents_a_shard_on_no_node_could_not_take_are_said_so() -> None:
    """A node killed while a rebuild wrote its index (built without replicas, so its shard had no other copy): the
    bulk's items failed a minute later and the reindex said "OpenSearch refused 57 documents: <id>: {'type':
    'unavailable_shards_exception', 'reason': '[podsearch-...][0] primary shard is not active Timeout: [1m]'}" three
    times over. It says a node left, that the served index is unchanged, and to run it again (503-like: unavailable).
    Other refusals are said as OpenSearch's type and reason, not a dict's repr. A server on 127.0.0.1 answers with
    the walk's item bodies."""
    from podsearch.engines.opensearch import OpenSearchEngine
    from podsearch.engines.opensearch.client import ClientOptions
    from podsearch.errors import EngineRequestError, EngineUnavailable

    shard = {"type": "unavailable_shards_exception",
             "reason": "[podsearch-20261206030410-773512][0] primary shard is not active Timeout: [1m]"}
    mapping = {"type": "strict_dynamic_mapping_exception", "reason": "mapping set to strict, dynamic introduction of "
               "[extra] within [_doc] is not allowed"}
    errors = [shard]

    def answer(_method: str, _path: str) -> tuple[int, dict]:
        items = [{"index": {"_id": "ep-1", "status": 503 if errors[0] is shard else 400, "error": errors[0]}}]
        return 200, {"took": 60000, "errors": True, "items": items}

    batch = [({"index": {"_index": "podsearch-20261206030410-773512", "_id": "ep-1"}}, {"id": "ep-1"})]
    with json_node(answer) as url:
        engine = OpenSearchEngine(ClientOptions(urls=(url,)))
        try:
            with pytest.raises(EngineUnavailable, match="on no running node.*primary shard is not active.*node left"
                                                        ".*served one is unchanged"):
                engine._send(batch)
            errors[0] = mapping
            with pytest.raises(EngineRequestError, match=r"refused 1 documents: ep-1: strict_dynamic_mapping_exception: "
                                                         r"mapping set to strict"):
                engine._send(batch)
        finally:
            engine.client.close()


def test_a_bulk_into_a_shard_on_no_node_fails_within_its_bound(opensearch: Cluster, sample_data_template: Path) -> None:
    """A node holding the rebuilt index's shard (no replica yet) gone while the index is written: each bulk waited
    OpenSearch's minute for the shard, and with ``opensearch_timeout`` under a minute (30 s by default) the reindex said
    "no answer within 30 s" and nothing of the shard. It waits ``shard_wait`` now, then says a node left and that the
    served index is unchanged. A real bulk into an index whose shard no node may hold."""
    from podsearch.engines.opensearch import index_body
    from podsearch.errors import EngineUnavailable

    engine = _engine(sample_data_template, opensearch, "nowhere", opensearch_timeout="20")
    engine.shard_wait = 2
    body = index_body(1, "0")
    body["settings"]["index"]["routing.allocation.require._name"] = "nowhere"
    name = "nowhere-20261206063000-abcdef"
    try:
        assert request(f"{opensearch.url}/{name}?wait_for_active_shards=0", "PUT", body)[0] == 200
        started = time.monotonic()
        with pytest.raises(EngineUnavailable, match="on no running node.*primary shard is not active.*served one is "
                                                    "unchanged"):
            engine._send([({"index": {"_index": name, "_id": "ep-1"}}, {"id": "ep-1"})])
        assert time.monotonic() - started < 8
    finally:
        request(f"{opensearch.url}/nowhere-*", "DELETE")


@pytest.mark.slow
def test_a_cluster_without_its_manager_still_searches(sample_data_template: Path, tmp_path: Path) -> None:
    """The cluster manager down (the only eligible one here; an election under way on a cluster of three): the data
    nodes still search, but every search was a 503 "no answer within 3 s", its stamp's reads (the alias, the
    mapping) waiting for a manager. They are read from the node asked now, and /readyz says there is no manager."""
    import shutil

    from conftest import require_opensearch_launcher

    from podsearch.errors import EngineUnavailable
    from podsearch.service import Library

    require_opensearch_launcher()
    data = tmp_path / "data"
    shutil.copytree(sample_data_template, data)
    with Cluster.start(tmp_path / "cluster", nodes=2) as cluster:
        settings = {"engine": "opensearch", "opensearch_url": cluster.nodes[1].url, "opensearch_index": "headless",
                    "opensearch_replicas": "1"}
        lib = Library.from_config(sample_config(data, settings))
        try:
            with Catalog.in_dir(data) as catalog:
                lib.engine.sync(CatalogDocuments(catalog), full=True)
            status, health = request(f"{cluster.url}/_cluster/health/headless?wait_for_status=green&timeout=60s",
                                     timeout=70)
            assert health["status"] == "green"
            # the replica is a copy of the primary's files, not its documents indexed again from the translog: the
            # site corpus's took more than 84 s so on three nodes (past the rebuild's wait: it went in yellow), 3 s now
            status, recoveries = request(f"{cluster.url}/_cat/recovery/headless?format=json")
            peer = [r for r in recoveries if r["type"] == "peer"]
            assert peer and all(r["translog_ops_recovered"] == "0" and r["files_recovered"] != "0" for r in peer)
            expected = lib.search(SearchRequest(q="bees")).total
            assert expected
            cluster.nodes[0].stop()
            time.sleep(1.5)  # (the stamp read before is taken as known for a second)
            assert lib.search(SearchRequest(q="bees")).total == expected
            ready = lib.ready()
            assert ready["episodes"] == 36 and ready["engine"]["cluster_manager"] is False
            assert ready["engine"]["health"] == "unknown"  # (the node's own view says red: no manager)
            # a reindex cannot write without a manager: it says so at once, with the nodes that answer and those that
            # do not. It waited for one four times 30 s, then said "unavailable (...: HTTP 503:
            # cluster_manager_not_discovered_exception: None)"
            both = _engine(data, cluster, "headless", opensearch_url=f"{cluster.url},{cluster.nodes[1].url}")
            started = time.monotonic()
            said = (rf"no elected cluster manager: node-2 at {cluster.nodes[1].url} answers; {cluster.url} \(connection "
                    r"refused.*\) does not answer\. The cluster-manager-eligible nodes they last knew: node-1\. .*"
                    r"searches go on from the served index.*Start the cluster-manager-eligible nodes")
            with pytest.raises(EngineUnavailable, match=said):
                both.cleanup()
            with Catalog.in_dir(data) as catalog, pytest.raises(EngineUnavailable, match=said):
                both.sync(CatalogDocuments(catalog))
            assert time.monotonic() - started < 10
            assert lib.search(SearchRequest(q="bees")).total == expected
        finally:
            lib.close()


@pytest.mark.slow
def test_a_rebuild_that_lost_a_shard_is_not_swapped_in(sample_data_template: Path, tmp_path: Path) -> None:
    """A node holding a shard of the rebuilt index (built without replicas) killed after its documents went in and
    before the swap: the index was red, the rebuild logged "is red: not every replica is placed" and swapped it in, and
    the site's searches then failed. It is refused (the served index stays), and deleted."""
    from conftest import require_opensearch_launcher

    from podsearch.errors import EngineUnavailable

    require_opensearch_launcher()
    with Cluster.start(tmp_path / "cluster", nodes=2) as cluster:
        settings = {"opensearch_shards": "2", "opensearch_replicas": "1", "opensearch_timeout": "90"}
        engine = _engine(sample_data_template, cluster, "lost", **settings)
        engine.health_wait = 3
        with Catalog.in_dir(sample_data_template) as catalog:
            engine.sync(CatalogDocuments(catalog), full=True)
            served = _served(cluster, "lost")
            with pytest.raises(EngineUnavailable, match="is red: a node holding one of its shards left.*not swapped in"):
                engine.sync(CatalogDocuments(catalog), full=True, progress=lambda _n: cluster.nodes[1].kill())
        assert _served(cluster, "lost") == served
        status, indexes = request(f"{cluster.url}/_cat/indices/lost-*?format=json")
        assert [i["index"] for i in indexes] == served


@pytest.mark.slow
def test_a_rebuild_waits_for_a_replica_being_copied_no_longer_than_copy_wait(sample_data_template: Path, tmp_path: Path,
                                                                            caplog) -> None:
    """A rebuilt index whose replica is still being copied (initializing) is waited for ``copy_wait`` at most, counted
    on the clock. Each round counted ``health_wait`` whatever it took (with ``health_wait`` 0 the rebuild waited, a
    request after another, for as long as the copy took), against the constant ``COPY_WAIT`` (600 s). Here the copy is
    throttled to a crawl (the cluster's recovery at 1 kB/s): the rebuild goes in yellow after ``copy_wait``."""
    import logging
    import threading

    from conftest import require_opensearch_launcher

    require_opensearch_launcher()
    caplog.set_level(logging.INFO, logger="podsearch.engines.opensearch")
    throttle = "indices.recovery.max_bytes_per_sec"
    with Cluster.start(tmp_path / "cluster", nodes=2) as cluster:
        assert request(f"{cluster.url}/_cluster/settings", "PUT", {"transient": {throttle: "1kb"}})[0] == 200
        engine = _engine(sample_data_template, cluster, "copying", opensearch_replicas="1")
        # (the first look a few seconds: at 0-0.5 s the replica was at times not yet initializing, and none is waited for)
        engine.health_wait, engine.copy_wait = 3, 5
        done: list[dict[str, int]] = []

        def rebuild() -> None:
            with Catalog.in_dir(sample_data_template) as catalog:
                done.append(engine.sync(CatalogDocuments(catalog), full=True))
            done.append({"took": round(time.monotonic() - started)})

        worker = threading.Thread(target=rebuild, daemon=True)
        started = time.monotonic()
        worker.start()
        try:
            worker.join(45)  # (its documents, flush and swap: a few seconds; the copy: minutes)
            assert done and done[0]["full"] == 1, "the rebuild still waits for its replica"
        finally:
            request(f"{cluster.url}/_cluster/settings", "PUT", {"transient": {throttle: None}})
            worker.join(120)
        assert "still being copied" in caplog.text and "1 of its replicas not placed" in caplog.text
        assert done[1]["took"] < 30, done
        assert engine.doc_count() == 36 and len(_served(cluster, "copying")) == 1


def test_the_reindex_log_says_a_schema_change_is_a_full_rebuild(opensearch: Cluster, sample_data_template: Path,
                                                                tmp_path: Path, caplog) -> None:
    """An index of another schema is rebuilt whole by the next plain reindex, which logged "writing the index
    (incremental)" all the same (the three-node walk: a 76 s rebuild of the site corpus said so). It says why now,
    on both engines."""
    import logging
    import shutil

    from podsearch.engines.opensearch import SCHEMA_VERSION
    from podsearch.engines.whoosh.schema import SCHEMA_VERSION as WHOOSH_SCHEMA
    from podsearch.generations import Generations
    from podsearch.progress import Progress
    from podsearch.reindex import rebuild_derived
    from podsearch.report import Report

    data = tmp_path / "data"
    shutil.copytree(sample_data_template, data)
    engine = _engine(data, opensearch, "schema")
    caplog.set_level(logging.INFO, logger="podsearch.reindex")
    try:
        assert engine.plan() == "full rebuild (no index yet)"
        with Catalog.in_dir(data) as catalog:
            engine.sync(CatalogDocuments(catalog), full=True)
            assert engine.plan() == "incremental" and engine.plan(full=True) == "full rebuild"
            served = _served(opensearch, "schema")[0]
            assert request(f"{opensearch.url}/{served}/_mapping", "PUT", {"_meta": {"podsearch_schema": "9"}})[0] == 200
            engine._forget()
            rebuild_derived(data, catalog, Report(), Progress(), engine=engine)
        assert f"writing the index: full rebuild (schema 9 -> {SCHEMA_VERSION})" in caplog.text
        assert _served(opensearch, "schema") != [served] and engine.plan() == "incremental"
    finally:
        request(f"{opensearch.url}/schema-*", "DELETE")
    whoosh = open_engine(data, sample_config(data, {}))
    (Generations(data / "index").current() / "SCHEMA_VERSION").write_text("13")
    assert whoosh.plan() == f"full rebuild (schema 13 -> {WHOOSH_SCHEMA})"
