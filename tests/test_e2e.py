"""End to end: `podsearch serve` (waitress) on a free port answers the page, the search API and /similar."""

from __future__ import annotations

import json
import urllib.error
import urllib.parse
import urllib.request

import pytest

BEES = "tag:example.org,2024:field-notes/ep-01"
SWARM = "https://example.org/signal-path/episodes/1?v=1"


def get(url: str) -> tuple[int, str, str]:
    try:
        with urllib.request.urlopen(url, timeout=10) as resp:
            return resp.status, resp.headers.get("Content-Type", ""), resp.read().decode()
    except urllib.error.HTTPError as err:
        return err.code, err.headers.get("Content-Type", ""), err.read().decode()


def test_search_page_answers(live_server):
    status, ctype, body = get(live_server.url("/"))
    assert status == 200 and "text/html" in ctype
    assert '<form class="search"' in body and "Field Notes" in body
    status, _, body = get(live_server.url("/search?q=volcano"))
    assert status == 200
    assert "<mark>" in body and "Kīlauea" in body or "Kilauea" in body


def test_api_search_returns_hits_with_snippets(live_server):
    status, ctype, body = get(live_server.url("/api/search?q=" + urllib.parse.quote("sourdough starter")))
    assert status == 200 and ctype.startswith("application/json")
    data = json.loads(body)
    assert data["total"] >= 1
    hit = data["hits"][0]
    assert set(hit) >= {"id", "title", "show", "published", "url", "snippet", "moments"}
    assert "<mark>" in hit["snippet"]
    assert all(set(m) >= {"start", "speaker", "text"} for m in hit["moments"])


@pytest.mark.parametrize("episode_id", [BEES, SWARM])
def test_similar_takes_encoded_ids_and_ranks_by_topic(live_server, episode_id):
    # Real guids hold '/', ':' and '?': the path takes them URL-encoded (%2F arrives decoded).
    status, ctype, body = get(live_server.url("/similar/" + urllib.parse.quote(episode_id, safe="")))
    assert status == 200, body
    data = json.loads(body)
    assert data["id"] == episode_id
    ids = [s["id"] for s in data["similar"]]
    assert episode_id not in ids and ids
    other = SWARM if episode_id == BEES else BEES
    assert other in ids[:3], f"the other bee episode should be among the first neighbours, got {ids[:3]}"
    first = data["similar"][0]
    assert set(first) >= {"id", "title", "show", "score", "reasons"} and first["reasons"]


def test_unknown_episode_is_a_json_404(live_server):
    status, ctype, body = get(live_server.url("/similar/" + urllib.parse.quote("no/such:episode?", safe="")))
    assert status == 404 and ctype.startswith("application/json")
    assert json.loads(body)["error"]["code"] == "not_found"


def test_episode_page_shows_nearby_episodes(live_server):
    status, _, body = get(live_server.url("/episodes/" + urllib.parse.quote(BEES, safe="")))
    assert status == 200
    assert "Nearby episodes" in body and "Hive Minds" in body and "because of" in body


def test_bad_query_is_a_400_not_a_500(live_server):
    status, ctype, body = get(live_server.url("/api/search?q=bees&page=0"))
    assert status == 400 and ctype.startswith("application/json")
    assert "page" in json.loads(body)["error"]["message"]
    status, _, _ = get(live_server.url("/api/search?q=" + urllib.parse.quote('title:( "unbalanced AND OR')))
    assert status in (200, 400)
