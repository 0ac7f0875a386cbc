"""The JSON API through the app factory: paths and shapes, awkward ids, caching, limits, the access log."""

from __future__ import annotations

import logging
import time
from email.utils import formatdate
from pathlib import Path
from urllib.parse import quote

import pytest
from conftest import ENGINES, sample_config

from podsearch.languages import fold
from podsearch.requests import MAX_DEPTH, MAX_PREFIX_CHARS, MAX_QUERY_CHARS, search_request
from podsearch.web import create_app


@pytest.fixture(params=ENGINES)
def engine_name(request: pytest.FixtureRequest) -> str:
    """The parity suite: every test here runs against Whoosh and OpenSearch."""
    return request.param


def make_app(data: Path, engine_settings: dict[str, str], **settings):
    return create_app(sample_config(data, engine_settings, **settings), {"TESTING": True})


def first_hit(client, q: str = "bees") -> dict:
    res = client.get(f"/api/v1/search?q={q}")
    assert res.status_code == 200
    return res.get_json()["hits"][0]


def enc(episode_id: str) -> str:
    return quote(episode_id, safe="")


# -- paths and shapes ---------------------------------------------------------------------------------


@pytest.mark.parametrize("path", ["/api/v1/search", "/api/search"])
def test_search_shape_on_versioned_path_and_alias(client, path):
    data = client.get(path + "?q=bees").get_json()
    assert data["total"] >= 1
    hit = data["hits"][0]
    assert {"id", "title", "show", "published", "url", "snippet", "moments"} <= set(hit)
    assert all({"start", "speaker", "text"} <= set(m) for m in hit["moments"])
    assert {"page", "per_page", "pages"} <= set(data)


@pytest.mark.parametrize("path", ["/api/v1/suggest", "/api/suggest"])
def test_suggest_on_both_paths(client, path):
    data = client.get(path + "?q=bee").get_json()
    assert data["query"] == "bee" and data["suggestions"]


def test_suggest_reads_accents_as_the_search_does(client):
    """Search folds accents (``café`` = ``cafe``); the typeahead compared the prefix as typed with the folded words
    and titles, so a listener who typed the accent was offered nothing: ``guér`` [] where ``guer`` offered guerande
    (the sample's Guérande salt), ``galáp`` [] where ``galap`` offered galapagos."""
    def words(prefix: str) -> list[str]:
        res = client.get("/api/v1/suggest", query_string={"q": prefix})
        assert res.status_code == 200
        return [s["text"] for s in res.get_json()["suggestions"] if s["kind"] == "term"]

    for typed, word in (("guér", "guerande"), ("Galáp", "galapagos"), ("GUÉRAN", "guerande")):  # (words of the notes:
        # OpenSearch offers no word only its transcripts say, such as "Comté")
        offered = [w for w in words(typed) if fold(w) == word]  # (OpenSearch keeps the accents of its word list)
        assert offered, (typed, words(typed))
        assert client.get("/api/search", query_string={"q": offered[0]}).get_json()["total"], offered


def test_suggest_offers_no_word_the_index_leaves_out(client):
    """``/api/suggest?q=the`` offered "the", which leads to a page that finds nothing (the index leaves stop words
    out); every word offered is one a search finds."""
    for prefix in ("the", "wit", "and"):
        words = [s["text"] for s in client.get("/api/suggest", query_string={"q": prefix}).get_json()["suggestions"]
                 if s["kind"] == "term"]
        assert prefix not in words and "with" not in words, (prefix, words)
        for word in words:
            assert client.get("/api/search", query_string={"q": word}).get_json()["total"], word


def test_episode_json_names_no_path_on_the_servers_disk(client):
    """The sample's feeds are read from disk, so their transcripts and chapters are named by paths on the server:
    ``transcript_links`` published them (``/home/.../podsearch/sample/transcripts/field-notes/ep-07.json``) while
    ``transcript_source`` was already kept private. Only web addresses leave the server."""
    hits = client.get("/api/v1/search?q=&per_page=50").get_json()["hits"]
    assert len(hits) == 36
    leaked = []
    for hit in hits:
        ep = client.get("/api/v1/episodes/" + enc(hit["id"])).get_json()
        for link in ep["transcript_links"]:
            if not link["url"].startswith(("http://", "https://")):
                leaked.append((hit["id"], link["url"]))
        if ep["chapters_url"] and not ep["chapters_url"].startswith(("http://", "https://")):
            leaked.append((hit["id"], ep["chapters_url"]))
    assert not leaked, leaked[:3]


