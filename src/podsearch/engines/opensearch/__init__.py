"""The OpenSearch engine: podsearch's index in an OpenSearch cluster, for sites that outgrow one machine.

The index podsearch searches is an alias (``opensearch_index``) over one concrete index. A full rebuild writes a
new index (no replicas, no refresh while it fills), then gives it its replicas, waits for them and swaps the
alias in one step: readers never see half an index. An incremental sync compares the catalog's content hashes
with the index's and sends only what changed. Documents go in ``_bulk`` requests of bounded size, one being
built while the previous one is indexed; items OpenSearch refuses for overload are sent again after a pause.

Text is indexed once per language profile in fields of their own (``title__de``, ...; ``analysis.py``); each
profile's reading of a query matches that profile's episodes (``query.py``). The answer builder marks matches
with the Python twin of the analysis. The episode text is not kept in ``_source``: the catalog is the source.
"""

from __future__ import annotations

import logging
import queue
import re
import secrets
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import replace
from typing import Any

import numpy as np

from ... import languages
from ...config import opensearch_index_name
from ...errors import ConfigError, EngineRequestError, EngineUnavailable, IndexMissing, QueryError
from ...lru import LRU
from .. import compounds, expansions, spelling
from ..base import (
    INCREMENTAL,
    DocumentSource,
    EngineHit,
    EngineQuery,
    EngineResult,
    SegmentCounts,
    TextAnalyzer,
    facet_values,
    listing_key,
    people,
    sync_plan,
)
from ..querytext import EVERY_WORD, RELAX_BELOW, SEARCH_FIELDS, SUGGEST_BELOW, check_text, readings
from . import expand
from .analysis import analysis_settings, fold, profiles, python_analyzer
from .client import NO_MANAGER_ADVICE, ClientOptions, OpenSearchClient, block_problem, blocked, refusal
from .expand import regex_literal
from .query import facet_aggregations, facet_counts, filter_clauses, fuzzy_parts, query_terms, sort_clause, text_field, text_query
from .segments import SEGMENT_TERMS, read_table, segment_table, table_counts

log = logging.getLogger(__name__)

# 2: the text fields' BM25 similarity (BM25_K1, BM25_B); 3: "C#", "C++" words of their own; 4: the persons field
# holds the transcript's speakers too (base.people); 5: every word once with doc values (wordlist), to list the
# words of a pattern (expand.py); 6: the order keyword (base.listing_key: same-date and undated episodes in a list by
# date, as on Whoosh); 7: a dot that opens a word kept (".NET" is "dot.net": analysis, sp_dot); 8: an ampersand joins
# words ("AT&T" is "at.t": sp_ampersand); 9: an accented word of another language than English also as the stem of it
# written without accents (analysis, sp_unaccented: "somatizacao" finds "somatização", as on Whoosh since its schema 12)
# 10: the stop words of the other languages are those the Whoosh index drops, Snowball's lists (languages.index_stop_words:
# "despues", "agora" found nothing; until then the stop-words package's, twice as long in Spanish, French, Swedish...),
# and an underscore joins a word as on Whoosh ("utm_source" has no parts: "source" found the links' "utm_source="),
# and the wordlist folded ("somatizac*" lists "somatizacao": the words kept their accents and it listed none)
# 11: each episode's table of segment terms (segments.py: segment_terms), from which a page's moments are chosen; it
# holds the Python twin's reading of the transcript, so a change to what PythonAnalyzer.texts gives a text bumps this
# too (the next reindex rebuilds the tables; until then the moments are chosen from the old reading)
# 12: letters styled as mathematical letters read as the letters they style (analysis, sp_styled: "𝐞𝐞𝐧" is "een")
# 13: the wordlist folded with asciifolding's own table (languages.ascii_fold: "ŋ", "ĸ", "ƀ" as the node folds them)
# 14: digits written small or circled read as the digits (languages.STYLED_LETTERS, sp_styled: "I²C" is "i2c")
# 15: a number written with thousands separators one word ("1,000" is "1000": sp_thousands; any other comma between
# digits breaks a word, sp_comma), digits circled with two figures or in parentheses the digits ("⑩" is "10"), and the
# wordlist holds the words joined by a dot or an ampersand too ("node.js", "at&t"), which the index keeps whole, so that
# a pattern of one ("node.js*", "at&*") lists them as Whoosh's reads them (issue 15)
# 16: an English word ending in "ly" or "lies" is written "li", not stemmed (analysis: sp_ly_kept, sp_ly; "fairly" is
# "fairli", no longer "fair", the stem of "fairness"), as on Whoosh (issue 15)
SCHEMA_VERSION = "16"
# BM25 of the text fields: the saturation and length normalisation Whoosh's ranking chose on the podcast sets
# (k1 2, b 0.5: engines/whoosh/ranking.py, docs/search.md). With the query's words read across the fields
# (query.py: cross_fields), the dev known items' MRR@10 on the site corpus went 0.887 (per-field BM25 summed,
# k1 1.2, b 0.75) -> 0.972 (across fields) -> 0.983 (and these), Whoosh's being 0.989.
BM25_K1, BM25_B = 2.0, 0.5
BULK_BYTES = 4 * 1024 * 1024  # a bulk request at most (OpenSearch's advice: a few MB)
BULK_DOCS = 500
BULK_SENDERS = 2  # bulk requests OpenSearch indexes at once (a shard indexes one request on one thread)
BULK_IN_FLIGHT = 2  # requests built ahead of those being indexed: the back-pressure bound
BULK_RETRIES = 6  # sends of items refused for overload (429), with a doubling pause from 0.5 s
SHARD_WAIT = 10.0  # seconds a bulk's item waits for its shard to be active (OpenSearch's own default: a minute)
SCAN_PAGE = 5000
APART_CACHE = 4096  # words and pairs whose other spelling (compounds.apart) is kept for the served index
EXPANSION_CACHE = 1024  # patterns whose words (or refusal) are kept for the served index (expand.py)
LONGEST_WORD = 100  # letters of the longest word listed for patterns (a keyword holds at most 32 kB)
STAMP_SECONDS = 1.0  # how long the served index's stamp is taken as known (every API answer asks for it)
STAMP_TIMEOUT = 3.0  # seconds the stamp's two requests may each wait (a hung node held every cacheable answer 2 minutes)
HEALTH_WAIT = 60.0  # seconds a rebuilt index waits for its replicas before it is swapped in
COPY_WAIT = 600.0  # seconds it waits at most while a replica is still being copied (initializing) after that
# why a yellow index's replicas are not placed (/readyz, stats): one allocation explanation (of the first shard with a
# replica unassigned), kept this long per engine and asked within UNPLACED_WAIT at most (all tries together), else said
# not known. Until 6 December 2026 each probe asked once a shard, each allowed STAMP_TIMEOUT
UNPLACED_SECONDS = 10.0
UNPLACED_WAIT = 1.0
# seconds the hits' tables (segment_counts' _mget) may take when the search has less time left: a page's first hits
# have their moments past the deadline as on Whoosh (segments.GRACE); until 6 December 2026 it waited STAMP_TIMEOUT
TABLES_FLOOR = 0.25
_WORD = re.compile(r"\w+")
# a word joined by dots or ampersands, which the index keeps whole beside its parts ("node.js", "at&t", "3.12")
_JOINED_WORD = re.compile(r"\w+(?:[.&]\w+)+")


def _text_fields() -> dict[str, Any]:
    fields = {}
    for key in profiles():
        for field in SEARCH_FIELDS:
            fields[text_field(field, key)] = {"type": "text", "analyzer": f"sp_{key}", "search_analyzer": f"sp_{key}_q",
                                              "similarity": "sp_bm25"}
    return fields


