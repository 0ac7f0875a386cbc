"""The OpenSearch launcher (opensearch/): a real node from Maven Central jars, with what podsearch's mapping
needs (the analysis-common and painless modules), and a two-node cluster that keeps answering searches while
one node stops."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import pytest
from conftest import require_opensearch_launcher
from opensearch_node import Cluster, request

from podsearch.engines.opensearch.client import ClientOptions, OpenSearchClient
from podsearch.errors import PodsearchError

pytestmark = pytest.mark.opensearch


def test_a_node_answers_as_opensearch(opensearch: Cluster) -> None:
    status, body = request(opensearch.url + "/")
    assert status == 200
    assert body["version"]["distribution"] == "opensearch"
    assert body["version"]["number"] == "2.19.6"
    status, plugins = request(opensearch.url + "/_nodes/plugins")
    assert status == 200
    (node,) = plugins["nodes"].values()
    # classpath plugins are listed as plugins of the node, not modules
    names = {p["classname"] for p in node["plugins"]} | {m["classname"] for m in node["modules"]}
    assert {"org.opensearch.transport.Netty4Plugin", "org.opensearch.analysis.common.CommonAnalysisPlugin",
            "org.opensearch.painless.PainlessPlugin"} <= names


def test_the_analysis_podsearch_needs_is_there(opensearch: Cluster) -> None:
    def tokens(body: dict) -> list[str]:
        status, answer = request(opensearch.url + "/_analyze", "POST", body)
        assert status == 200, answer
        return [t["token"] for t in answer["tokens"]]

    english = {"tokenizer": "standard", "filter": ["lowercase", {"type": "stop", "stopwords": "_english_"},
                                                    {"type": "snowball", "language": "English"}]}
    assert tokens({**english, "text": "The runners are running"}) == ["runner", "run"]
    cjk = {"tokenizer": "standard", "filter": ["cjk_width", "lowercase", "cjk_bigram"]}
    assert tokens({**cjk, "text": "東京都"}) == ["東京", "京都"]
    status, answer = request(opensearch.url + "/_scripts/painless/_execute", "POST",
                             {"script": {"source": "params.a * 2", "params": {"a": 21}}})
    assert status == 200 and answer["result"] == "42", answer


@pytest.mark.slow
def test_a_two_node_cluster_serves_every_search_while_a_node_stops(tmp_path: Path) -> None:
    require_opensearch_launcher()
    with Cluster.start(tmp_path, nodes=2) as cluster:
        url = cluster.url
        status, answer = request(f"{url}/episodes", "PUT", {"settings": {"number_of_shards": 2, "number_of_replicas": 1}})
        assert status == 200, answer
        lines = []
        for i in range(200):
            lines += [json.dumps({"index": {"_id": str(i)}}), json.dumps({"title": f"episode {i} about kubernetes"})]
        status, answer = request(f"{url}/episodes/_bulk?refresh=true", "POST", None, body_text="\n".join(lines) + "\n")
        assert status == 200 and not answer["errors"], answer
        status, health = request(f"{url}/_cluster/health/episodes?wait_for_status=green&timeout=120s", timeout=130)
        assert health["status"] == "green", health
        status, shards = request(f"{url}/_cat/shards/episodes?format=json")
        assert {s["node"] for s in shards} == {"node-1", "node-2"}  # both nodes hold copies

        # the client podsearch's engine uses: both nodes, failover, and a search that lost a shard (a node left
        # during its fetch phase, which OpenSearch does not move to another copy) asked again
        client = OpenSearchClient(ClientOptions(urls=tuple(n.url for n in cluster.nodes), timeout=30))
        failures: list[str] = []
        done: list[float] = []
        stop = threading.Event()

        def search() -> None:
            while not stop.is_set():
                try:
                    answer = client.search("episodes", {"query": {"match": {"title": "kubernetes"}}, "size": 5})
                    if answer["hits"]["total"]["value"] != 200 or len(answer["hits"]["hits"]) != 5:
                        failures.append(repr(answer))
                except PodsearchError as e:
                    failures.append(repr(e))
                done.append(time.monotonic())

        searchers = [threading.Thread(target=search) for _ in range(2)]
        for t in searchers:
            t.start()
        time.sleep(2)
        stopped_at = time.monotonic()
        cluster.nodes[1].stop()
        time.sleep(3)
        stop.set()
        for t in searchers:
            t.join(60)
        before = sum(1 for t in done if t < stopped_at)
        after = sum(1 for t in done if t >= stopped_at)
        assert failures == []
        assert before > 0 and after > 0, (before, after)
        status, health = request(f"{url}/_cluster/health/episodes")
        assert health["number_of_nodes"] == 1