def test_ids_with_slash_colon_and_question_mark(client):
    hits = client.get("/api/v1/search?q=&per_page=50").get_json()["hits"]
    awkward = [h["id"] for h in hits if "/" in h["id"] and (":" in h["id"] or "?" in h["id"])]
    assert awkward, "the sample should hold ids with '/', ':' and '?'"
    for episode_id in awkward:
        ep = client.get("/api/v1/episodes/" + enc(episode_id))
        assert ep.status_code == 200 and ep.get_json()["id"] == episode_id
        for path in ("/similar/", "/api/v1/similar/", "/api/similar/"):
            res = client.get(path + enc(episode_id) + "?k=3")
            assert res.status_code == 200, (path, episode_id)
            body = res.get_json()
            assert body["id"] == episode_id and len(body["similar"]) == 3
            assert {"id", "title", "show", "score", "reasons"} <= set(body["similar"][0])


def test_shows_and_one_show_paginated(client):
    shows = client.get("/api/v1/shows").get_json()["shows"]
    assert len(shows) == 3 and all("source" not in s for s in shows)  # no server paths leak
    first = client.get(f"/api/v1/shows/{shows[0]['id']}?per_page=5").get_json()
    second = client.get(f"/api/v1/shows/{shows[0]['id']}?per_page=5&page=2").get_json()
    assert len(first["episodes"]) == 5 and first["has_more"] is True
    assert not {e["id"] for e in first["episodes"]} & {e["id"] for e in second["episodes"]}


def test_a_shows_list_pages_past_its_thousandth_episode(client):
    """A show's list is read from the catalog, whole, whatever the page: the search's bound on ranking depth
    (page * per_page at most 1,000) cut it, so a daily show's episodes past the 1,000th could not be listed (page 11
    of 100 was a 400 "narrow the query"). Any page (up to 1,000) at any size is served; past the last, none."""
    show = client.get("/api/v1/shows").get_json()["shows"][0]["id"]
    for path in (f"/api/v1/shows/{show}?per_page=100&page=11", f"/api/v1/shows/{show}?per_page=50&page=1000"):
        res = client.get(path)
        assert res.status_code == 200, (path, res.get_json())
        assert res.get_json()["episodes"] == [] and res.get_json()["has_more"] is False
    assert client.get(f"/shows/{show}?per_page=100&page=11").status_code == 200
    assert client.get(f"/api/v1/shows/{show}?page=1001").status_code == 400
    assert client.get("/api/v1/search?q=&per_page=100&page=11").status_code == 400  # (a search's depth stays bounded)


def test_similar_to_text_get_and_post(client):
    got = client.get("/api/v1/similar?text=volcano+eruption+magma&k=2").get_json()
    posted = client.post("/api/v1/similar?k=2", json={"text": "volcano eruption magma"}).get_json()
    assert got["id"] is None and len(got["similar"]) == 2
    assert [s["id"] for s in got["similar"]] == [s["id"] for s in posted["similar"]]


def test_similar_to_text_posted_with_the_text_in_the_query_string(client):
    """The README's ``GET|POST /similar?text=...``: a POST with no body and the text in its query string answered
    400 "text is empty" (the body's text replaced the query string's); a body still wins, and an empty one is
    still refused."""
    got = client.get("/similar?text=volcano+eruption+magma&k=2").get_json()
    for path in ("/similar", "/api/v1/similar"):
        res = client.post(f"{path}?text=volcano+eruption+magma&k=2")
        assert res.status_code == 200, res.get_json()
        assert [s["id"] for s in res.get_json()["similar"]] == [s["id"] for s in got["similar"]]
    assert client.post("/similar?text=volcano&k=2", json={}).status_code == 400
    assert client.post("/similar?text=volcano&k=2", data={"text": ""}).status_code == 400


