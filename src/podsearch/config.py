"""Every setting once: name, type, default, help and environment variable.

Values come from (highest first): command-line options, ``PODSEARCH_*`` environment variables, the
TOML config file (``--config`` / ``PODSEARCH_CONFIG``), then the defaults below.
"""

from __future__ import annotations

import math
import os
import re
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from .errors import ConfigError
from .urls import http_url_problem


@dataclass(frozen=True)
class Setting:
    name: str
    type: Callable[[Any], Any]
    default: Any
    help: str

    @property
    def env(self) -> str:
        return "PODSEARCH_" + self.name.upper()


def _bool(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in {"1", "true", "yes", "on"}:
        return True
    if text in {"0", "false", "no", "off", ""}:
        return False
    raise ValueError(f"expected a boolean (1/0, true/false), got {value!r}")


def _str_list(value: Any) -> list[str]:
    if isinstance(value, str):
        return [v.strip() for v in value.split(",") if v.strip()]
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return list(value)
    raise ValueError("expected a list of URLs or paths")


ENGINES = ("whoosh", "opensearch")


def _choice(*choices: str) -> Callable[[Any], str]:
    """One of ``choices`` (an unknown engine was refused later, by the engine, without naming where it was set)."""
    def one(value: Any) -> str:
        text = value.strip().lower() if isinstance(value, str) else value
        if text not in choices:
            raise ValueError(f"expected one of {', '.join(choices)}, got {value!r}")
        return text
    return one


_DURATION_UNITS = {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400}
_DURATION_PART = re.compile(r"(\d+(?:\.\d+)?)\s*([smhd]?)")


def parse_duration(text: str) -> float | None:
    """``"90"``, ``"45s"``, ``"30m"``, ``"1h"``, ``"1d"``, ``"1h30m"`` to seconds; empty or ``0`` to None (never);
    ValueError for anything else or less than a second."""
    text = (text or "").strip().lower()
    if text in {"", "0", "off", "never"}:
        return None
    parts = _DURATION_PART.findall(text)
    if not parts or _DURATION_PART.sub("", text).strip():
        raise ValueError(f"cannot read the duration {text!r}; write it like 90s, 30m, 1h or 1d")
    seconds = sum(float(n) * _DURATION_UNITS[u] for n, u in parts)
    if seconds < 1:
        raise ValueError(f"the duration {text!r} is shorter than a second")
    return seconds


def _duration(value: Any) -> str:
    """A duration as written (``30m``), checked when the setting is read: a bad ``PODSEARCH_REINDEX_EVERY`` was
    refused only when ``serve`` started, without naming the variable."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):  # (seconds: ``reindex_every = 3600``)
        value = f"{value:g}"
    if not isinstance(value, str):
        raise ValueError(f"expected a duration such as 30m, 1h or 1d, got {value!r}")
    parse_duration(value)
    return value.strip()


def opensearch_index_name(value: Any) -> str:
    """A lower-case OpenSearch index name (the alias podsearch searches; its indexes are named after it)."""
    if not isinstance(value, str) or not re.fullmatch(r"[a-z0-9][a-z0-9_.-]*", value):
        raise ValueError(f"expected a lower-case OpenSearch index name, got {value!r}")
    return value


def _replicas(value: Any) -> str:
    """OpenSearch replicas: a number (``1``) or a range (``0-1``, ``0-all``); anything else failed at the first
    build, as OpenSearch's refusal."""
    text = str(value).strip() if isinstance(value, (str, int)) and not isinstance(value, bool) else None
    if text is None or not re.fullmatch(r"\d+(-(\d+|all))?", text):
        raise ValueError(f"expected a number of replicas or a range such as 0-1 or 0-all, got {value!r}")
    return text


def _bounded(kind: type, low: float, high: float | None = None, above: bool = False) -> Callable[[Any], Any]:
    """A number of ``kind`` (int or float), finite, at least ``low`` (more than it with ``above``) and at most
    ``high``: ``threads = 0`` served nothing, ``search_deadline = nan`` was no deadline at all."""
    def number(value: Any) -> Any:
        if isinstance(value, bool) or (kind is int and isinstance(value, float)):  # (TOML's threads = 2.7 was 2)
            raise ValueError(f"expected {'a whole number' if kind is int else 'a number'}, got {value!r}")
        try:
            out = kind(value.strip() if isinstance(value, str) else value)
        except (TypeError, ValueError):
            raise ValueError(f"expected {'a whole number' if kind is int else 'a number'}, got {value!r}") from None
        if not math.isfinite(out):
            raise ValueError(f"expected a finite number, got {value!r}")
        if (out <= low if above else out < low) or (high is not None and out > high):
            bound = f"more than {low:g}" if above else f"at least {low:g}"
            raise ValueError(f"expected {bound}{f' and at most {high:g}' if high is not None else ''}, got {value!r}")
        return out
    return number


def _folder(value: Any) -> str:
    """A folder's path: given, and not a file (a file there failed deep in the catalog or the index, with a
    traceback); a folder not there yet is made by the first reindex or import."""
    if not isinstance(value, str) or not value.strip() or "\x00" in value:
        raise ValueError(f"expected a folder's path, got {value!r}")
    if os.path.exists(value) and not os.path.isdir(value):
        raise ValueError(f"{value!r} is a file, not a folder")
    return value


def _public_url(value: Any) -> str:
    """Empty, or an http(s) address with a host (``https://search.example.org``, ``https://example.org/podsearch``),
    kept without its trailing slash: absolute links are this followed by a path."""
    text = str(value).strip().rstrip("/") if isinstance(value, str) else None
    if text == "":
        return ""
    parts = urlsplit(text) if text is not None and not http_url_problem(text) else None
    if parts is None or parts.query or parts.fragment or parts.username is not None:
        raise ValueError(f"expected an http or https address such as https://search.example.org, got {value!r}")
    return text


def _path_prefix(value: Any) -> str:
    """A path the site is served under: "" (the root) or ``/podsearch``, with one leading slash and none at the end
    (``podsearch`` and ``/podsearch/`` are read so; without the slash the start-up line announced
    ``http://127.0.0.1:8080podsearch/``)."""
    if not isinstance(value, str) or any(c in value for c in "?#\x00 "):
        raise ValueError(f"expected a path such as /podsearch, got {value!r}")
    path = value.strip().strip("/")
    return f"/{path}" if path else ""


_SECONDS = _bounded(float, 0)  # 0 means "none" where the help says so
_POSITIVE_SECONDS = _bounded(float, 0, above=True)
_COUNT = _bounded(int, 0)
_SOME = _bounded(int, 1)


def _megabytes(value: Any) -> int:
    """Megabytes from a number (``2048``) or a size with a unit (``512M``, ``2G``, ``2GB``); 0 is allowed."""
    if isinstance(value, bool):
        raise ValueError(f"expected a size in megabytes (e.g. 2048, 512M, 2G), got {value!r}")
    if isinstance(value, int):
        number, unit = value, ""
    else:
        match = re.fullmatch(r"\s*(\d+)\s*([mMgG]?)[bB]?\s*", str(value))
        if match is None:
            raise ValueError(f"expected a size in megabytes (e.g. 2048, 512M, 2G), got {value!r}")
        number, unit = int(match.group(1)), match.group(2).upper()
    if number < 0:
        raise ValueError(f"a size cannot be negative, got {value!r}")
    return number * 1024 if unit == "G" else number


SETTINGS: tuple[Setting, ...] = (
    Setting("data", _folder, "index", "Data folder: catalog (SQLite), Whoosh index and similarity model."),
    Setting("config", str, "", "TOML config file with `feeds = [...]` and any setting below."),
    Setting("feeds", _str_list, [], "Feed URLs or local paths to index (a TOML list; comma-separated in the environment)."),
    Setting("allow_private_hosts", _bool, False,
            "Let URLs found inside feeds (transcripts, chapters) and watch webhooks reach private and loopback addresses."),
    Setting("host", str, "127.0.0.1", "Address `podsearch serve` listens on."),
    Setting("port", _bounded(int, 0, 65535), 8080, "Port `podsearch serve` listens on."),
    Setting("threads", _SOME, 4, "Worker threads of the waitress server."),
    Setting("url_prefix", _path_prefix, "",
            "Path the site is served under behind a reverse proxy (e.g. /podsearch); empty: the root."),
    Setting("trusted_proxy", str, "",
            "Address of the reverse proxy whose X-Forwarded-* headers are believed ('*' for any); empty: none."),
    Setting("trusted_proxy_headers", str, "x-forwarded-for x-forwarded-host x-forwarded-proto x-forwarded-port",
            "Space-separated X-Forwarded-* (or 'forwarded') headers taken from the trusted proxy."),
    Setting("reindex_every", _duration, "", "Reindex from inside `podsearch serve` this often (e.g. 30m, 1h, 1d); empty: never."),
    Setting("shutdown_timeout", _SECONDS, 30.0, "Seconds `podsearch serve` lets requests in flight finish after SIGTERM."),
    Setting("access_log", _bool, True, "Log one line per request (method, path, status, milliseconds) on stderr."),
    Setting("cors_origins", _str_list, [],
            "Origins allowed to call the JSON API from a browser (a list; '*' for any); empty: no CORS headers."),
    Setting("cache_max_age", _COUNT, 60, "Seconds clients and proxies may cache an API answer (Cache-Control max-age)."),
    Setting("answer_store", _COUNT, 4096,
            "Encoded answers of /similar and /api/search the server keeps in memory per data version (answered "
            "again without work); 0: none."),
    Setting("max_body_bytes", _SOME, 64 * 1024, "Largest request body accepted, in bytes; larger ones get 413."),
    Setting("client_connections", _COUNT, 32,
            "Connections one client address (an IPv6 client: its /64) may hold open at once; more are closed as "
            "they open (the trusted proxy's address is exempt). 0: no cap."),
    Setting("client_searches", _COUNT, 0,
            "Searches of one client (its address; behind the trusted proxy, the address it forwards) served at once; "
            "the client's others wait in the queue, in its turn. 0: half the workers that may search, rounded up."),
    Setting("client_timeout", _POSITIVE_SECONDS, 20.0,
            "Seconds a connection has to send a whole request (head and body), counted from when it opens or its "
            "last answer was sent; then it is closed. An idle keep-alive connection is closed as late."),
    Setting("rate_limit", _SECONDS, 0.0, "Requests per second allowed per client address (Flask-Limiter, a moving "
            "window of rate_burst requests; an expensive search counts 5); 0: no limit."),
    Setting("rate_burst", _SOME, 30, "Requests a client may send at once before the rate limit applies."),
    Setting("fetch_timeout", _POSITIVE_SECONDS, 30.0,
            "Seconds a single feed or transcript download may take, from its request to its last byte (retries and "
            "redirects included; a server that never answers is given up after it). Until 5 December 2026 a download "
            "had twice this."),
    Setting("max_feed_bytes", _SOME, 50 * 1024 * 1024, "Largest feed accepted, in bytes."),
    Setting("max_transcript_bytes", _SOME, 20 * 1024 * 1024, "Largest transcript accepted, in bytes."),
    Setting("fetch_workers", _SOME, 4, "Transcripts fetched at once during a reindex."),
    Setting("reindex_deadline", _SECONDS, 0.0,
            "Seconds a reindex may spend reading feeds and transcripts; what was read by then is stored and "
            "indexed, the rest is reported (exit 1) and read next time. 0: no deadline."),
    Setting("neighbours", _SOME, 50, "Neighbours precomputed per episode by the similarity model."),
    Setting("search_passages", _SECONDS, 0.1,
            "Share of the top score each of a search's top 20 episodes gains for its best transcript passage before "
            "the model's vote (0.1 ranked the topical dev set best, +0.005 nDCG@10; docs/search.md); 0: off."),
    Setting("build_memory", _megabytes, 0,
            "Memory a full rebuild of the search index may use, in MB (or 512M, 2G): fewer writer processes and "
            "smaller posting pools below about 1 GB; 0: two processes with 256 MB pools (about 1.3 GB)."),
    Setting("search_deadline", _SECONDS, 1.0,
            "Seconds of engine work a search may take; then it answers with what it found (`timed_out`), or 503 "
            "when that is nothing. 0: no deadline."),
    Setting("expensive_searches", _COUNT, 0,
            "Searches with wildcards, ranges or many words that may run at once (others get 503 + Retry-After); "
            "0: a quarter of the threads, at least 1."),
    Setting("engine", _choice(*ENGINES), "whoosh",
            "Search engine: `whoosh` (embedded, in the data folder) or `opensearch` (a cluster at `opensearch_url`)."),
    Setting("opensearch_url", _str_list, ["http://127.0.0.1:9200"],
            "OpenSearch node URLs (a list; comma-separated in the environment): requests go to each in turn and skip "
            "a node that does not answer."),
    Setting("opensearch_user", str, "", "OpenSearch user (HTTP basic authentication); empty: none."),
    Setting("opensearch_password", str, "", "OpenSearch password for `opensearch_user`."),
    Setting("opensearch_verify_tls", _bool, True, "Verify the TLS certificate of https OpenSearch URLs."),
    Setting("opensearch_ca_certs", str, "",
            "CA bundle (a PEM file) to verify OpenSearch's certificate with; empty: the system's."),
    Setting("opensearch_index", opensearch_index_name, "podsearch",
            "Name of the OpenSearch alias podsearch searches (its indexes are named after it); one per site."),
    Setting("opensearch_shards", _SOME, 1, "Primary shards of a new OpenSearch index (set when it is built)."),
    Setting("opensearch_replicas", _replicas, "0-1",
            "Replicas of each shard: a number, or a range such as `0-1` (one where a second node exists)."),
    Setting("opensearch_timeout", _POSITIVE_SECONDS, 30.0, "Seconds an OpenSearch request may take."),
    Setting("public_url", _public_url, "",
            "The site's public address (e.g. https://search.example.org, with url_prefix's path if any): absolute "
            "links in feeds, the OpenSearch description, the widget and webhooks. Unset: they follow each "
            "request's Host header."),
    Setting("webhook_timeout", _POSITIVE_SECONDS, 10.0, "Seconds one webhook delivery may take, its retries included."),
    Setting("webhook_budget", _SECONDS, 60.0,
            "Seconds a reindex may spend delivering webhooks; deliveries left over wait for the next run."),
)

_BY_NAME = {s.name: s for s in SETTINGS}


@dataclass
class Config:
    values: dict[str, Any] = field(default_factory=dict)
    path: Path | None = None

    def __getattr__(self, name: str) -> Any:
        try:
            return self.values[name]
        except KeyError:
            raise AttributeError(name) from None

    @property
    def data_dir(self) -> Path:
        return Path(self.values["data"])


# The command-line options whose names are not their setting's (``--memory`` sets build_memory).
OPTION_NAMES = {"build_memory": "--memory"}


def option_value(name: str, raw: Any) -> Any:
    """A setting's value given as a command-line option, checked as the config file's and the environment's are
    (ConfigError naming the option)."""
    return _coerce(_BY_NAME[name], raw, OPTION_NAMES.get(name, f"--{name.replace('_', '-')}"))


def _coerce(setting: Setting, raw: Any, origin: str) -> Any:
    try:
        return setting.type(raw)
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"{origin}: bad value for {setting.name}: {exc}") from None


