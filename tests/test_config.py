"""Settings: one declaration each, layered defaults < file < environment < options, and all documented."""

from __future__ import annotations

from pathlib import Path

import pytest

from podsearch.config import SETTINGS, load_config, parse_duration
from podsearch.errors import ConfigError

ROOT = Path(__file__).resolve().parents[1]


def test_defaults_need_no_config():
    config = load_config(environ={})
    assert config.data == "index"
    assert config.feeds == []
    assert config.port == 8080 and config.host == "127.0.0.1"
    assert config.allow_private_hosts is False


def test_file_then_environment_then_options(tmp_path: Path):
    cfg = tmp_path / "podsearch.toml"
    cfg.write_text('feeds = ["https://example.org/feed.xml", "local/feed.xml"]\nport = 9000\nthreads = 2\n')
    config = load_config(environ={"PODSEARCH_CONFIG": str(cfg), "PODSEARCH_PORT": "9100"})
    assert config.feeds[0] == "https://example.org/feed.xml"
    # Relative paths in the file are relative to the file, not to the working directory.
    assert config.feeds[1] == str((tmp_path / "local/feed.xml").resolve())
    assert config.port == 9100  # the environment beats the file
    assert config.threads == 2
    assert load_config({"data": "/x", "config": str(cfg)}, environ={"PODSEARCH_DATA": "/y"}).data == "/x"


def test_allow_private_hosts_from_environment():
    assert load_config(environ={"PODSEARCH_ALLOW_PRIVATE_HOSTS": "1"}).allow_private_hosts is True
    with pytest.raises(ConfigError, match="PODSEARCH_ALLOW_PRIVATE_HOSTS"):
        load_config(environ={"PODSEARCH_ALLOW_PRIVATE_HOSTS": "maybe"})


@pytest.mark.parametrize("text, message", [
    ("feeds = 3\n", "bad value for feeds"),
    ("colour = 'red'\n", "unknown setting 'colour'"),
    ("feeds = [\n", "Cannot read config file"),
])
def test_bad_config_files_name_the_problem(tmp_path: Path, text: str, message: str):
    cfg = tmp_path / "bad.toml"
    cfg.write_text(text)
    with pytest.raises(ConfigError, match=message):
        load_config({"config": str(cfg)}, environ={})


@pytest.mark.parametrize("env, message", [
    ({"PODSEARCH_THREADS": "0"}, "threads: expected at least 1, got '0'"),
    ({"PODSEARCH_SEARCH_DEADLINE": "nan"}, "search_deadline: expected a finite number"),
    ({"PODSEARCH_SEARCH_DEADLINE": "-1"}, "search_deadline: expected at least 0"),
    ({"PODSEARCH_PORT": "99999"}, "port: expected at least 0 and at most 65535"),
    ({"PODSEARCH_FETCH_TIMEOUT": "0"}, "fetch_timeout: expected more than 0"),
    ({"PODSEARCH_RATE_LIMIT": "inf"}, "rate_limit: expected a finite number"),
    ({"PODSEARCH_NEIGHBOURS": "2.5"}, "neighbours: expected a whole number"),
    ({"PODSEARCH_MAX_BODY_BYTES": "-1"}, "max_body_bytes: expected at least 1"),
    ({"PODSEARCH_CLIENT_TIMEOUT": "0"}, "client_timeout: expected more than 0"),
    ({"PODSEARCH_CLIENT_CONNECTIONS": "-1"}, "client_connections: expected at least 0"),
])
def test_numbers_out_of_their_range_are_refused_by_name(env: dict[str, str], message: str):
    """``threads = 0`` served nothing and ``search_deadline = nan`` was no deadline at all; both were accepted."""
    with pytest.raises(ConfigError, match=message):
        load_config(environ=env)


def test_zero_where_the_help_says_it_means_none_is_accepted(tmp_path: Path):
    cfg = tmp_path / "zeros.toml"
    cfg.write_text("search_deadline = 0\nrate_limit = 0\nreindex_deadline = 0\nanswer_store = 0\n"
                   "expensive_searches = 0\nsearch_passages = 0\nport = 0\n")
    config = load_config({"config": str(cfg)}, environ={})
    assert (config.search_deadline, config.rate_limit, config.answer_store, config.port) == (0.0, 0.0, 0, 0)


def test_a_data_folder_that_is_a_file_or_empty_is_refused(tmp_path: Path):
    """A file given as the data folder failed deep in the catalog or the index, with a traceback."""
    afile = tmp_path / "catalog.txt"
    afile.write_text("x")
    with pytest.raises(ConfigError, match="is a file, not a folder"):
        load_config(environ={"PODSEARCH_DATA": str(afile)})
    with pytest.raises(ConfigError, match="expected a folder's path"):
        load_config({"data": ""}, environ={})
    assert load_config(environ={"PODSEARCH_DATA": str(tmp_path / "not-yet")}).data == str(tmp_path / "not-yet")


@pytest.mark.parametrize("value", ["search.example.org", "ftp://example.org", "https://", "https://exa mple.org",
                                   "https://example.org/?q=1", "https://example.org/#top", "https://u:p@example.org",
                                   "https://example.org:0", "https://example.org:99999", "javascript:alert(1)"])
def test_a_public_url_that_is_no_http_address_is_refused(value: str):
    """Every absolute link podsearch writes starts with it (feeds, the widget, webhooks)."""
    with pytest.raises(ConfigError, match="public_url: expected an http or https address"):
        load_config(environ={"PODSEARCH_PUBLIC_URL": value})


