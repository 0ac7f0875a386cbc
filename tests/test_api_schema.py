"""The OpenAPI document against the real server: schemathesis generates requests from it and sends them to
``podsearch serve`` (waitress, in a subprocess); no answer may be a 5xx, and every answer must match the
document (status code, content type, headers, body schema)."""

from __future__ import annotations

import json
import shutil
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

schemathesis = pytest.importorskip("schemathesis")

from conftest import LiveServer, start_server  # noqa: E402
from hypothesis import HealthCheck, settings  # noqa: E402
from schemathesis.checks import not_a_server_error  # noqa: E402
from schemathesis.specs.openapi.checks import (  # noqa: E402
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from podsearch.web.openapi import document  # noqa: E402

CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance, response_headers_conformance,
          response_schema_conformance]


@pytest.fixture(scope="module")
def fuzz_server(sample_data_template: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    data = tmp_path_factory.mktemp("fuzz") / "data"
    shutil.copytree(sample_data_template, data)
    server = start_server(data, "--no-access-log", "--threads", "4")
    yield server
    server.stop()


# The document is built in code, so it is known at collection time; the test below checks that the server
# serves this very document.
schema = schemathesis.openapi.from_dict(document())


def test_the_server_serves_this_document(fuzz_server: LiveServer) -> None:
    with urllib.request.urlopen(fuzz_server.url("/api/openapi.json"), timeout=10) as resp:
        assert json.load(resp) == json.loads(json.dumps(document()))


@schema.parametrize()
@settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck))
def test_every_answer_conforms(case, fuzz_server: LiveServer) -> None:
    case.call_and_validate(base_url=fuzz_server.base, checks=CHECKS, timeout=10)
