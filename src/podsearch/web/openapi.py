"""The OpenAPI 3.1 document of the JSON API, served at ``/api/openapi.json``.

The parameters come from the declarations that check them (``podsearch.requests``), so the limits in it are the
ones enforced; the unversioned aliases are described by the same operation objects as ``/api/v1``.
"""

from __future__ import annotations

import copy
from typing import Any

from .. import __version__
from ..requests import (
    ALIASES,
    MAX_TEXT_CHARS,
    MomentParams,
    Params,
    PartParams,
    SearchParams,
    ShowPageParams,
    SimilarParams,
    SuggestParams,
)
from .errors import HTTP_CODES

JSON = "application/json"
NULLABLE_STR = {"type": ["string", "null"]}
NUMBER_OR_NULL = {"type": ["number", "null"]}
INT_OR_NULL = {"type": ["integer", "null"]}


def _ref(kind: str, name: str) -> dict[str, str]:
    return {"$ref": f"#/components/{kind}/{name}"}


def _obj(required: list[str], **props: Any) -> dict[str, Any]:
    return {"type": "object", "required": required, "properties": props}


def _array(items: dict[str, Any]) -> dict[str, Any]:
    return {"type": "array", "items": items}


STR, INT, NUM, BOOL = {"type": "string"}, {"type": "integer"}, {"type": "number"}, {"type": "boolean"}