def test_a_public_url_is_kept_without_its_trailing_slash():
    assert load_config(environ={"PODSEARCH_PUBLIC_URL": " https://Example.org/podsearch/ "}).public_url == \
        "https://Example.org/podsearch"
    assert load_config(environ={"PODSEARCH_PUBLIC_URL": "http://[::1]:8080"}).public_url == "http://[::1]:8080"
    assert load_config(environ={}).public_url == ""


def test_missing_config_file():
    with pytest.raises(ConfigError, match="not found"):
        load_config({"config": "/nonexistent/podsearch.toml"}, environ={})


def test_every_setting_is_documented():
    docs = (ROOT / "docs" / "configuration.md").read_text()
    for setting in SETTINGS:
        assert f"`{setting.name}`" in docs, f"setting {setting.name} missing from docs/configuration.md"
        assert setting.env in docs, f"{setting.env} missing from docs/configuration.md"
        assert setting.help


@pytest.mark.parametrize("given, read", [("podsearch", "/podsearch"), ("/podsearch/", "/podsearch"), ("/", ""),
                                         ("/a/b", "/a/b"), ("", "")])
def test_a_url_prefix_has_one_leading_slash_and_none_at_the_end(given: str, read: str):
    """``--url-prefix nope`` was served under /nope/ by waitress but announced as ``http://127.0.0.1:8795nope/``
    (and made the search feed's links so)."""
    assert load_config({"url_prefix": given}, environ={}).url_prefix == read


def test_a_url_prefix_with_a_query_or_a_space_is_refused():
    with pytest.raises(ConfigError, match="url_prefix"):
        load_config({"url_prefix": "/a?b=1"}, environ={})


def test_a_whole_number_setting_refuses_a_fraction_from_the_file_too(tmp_path):
    """`threads = 2.7` and `port = 8080.5` in the TOML file were cut to 2 and 8080; from the environment they were
    refused."""
    from podsearch.config import load_config
    from podsearch.errors import ConfigError

    for line in ("threads = 2.7", "port = 8080.5"):
        (tmp_path / "c.toml").write_text(line + "\n", encoding="utf-8")
        with pytest.raises(ConfigError, match="whole number"):
            load_config({"config": str(tmp_path / "c.toml")}, environ={})
    (tmp_path / "c.toml").write_text("threads = 3\nsearch_deadline = 1.5\n", encoding="utf-8")
    config = load_config({"config": str(tmp_path / "c.toml")}, environ={})
    assert config.threads == 3 and config.search_deadline == 1.5


@pytest.mark.parametrize("text, seconds", [("90", 90), ("45s", 45), ("30m", 1800), ("1h", 3600), ("1d", 86400),
                                           ("1h30m", 5400), ("", None), ("0", None), ("off", None)])
def test_parse_duration(text, seconds):
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["soon", "1w", "h", "0.2s", "5m later"])
def test_parse_duration_refuses_nonsense(text):
    with pytest.raises(ValueError):
        parse_duration(text)


@pytest.mark.parametrize("env, message", [
    ({"PODSEARCH_ENGINE": "solr"}, "PODSEARCH_ENGINE: bad value for engine: expected one of whoosh, opensearch"),
    ({"PODSEARCH_REINDEX_EVERY": "weekly"}, "PODSEARCH_REINDEX_EVERY: bad value for reindex_every: cannot read"),
    ({"PODSEARCH_OPENSEARCH_INDEX": "Pod Search"}, "PODSEARCH_OPENSEARCH_INDEX: bad value for opensearch_index"),
    ({"PODSEARCH_OPENSEARCH_REPLICAS": "some"}, "PODSEARCH_OPENSEARCH_REPLICAS: bad value for opensearch_replicas"),
])
def test_a_value_checked_later_is_refused_naming_where_it_was_set(env, message):
    """An unknown engine or an unreadable interval in the environment was refused only when the engine was opened or
    `serve` started, without naming the variable; a bad replica count failed at the first build, as OpenSearch's
    refusal."""
    with pytest.raises(ConfigError, match=message):
        load_config(environ=env)


def test_values_checked_when_read_keep_their_good_forms():
    config = load_config(environ={"PODSEARCH_ENGINE": " OpenSearch", "PODSEARCH_REINDEX_EVERY": "1h30m",
                                  "PODSEARCH_OPENSEARCH_REPLICAS": "0-all", "PODSEARCH_OPENSEARCH_INDEX": "site.a-1"})
    assert (config.engine, config.reindex_every, config.opensearch_replicas, config.opensearch_index) == \
        ("opensearch", "1h30m", "0-all", "site.a-1")
    assert load_config(environ={"PODSEARCH_OPENSEARCH_REPLICAS": "2"}).opensearch_replicas == "2"
    assert load_config({"reindex_every": 3600}, environ={}).reindex_every == "3600"  # seconds, as a TOML number


@pytest.mark.parametrize("line", ['feeds = "a.xml"', 'cors_origins = "*"', 'opensearch_url = "http://127.0.0.1:9200"'])
def test_a_list_setting_in_the_file_is_a_list(tmp_path, line):
    """`feeds = "a.xml, b.xml"` in the TOML file was split at its commas as the environment's text is: a URL with a
    comma in it became two feeds. The file's lists are TOML lists."""
    (tmp_path / "c.toml").write_text(line + "\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="expected a list such as"):
        load_config({"config": str(tmp_path / "c.toml")}, environ={})