def test_similar_to_text_posted_reads_the_bodys_parameters(client):
    """``POST /similar`` with ``{"text": "...", "k": 3}`` answered 10: only the query string's parameters were read.
    The body's are read where the query string has none; the query string's win."""
    text = "volcano eruption magma"
    assert len(client.post("/api/v1/similar", json={"text": text, "k": 3}).get_json()["similar"]) == 3
    assert len(client.post("/api/v1/similar", data={"text": text, "k": "2"}).get_json()["similar"]) == 2
    assert len(client.post("/api/v1/similar?k=4", json={"text": text, "k": 3}).get_json()["similar"]) == 4
    bad = client.post("/api/v1/similar", json={"text": text, "k": "many"})
    assert bad.status_code == 400 and "k" in bad.get_json()["error"]["message"]


def test_unknown_ids_are_json_404(client):
    for path in ("/api/v1/episodes/nope%2Fx%3Fy%3Az", "/api/v1/shows/nope", "/similar/nope%3Ax"):
        res = client.get(path)
        assert res.status_code == 404
        assert res.get_json()["error"]["code"] == "not_found"


def test_health_probes(client):
    assert client.get("/healthz").get_json() == {"status": "ok"}
    ready = client.get("/readyz").get_json()
    assert ready["status"] == "ready" and ready["episodes"] == 36 and ready["index_generation"]
    assert "last_reindex_age_seconds" in ready
    assert client.get("/api/v1/health").get_json()["episodes"] == 36


def test_readyz_is_503_json_without_an_index(tmp_path, engine_settings):
    res = make_app(tmp_path / "empty", engine_settings).test_client().get("/readyz")
    assert res.status_code == 503
    assert res.get_json()["error"]["code"] == "not_ready"
    assert "podsearch reindex" in res.get_json()["error"]["message"]


def test_openapi_document_lists_every_api_path(client):
    doc = client.get("/api/openapi.json").get_json()
    assert doc["openapi"].startswith("3.1")
    for path in ("/api/v1/search", "/api/v1/suggest", "/api/v1/episodes/{episode_id}", "/api/v1/shows",
                 "/api/v1/shows/{show_id}", "/api/v1/similar/{episode_id}", "/api/v1/similar", "/api/v1/health",
                 "/similar/{episode_id}", "/healthz", "/readyz"):
        assert path in doc["paths"], path
    assert set(doc["paths"]["/api/v1/similar"]) == {"get", "post"}
    ids = [op["operationId"] for item in doc["paths"].values() for op in item.values()]
    assert len(ids) == len(set(ids))
    # every parameter the search's parser takes is declared (`correct` was a component no operation listed)
    from podsearch.requests import SearchParams
    declared = {p["$ref"].rsplit("/", 1)[-1] for p in doc["paths"]["/api/v1/search"]["get"]["parameters"]}
    assert {f.alias or name for name, f in SearchParams.model_fields.items()} <= declared


# -- caching ------------------------------------------------------------------------------------------


def test_etag_round_trip_gives_304(client):
    first = client.get("/api/v1/search?q=bees")
    etag = first.headers["ETag"]
    assert etag.startswith('W/"') and "max-age=" in first.headers["Cache-Control"]
    again = client.get("/api/v1/search?q=bees", headers={"If-None-Match": etag})
    assert again.status_code == 304 and again.data == b"" and again.headers["ETag"] == etag
    other = client.get("/api/v1/search?q=honey", headers={"If-None-Match": etag})
    assert other.status_code == 200 and other.headers["ETag"] != etag


def test_if_modified_since(client):
    first = client.get("/api/v1/shows")
    since = first.headers["Last-Modified"]
    assert client.get("/api/v1/shows", headers={"If-Modified-Since": since}).status_code == 304
    old = formatdate(time.time() - 10 * 365 * 86400, usegmt=True)
    assert client.get("/api/v1/shows", headers={"If-Modified-Since": old}).status_code == 200
    future = formatdate(time.time() + 10 * 365 * 86400, usegmt=True)  # not a date the server sent: ignored
    assert client.get("/api/v1/shows", headers={"If-Modified-Since": future}).status_code == 200