SCHEMAS: dict[str, Any] = {
    "Error": _obj(["error"], error=_obj(["code", "message"], code={
        "type": "string", "description": "Stable machine-readable code: " + ", ".join(
            sorted({"bad_query", "not_found", "not_ready", "busy", "overloaded", "engine_unavailable", "internal",
                    *HTTP_CODES.values()}))},
        message={"type": "string", "description": "What went wrong and how to fix it, for people."})),
    "Moment": _obj(["start", "speaker", "text"], start=NUMBER_OR_NULL, speaker=STR,
                   text={"type": "string", "description": "Escaped HTML; matches wrapped in <mark>."},
                   chapter=STR,
                   segment={**INT_OR_NULL, "description": "Its place in the transcript, from 0."},
                   anchor={"type": "string", "description": "Its paragraph's id on the episode page (t754, t754-18, "
                           "p12)."}),
    "Hit": _obj(["id", "title", "show", "published", "url", "snippet", "moments"],
                id=STR, title=STR, show=STR, show_id=STR,
                published={"type": ["string", "null"], "description": "ISO 8601 UTC"}, url=STR, audio_url=STR,
                duration={"type": ["integer", "null"], "description": "seconds"}, score=NUM,
                snippet={"type": "string", "description": "Escaped HTML; matches wrapped in <mark>."},
                title_html={"type": "string", "description": "The title as escaped HTML, matches in <mark>."},
                language={"type": "string", "description": "Primary language subtag (en, de, ja, ...); empty when unknown."},
                moments=_array(_ref("schemas", "Moment"))),
    "FacetValue": _obj(["value", "count"], value=STR, label=STR, count=INT),
    "Facets": {"type": "object", "description": "Counts over all matching episodes: show, year, person and language "
               "(value: the language code, label: its English name).",
               "additionalProperties": _array(_ref("schemas", "FacetValue"))},
    "SearchResult": _obj(["query", "total", "page", "per_page", "pages", "hits"],
                         query=STR, total=INT, page=INT, per_page=INT, pages=INT, took_ms=NUM, relaxed=BOOL,
                         suggestion=NULLABLE_STR, hits=_array(_ref("schemas", "Hit")),
                         all_words={"type": ["integer", "null"], "description": "When relaxed: how many of the "
                                    "episodes hold every word (they are ranked among the others)."},
                         corrected={"type": ["string", "null"], "description": "The words searched instead of the "
                                    "query: its spelling suggestion, when its unknown words had one, or its phrases "
                                    "read loosely, when no episode says them (correct=false searches them as typed)."},
                         total_relation={"type": "string", "enum": ["eq", "gte"], "description": "eq: total is "
                                         "exact; gte: a lower bound (the deadline cut the search short)."},
                         timed_out={"type": "boolean", "description": "The search's deadline passed: the hits are the "
                                    "best of the episodes read, the total a lower bound."},
                         notes=_array(STR),
                         no_duration={"type": ["integer", "null"], "description": "With duration_min or duration_max: "
                                      "how many episodes the words find that have no known length, which the "
                                      "filter leaves out; null without a duration filter."},
                         without_fields={"type": ["integer", "null"], "description": "When a search in fields "
                                         "(title:generics) found nothing: how many episodes its words find in any "
                                         "field; null otherwise."},
                         facets=_ref("schemas", "Facets")),
    "Suggestions": _obj(["query", "suggestions"], query=STR, suggestions=_array(_obj(["kind", "text"], kind={
        "type": "string", "enum": ["show", "episode", "person", "term"]}, text=STR, id=STR))),
    "Person": _obj(["name"], name=STR, role=STR, group=STR, href=STR, img=STR),
    "Show": _obj(["id", "title"], id=STR, title=STR, link=STR, description=STR, language=STR, image=STR,
                 author=STR, categories=_array(STR), persons=_array(_ref("schemas", "Person")), guid=STR),
    "ShowList": _obj(["shows"], shows=_array(_ref("schemas", "Show"))),
    "EpisodeSummary": _obj(["id", "title", "published"], id=STR, title=STR, published=NULLABLE_STR,
                           duration=INT_OR_NULL, url=STR),
    "ShowDetail": {"allOf": [_ref("schemas", "Show"), _obj(
        ["episodes", "page", "per_page", "has_more"], episodes=_array(_ref("schemas", "EpisodeSummary")),
        page=INT, per_page=INT, has_more=BOOL)]},
    "Segment": _obj(["text"], text=STR, start=NUMBER_OR_NULL, end=NUMBER_OR_NULL, speaker=STR),
    "Chapter": _obj(["start", "title"], start=NUM, end=NUMBER_OR_NULL, title=STR, url=STR, img=STR),
    "Episode": _obj(["id", "show_id", "title", "published", "segments"],
                    id=STR, show_id=STR, title=STR, link=STR,
                    description_html={"type": "string", "description": "Sanitized HTML, safe to show."},
                    description_text=STR, published=NULLABLE_STR, duration=INT_OR_NULL, audio_url=STR,
                    audio_type=STR, image=STR, season=INT_OR_NULL, number=INT_OR_NULL, language=STR,
                    categories=_array(STR), persons=_array(_ref("schemas", "Person")),
                    chapters=_array(_ref("schemas", "Chapter")),
                    segments={**_array(_ref("schemas", "Segment")),
                              "description": "One part of the transcript: at most 2,000 segments (?part=)."},
                    segments_total={**INT, "description": "Segments of the whole transcript."},
                    segments_from={**INT, "description": "The place (from 0) of the first segment of this part."},
                    transcript_part={**INT, "description": "This part, from 1."},
                    transcript_parts={**INT, "description": "Parts of the transcript (1 for none)."},
                    gone={**BOOL, "description": "The episode has left its feed (kept and searchable: docs/ingest.md)."},
                    gone_since={**NULLABLE_STR, "description": "When a reindex first found the episode gone from its "
                                "feed, as 2026-12-05T23:40:39Z (UTC); null while it is in its feed, or when that was "
                                "not recorded (gone before 6 December 2026)."},
                    transcript_source=STR),
    "SimilarItem": _obj(["id", "title", "show", "score", "reasons"], id=STR, title=STR, show=STR, show_id=STR,
                        published=NULLABLE_STR, url=STR, score=NUM,
                        language={"type": "string", "description": "Language code, \"\" if unknown."},
                        reasons={"type": "array", "items": STR, "description": "Terms the two episodes share."}),
    "SimilarResult": _obj(["id", "similar"], id=NULLABLE_STR, similar=_array(_ref("schemas", "SimilarItem")),
                          duplicates=_array(_ref("schemas", "SimilarItem")), t=NUM),
    "Alive": _obj(["status"], status={"type": "string", "const": "ok"}),
    "Ready": _obj(["status", "index_generation", "episodes", "last_reindex_age_seconds"],
                  status={"type": "string", "const": "ready"}, index_generation=STR, episodes=INT,
                  last_reindex_age_seconds=NUMBER_OR_NULL, reindex={"type": "object"},
                  engine={"type": "object", "description": "OpenSearch's: the served index's health (green, yellow, "
                                                           "red), the cluster's nodes, the index's unassigned shards "
                                                           "(and when yellow, why: unplaced)."}),
}


def _param(name: str, schema: dict[str, Any], description: str, where: str = "query",
           required: bool = False) -> dict[str, Any]:
    return {"name": name, "in": where, "required": required or where == "path", "description": description,
            "schema": schema}


