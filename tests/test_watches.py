"""Watches end to end: the real CLI, a real catalog and index (the sample), a real receiver on 127.0.0.1.

Each test adds a watch, imports a JSON-lines file (or reindexes) and reads what the receiver got: how many
POSTs, to whom, signed how, naming which episodes.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from hookserver import HookServer, signature_ok

from podsearch.catalog import Catalog
from podsearch.cli import main
from podsearch.ingest import fetch as fetch_mod

SECRET = "correct horse battery staple"
PRIVATE = {"PODSEARCH_ALLOW_PRIVATE_HOSTS": "1"}  # the receiver is on 127.0.0.1

K8S = {"id": "urn:test:k8s-1?part=1", "show": "Ops Hour", "title": "Clusters at home", "published": "2025-03-04",
       "segments": [{"start": 0, "end": 12, "speaker": "Ana", "text": "Welcome to the show."},
                    {"start": 12, "end": 40, "speaker": "Bo", "text": "We moved the lab to Kubernetes last winter."},
                    {"start": 40, "end": 60, "speaker": "Ana", "text": "And the garden sensors too."}]}
GARDEN = {"id": "urn:test:garden-1", "show": "Ops Hour", "title": "Tomatoes", "published": "2025-03-05",
          "segments": [{"start": 0, "end": 30, "speaker": "Ana", "text": "Tomatoes want sun and a little gardening care."}]}


@pytest.fixture
def hooks():
    with HookServer() as server:
        yield server


def _jsonl(path: Path, *episodes: dict) -> str:
    path.write_text("".join(json.dumps(e) + "\n" for e in episodes), encoding="utf-8")
    return str(path)


def _cli(runner, data: Path, *args: str, env: dict[str, str] | None = None):
    return runner.invoke(main, ["--data", str(data), *args], env={**PRIVATE, **(env or {})}, catch_exceptions=False)


def _add(runner, data: Path, query: str, url: str, *extra: str, env: dict[str, str] | None = None) -> int:
    result = _cli(runner, data, "watch", "add", query, "--webhook", url, "--secret", SECRET, "--json", *extra, env=env)
    assert result.exit_code == 0, result.output
    return json.loads(result.output)["id"]


def _pending(data: Path) -> list[dict]:
    with Catalog.in_dir(data) as cat:
        return cat.pending_deliveries()


def test_import_posts_one_signed_delivery_naming_only_the_matching_episode(runner, sample_data, hooks, tmp_path):
    hooks.secrets["/hook"] = SECRET
    watch_id = _add(runner, sample_data, "kubernetes", hooks.url("/hook"))
    result = _cli(runner, sample_data, "import", _jsonl(tmp_path / "new.jsonl", K8S, GARDEN))
    assert result.exit_code == 0, result.output
    assert "1 delivered, 0 failed" in result.output

    assert len(hooks.posts) == 1
    post = hooks.posts[0]
    assert post.signed is True and post.status == 204
    assert post.headers["Content-Type"].startswith("application/json")
    assert post.headers["X-Podsearch-Event"] == "episodes.new"
    doc = post.json
    assert doc["delivery"] == post.headers["X-Podsearch-Delivery"]
    assert doc["watch"]["id"] == watch_id and doc["watch"]["query"] == "kubernetes"
    assert doc["watch"]["feed"] == "/search.rss?q=kubernetes"
    [episode] = doc["episodes"]
    assert episode["id"] == K8S["id"] and episode["title"] == "Clusters at home" and episode["show"] == "Ops Hour"
    assert episode["link"] == "/episodes/urn%3Atest%3Ak8s-1%3Fpart%3D1?t=12"
    assert episode["moment"]["start"] == 12 and episode["moment"]["speaker"] == "Bo"
    assert "Kubernetes" in episode["moment"]["text"] and "<mark>" not in episode["moment"]["text"]
    assert _pending(sample_data) == []

    # The same file again, then a reindex of the unchanged feeds: nothing new, nothing sent.
    assert _cli(runner, sample_data, "import", str(tmp_path / "new.jsonl")).exit_code == 0
    assert _cli(runner, sample_data, "-q", "reindex").exit_code == 0
    assert len(hooks.posts) == 1
    listed = json.loads(_cli(runner, sample_data, "watch", "list", "--json").output)
    assert listed[0]["delivered"] == 1 and listed[0]["pending"] == 0 and listed[0]["last_error"] is None
    assert "secret" not in listed[0]


def test_a_receiver_that_fails_gets_the_delivery_on_the_next_run_exactly_once(runner, sample_data, hooks, tmp_path):
    hooks.secrets["/flaky"] = SECRET
    hooks.answers["/flaky"] = [500, 500, 500]  # the first try and its two retries
    _add(runner, sample_data, "kubernetes", hooks.url("/flaky"))
    first = _cli(runner, sample_data, "import", _jsonl(tmp_path / "new.jsonl", K8S, GARDEN))
    assert first.exit_code == 0, first.output  # a failed delivery is not a failed import
    assert "0 delivered, 1 failed, 1 kept for the next run" in first.output
    assert "HTTP 500" in first.output
    assert [p.status for p in hooks.to("/flaky")] == [500, 500, 500]
    [kept] = _pending(sample_data)
    assert kept["attempts"] == 1

    second = _cli(runner, sample_data, "-q", "reindex")  # nothing new in the feeds: only the kept delivery goes
    assert second.exit_code == 0, second.output
    assert "1 delivered, 0 failed, 0 kept" in second.output
    posts = hooks.to("/flaky")
    assert [p.status for p in posts] == [500, 500, 500, 204]
    assert posts[-1].signed and posts[-1].body == posts[0].body  # the same delivery, byte for byte
    assert posts[-1].headers["X-Podsearch-Delivery"] == posts[0].headers["X-Podsearch-Delivery"]
    assert [e["id"] for e in posts[-1].json["episodes"]] == [K8S["id"]]

    assert _cli(runner, sample_data, "-q", "reindex").exit_code == 0
    assert len(hooks.to("/flaky")) == 4 and _pending(sample_data) == []


def test_500_hang_and_private_redirect_are_reported_not_fatal(runner, sample_data, hooks, tmp_path, monkeypatch):
    """With the private-address guard on: the receiver's own 127.0.0.1 counts as public here (the socket guard
    and the address check share is_public_ip), 10.0.0.1 stays private."""
    real = fetch_mod.is_public_ip
    monkeypatch.setattr(fetch_mod, "is_public_ip", lambda ip: (True, "global") if str(ip) == "127.0.0.1" else real(ip))
    hooks.answers["/down"] = [500] * 9
    hooks.answers["/slow"] = ["hang"] * 3
    hooks.answers["/moved"] = [(307, "http://10.0.0.1/hook")] * 3
    guarded = {"PODSEARCH_ALLOW_PRIVATE_HOSTS": "0", "PODSEARCH_WEBHOOK_TIMEOUT": "1"}
    for path in ("/down", "/slow", "/moved"):
        _add(runner, sample_data, "kubernetes", hooks.url(path), env=guarded)
    started = time.monotonic()
    result = _cli(runner, sample_data, "import", _jsonl(tmp_path / "new.jsonl", K8S, GARDEN), env=guarded)
    took = time.monotonic() - started
    assert result.exit_code == 0, result.output
    assert "0 delivered, 3 failed, 3 kept for the next run" in result.output
    assert "HTTP 500" in result.output
    assert "took longer than 1 s" in result.output
    assert "refused http://10.0.0.1/hook: resolves to 10.0.0.1 (private)" in result.output
    assert len(hooks.to("/moved")) == 1  # the redirect is refused, not retried
    assert len(hooks.to("/slow")) == 1  # no time is left for a retry within the timeout
    assert len(_pending(sample_data)) == 3
    assert took < 30, took  # three timeouts of 1 s and the retries of the 500s, plus the import itself


def test_deliveries_past_the_budget_wait_for_the_next_run(runner, sample_data, hooks, tmp_path):
    _add(runner, sample_data, "kubernetes", hooks.url("/a"))
    _add(runner, sample_data, "tomatoes", hooks.url("/b"))
    result = _cli(runner, sample_data, "import", _jsonl(tmp_path / "new.jsonl", K8S, GARDEN),
                  env={"PODSEARCH_WEBHOOK_BUDGET": "0"})
    assert result.exit_code == 0 and "0 delivered, 0 failed, 2 kept" in result.output
    assert hooks.posts == []
    assert _cli(runner, sample_data, "-q", "reindex").exit_code == 0
    assert sorted(p.path for p in hooks.posts) == ["/a", "/b"]
    assert [e["id"] for e in hooks.to("/b")[0].json["episodes"]] == [GARDEN["id"]]


def test_every_word_counts_even_where_the_search_would_fall_back_to_any_word(runner, sample_data, hooks, tmp_path):
    """Two new episodes, one with both words: the search box answers with any word (fewer than three have
    both), the watch names only the episode with both."""
    _add(runner, sample_data, "kubernetes gardening", hooks.url("/hook"))
    both = {**GARDEN, "id": "urn:test:both", "segments": [
        {"start": 5, "end": 9, "text": "Kubernetes for gardening: a cluster waters the tomatoes."}]}
    only_one = {**GARDEN, "id": "urn:test:only-gardening"}
    assert _cli(runner, sample_data, "import", _jsonl(tmp_path / "new.jsonl", both, only_one)).exit_code == 0
    search = json.loads(_cli(runner, sample_data, "search", "kubernetes gardening", "--json").output)
    assert search["relaxed"] is True and search["total"] >= 2  # what the search box would show
    [post] = hooks.posts
    assert [e["id"] for e in post.json["episodes"]] == ["urn:test:both"]


def test_episodes_already_there_or_changed_are_not_announced(runner, sample_data, hooks, tmp_path):
    existing = {**GARDEN, "id": "urn:test:existing"}  # (imported: a feed's episodes are its feed's to change)
    assert _cli(runner, sample_data, "import", _jsonl(tmp_path / "old.jsonl", existing)).exit_code == 0
    _add(runner, sample_data, "kubernetes", hooks.url("/hook"))
    changed = {**existing, "segments": [{"start": 0, "end": 9, "text": "Now this old episode talks about Kubernetes."}]}
    result = _cli(runner, sample_data, "import", _jsonl(tmp_path / "changed.jsonl", changed))
    assert result.exit_code == 0 and "1 updated" in result.output
    assert hooks.posts == []


def test_a_run_that_stopped_after_storing_episodes_announces_them_next_time(runner, sample_data, hooks, tmp_path):
    from podsearch.reindex import import_lines

    _add(runner, sample_data, "kubernetes", hooks.url("/hook"))
    with Catalog.in_dir(sample_data) as cat:  # the import step alone: as if the run died before the index
        import_lines(cat, _jsonl(tmp_path / "new.jsonl", K8S, GARDEN))
    assert hooks.posts == []
    assert _cli(runner, sample_data, "-q", "reindex").exit_code == 0
    [post] = hooks.posts
    assert [e["id"] for e in post.json["episodes"]] == [K8S["id"]]


def test_a_watch_only_hears_of_episodes_added_after_it(runner, sample_data, hooks, tmp_path):
    _add(runner, sample_data, "tomatoes", hooks.url("/first"))
    with Catalog.in_dir(sample_data) as cat:
        from podsearch.reindex import import_lines

        import_lines(cat, _jsonl(tmp_path / "a.jsonl", GARDEN))  # stored, not yet announced
    _add(runner, sample_data, "tomatoes", hooks.url("/second"))
    assert _cli(runner, sample_data, "-q", "reindex").exit_code == 0
    assert len(hooks.to("/first")) == 1 and hooks.to("/second") == []


def test_many_new_matches_are_split_into_posts_of_a_hundred(runner, sample_data, hooks, tmp_path):
    episodes = [{**K8S, "id": f"urn:test:bulk-{n}", "published": f"2025-01-{1 + n % 28:02d}"} for n in range(130)]
    _add(runner, sample_data, "kubernetes", hooks.url("/hook"))
    assert _cli(runner, sample_data, "import", _jsonl(tmp_path / "bulk.jsonl", *episodes)).exit_code == 0
    docs = sorted((p.json for p in hooks.posts), key=lambda d: d["part"])
    assert [(d["part"], d["parts"], len(d["episodes"])) for d in docs] == [(1, 2, 100), (2, 2, 30)]
    ids = [e["id"] for d in docs for e in d["episodes"]]
    assert sorted(ids) == sorted(e["id"] for e in episodes)
    dates = [e["published"] for e in docs[0]["episodes"] + docs[1]["episodes"]]
    assert dates == sorted(dates, reverse=True)  # newest first


@pytest.mark.parametrize(("args", "message"), [
    (["", "--webhook", "https://example.org/h"], "query is empty"),
    (["kubernetes", "--webhook", "ftp://example.org/h"], "it is no http:// or https:// URL"),
    (["kubernetes", "--webhook", "not a url"], "spaces or control characters"),
    (["kubernetes", "--webhook", "https://"], "it has no host"),
    (["kubernetes", "--webhook", "https://example.org:99999/h"], "its port is no number from 1 to 65535"),
    (["kubernetes", "--webhook", "https://example.org:0/h"], "its port is no number from 1 to 65535"),
    (["kubernetes", "--webhook", "http://[::1/h"], "its host is no valid name or address"),
    (["kubernetes", "--webhook", "http://127.0.0.1:9/h"], "resolves to 127.0.0.1 (loopback)"),
    (["kubernetes", "--webhook", "http://10.1.2.3/h"], "PODSEARCH_ALLOW_PRIVATE_HOSTS=1"),
    (["kubernetes", "--webhook", "https://93.184.216.34/h", "--secret", "short"], "at least 16 characters"),
    (["kubernetes", "--webhook", "https://93.184.216.34/h", "--from", "last week"], "must be a date like"),
    (["kubernetes", "--webhook", "https://93.184.216.34/h", "--lang", "not a language"], "language must be a code"),
    (["kubernetes", "--webhook", "https://93.184.216.34/h", "--duration-min", "-5"], "-5"),
    (["kubernetes"], "Missing option '--webhook'"),
    # the query and the secret are checked before the webhook's host is looked up (a host that did not resolve hid
    # them; ".invalid" never resolves, and is not looked up now)
    (["kubernetes", "--webhook", "https://hooks.invalid/h", "--secret", "short"], "at least 16 characters"),
    (["published:x", "--webhook", "https://hooks.invalid/h"], "The query cannot be used"),
])
def test_bad_watch_input_is_refused_with_exit_2(runner, sample_data, args, message):
    result = runner.invoke(main, ["--data", str(sample_data), "watch", "add", *args])
    assert result.exit_code == 2, result.output
    assert message in result.output
    assert "Traceback" not in result.output
    assert _cli(runner, sample_data, "watch", "list", "--json").output.strip() == "[]"


def test_list_and_remove(runner, sample_data, hooks, tmp_path):
    hooks.answers["/hook"] = [500] * 3
    first = _add(runner, sample_data, "kubernetes", hooks.url("/hook"), "--show", "ops-hour", "--lang", "EN")
    second = _add(runner, sample_data, "bees", hooks.url("/other"))
    _cli(runner, sample_data, "import", _jsonl(tmp_path / "new.jsonl", K8S), env={"PODSEARCH_WEBHOOK_TIMEOUT": "2"})
    listed = {w["id"]: w for w in json.loads(_cli(runner, sample_data, "watch", "list", "--json").output)}
    assert listed[first]["filters"] == {"shows": ["ops-hour"], "language": "en"}
    assert listed[first]["feed"] == "/search.rss?q=kubernetes&show=ops-hour&lang=en"
    assert listed[first]["pending"] == 1 and "HTTP 500" in listed[first]["last_error"]
    text = _cli(runner, sample_data, "watch", "list").output
    assert f"{first}: 'kubernetes' show=ops-hour lang=en -> {hooks.url('/hook')}" in text and "1 pending" in text

    assert _cli(runner, sample_data, "watch", "remove", str(first)).output.strip() == f"watch {first} removed"
    assert [w["id"] for w in json.loads(_cli(runner, sample_data, "watch", "list", "--json").output)] == [second]
    assert _pending(sample_data) == []  # its pending delivery went with it
    missing = runner.invoke(main, ["--data", str(sample_data), "watch", "remove", str(first)])
    assert missing.exit_code == 1 and f"No watch with id {first}" in missing.output  # (not found, as an episode)


def test_add_prints_a_made_secret_once_and_it_signs(runner, sample_data, hooks, tmp_path):
    result = _cli(runner, sample_data, "watch", "add", "kubernetes", "--webhook", hooks.url("/hook"))
    assert result.exit_code == 0, result.output
    secret = result.output.split("secret: ")[1].split()[0]
    assert len(secret) == 64 and secret not in _cli(runner, sample_data, "watch", "list").output
    _cli(runner, sample_data, "import", _jsonl(tmp_path / "new.jsonl", K8S))
    [post] = hooks.posts
    assert signature_ok(secret, post.body, post.headers["X-Podsearch-Signature"])
    assert not signature_ok(secret, post.body + b" ", post.headers["X-Podsearch-Signature"])


def test_a_watch_needs_an_index_to_check_its_query(runner, tmp_path):
    result = runner.invoke(main, ["--data", str(tmp_path / "empty"), "watch", "add", "kubernetes",
                                  "--webhook", "https://93.184.216.34/h"])
    assert result.exit_code == 1 and "Run 'podsearch reindex' first" in result.output


def test_public_url_makes_links_absolute(runner, sample_data, hooks, tmp_path):
    _add(runner, sample_data, "kubernetes", hooks.url("/hook"))
    _cli(runner, sample_data, "import", _jsonl(tmp_path / "new.jsonl", K8S),
         env={"PODSEARCH_PUBLIC_URL": "https://search.example.org/pod/"})
    doc = hooks.posts[0].json
    assert doc["episodes"][0]["link"] == "https://search.example.org/pod/episodes/urn%3Atest%3Ak8s-1%3Fpart%3D1?t=12"
    assert doc["watch"]["feed"] == "https://search.example.org/pod/search.rss?q=kubernetes"


def test_the_inbox_is_kept_only_while_there_are_watches(runner, sample_data, tmp_path):
    assert _cli(runner, sample_data, "import", _jsonl(tmp_path / "a.jsonl", K8S)).exit_code == 0
    with Catalog.in_dir(sample_data) as cat:
        assert cat.watch_inbox() == []
        watch_id = cat.add_watch("tomatoes", {}, "https://93.184.216.34/h", SECRET)
        from podsearch.reindex import import_lines

        import_lines(cat, _jsonl(tmp_path / "b.jsonl", GARDEN))
        assert [row["id"] for row in cat.watch_inbox()] == [GARDEN["id"]]
        assert cat.remove_watch(watch_id) and cat.watch_inbox() == []


def test_an_older_catalog_is_migrated(tmp_path):
    import sqlite3

    from podsearch.catalog import SCHEMA_VERSION

    path = tmp_path / "catalog.sqlite"
    with Catalog(path):
        pass
    db = sqlite3.connect(path)
    db.executescript("DROP TRIGGER watch_inbox_new; DROP TABLE watch_deliveries; DROP TABLE watch_inbox; "
                     "DROP TABLE watches; UPDATE meta SET value = '1' WHERE key = 'schema_version';")
    db.close()
    with Catalog(path) as cat:
        assert cat.db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()[0] == str(SCHEMA_VERSION)
        assert cat.watches() == [] and cat.pending_deliveries() == []
        assert cat.db.execute("SELECT name FROM sqlite_master WHERE name = 'watch_inbox_new'").fetchone()


def test_post_follows_307_and_308_with_the_body_and_refuses_other_redirects(hooks):
    from podsearch.errors import FetchError
    from podsearch.ingest.fetch import Fetcher, FetchLimits

    hooks.answers["/old"] = [(307, "/new")]
    hooks.answers["/older"] = [(308, hooks.url("/new"))]
    hooks.answers["/gone"] = [(302, "/new")]
    with Fetcher(FetchLimits(total_timeout=5, allow_private=True)) as fetcher:
        assert fetcher.post(hooks.url("/old"), b'{"a": 1}', {"Content-Type": "application/json"}) == 204
        assert fetcher.post(hooks.url("/older"), b'{"b": 2}') == 204
        with pytest.raises(FetchError, match="HTTP 302 redirect to /new .*only 307 and 308"):
            fetcher.post(hooks.url("/gone"), b'{"c": 3}')
    assert [(p.path, p.body) for p in hooks.posts] == [
        ("/old", b'{"a": 1}'), ("/new", b'{"a": 1}'), ("/older", b'{"b": 2}'), ("/new", b'{"b": 2}'), ("/gone", b'{"c": 3}')]
    assert hooks.posts[1].headers["Content-Type"] == "application/json"