def test_etag_changes_when_a_reindex_finishes(app, client, sample_data):
    from podsearch.catalog import Catalog

    etag = client.get("/api/v1/search?q=bees").headers["ETag"]
    with Catalog.in_dir(sample_data) as cat:  # a finished reindex run, as `podsearch reindex` records it
        cat.finish_run(cat.start_run(), {})
    res = client.get("/api/v1/search?q=bees", headers={"If-None-Match": etag})
    assert res.status_code == 200 and res.headers["ETag"] != etag


def test_similar_answers_are_kept_in_memory_until_the_data_changes(app, client, sample_data, tmp_path, config):
    import json

    from podsearch.catalog import Catalog
    from podsearch.reindex import import_jsonl

    waggle = "tag:example.org,2024:field-notes/ep-01"
    store = app.extensions["podsearch_answers"]
    path = f"/api/v1/similar/{enc(waggle)}?k=5"
    first = client.get(path)
    assert first.status_code == 200 and store.hits == 0
    again = client.get(path)
    assert store.hits == 1, "the repeated question is answered from memory"
    assert again.data == first.data
    for header in ("ETag", "Cache-Control", "Last-Modified", "Content-Type"):
        assert again.headers[header] == first.headers[header], header
    assert len(client.get(f"/api/v1/similar/{enc(waggle)}?k=2").get_json()["similar"]) == 2  # another question
    for _ in range(2):  # errors are not kept
        assert client.get("/api/v1/similar/nope").status_code == 404
    assert store.hits == 1
    searched = client.get("/api/v1/search?q=bees")  # searches are, the same way
    assert client.get("/api/v1/search?q=bees").data == searched.data and store.hits == 2
    # New data: a second copy of the episode is imported; the answer is worked out again and names it.
    with Catalog.in_dir(sample_data) as cat:
        ep = cat.episode(waggle)
    line = {"id": "copy-of-the-waggle-episode", "show": "Copies", "title": ep.title,
            "segments": [{"start": s.start, "speaker": s.speaker, "text": s.text} for s in ep.segments]}
    (tmp_path / "copy.jsonl").write_text(json.dumps(line) + "\n", encoding="utf-8")
    import_jsonl(config, tmp_path / "copy.jsonl")
    after = client.get(path)
    assert after.status_code == 200 and after.headers["ETag"] != first.headers["ETag"] and store.hits == 2
    assert "copy-of-the-waggle-episode" in after.get_data(as_text=True)
    assert "copy-of-the-waggle-episode" not in first.get_data(as_text=True)


def test_the_answer_store_is_bounded():
    from podsearch.web.caching import STORE_MAX_BYTES, AnswerStore

    store = AnswerStore(entries=2)
    for key in "abc":
        store.put(key, key.encode(), "application/json")
    assert store.get("a") is None and store.get("c") == (b"c", "application/json")
    store.get("b")  # b is now the most recently used: d pushes c out
    store.put("d", b"d", "application/json")
    assert store.get("c") is None and store.get("b") is not None
    store.put("big", b"x" * (STORE_MAX_BYTES + 1), "application/json")
    assert store.get("big") is None


def test_the_answer_store_holds_at_most_its_bytes():
    """4,096 answers of 60 KB (the site corpus's /api/search?q=bitcoin&per_page=35, with any query string a
    client makes up) grew the server by 250 MB."""
    from podsearch.web.caching import STORE_MAX_BYTES, STORE_TOTAL_BYTES, AnswerStore

    store = AnswerStore(entries=4096)
    answer = b"x" * STORE_MAX_BYTES
    for n in range(4096):
        store.put(f"q{n}", answer, "application/json")
    kept = [n for n in range(4096) if store.get(f"q{n}") is not None]
    assert len(kept) * STORE_MAX_BYTES <= STORE_TOTAL_BYTES and kept == list(range(4096 - len(kept), 4096))
    assert len(kept) == STORE_TOTAL_BYTES // STORE_MAX_BYTES  # the newest, as many as the bytes allow
    store.put("q4095", b"{}", "application/json")  # an answer kept again under its key is counted once
    store.put("small", b"{}", "application/json")
    assert store.get("small") is not None and store.get(f"q{kept[1]}") is not None