def query_parameters(model: type[Params], prefix: str = "") -> dict[str, Any]:
    """The query parameters a request model declares, as OpenAPI parameter objects (named ``prefix`` + name)."""
    props = model.model_json_schema(by_alias=True)["properties"]
    out: dict[str, Any] = {}
    for name, info in model.model_fields.items():
        key = info.alias or name
        schema = {k: v for k, v in props[key].items() if k not in {"title", "description"}}
        if "anyOf" in schema:  # "x | None": absent is None; a query string has no null
            schema = {**next(s for s in schema.pop("anyOf") if s.get("type") != "null"), **schema}
            if schema.get("default") is None:
                schema.pop("default", None)
        out[prefix + key] = _param(key, schema, info.description or "")
        for alias, target in ALIASES.items():
            if target == key:
                out[prefix + alias] = _param(alias, schema, f"The same as {key}.")
    return out


PARAMETERS: dict[str, Any] = {
    **query_parameters(SearchParams),
    **query_parameters(SimilarParams),
    **query_parameters(MomentParams, prefix="moment_"),
    **query_parameters(SuggestParams, prefix="prefix_"),
    **query_parameters(ShowPageParams, prefix="show_"),
    **query_parameters(PartParams, prefix="episode_"),
    "text": _param("text", {"type": "string", "minLength": 1, "maxLength": MAX_TEXT_CHARS},
                   "Text to find episodes near in topic.", required=True),
    "episode_id": _param("episode_id", {"type": "string", "minLength": 1},
                         "Episode id (the feed's guid, qualified by the show); may hold '/', ':' and '?' "
                         "(percent-encode them).", where="path"),
    "show_id": _param("show_id", {"type": "string", "minLength": 1}, "Show id.", where="path"),
}


def _error(description: str) -> dict[str, Any]:
    return {"description": description, "content": {JSON: {"schema": _ref("schemas", "Error")}}}


RESPONSES: dict[str, Any] = {
    "BadRequest": _error("A parameter is malformed or past a limit (code bad_query or bad_request)."),
    "NotFound": _error("No such episode or show (code not_found)."),
    "TooLarge": _error("The request body is larger than the server accepts (code too_large)."),
    "RateLimited": {**_error("Too many requests from this client (code rate_limited); see Retry-After."),
                    "headers": {"Retry-After": {"schema": {"type": "integer"}, "description": "Seconds to wait."}}},
    "NotReady": {**_error("No index or model yet, or a reindex holds it (codes not_ready, busy); or no room for the "
                          "search now (code overloaded): see Retry-After."),
                 "headers": {"Retry-After": {"schema": {"type": "integer"}, "description": "Seconds to wait."}}},
    "NotModified": {"description": "The answer has not changed since the ETag / date the client sent."},
}

CACHE_HEADERS = {
    "ETag": {"schema": {"type": "string"}, "description": "Weak validator: index and model generation + request."},
    "Last-Modified": {"schema": {"type": "string"}, "description": "When the data last changed."},
    "Cache-Control": {"schema": {"type": "string"}, "description": "public, max-age=<cache_max_age>"},
}


def _ok(schema: str, cached: bool = True) -> dict[str, Any]:
    out: dict[str, Any] = {"description": "OK", "content": {JSON: {"schema": _ref("schemas", schema)}}}
    if cached:
        out["headers"] = CACHE_HEADERS
    return out


def _op(op_id: str, summary: str, schema: str, params: list[str], errors: tuple[str, ...] = ("400",),
        tag: str = "search", cached: bool = True) -> dict[str, Any]:
    responses: dict[str, Any] = {"200": _ok(schema, cached)}
    if cached:
        responses["304"] = _ref("responses", "NotModified")
    names = {"400": "BadRequest", "404": "NotFound", "413": "TooLarge"}
    for code in errors:
        responses[code] = _ref("responses", names[code])
    responses["429"] = _ref("responses", "RateLimited")
    responses["503"] = _ref("responses", "NotReady")
    return {"operationId": op_id, "summary": summary, "tags": [tag],
            "parameters": [_ref("parameters", p) for p in params], "responses": responses}


SEARCH_PARAMS = ["q", "page", "per_page", "show", "person", "from", "to", "duration_min", "duration_max", "language",
                 "lang", "sort", "correct"]
SIMILAR_OPTIONS = ["k", "same_show", "same_language", "show", "exclude_show", "min_score"]


