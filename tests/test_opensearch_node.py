"""The OpenSearch launcher (opensearch/): a real node from Maven Central jars, with what podsearch's mapping
needs (the analysis-common and painless modules). The two-node cluster is in test_engine_opensearch.py."""

from __future__ import annotations

import pytest
from opensearch_node import Cluster, request

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