def test_answer_store_zero_keeps_nothing(sample_data):
    from podsearch.config import load_config
    from podsearch.web import create_app

    app = create_app(load_config({"data": str(sample_data), "answer_store": 0}, environ={}), {"TESTING": True})
    client, store = app.test_client(), app.extensions["podsearch_answers"]
    for _ in range(2):
        assert client.get("/api/v1/search?q=bees").status_code == 200
    assert store.hits == 0 and store.get(client.get("/api/v1/search?q=bees").headers["ETag"].strip('W/"')) is None


def test_errors_and_probes_are_not_cached(client):
    assert client.get("/api/v1/episodes/nope").headers["Cache-Control"] == "no-store"
    assert client.get("/readyz").headers["Cache-Control"] == "no-store"
    assert "ETag" not in client.get("/readyz").headers


# -- limits -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("query", [
    "q=" + "a" * (MAX_QUERY_CHARS + 1),
    f"q=bees&per_page={MAX_DEPTH // 10}&page=11",  # deeper than MAX_DEPTH results
    "q=bees&per_page=101",
    "q=bees&page=0",
    "q=bees&page=two",
    "q=bees&sort=sideways",
    "q=bees&from=yesterday",
])
def test_search_limits_give_400(client, query):
    res = client.get("/api/v1/search?" + query)
    assert res.status_code == 400
    assert res.get_json()["error"]["code"] == "bad_query"


def test_suggest_prefix_limit_gives_400(client):
    assert client.get("/api/v1/suggest?q=" + "b" * (MAX_PREFIX_CHARS + 1)).status_code == 400


def test_body_too_large_gives_413(sample_data, engine_settings):
    client = make_app(sample_data, engine_settings, max_body_bytes=1000).test_client()
    res = client.post("/api/v1/similar", json={"text": "bees " * 400})
    assert res.status_code == 413
    assert res.get_json()["error"]["code"] == "too_large"
    assert client.post("/api/v1/similar", json={"text": "bees " * 100}).status_code == 200


def test_rate_limit_gives_429_with_retry_after(sample_data, engine_settings):
    client = make_app(sample_data, engine_settings, rate_limit=0.5, rate_burst=3).test_client()
    codes = [client.get("/api/v1/shows").status_code for _ in range(4)]
    assert codes == [200, 200, 200, 429]
    res = client.get("/api/v1/shows")
    assert res.get_json()["error"]["code"] == "rate_limited"
    assert int(res.headers["Retry-After"]) >= 1
    assert client.get("/healthz").status_code == 200  # probes are never limited
    other = client.get("/api/v1/shows", environ_base={"REMOTE_ADDR": "10.0.0.9"})
    assert other.status_code == 200  # per client


def test_expensive_searches_cost_more_of_the_rate_limit(sample_data, engine_settings):
    """An expensive search counts five requests: a client that may send ten ordinary searches in its window may
    send two with wildcards, then is told to wait."""
    client = make_app(sample_data, engine_settings, rate_limit=1, rate_burst=10).test_client()
    codes = [client.get("/api/v1/search", query_string={"q": "hon*"}).status_code for _ in range(3)]
    assert codes == [200, 200, 429]
    assert client.get("/api/v1/search", query_string={"q": "honey"}, environ_base={"REMOTE_ADDR": "10.0.0.2"}
                      ).status_code == 200
    # so does a page of more than 50 results (its snippets and moments); the feed's 50 do not
    big = [client.get("/api/v1/search", query_string={"q": "honey", "per_page": 100},
                      environ_base={"REMOTE_ADDR": "10.0.0.3"}).status_code for _ in range(3)]
    assert big == [200, 200, 429]
    feed = [client.get("/search.rss", query_string={"q": "honey"}, environ_base={"REMOTE_ADDR": "10.0.0.4"}
                       ).status_code for _ in range(10)]
    assert feed == [200] * 10
    # a search refused before it runs (400) costs one request, whatever it asked for
    refused = [client.get("/api/v1/search", query_string={"q": "hon*", "page": 0}, environ_base={"REMOTE_ADDR": "10.0.0.5"}
                          ).status_code for _ in range(10)]
    assert refused == [400] * 10