def index_body(shards: int, replicas: str) -> dict[str, Any]:
    """Settings and mappings of a new index (built without replicas; ``replicas`` are given when it is full)."""
    return {
        "settings": {"index": {"number_of_shards": shards, "number_of_replicas": 0, "refresh_interval": "-1",
                               "analysis": analysis_settings(),
                               "similarity": {"sp_bm25": {"type": "BM25", "k1": BM25_K1, "b": BM25_B}}}},
        "mappings": {
            "dynamic": "strict",
            "_meta": {"podsearch_schema": SCHEMA_VERSION, "replicas": replicas},
            "_source": {"includes": ["id", "title", "content_hash"]},
            "properties": {
                "id": {"type": "keyword"}, "show_id": {"type": "keyword"}, "title": {"type": "keyword", "index": False},
                "content_hash": {"type": "keyword", "index": False},
                "person_key": {"type": "keyword"}, "year": {"type": "keyword"}, "language": {"type": "keyword"},
                "analysis": {"type": "keyword"}, "published": {"type": "date"}, "duration": {"type": "integer"},
                # where an episode goes among those of its date in a list by date (base.listing_key; query.sort_clause)
                "order": {"type": "keyword", "index": False, "doc_values": True},
                # spelling suggestions: every word once, folded and unstemmed; typeahead: words of titles,
                # shows, persons and notes
                "words": {"type": "text", "analyzer": "sp_words", "index_options": "docs", "norms": False},
                "vocab": {"type": "keyword", "eager_global_ordinals": False},
                # the words of patterns (kube*, [a TO c]) and how many episodes hold each: the same words, read
                # from doc values by a terms aggregation (expand.py)
                "wordlist": {"type": "keyword", "index": False, "doc_values": True, "ignore_above": LONGEST_WORD},
                # where the transcript's terms are, segment by segment, as the Python twin reads them (segments.py):
                # stored, read for a page's hits (segment_counts), never searched
                SEGMENT_TERMS: {"type": "binary", "store": True},
                **_text_fields(),
            },
        },
    }


def document_body(doc: Any) -> dict[str, Any]:
    """One episode as the index keeps it."""
    key = languages.profile(doc.language)
    facets = facet_values(doc)
    persons = ", ".join(people(doc))
    text = languages.lower(" ".join((doc.title, doc.show, doc.notes, doc.transcript)))
    every = list(dict.fromkeys(languages.words(text)))  # (the Whoosh word list's words: no fraction, schema 15)
    body: dict[str, Any] = {
        "id": doc.id, "show_id": doc.show_id, "title": doc.title, "content_hash": doc.content_hash,
        "person_key": facets["person"], "year": facets["year"], "analysis": key, "order": listing_key(doc.id, doc.number),
        text_field("title", key): doc.title, text_field("show", key): doc.show, text_field("persons", key): persons,
        text_field("notes", key): doc.notes, text_field("transcript", key): doc.transcript,
        # the words listed for a pattern folded, as the index holds them (an accented word also as its stem written without
        # accents, as on Whoosh, whose prefix reads the stems): "somatizac*" lists
        # "somatizacao" (schema 10; "somatização" did not begin with the letters typed, and nothing was marked)
        # (and the joined words the index keeps whole, listed for a pattern of one: "node.js*", "at&*"; schema 15)
        "words": " ".join(every), "wordlist": list(dict.fromkeys(map(fold, every + _JOINED_WORD.findall(text)))),
        "vocab": list(dict.fromkeys(_WORD.findall(languages.lower(" ".join((doc.title, doc.show, persons, doc.notes)))))),
    }
    if doc.language:
        body["language"] = doc.language
    table = segment_table(python_analyzer(key), doc.segments)  # (the profile's twin, kept: its caches of words
    # serve every episode)
    if table is not None:
        body[SEGMENT_TERMS] = table
    if doc.published is not None:
        body["published"] = doc.published.strftime("%Y-%m-%dT%H:%M:%S")
    if doc.duration is not None:
        body["duration"] = int(doc.duration)
    return body