def _paths() -> dict[str, Any]:
    similar_text_post = _op("similarToTextPost", "Episodes near in topic to a text sent in the body", "SimilarResult",
                            SIMILAR_OPTIONS, ("400", "413"), "similar", cached=False)
    similar_text_post["requestBody"] = {"required": True, "content": {
        JSON: {"schema": _obj(["text"], text={"type": "string", "minLength": 1, "maxLength": MAX_TEXT_CHARS,
                                              "pattern": r"\S"})},
        "application/x-www-form-urlencoded": {"schema": _obj(["text"], text={"type": "string", "minLength": 1,
                                                                             "maxLength": MAX_TEXT_CHARS,
                                                                             "pattern": r"\S"})}}}
    text_param = copy.deepcopy(PARAMETERS["text"])
    text_param["schema"]["pattern"] = r"\S"
    v1: dict[str, Any] = {
        "/search": {"get": _op("search", "Full-text search with the best moments of each episode", "SearchResult",
                               SEARCH_PARAMS)},
        "/suggest": {"get": _op("suggest", "Typeahead: shows, episodes, people and terms", "Suggestions",
                                ["prefix_q"])},
        "/shows": {"get": _op("listShows", "Every show", "ShowList", [], (), "catalog")},
        "/shows/{show_id}": {"get": _op("getShow", "One show and a page of its episodes, newest first",
                                        "ShowDetail", ["show_id", "show_page", "show_per_page"], ("400", "404"),
                                        "catalog")},
        "/episodes/{episode_id}": {"get": _op("getEpisode", "One episode with its transcript", "Episode",
                                              ["episode_id", "episode_part"], ("400", "404"), "catalog")},
        "/similar/{episode_id}": {"get": _op("similar", "Episodes nearest in topic, with the shared terms",
                                             "SimilarResult", ["episode_id", "moment_t", *SIMILAR_OPTIONS], ("400", "404"),
                                             "similar")},
        "/similar": {"get": {**_op("similarToText", "Episodes near in topic to a text", "SimilarResult",
                                   SIMILAR_OPTIONS, ("400",), "similar"),
                             "parameters": [text_param, *(_ref("parameters", p) for p in SIMILAR_OPTIONS)]},
                     "post": similar_text_post},
        "/health": {"get": _op("health", "Readiness, as /readyz", "Ready", [], (), "operations", cached=False)},
    }
    paths: dict[str, Any] = {}
    for path, item in v1.items():
        paths["/api/v1" + path] = item
    for path in ("/search", "/suggest"):
        paths["/api" + path] = _alias(v1[path], "Deprecated alias of /api/v1" + path)
    paths["/similar/{episode_id}"] = _alias(v1["/similar/{episode_id}"], "Alias of /api/v1/similar/{episode_id} "
                                            "(called by the HTML site)", deprecated=False)
    paths["/healthz"] = {"get": _op("alive", "Liveness: the process answers", "Alive", [], (), "operations",
                                    cached=False)}
    ready = _op("ready", "Readiness: index open, its generation, episodes, age of the last reindex", "Ready", [], (),
                "operations", cached=False)
    del ready["responses"]["429"]  # probes are never rate limited
    paths["/readyz"] = {"get": ready}
    paths["/healthz"]["get"]["responses"] = {"200": _ok("Alive", cached=False)}
    paths["/api/openapi.json"] = {"get": {"operationId": "openapi", "summary": "This document", "tags": ["operations"],
                                          "responses": {"200": {"description": "OpenAPI 3.1 document",
                                                                "content": {JSON: {"schema": {"type": "object"}}}},
                                                        "304": _ref("responses", "NotModified"),
                                                        "429": _ref("responses", "RateLimited")}}}
    return paths


def _alias(item: dict[str, Any], note: str, deprecated: bool = True) -> dict[str, Any]:
    out = copy.deepcopy(item)
    for op in out.values():
        op["operationId"] += "Alias" if deprecated else "Site"
        op["description"] = note
        op["deprecated"] = deprecated
    return out


def document(server_url: str = "") -> dict[str, Any]:
    """The whole document; ``server_url`` is the URL prefix the app is mounted under (empty at the root)."""
    return {
        "openapi": "3.1.0",
        "info": {"title": "podsearch API", "version": __version__,
                 "description": "Full-text search over podcast transcripts and nearby episodes by topic. Errors are "
                                "JSON {\"error\": {\"code\", \"message\"}}. GET answers carry a weak ETag and "
                                "Last-Modified; send If-None-Match to get 304 when nothing changed."},
        "servers": [{"url": server_url or "/"}],
        "tags": [{"name": n} for n in ("search", "catalog", "similar", "operations")],
        "paths": _paths(),
        "components": {"schemas": SCHEMAS, "parameters": PARAMETERS, "responses": RESPONSES},
    }