def test_a_search_is_read_once_per_request(sample_data, engine_settings, monkeypatch):
    """The rate limit weighs the search the view runs, read once: the page, the API and the feed (whose page of 50
    is its own default) each parse their query string one time, and a refused one is a 400 with the parser's
    message."""
    from podsearch import requests

    reads = []

    def counted(args):
        reads.append(args.get("per_page"))
        return search_request(args)

    monkeypatch.setattr(requests, "search_request", counted)  # (what requests.search_asked reads it with)
    client = make_app(sample_data, engine_settings, rate_limit=1, rate_burst=100).test_client()
    for path, per_page in (("/search", None), ("/api/v1/search", None), ("/api/search", "5"), ("/search.rss", "50")):
        reads.clear()
        query = {"q": "honey"} | ({"per_page": "5"} if per_page == "5" else {})
        assert client.get(path, query_string=query).status_code == 200, path
        assert reads == [per_page], path
    reads.clear()
    res = client.get("/api/v1/search", query_string={"q": "honey", "page": 0})
    assert res.status_code == 400 and "page" in res.get_json()["error"]["message"]
    assert len(reads) == 1


def test_no_rate_limit_by_default(client):
    assert all(client.get("/api/v1/shows").status_code == 200 for _ in range(60))


# -- access log ---------------------------------------------------------------------------------------


def test_access_log_line_per_request(client, caplog):
    with caplog.at_level(logging.INFO, logger="podsearch.access"):
        # The line is written when the server closes the answer (after its last byte), as WSGI servers do.
        client.get("/api/v1/search?q=secret+words").close()
        client.get("/api/v1/episodes/nope%0Aforged").close()
    lines = [r for r in caplog.records if r.name == "podsearch.access"]
    assert len(lines) == 2
    first, second = lines[0].getMessage(), lines[1].getMessage()
    assert first.startswith("method=GET path=/api/v1/search status=200 ms=")
    assert "secret" not in first  # the query string is not logged
    assert lines[0].access["status"] == 200 and lines[0].access["ms"] >= 0
    assert "status=404" in second and "\n" not in second and "%0A" in second


def test_odd_paths_and_the_browsers_suggestions_answer_json_errors(client):
    """``/opensearch/suggest`` with a prefix over the limit answered its 400 as an HTML page, and ``/api/v1//search``
    a 308 with an HTML body to a Location built from the Host header (``Host: evil.example``)."""
    res = client.get("/opensearch/suggest", query_string={"q": "x" * (MAX_PREFIX_CHARS + 1)})
    assert res.status_code == 400 and res.get_json()["error"]["code"] == "bad_query"
    res = client.get("/api/v1//search?q=x", headers={"Host": "evil.example"})
    assert res.status_code == 404 and "Location" not in res.headers and res.get_json()["error"]["code"] == "not_found"


def test_a_plain_options_is_no_content_with_allow(client):
    """Flask answered OPTIONS 200 with `text/html` and nothing in it."""
    for path in ("/api/search?q=x", "/search?q=x", "/healthz"):
        r = client.open(path, method="OPTIONS")
        assert r.status_code == 204 and "GET" in r.headers["Allow"] and "Content-Type" not in r.headers, path


@pytest.mark.parametrize("host", ["a" * 64 + ".example", "a..b", ".a"])
@pytest.mark.parametrize("path", ["/", "/episodes/nope", "/api/v1/search?q=volcano", "/no-such-page"])
def test_a_host_header_that_is_no_host_name_is_a_400(client, host: str, path: str) -> None:
    """A label over 63 characters or an empty one made Werkzeug refuse the Host while building the URL adapter; the
    error page then could not build its links: a 500 and a hundred lines of traceback per request."""
    res = client.get(path, headers={"Host": host})
    assert res.status_code == 400, res.data[:200]
    assert b"Host header" in res.data