class OpenSearchEngine:
    """podsearch's index in OpenSearch; thread-safe."""

    name = "opensearch"

    def __init__(self, options: ClientOptions, index: str = "podsearch", shards: int = 1, replicas: str = "0-1") -> None:
        try:
            opensearch_index_name(index)
        except ValueError as exc:
            raise ConfigError(f"opensearch_index: {exc}") from None
        self.client = OpenSearchClient(options)
        self.alias, self.shards, self.replicas = index, shards, replicas
        self._lock = threading.Lock()
        self._stamp: tuple[float, tuple[str, float], str] | None = None  # (read at, stamp, concrete index)
        self._unavailable: tuple[float, EngineUnavailable] | None = None  # (when, why) the stamp could not be read
        self._reading = False  # a thread is reading the stamp (the others answer with the last one meanwhile)
        self.health_wait = HEALTH_WAIT
        self.copy_wait = COPY_WAIT
        self._explained: tuple[float, str, str] | None = None  # (when, index, why its replicas are not placed)
        self.shard_wait = SHARD_WAIT
        self._profiles: tuple[str, list[str]] | None = None
        self._apart_cache: LRU[tuple[Any, ...], str] = LRU(APART_CACHE)
        self._expansion_cache: LRU[tuple[Any, ...], expand.Expansion | QueryError] = LRU(EXPANSION_CACHE)

    @classmethod
    def from_config(cls, config: Any) -> OpenSearchEngine:
        v = config.values
        options = ClientOptions(urls=tuple(v["opensearch_url"]), user=v["opensearch_user"],
                                password=v["opensearch_password"], verify=v["opensearch_verify_tls"],
                                ca_certs=v["opensearch_ca_certs"], timeout=v["opensearch_timeout"])
        return cls(options, index=v["opensearch_index"], shards=v["opensearch_shards"],
                   replicas=str(v["opensearch_replicas"]))

    # -- the served index -------------------------------------------------------------------------
    def _current(self) -> tuple[tuple[str, float], str]:
        """(stamp, concrete index) of the index behind the alias, read at most once a ``STAMP_SECONDS``."""
        now = time.monotonic()
        with self._lock:
            if self._stamp is not None and now - self._stamp[0] < STAMP_SECONDS:
                return self._stamp[1], self._stamp[2]
            if self._unavailable is not None and now - self._unavailable[0] < STAMP_SECONDS:
                raise self._unavailable[1]  # (said again for a second, not asked again by every request)
            if self._reading and self._stamp is not None:
                # another thread is reading it: what was last known meanwhile. Until 6 December 2026 every request
                # read it, so with a stopped node each waited STAMP_TIMEOUT: four held every worker, and /healthz
                # and the episode pages (which need no cluster) waited 1-2.5 s every few seconds
                if self._unavailable is not None and self._unavailable[0] >= self._stamp[0]:
                    raise self._unavailable[1]
                return self._stamp[1], self._stamp[2]
            self._reading = True
        wait = min(STAMP_TIMEOUT, self.client.options.timeout)
        # read from the node asked (local): a cluster without its manager (the manager node down, or an election under
        # way) still searches, and until 6 December 2026 every search was a 503 then, the stamp's reads waiting for a
        # manager (the three-node walk: the manager killed, its two data nodes holding every copy)
        local = {"local": True}
        try:
            found = self.client.request("GET", f"/_alias/{self.alias}", allow=(404,), timeout=wait, params=local)
            stamp, concrete = ("", 0.0), ""
            if isinstance(found, dict) and found and "error" not in found and "status" not in found:
                concrete = sorted(found)[-1]
                mapping = self.client.request("GET", f"/{concrete}/_mapping", allow=(404,), timeout=wait,
                                              params=local) or {}
                meta = mapping.get(concrete, {}).get("mappings", {}).get("_meta", {})
                stamp = (f"{concrete}/{meta.get('stamp', '')}", float(meta.get("time", 0.0)))
        except EngineUnavailable as exc:
            with self._lock:
                self._unavailable = (time.monotonic(), exc)
            raise
        finally:
            with self._lock:
                self._reading = False
        with self._lock:
            self._stamp = (now, stamp, concrete)
        return stamp, concrete

    def _forget(self) -> None:
        with self._lock:
            self._stamp = None
            self._profiles = None

    def _target(self) -> str:
        concrete = self._current()[1]
        if not concrete:
            raise IndexMissing(f"No index '{self.alias}' in OpenSearch at {', '.join(self.client.bases)}. "
                               "Run 'podsearch reindex' first.")
        return concrete

    def exists(self) -> bool:
        return bool(self._current()[1])

    def search_served(self, body: dict[str, Any]) -> dict[str, Any]:
        """OpenSearch's answer to a search ``body`` on the index the alias serves (IndexMissing without one): what
        the spelling vocabulary and the phrase counts ask it (as Whoosh's ask their searcher), through this rather
        than the concrete index's name (until 5 December 2026 they reached ``_target``, a private member)."""
        return self.client.search(self._target(), body)

    def search_served_many(self, bodies: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """OpenSearch's answers to several search ``bodies`` on the served index, in one ``_msearch`` request; a body
        whose answer is an error or lost a shard is asked again alone (:meth:`search_served`: its retries, its error)."""
        if not bodies:
            return []
        if len(bodies) == 1:
            return [self.search_served(bodies[0])]
        header = {"allow_partial_search_results": False}
        answer = self.client.request("POST", f"/{self._target()}/_msearch",
                                     ndjson=[line for body in bodies for line in (header, body)])
        out = []
        for body, found in zip(bodies, answer.get("responses", []) if isinstance(answer, dict) else []):
            if not isinstance(found, dict) or "error" in found or found.get("_shards", {}).get("failed"):
                found = self.search_served(body)
            out.append(found)
        return out + [self.search_served(body) for body in bodies[len(out):]]

    def stamp(self) -> tuple[str, float]:
        return self._current()[0]

    def schema_version(self) -> str:
        concrete = self._target()
        mapping = self.client.request("GET", f"/{concrete}/_mapping", timeout=self._figures_wait())
        return str(mapping[concrete]["mappings"].get("_meta", {}).get("podsearch_schema", ""))

    def plan(self, full: bool = False) -> str:
        return sync_plan(full, self.exists(), self.schema_version, SCHEMA_VERSION)

    def _figures_wait(self) -> float:
        """Seconds a read of the served index's figures may wait (its count for /readyz, its size and schema), as its
        stamp's: until 6 December 2026 a stopped node held each /readyz for ``opensearch_timeout`` (30 s)."""
        return min(STAMP_TIMEOUT, self.client.options.timeout)

    def doc_count(self) -> int:
        return int(self.client.request("GET", f"/{self._target()}/_count", timeout=self._figures_wait())["count"])

    def health(self) -> dict[str, Any]:
        """The served index's health in the cluster, for /readyz: ``green``, ``yellow`` (a replica not placed: every
        shard still answers, from one copy), ``red`` (a shard on no running node: searches fail, and so does /readyz's
        count), with the cluster's nodes and the index's shards not placed. Until 6 December 2026 /readyz said
        "ready" and nothing more with a node of three down and the index's replica unplaced."""
        concrete = self._target()
        # (as the node asked knows it: without a cluster manager the cluster's own answer waits for one)
        found = self.client.request("GET", f"/_cluster/health/{concrete}", params={"local": True, "level": "shards"},
                                    timeout=self._figures_wait())
        manager = bool(found.get("discovered_cluster_manager", True))
        # (without a manager a node calls its cluster red, whatever its shards: the walk's searches all answered)
        said = {"engine": self.name, "health": found.get("status") if manager else "unknown",
                "nodes": found.get("number_of_nodes"), "unassigned_shards": found.get("unassigned_shards"),
                "cluster_manager": manager}
        if manager and found.get("status") == "yellow":
            # why the replicas are not placed (a rebuild swapped in yellow, a node down), as OpenSearch says it
            said["unplaced"] = self._unplaced(concrete, found, UNPLACED_WAIT)
        return said

    def size_bytes(self) -> int:
        """The primary shards' size on disk (replicas multiply it)."""
        concrete = self._target()
        stats = self.client.request("GET", f"/{concrete}/_stats/store", timeout=self._figures_wait())
        return int(stats["_all"]["primaries"]["store"]["size_in_bytes"])

    def cleanup(self) -> None:
        """Delete this site's indexes that no alias points at: rebuilds a killed reindex left behind. (Only one
        reindex of a site runs at a time: it holds the data folder's lock.)

        This site's are those named as its rebuilds name them (``<alias>-<time>-<random>``, :meth:`_rebuild`), and
        no other: until 6 December 2026 every index whose name began ``<alias>-`` was deleted, so a reindex of the
        site ``podsearch`` deleted the index another site on the cluster served as ``podsearch-eu``
        (``test_a_sites_cleanup_leaves_another_sites_indexes``)."""
        self._check_manager()
        served = self._current()[1]
        found = self.client.request("GET", f"/{self.alias}-*/_alias", allow=(404,)) or {}
        if "error" in found or "status" in found:
            return
        own = re.compile(re.escape(self.alias) + r"-\d{14}-[0-9a-f]{6}")
        for name, about in found.items():
            if name != served and own.fullmatch(name) and not (isinstance(about, dict) and about.get("aliases")):
                log.info("removing the unfinished OpenSearch index %s", name)
                self.client.request("DELETE", f"/{name}", allow=(404,))

    # -- writing ------------------------------------------------------------------------------------
    def sync(self, source: DocumentSource, full: bool = False, progress: Callable[[int], None] | None = None,
             hashes: dict[str, str] | None = None) -> dict[str, int]:
        """Bring the index in line with ``source``: send what changed (by content hash), delete what is gone; with
        ``full`` (or no index, or an index of another schema) build a new index and swap it in."""
        wanted = source.hashes() if hashes is None else hashes
        self._check_manager()
        if self.plan(full) != INCREMENTAL:
            if self.exists():
                self._check_writable()
            return self._rebuild(source, wanted, progress)
        target = self._target()
        have = self._hashes(target)
        changed = [i for i, h in wanted.items() if have.get(i) != h]
        removed = [i for i in have if i not in wanted]
        if not changed and not removed:
            return {"added": 0, "updated": 0, "removed": 0}
        actions = self._actions(target, source.documents(changed))
        deletes = (({"delete": {"_index": target, "_id": i}}, None) for i in removed)
        self._bulk(_chain(actions, deletes), progress)
        self.client.request("POST", f"/{target}/_refresh")
        self._mark(target)
        added = sum(1 for i in changed if i not in have)
        return {"added": added, "updated": len(changed) - added, "removed": len(removed)}

    def _rebuild(self, source: DocumentSource, wanted: dict[str, str],
                 progress: Callable[[int], None] | None) -> dict[str, int]:
        name = f"{self.alias}-{time.strftime('%Y%m%d%H%M%S')}-{secrets.token_hex(3)}"
        self.client.request("PUT", f"/{name}", index_body(self.shards, self.replicas))
        try:
            self._bulk(self._actions(name, source.documents(list(wanted))), progress)
            replicas = ({"auto_expand_replicas": self.replicas} if "-" in self.replicas
                        else {"number_of_replicas": int(self.replicas)})
            # its documents written to its segments before it has replicas, so that a replica is a copy of the files:
            # until 6 December 2026 they were all in the translog (no refresh, no flush while it filled), and each
            # replica indexed the 1,869 site episodes again one by one: more than 84 s on three nodes, past the
            # wait below, so every rebuild went in yellow. Copying the files took 3 s
            self.client.request("POST", f"/{name}/_flush")
            self.client.request("PUT", f"/{name}/_settings", {"index": {"refresh_interval": "1s", **replicas}})
            self.client.request("POST", f"/{name}/_refresh")
            health = self._replicas_placed(name)
            if health.get("status") == "red":
                # a shard of it on no running node (a node left after its documents went in: it had no replica yet).
                # Until 6 December 2026 it was swapped in all the same, with the warning below, and the index served
                # before deleted: the site's searches failed until that node came back
                raise EngineUnavailable(
                    f"The rebuilt OpenSearch index {name} is red: a node holding one of its shards left before it was "
                    "served. It is not swapped in (the served index is unchanged) and is deleted; run the reindex "
                    "again once the cluster's health is green or yellow.")
            if health.get("status") != "green":
                self._yellow(name, health)
            self._mark(name)
            self._swap(name)
        except BaseException:
            self.client.request("DELETE", f"/{name}", allow=(404,))
            raise
        return {"added": len(wanted), "updated": 0, "removed": 0, "full": 1}

    def _check_manager(self) -> None:
        """Before a reindex writes: a cluster without an elected cluster manager is said at once, with the nodes
        that answer and what to do. Until 6 December 2026 its first request waited for one four times over (the
        cluster's 30 s each), then said "OpenSearch at ... is unavailable (...: HTTP 503:
        cluster_manager_not_discovered_exception: None)" after 2 minutes (the three-node walk, the manager down)."""
        found = self.client.request("GET", "/_cluster/health", params={"local": True}, timeout=self._figures_wait())
        if not isinstance(found, dict) or found.get("discovered_cluster_manager", True):
            return
        raise EngineUnavailable(self._no_manager())

    def _no_manager(self) -> str:
        """Which nodes listed answer (and know no cluster manager), which do not, and the cluster-manager-eligible
        nodes they last knew, with what to do."""
        wait = self._figures_wait()
        health = self.client.each("/_cluster/health?local=true", wait)
        names = self.client.each("/_nodes/_local?filter_path=nodes.*.name", wait)
        answer, silent = [], []
        for base, found in health.items():
            if not isinstance(found, dict):
                silent.append(f"{base} ({found})")
                continue
            named = names.get(base)
            name = next(iter(named.get("nodes", {}).values()), {}).get("name", "") if isinstance(named, dict) else ""
            known = "" if not found.get("discovered_cluster_manager", True) else " (it knows one)"
            answer.append(f"{name or 'a node'} at {base}{known}")
        eligible: list[str] = []
        if answer:
            try:
                listed = self.client.request("GET", "/_cat/nodes", params={"local": True, "format": "json",
                                             "h": "name,node.role"}, timeout=wait)
                eligible = sorted(str(n.get("name", "")) for n in listed if "m" in str(n.get("node.role", "")))
            except (EngineRequestError, EngineUnavailable):
                pass
        said = f"OpenSearch has no elected cluster manager: {', '.join(answer)} answer{'s' if len(answer) == 1 else ''}" \
            if answer else "OpenSearch has no elected cluster manager: no node listed answers"
        if silent:
            said += f"; {', '.join(silent)} do{'es' if len(silent) == 1 else ''} not answer"
        if eligible:
            said += f". The cluster-manager-eligible nodes they last knew: {', '.join(eligible)}"
        return f"{said}. {NO_MANAGER_ADVICE}"

    def _replicas_placed(self, name: str) -> dict[str, Any]:
        """The rebuilt index's health once its replicas are placed (green), or when ``health_wait`` is over and no
        replica is being copied any more (``copy_wait`` at most): a big index's copy may take longer than the wait.
        The bound counts the time that passed: until 6 December 2026 each round counted ``health_wait`` whatever it
        took, so with ``health_wait`` 0 a replica left initializing held the loop with no bound."""
        started = time.monotonic()
        wait = self.health_wait
        while True:
            # the cluster answers when the replicas are placed or the wait is over: the request waits that long and
            # a request's time more. Until 6 December 2026 it waited opensearch_timeout (30 s) for a 60 s wait, so a
            # rebuild whose replicas took longer (the site corpus on three nodes: 35-60 s) ended "unavailable (no
            # answer within 30 s)" and its index was deleted: no full rebuild, first reindex or schema change went in
            health = self.client.request("GET", f"/_cluster/health/{name}",
                                         params={"wait_for_status": "green", "timeout": f"{int(wait * 1000)}ms",
                                                 "level": "shards"},
                                         allow=(408,), timeout=wait + self.client.options.timeout)
            waited = time.monotonic() - started
            if health.get("status") != "yellow" or not health.get("initializing_shards") or waited >= self.copy_wait:
                return health
            log.info("OpenSearch index %s: %s replica(s) still being copied after %.0f s; waiting for them", name,
                     health.get("initializing_shards"), waited)
            # (each later round a second at least, not a request after another; and not past copy_wait)
            wait = min(max(self.health_wait, 1.0), self.copy_wait - waited)

    def _yellow(self, name: str, health: dict[str, Any]) -> None:
        """A rebuilt index whose replicas are not all placed when its wait is over (yellow: every shard answers, some
        from one copy, which its node's loss takes away) goes in only if the index served before is no greener (none,
        yellow or red too: a node down, too few nodes for ``opensearch_replicas``), with a warning; the health and
        why the replica is not placed are in /readyz (:meth:`health`). Beside a green index it is refused, the green
        one served on: until 6 December 2026 it was swapped in yellow whatever the index before it was, and the
        green one deleted."""
        served = self._current()[1]
        before = ""
        if served:
            found = self.client.request("GET", f"/_cluster/health/{served}", timeout=self._figures_wait())
            before = str(found.get("status", ""))
        why = self._unplaced(name, health, self._figures_wait()) or "OpenSearch did not say why"
        unplaced = health.get("unassigned_shards", 0) + health.get("initializing_shards", 0)
        if before == "green":
            raise EngineUnavailable(
                f"The rebuilt OpenSearch index {name} is yellow after {self.health_wait:.0f} s: {unplaced} of its "
                f"replicas not placed ({why}). The index served before, {served}, is green and stays served (a yellow "
                f"one would lose a shard with its node); {name} is deleted. Let the cluster place them (what it says above: "
                "another node, disk space under the watermarks, its allocation settings) or lower opensearch_replicas, "
                "and run the reindex again.")
        log.warning("OpenSearch index %s is yellow after %.0f s: %s of its replicas not placed (%s); swapped in, the "
                    "index served before being %s", name, self.health_wait, unplaced, why,
                    f"{before} ({served})" if served else "none")

    def _unplaced(self, name: str, health: dict[str, Any], wait: float) -> str:
        """Why a replica of ``name`` is not placed, as OpenSearch's allocation explanation says it ("" when it says
        nothing): each node's first refusal ("a copy of this shard is already allocated to this node", a disk
        watermark). One request, for the first shard with a replica unassigned in ``health`` (asked with ``level``
        ``shards``), waiting ``wait`` seconds at most over every node and try; the answer is kept ``UNPLACED_SECONDS``.
        Until 6 December 2026 every /readyz on a yellow index asked once a shard, each allowed 3 s: a single node
        whose index has replicas is yellow for good, and a load balancer probes every few seconds."""
        now = time.monotonic()
        with self._lock:
            if self._explained is not None and self._explained[1] == name and now - self._explained[0] < UNPLACED_SECONDS:
                return self._explained[2]
        shards = ((health.get("indices") or {}).get(name) or {}).get("shards") or {}
        unassigned = sorted(int(n) for n, shard in shards.items() if shard.get("unassigned_shards"))
        said = ""
        if unassigned:
            try:
                with self.client.within(now + wait, grace=0.0):
                    found = self.client.request("POST", "/_cluster/allocation/explain", {
                        "index": name, "shard": unassigned[0], "primary": False}, timeout=wait)
                said = _explanation(found)
            except EngineUnavailable:
                said = f"not known: OpenSearch did not explain it within {wait:g} s"
            except EngineRequestError:
                said = ""  # (placed since the health was read: nothing to explain)
        with self._lock:
            self._explained = (time.monotonic(), name, said)
        return said

    def _check_writable(self) -> None:
        """A clear refusal, before a rebuild, when the served index is blocked (a disk past the flood-stage watermark
        makes it read-only): its alias could not be moved off it, and the rebuild was built (76 s for the site
        corpus on three nodes), waited for its replicas, then deleted with "unavailable" (four tries of the swap)."""
        concrete = self._target()
        found = self.client.request("GET", f"/{concrete}/_settings/index.blocks.*", params={"flat_settings": True},
                                    timeout=self._figures_wait())
        settings = (found.get(concrete) or {}).get("settings", {}) if isinstance(found, dict) else {}
        on = [k.removeprefix("index.blocks.") for k, v in settings.items()
              if k in ("index.blocks.read_only_allow_delete", "index.blocks.read_only", "index.blocks.write")
              and str(v).lower() == "true"]
        if on:
            reason = f"index [{concrete}] has the block {', '.join(on)}"
            if "read_only_allow_delete" in on:
                reason += " (disk usage exceeded the flood-stage watermark)"
            raise EngineRequestError(f"OpenSearch cannot take a rebuild of '{self.alias}': {block_problem(reason)}",
                                     403)

    def _swap(self, name: str) -> None:
        """Point the alias at ``name`` alone, in one step, then delete the indexes it pointed at before."""
        before = self.client.request("GET", f"/_alias/{self.alias}", allow=(404,)) or {}
        old = [i for i in before if "error" not in before and "status" not in before and i != name]
        actions = [{"remove": {"index": i, "alias": self.alias}} for i in old]
        actions.append({"add": {"index": name, "alias": self.alias}})
        self.client.request("POST", "/_aliases", {"actions": actions})
        self._forget()
        for i in old:
            self.client.request("DELETE", f"/{i}", allow=(404,))

    def _mark(self, name: str) -> None:
        """A new stamp on the index: answers cached for the one before are stale."""
        self.client.request("PUT", f"/{name}/_mapping", {"_meta": {
            "podsearch_schema": SCHEMA_VERSION, "replicas": self.replicas, "stamp": secrets.token_hex(6),
            "time": time.time()}})
        self._forget()

    def _hashes(self, index: str) -> dict[str, str]:
        """Every indexed episode's content hash, in pages sorted by id."""
        have: dict[str, str] = {}
        after: list[Any] | None = None
        while True:
            body: dict[str, Any] = {"size": SCAN_PAGE, "sort": [{"id": "asc"}], "_source": ["content_hash"],
                                    "query": {"match_all": {}}, "track_total_hits": False}
            if after is not None:
                body["search_after"] = after
            page = self.client.search(index, body)["hits"]["hits"]
            for hit in page:
                have[hit["_id"]] = hit["_source"].get("content_hash", "")
            if len(page) < SCAN_PAGE:
                return have
            after = page[-1]["sort"]

    @staticmethod
    def _actions(index: str, docs: Iterable[Any]) -> Iterator[tuple[dict[str, Any], dict[str, Any] | None]]:
        for doc in docs:
            yield {"index": {"_index": index, "_id": doc.id}}, document_body(doc)

    def _bulk(self, actions: Iterable[tuple[dict[str, Any], dict[str, Any] | None]],
              progress: Callable[[int], None] | None) -> None:
        """Send ``actions`` in bulk requests of bounded size; ``BULK_SENDERS`` threads send them while the next are
        built, and at most ``BULK_IN_FLIGHT`` wait (the back-pressure: building stops while OpenSearch is busy)."""
        batches: queue.Queue[list[tuple[dict[str, Any], dict[str, Any] | None]] | None] = queue.Queue(BULK_IN_FLIGHT)
        failure: list[BaseException] = []
        reported = threading.Lock()

        def send() -> None:
            while True:
                batch = batches.get()
                if batch is None:
                    return
                if failure:
                    continue  # drain: the producer learns of the failure at its next put
                try:
                    self._send(batch)
                    if progress:
                        with reported:  # the caller's progress is not thread-safe
                            progress(sum(1 for action, _ in batch if "index" in action))
                except BaseException as exc:  # reported to the caller below
                    failure.append(exc)

        senders = [threading.Thread(target=send, name=f"opensearch-bulk-{i}", daemon=True) for i in range(BULK_SENDERS)]
        for sender in senders:
            sender.start()
        try:
            batch: list[tuple[dict[str, Any], dict[str, Any] | None]] = []
            size = 0
            for action, body in actions:
                if failure:
                    break
                batch.append((action, body))
                size += 200 + sum(len(v) for v in body.values() if isinstance(v, str)) if body else 100
                if len(batch) >= BULK_DOCS or size >= BULK_BYTES:
                    batches.put(batch)
                    batch, size = [], 0
            if batch and not failure:
                batches.put(batch)
        finally:
            for _ in senders:
                batches.put(None)
            for sender in senders:
                sender.join()
        if failure:
            raise failure[0]

    def _send(self, batch: list[tuple[dict[str, Any], dict[str, Any] | None]]) -> None:
        """One bulk request; items refused for overload (429) are sent again after a pause, other refusals fail."""
        pause = 0.5
        for attempt in range(BULK_RETRIES + 1):
            lines: list[Any] = []
            for action, body in batch:
                lines.append(action)
                if body is not None:
                    lines.append(body)
            # an item whose shard is on no running node (a node holding the rebuilt index left while it was
            # written) fails after shard_wait, not OpenSearch's minute: until 6 December 2026 the reindex said so a
            # minute later, or with opensearch_timeout under a minute, "no answer within 30 s" and nothing of the shard
            wait = max(1.0, min(self.shard_wait, self.client.options.timeout / 2))
            answer = self.client.request("POST", "/_bulk", ndjson=lines, params={"timeout": f"{int(wait * 1000)}ms"})
            if not answer.get("errors"):
                return
            retry, refused = [], []
            for (action, body), item in zip(batch, answer["items"]):
                result = next(iter(item.values()))
                status = int(result.get("status", 200))
                if blocked(result):  # (a 429 for a full disk: not sent again, the reason said once)
                    raise EngineRequestError(f"OpenSearch refused the documents: {block_problem(blocked(result))}",
                                             status, result)
                if status == 429:
                    retry.append((action, body))
                elif status >= 300 and not (status == 404 and "delete" in action):
                    refused.append((result.get("_id"), result.get("error")))
            if refused:
                raise _refused(refused)
            if not retry:
                return
            if attempt < BULK_RETRIES:
                log.info("OpenSearch is busy: %d documents sent again in %.1f s", len(retry), pause)
                time.sleep(pause)
                pause *= 2
                batch = retry
        raise EngineRequestError(f"OpenSearch stayed too busy to index {len(batch)} documents.")

    # -- searching ----------------------------------------------------------------------------------
    def _index_profiles(self, language: str = "") -> list[str]:
        """The profiles a query is read for: the asked language's, else those of the episodes in the index."""
        if language:
            return [languages.profile(language)]
        stamp = self.stamp()[0]
        with self._lock:
            if self._profiles is not None and self._profiles[0] == stamp:
                return self._profiles[1]
        answer = self.client.search(self._target(), {"size": 0, "aggs": {"p": {"terms": {"field": "analysis", "size": 200}}}})
        found = sorted(b["key"] for b in answer["aggregations"]["p"]["buckets"]) or ["en"]
        with self._lock:
            self._profiles = (stamp, found)
        return found

    def _run(self, body: dict[str, Any]) -> dict[str, Any]:
        try:
            return self.client.search(self._target(), body)
        except EngineRequestError as exc:
            if exc.status == 400:
                raise QueryError(f"Cannot read the query: {refusal(exc)}") from None
            if "too many nested clauses" in str(exc).lower():  # (a 500 from OpenSearch: its clause limit)
                raise QueryError("The query asks for more terms than OpenSearch allows in one query (every word "
                                 "in every field and language counts). Use fewer words or wildcards.") from None
            raise

    def _timed(self, body: dict[str, Any], deadline: float | None) -> dict[str, Any]:
        """A search of the answer, with the time left until ``deadline`` as its ``timeout`` (each shard answers with
        what it found by then, ``timed_out``), and said ``timed_out`` when it came back past the deadline, as Whoosh
        says of matching that ran past it. OpenSearch's timeout is best effort: a shard looks at its clock now and
        then while it collects, and not after its query phase (the fetch, the answer's way back). Until 5 December
        2026 such an answer was not said to be cut short, and its timeout was the time left when the search began,
        before the words to read apart and the patterns' words were counted (``_apart``, ``_expanded``)
        (``test_an_answer_past_its_deadline_says_so_on_opensearch``)."""
        if deadline is None:
            return self._run(body)
        try:
            answer = self._run({**body, "timeout": _timeout(deadline)})
        except EngineRequestError as exc:
            if "Time exceeded" not in str(exc):
                raise
            # a shard's time ran out where it could not answer with what it had found (OpenSearch says "HTTP 500:
            # search_phase_execution_exception: Time exceeded", partial results being refused): the deadline passed
            # with nothing found, as Whoosh says it. Until 6 December 2026 a 500 (the three-node walk: one of 35
            # twelve-word searches of eight connections at once)
            return {"hits": {"total": {"value": 0, "relation": "gte"}, "hits": []}, "timed_out": True}
        if time.monotonic() > deadline:
            answer["timed_out"] = True
        return answer

    def search(self, q: EngineQuery) -> EngineResult:
        with self.client.within(q.deadline):  # (a hung node answers within the deadline, not in four 30 s tries)
            return self._search(q)

    def _search(self, q: EngineQuery) -> EngineResult:
        text = q.text.strip()
        filters = filter_clauses(q.filters)
        base: dict[str, Any] = {"from": (q.page - 1) * q.per_page, "size": q.per_page, "track_total_hits": True,
                                "_source": False, "sort": sort_clause(q.sort, bool(text))}
        if q.facets:
            base["aggs"] = facet_aggregations()
        if not text:
            answer = self._timed({**base, "query": {"bool": {"filter": filters}} if filters else {"match_all": {}}},
                                  q.deadline)
            return self._result(answer, {}, "", False)
        check_text(text)  # as Whoosh says it (the query string's own refusal of a wildcard names no word)
        profiles = self._index_profiles(q.filters.language)
        tries = readings(text, plain=False, apart=self._apart(text, profiles, q.deadline))
        try:
            chosen, notes = self._expanded([t.text for t in tries if not t.plain], profiles, q.deadline)
        except _Expired:
            return EngineResult(total=0, hits=[], timed_out=True)
        first_terms = query_terms(tries[0], profiles, chosen)
        if not any(first_terms.values()):  # (no word looked for: -rust, published:2024)
            base["sort"] = sort_clause(q.sort, False)
        answer, used, relaxed, all_words = None, tries[0], False, 0
        for i, reading in enumerate(tries):
            found = self._timed({**base, "query": {"bool": {"must": [text_query(reading, profiles, chosen)],
                                                              "filter": filters}}}, q.deadline)
            if answer is None:
                answer, all_words = found, found["hits"]["total"]["value"]
            elif found["hits"]["total"]["value"] > answer["hits"]["total"]["value"]:
                answer, used, relaxed = found, reading, i > 0
            if answer["hits"]["total"]["value"] >= RELAX_BELOW or answer.get("timed_out"):
                break
        assert answer is not None
        suggestion = ""
        any_word = tries[0].any_word
        if q.suggest and not answer.get("timed_out") and (all_words < SUGGEST_BELOW or any_word):
            vocabulary = OpenSearchVocabulary(self, profiles, q.deadline)

            def count(words: str) -> int:  # episodes holding every word, with the request's filters, a pattern
                if vocabulary.expired():
                    return 0
                first = readings(words, plain=False, long_query_words=EVERY_WORD)[0]  # bounded as the search's
                try:
                    bounded = self._expanded([first.text], profiles, q.deadline)[0]
                except (_Expired, QueryError):
                    return 0
                body: dict[str, Any] = {"size": 0, "track_total_hits": True, "query": {"bool": {
                    "must": [text_query(first, profiles, bounded)], "filter": filters}}}
                if q.deadline is not None:
                    body["timeout"] = _timeout(q.deadline)
                return int(self._run(body)["hits"]["total"]["value"])

            suggestion = spelling.suggestion(text, vocabulary, count, None if any_word else all_words)
            if vocabulary.expired():  # (its requests stopped at the deadline: what it found is not a suggestion)
                suggestion, answer = "", {**answer, "timed_out": True}
        terms = first_terms if used is tries[0] else query_terms(used, profiles, chosen)
        matched = self._fuzzy_matched(used.text, profiles) if not answer.get("timed_out") else set()
        terms = {field: found | matched for field, found in terms.items()}
        return replace(self._result(answer, terms, suggestion, relaxed),
                       all_words=all_words if relaxed else None, notes=notes)

    def _fuzzy_matched(self, text: str, profiles: list[str]) -> set[str]:
        """The indexed words (stems) each fuzzy part of ``text`` (``kubrnetes~``, ``lightnin~2``, ``word~2/3``)
        matches, its ``MAX_EXPANSIONS`` most frequent in the transcripts, to be marked: OpenSearch does not say
        which words a fuzzy part matched, and the part's own stem (``kubrnet``) marked nothing (0 moments for
        ``kubrnetes~`` on the site corpus, where Whoosh marks every hit). One request per profile."""
        parts = fuzzy_parts(text)
        out: set[str] = set()
        for profile in profiles if parts else ():
            suggest: dict[str, Any] = {}
            for n, (word, edits, kept) in enumerate(parts):
                stems = python_analyzer(profile, parts=False).texts(word)
                if len(stems) == 1 and edits:
                    out.add(stems[0])
                    suggest[f"f{n}"] = {"text": stems[0], "term": {
                        "field": text_field("transcript", profile), "suggest_mode": "always", "max_edits": edits,
                        "prefix_length": kept, "min_word_length": 1, "size": expansions.MAX_EXPANSIONS,
                        "sort": "frequency"}}
            if suggest:
                try:
                    answer = self.client.search(self._target(), {"size": 0, "suggest": suggest})
                except EngineUnavailable:  # (past the search's deadline: the answer goes out marked as it can)
                    return out
                out.update(option["text"] for entries in answer.get("suggest", {}).values() for entry in entries
                           for option in entry.get("options", []))
        return out

    def _expanded(self, texts: list[str], profiles: list[str], deadline: float | None
                  ) -> tuple[dict[str, tuple[str, ...]], list[str]]:
        """The words each wildcard, prefix or range part of ``texts`` is searched with, and the notes on those
        cut (``expand.py``); QueryError for a part or a query over the limits, _Expired past the deadline. Each
        part's words (or refusal) are kept for the served index: the same pattern asked again costs a lookup."""
        chosen: dict[str, tuple[str, ...]] = {}
        notes: dict[str, str] = {}
        for text in texts:
            for part in expand.parts(text):
                if part.key in chosen:
                    continue
                key = (self.stamp(), tuple(profiles), part.key)
                found = self._expansion_cache.get(key)
                if found is None:
                    found = self._expansion(part, profiles, deadline)
                    self._expansion_cache.put(key, found)
                if isinstance(found, QueryError):
                    raise QueryError(str(found))
                if part.excluded:  # (searched as typed: every word it matches, no note; expand._excluded)
                    continue
                chosen[part.key] = found.words
                # (counted as each part is expanded, which counts the whole once the last is: refused before the
                # deadline, where 65 prefixes were a 503 first and a 400 once their words were kept)
                expand.check_clauses(chosen, profiles)
                note = expansions.cut_note(part.shown, found.matching)
                if note:
                    notes[part.shown] = note
        return chosen, list(notes.values())

    def _expansion(self, part: expand.Part, profiles: list[str], deadline: float | None
                   ) -> expand.Expansion | QueryError:
        if deadline is not None and time.monotonic() > deadline:
            raise _Expired
        body = expand.listing(part)
        if deadline is not None:
            body["timeout"] = _timeout(deadline)
        answer = self._run(body)
        if answer.get("timed_out"):
            raise _Expired
        words, complete = expand.listed(answer)
        try:
            return expand.expand(part, words, complete, profiles)
        except QueryError as exc:
            return exc

    def _apart(self, text: str, profiles: list[str], deadline: float | None = None) -> tuple[tuple[str, str], ...]:
        """The words of ``text`` to read both ways, one word or two (``compounds.apart``), each decision kept for the
        served index; the phrase counts stop at ``compounds.count_deadline`` (what a cut count decides: ``apart``)."""
        return compounds.apart(text, _Counts(self, profiles, compounds.count_deadline(deadline)), self._apart_cache,
                               (self.stamp(), tuple(profiles)))

    @staticmethod
    def _result(answer: dict[str, Any], terms: dict[str, set[str]], suggestion: str, relaxed: bool) -> EngineResult:
        hits = [EngineHit(id=h["_id"], score=float(h.get("_score") or 0.0)) for h in answer["hits"]["hits"]]
        facets = facet_counts(answer["aggregations"]) if "aggregations" in answer else {}
        return EngineResult(total=int(answer["hits"]["total"]["value"]), hits=hits, terms=terms, facets=facets,
                            suggestion=suggestion, relaxed=relaxed, timed_out=bool(answer.get("timed_out")))

    def rank(self, text: str, limit: int = 1000, plain: bool = False) -> list[tuple[str, float]]:
        profiles = self._index_profiles()
        hits: list[Any] = []
        for reading in readings(text, plain, apart=self._apart(text, profiles)):
            hits = self._run({"size": limit, "_source": False, "sort": ["_score", {"id": "asc"}],
                              "query": text_query(reading, profiles)})["hits"]["hits"]
            if len(hits) >= RELAX_BELOW:
                break
        return [(h["_id"], float(h["_score"] or 0.0)) for h in hits]

    # -- typeahead ----------------------------------------------------------------------------------
    def suggest(self, prefix: str, limit: int = 8, deadline: float | None = None) -> dict[str, list[tuple[str, str]]]:
        """Typeahead, waiting for the cluster until ``deadline`` (and :data:`client.GRACE`) at most: until 6 December
        2026 a stopped node held each typeahead request for ``opensearch_timeout`` (30 s), and four held every
        worker (``test_a_hung_node_holds_typeahead_and_readyz_no_longer_than_their_bounds``)."""
        with self.client.within(deadline):
            return self._suggest(prefix, limit, deadline)

    def _suggest(self, prefix: str, limit: int, deadline: float | None) -> dict[str, list[tuple[str, str]]]:
        prefix = prefix.strip().lower()
        last = _WORD.findall(prefix)
        word = last[-1] if last else prefix
        pattern, person = regex_literal(word) + ".*", regex_literal(prefix) + ".*"
        profiles = self._index_profiles()
        titles = {"bool": {"should": [{"prefix": {text_field("title", p): word}} for p in profiles]}}
        if len(last) > 1:  # the words before the last rank the titles that hold them (or whose show does) first,
            # and among them those where the last is a whole word ("practical ai 2": #2 before #20-#299)
            said = [{"multi_match": {"query": " ".join(last[:-1]), "fields": [text_field(f, p) for f in ("title", "show")]}}
                    for p in profiles] + [{"match": {text_field("title", p): {"query": word, "boost": 0.05}}} for p in profiles]
            titles = {"bool": {"must": [titles], "should": said}}
        # persons and words over every episode (a global aggregation), not only those whose title matched
        answer = self._run({
            **({"timeout": _timeout(deadline)} if deadline is not None else {}),
            "size": limit, "_source": ["title"], "query": titles, "sort": ["_score", {"id": "asc"}],
            "aggs": {"all": {"global": {}, "aggs": {
                "person": {"filter": {"prefix": {"person_key": prefix}},
                           "aggs": {"p": {"terms": {"field": "person_key", "include": person, "size": 3}}}},
                "term": {"filter": {"prefix": {"vocab": word}},
                         "aggs": {"t": {"terms": {"field": "vocab", "include": pattern, "size": limit}}}}}}}})
        aggs = answer.get("aggregations", {}).get("all", {})
        return {"episode": [(h["_id"], h["_source"].get("title", "")) for h in answer["hits"]["hits"]],
                "person": [("", b["key"]) for b in aggs.get("person", {}).get("p", {}).get("buckets", [])],
                "term": [("", b["key"]) for b in aggs.get("term", {}).get("t", {}).get("buckets", [])]}

    def analyzer(self, language: str) -> TextAnalyzer:
        return python_analyzer(languages.profile(language))

    def read_as(self, language: str = "") -> list[str]:
        return self._index_profiles(language)

    def warm(self) -> None:
        self._index_profiles()

    def segment_counts(self, ids: list[str], terms: set[str], deadline: float | None = None,
                       cjk: dict[str, tuple[frozenset[str], ...]] | None = None,
                       always: int | None = None) -> dict[str, SegmentCounts]:
        """From the hits' tables of segment terms (``segments.py``), read in one ``_mget``: a hit without one (an
        index of schema 10 or older) is left out, and so is every hit when the node does not answer it (their
        moments are then found by reading their segments, as before schema 11). With a ``deadline`` the ``_mget``
        waits the time the search has left (``TABLES_FLOOR`` at least); when that runs out every hit has counts of
        no segment, incomplete: no moments, the answer cut short (``timed_out``), as past the deadline on Whoosh."""
        if not ids or not terms:
            return {}
        wait = self._figures_wait()
        if deadline is not None:  # (the time the search has left, a floor past it: a slow node holds no page longer)
            wait = min(wait, max(deadline - time.monotonic(), TABLES_FLOOR))
        until = time.monotonic() + wait
        try:
            target = self._target()
            with self.client.within(until, grace=0.0):
                answer = self.client.request("POST", f"/{target}/_mget", {"ids": list(dict.fromkeys(ids))},
                                             params={"stored_fields": SEGMENT_TERMS, "_source": False}, timeout=wait)
        except (EngineUnavailable, EngineRequestError, IndexMissing) as exc:
            if deadline is not None and isinstance(exc, EngineUnavailable) and time.monotonic() >= until:
                # the search's time ran out: these hits have no moments and the page says it was cut short, as past
                # the deadline on Whoosh (their segments are not read instead: that is more time past it)
                log.info("the hits' segment tables were not read within the search's deadline (%s)", exc)
                return {i: _UNCOUNTED for i in ids}
            log.info("the hits' segment tables were not read (%s): their segments are", exc)
            return {}
        tables = {}
        for doc in answer.get("docs", []) if isinstance(answer, dict) else []:
            table = read_table((doc.get("fields") or {}).get(SEGMENT_TERMS)) if doc.get("found") else None
            if table is not None:
                tables[doc["_id"]] = table
        return table_counts(tables, terms, deadline, cjk, always)

    def passages(self, ids: list[str], terms: list[str], width: int) -> list[float]:
        """Not read here (it would take each hit's term vectors): 0, so the feedback's passage step changes nothing
        and OpenSearch ranks as before it (docs/search.md)."""
        return [0.0] * len(ids)

    # -- similar baseline ---------------------------------------------------------------------------
    def more_like(self, episode_id: str, text: str, k: int = 10) -> list[tuple[str, float]]:
        """OpenSearch's ``more_like_this`` over the transcript fields (a baseline for the similar model)."""
        fields = [text_field("transcript", p) for p in self._index_profiles()]
        answer = self._run({"size": k, "_source": False, "query": {"bool": {
            "must": [{"more_like_this": {"fields": fields, "like": text[:20000], "min_term_freq": 1,
                                         "min_doc_freq": 1, "max_query_terms": 25}}],
            "must_not": [{"ids": {"values": [episode_id]}}]}}})
        return [(h["_id"], float(h["_score"] or 0.0)) for h in answer["hits"]["hits"]]



def _explanation(found: Any) -> str:
    """An allocation explanation in a line: its summary, then each refusal with the nodes that gave it."""
    if not isinstance(found, dict):
        return ""
    nodes: dict[str, list[str]] = {}  # a refusal -> the nodes that gave it
    for node in found.get("node_allocation_decisions") or []:
        refusals = [d.get("explanation", "") for d in node.get("deciders") or [] if d.get("decision") == "NO"]
        if refusals:  # (without the shard's routing details: "... to this node [[index][0], node[...]]")
            nodes.setdefault(re.sub(r"\s*\[\[.*$", "", refusals[0]), []).append(node.get("node_name", "?"))
    said = [f"{', '.join(sorted(names))}: {refusal}" for refusal, names in nodes.items()]
    return "; ".join([str(found.get("allocate_explanation") or found.get("can_allocate") or ""), *said])[:600]


_NONE = np.zeros(0, dtype=np.int64)
# a hit's counts when its table could not be read within the search's deadline: no segment, incomplete
_UNCOUNTED = SegmentCounts(indexes=_NONE, distinct=_NONE, tokens=_NONE, words=_NONE, complete=False)


class _Expired(Exception):
    """The search's deadline passed while a pattern's words were listed."""


def _timeout(deadline: float) -> str:
    """A search body's ``timeout``: the time left until ``deadline`` (at least a millisecond)."""
    return f"{max(1, round((deadline - time.monotonic()) * 1000))}ms"


class _Counts:
    """:class:`compounds.Counts` over the engine's index: a word's episodes from the ``words`` field (every word
    of an episode once), a phrase's from a count of the quoted words."""

    def __init__(self, engine: OpenSearchEngine, profiles: list[str], deadline: float | None = None) -> None:
        self.engine, self.profiles, self.deadline = engine, profiles, deadline
        self.timed_out = False

    def stop_word(self, word: str) -> bool:
        return not any(python_analyzer(key).texts(word) for key in self.profiles)

    def frequencies(self, words: list[str]) -> dict[str, int]:
        if not words:
            return {}
        answer = self.engine.search_served({"size": 0, "aggs": {"held": {"filters": {
            "filters": {str(i): {"term": {"words": w}} for i, w in enumerate(words)}}}}})
        buckets = answer["aggregations"]["held"]["buckets"]
        return {w: int(buckets[str(i)]["doc_count"]) for i, w in enumerate(words)}

    def phrase(self, first: str, second: str, enough: int) -> int:
        body: dict[str, Any] = {"size": 0, "track_total_hits": True, "terminate_after": enough,
                                "query": text_query(readings(f'"{first} {second}"', plain=False)[0], self.profiles)}
        if self.deadline is not None:
            body["timeout"] = _timeout(self.deadline)
        answer = self.engine.search_served(body)
        self.timed_out = self.timed_out or bool(answer.get("timed_out"))
        return 0 if answer.get("timed_out") else int(answer["hits"]["total"]["value"])


class OpenSearchVocabulary:
    """:class:`spelling.Vocabulary` over the engine's index (the ``words`` field holds every word of an episode
    once), for the query's languages (analysis profiles)."""

    def __init__(self, engine: OpenSearchEngine, profiles: list[str], deadline: float | None = None) -> None:
        self.engine, self.profiles, self.deadline = engine, profiles, deadline
        self._expired = False

    def expired(self) -> bool:
        """Whether the search's deadline has passed: from then on the vocabulary asks the cluster nothing and knows no
        word. Until 6 December 2026 "did you mean" asked it with no deadline: 12 typos, 85 requests one after the
        other, ended 0.7 s past a 0.3 s deadline and the answer said it was in time
        (``test_did_you_mean_stops_at_the_deadline_on_opensearch``)."""
        self._expired = self._expired or (self.deadline is not None and time.monotonic() > self.deadline)
        return self._expired

    def held(self, words: list[str]) -> dict[str, int]:
        if self.expired():
            return {}
        return _Counts(self.engine, self.profiles).frequencies(words)

    def candidates(self, words: list[str]) -> dict[str, list[str]]:
        """Asked in one request (a term suggester a word). Until 6 December 2026 one request a word, and the other
        questions below one a word (and language): 12 typos made about 85 requests one after the other
        (``test_did_you_mean_asks_the_node_a_few_times_whatever_the_words``)."""
        if not words or self.expired():
            return {}
        answer = self.engine.search_served({"size": 0, "suggest": {f"w{i}": self._suggester(word)
                                                                   for i, word in enumerate(words)}})
        found = answer.get("suggest", {})
        return {word: self._ordered([o for e in found.get(f"w{i}", []) for o in e["options"]])
                for i, word in enumerate(words)}

    def in_language(self, asked: list[spelling.Asked]) -> set[spelling.Asked]:
        """Asked in one ``_msearch`` request: a search for each profile of each word (see ``_in_language_bodies``)."""
        questions = []  # (which of asked, its body)
        for n, (word, keys) in enumerate(asked):
            questions += [(n, body) for body in self._in_language_bodies(word, keys)]
        if not questions or self.expired():
            return set()
        answers = self.engine.search_served_many([body for _, body in questions])
        return {asked[n] for (n, _), answer in zip(questions, answers) if answer["hits"]["total"]["value"]}

    def languages_of(self, words: list[str]) -> dict[str, list[str] | None]:
        """Asked in one ``_msearch`` request: a terms aggregation on ``analysis`` over the episodes whose ``words``
        hold each word. Until 5 December 2026 only Whoosh said it, and on OpenSearch a word few episodes hold was a
        typo of any language's word (the German "parteien" was offered the Dutch "partijen")."""
        if not words or self.expired():
            return {word: [] for word in words}
        answers = self.engine.search_served_many([self._languages_body(word) for word in words])
        return {word: self._languages_found(answer) for word, answer in zip(words, answers)}

    @staticmethod
    def _suggester(word: str) -> dict[str, Any]:
        return {"text": word, "term": {
            "field": "words", "suggest_mode": "always", "max_edits": spelling.MAX_DISTANCE, "prefix_length": 1,
            "min_word_length": 3, "size": spelling.CANDIDATES, "sort": "score"}}  # the nearest ...

    @staticmethod
    def _ordered(options: list[dict[str, Any]]) -> list[str]:
        return [o["text"] for o in sorted(options, key=lambda o: -int(o.get("freq", 0)))]  # (... the more frequent
        # first: the rules sort them by distance after, keeping this order among equals, as on Whoosh)

    def _languages_body(self, word: str) -> dict[str, Any]:
        return {"size": 0, "query": {"term": {"words": self.form(word)}},
                "aggs": {"of": {"terms": {"field": "analysis", "size": max(1, len(self.profiles))}}}}

    def _languages_found(self, answer: dict[str, Any]) -> list[str]:
        found = {b["key"] for b in answer.get("aggregations", {}).get("of", {}).get("buckets", [])}
        return [p for p in self.profiles if p in found]

    def _in_language_bodies(self, word: str, profiles: tuple[str, ...] | list[str] | None) -> list[dict[str, Any]]:
        """A search for each profile whose content word ``word`` is (not a stop word): any that finds an episode says
        it is one of the language's."""
        bodies = []
        for key in self.profiles if profiles is None else profiles:
            terms = python_analyzer(key).texts(word)
            if not terms:  # a stop word of this language
                continue
            in_text = [{"term": {text_field(f, key): terms[0]}} for f in ("title", "notes", "transcript")]
            bodies.append({"size": 0, "terminate_after": 1, "query": {
                "bool": {"filter": [{"term": {"analysis": key}}, {"bool": {"should": in_text}}]}}})
        return bodies

    def form(self, word: str) -> str:
        return fold(word)  # (the words field's asciifolding, as analysis.fold mirrors it)


def _refused(items: list[tuple[Any, Any]]) -> EngineRequestError | EngineUnavailable:
    """The documents a ``_bulk`` refused, said as OpenSearch's reasons (type: reason, not a dict's repr), and a shard
    on no running node as such: a node killed while a rebuild wrote its index (built without replicas) failed it a
    minute later with "OpenSearch refused 57 documents: <id>: {'type': 'unavailable_shards_exception', 'reason':
    '[podsearch-...][0] primary shard is not active Timeout: [1m]'}" three times over."""
    def said(error: Any) -> str:
        if isinstance(error, dict):
            return f"{error.get('type', '')}: {error.get('reason', '')}"
        return str(error)

    errors = [said(error) for _, error in items]
    if any(e.startswith("unavailable_shards_exception") for e in errors):
        return EngineUnavailable(
            f"OpenSearch could not write {len(items)} documents: a shard of the index was on no running node ("
            f"{next(e for e in errors if e.startswith('unavailable_shards_exception'))}): a node left while the index "
            "was written. A rebuild's index is deleted and the served one is unchanged; the next reindex sends what "
            "was not written. Run it again once the cluster's health is green or yellow.")
    return EngineRequestError(f"OpenSearch refused {len(items)} documents: "
                              + "; ".join(f"{i}: {e}" for (i, _), e in zip(items[:3], errors[:3])))


def _chain(*parts: Iterable[Any]) -> Iterator[Any]:
    for part in parts:
        yield from part


__all__ = ["OpenSearchEngine", "document_body", "index_body"]