def load_config(overrides: dict[str, Any] | None = None, environ: dict[str, str] | None = None) -> Config:
    """Merge defaults, the TOML file, the environment and explicit overrides (None means not given)."""
    env = os.environ if environ is None else environ
    overrides = {k: v for k, v in (overrides or {}).items() if v is not None}
    values = {s.name: s.default for s in SETTINGS}

    path_text = overrides.get("config") or env.get("PODSEARCH_CONFIG") or ""
    path = Path(path_text) if path_text else None
    if path is not None:
        try:
            doc = tomllib.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise ConfigError(f"Config file {path} not found.") from None
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
            raise ConfigError(f"Cannot read config file {path}: {exc}") from None
        for key, raw in doc.items():
            setting = _BY_NAME.get(key.replace("-", "_"))
            if setting is None or setting.name == "config":
                known = ", ".join(s.name for s in SETTINGS if s.name != "config")
                raise ConfigError(f"{path}: unknown setting {key!r} (known: {known})")
            if setting.type is _str_list and not isinstance(raw, list):  # (the environment's comma-separated text)
                raise ConfigError(f"{path}: bad value for {setting.name}: expected a list such as "
                                  f"{setting.name} = [\"...\"], got {raw!r}")
            values[setting.name] = _coerce(setting, raw, str(path))
        # Local feed paths in the file are relative to the file itself.
        values["feeds"] = [_relative_to(path.parent, f) for f in values["feeds"]]
    for setting in SETTINGS:
        if setting.env in env and setting.name != "config":
            values[setting.name] = _coerce(setting, env[setting.env], setting.env)
    for key, raw in overrides.items():
        values[key] = option_value(key, raw)
    values["config"] = str(path) if path else ""
    return Config(values=values, path=path)


def _relative_to(base: Path, source: str) -> str:
    if "://" in source or Path(source).is_absolute():
        return source
    return str((base / source).resolve())
