"""One request module: every parameter checked the same way for the API, the pages and the CLI."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import ENGINES
from werkzeug.datastructures import MultiDict

from podsearch.cli import main
from podsearch.errors import QueryError
from podsearch.requests import MAX_DEPTH, SearchParams, SimilarParams, parse, search_request


@pytest.mark.parametrize(("args", "message"), [
    ({"page": "0"}, "page must be between 1 and 1000."),
    ({"page": "x"}, "page must be a whole number, not 'x'."),
    ({"per_page": "101"}, "per_page must be between 1 and 100."),
    ({"page": "11", "per_page": "100"}, f"Results past the first {MAX_DEPTH:,} are not served; narrow the query."),
    ({"from": "notadate"}, "from must be a date like 2024-05-01, 2024-05 or 2024, not 'notadate'."),
    ({"to": "2024-13"}, "to must be a date like 2024-05-01, 2024-05 or 2024, not '2024-13'."),
    ({"duration_min": "-1"}, "duration_min must be between 0 and 100000."),
    ({"sort": "best"}, "sort must be one of relevance, date, oldest, not 'best'."),
    ({"q": "x" * 501}, "q is 501 characters long; the limit is 500."),
    ({"show": ",".join(f"s{n}" for n in range(51))}, "show names 51 values; the limit is 50."),
    ({"show": "x" * 1001}, f"show {'x' * 40!r}... is 1001 characters long; the limit is 1000."),
])
def test_a_refused_parameter_is_named_with_the_fix(args: dict, message: str) -> None:
    with pytest.raises(QueryError) as info:
        search_request(MultiDict(args))
    assert str(info.value) == message


def test_blank_values_take_the_default_and_lists_take_commas_and_repeats() -> None:
    req = search_request(MultiDict([("q", "bees"), ("page", ""), ("show", "a,b"), ("show", "c"), ("lang", "pt-br"),
                                    ("duration_min", "2")]))
    assert (req.page, req.per_page, req.shows, req.language, req.duration_min) == (1, 10, ["a", "b", "c"], "pt-BR", 120)
    opts = parse(SimilarParams, MultiDict([("k", "5"), ("same_show", "false"), ("exclude_show", "x,y")])).options()
    assert opts == {"k": 5, "same_show": False, "shows": None, "exclude_shows": ["x", "y"], "min_score": 0.0,
                    "same_language": True}
    with pytest.raises(QueryError, match="min_score must be a finite number"):
        parse(SimilarParams, {"min_score": "nan"})


def test_thousands_of_show_filters_are_refused_everywhere(client) -> None:
    """``/search?q=go`` with 3,000 show filters took 23 s and built 126 MB of HTML (each filter in use links the page
    without it, which repeats the others: n x n); the API and the feed read them all too."""
    many = [("q", "go")] + [("show", f"s{n}") for n in range(3000)]
    for path in ("/search", "/api/search", "/search.rss", "/api/v1/similar"):
        resp = client.get(path, query_string=many)
        assert resp.status_code == 400, path
        assert "show names 3000 values; the limit is 50." in resp.get_data(as_text=True), path
    resp = client.get("/similar/any", query_string=[("exclude_show", f"s{n}") for n in range(51)])
    assert resp.status_code == 400 and "exclude_show names 51 values" in resp.get_json()["error"]["message"]
    fifty = client.get("/search", query_string=[("q", "go")] + [("show", f"s{n}") for n in range(50)])
    assert fifty.status_code == 200 and len(fifty.data) < 1_000_000


@pytest.mark.parametrize("name, value", [("from", "2024-02-31"), ("to", "9999-12"), ("to", "9999"), ("from", "0000"),
                                         ("from", "２０２４")])
def test_an_impossible_date_is_refused_naming_the_parameter(client, name: str, value: str) -> None:
    """``to=9999-12`` was a 500 (its last day is in the year 10000), and ``to=9999`` was taken where
    ``published:9999`` was refused: the parameters read a date as ``published:`` does (``querytext.period``)."""
    for path in ("/api/search", "/search", "/search.rss"):
        resp = client.get(path, query_string={"q": "bees", name: value})
        assert resp.status_code == 400, (path, value)
    assert client.get("/api/search", query_string={"q": "bees", name: value}).get_json()["error"]["message"] \
        .startswith(f"{name} must be a date")


def test_dates_written_backwards_are_read_forwards(client) -> None:
    """``from=2025&to=2023`` found nothing and said nothing; it is the years 2023 to 2025, as
    ``published:[2025 TO 2023]`` is."""
    def ids(**dates: str) -> list[str]:
        resp = client.get("/api/search", query_string={"q": "*", "per_page": 50, **dates})
        assert resp.status_code == 200
        return [h["id"] for h in resp.get_json()["hits"]]

    forwards = ids(**{"from": "2023", "to": "2025"})
    assert forwards and ids(**{"from": "2025", "to": "2023"}) == forwards
    assert ids(**{"from": "2025-03", "to": "2024-11"}) == ids(**{"from": "2024-11", "to": "2025-03"})


@pytest.mark.parametrize("engine_name", ENGINES)
def test_durations_written_backwards_are_read_forwards(client) -> None:
    """``duration_min=60&duration_max=10`` found nothing and said nothing, where dates written backwards are read
    forwards: it is 10 to 60 minutes."""
    def ids(**minutes: int) -> list[str]:
        resp = client.get("/api/search", query_string={"q": "*", "per_page": 50, **minutes})
        assert resp.status_code == 200
        return [h["id"] for h in resp.get_json()["hits"]]

    forwards = ids(duration_min=1, duration_max=600)
    assert forwards and ids(duration_min=600, duration_max=1) == forwards


PAGES = [(1, 10), (0, 10), (100, 10), (101, 10), (10, 100), (11, 100), (1, 0), (1, 101), (2, 500)]


def test_cli_and_api_refuse_the_same_pages(client, runner, sample_data: Path) -> None:
    for page, per_page in PAGES:
        api = client.get("/api/search", query_string={"q": "the", "page": page, "per_page": per_page})
        cli = runner.invoke(main, ["--data", str(sample_data), "search", "the", "--page", str(page),
                                   "--per-page", str(per_page), "--json"])
        assert (api.status_code == 400) == (cli.exit_code == 2), (page, per_page, api.status_code, cli.output)
        assert api.status_code in {200, 400} and cli.exit_code in {0, 2}


def test_a_page_past_the_end_lists_nothing_with_the_true_total(client, runner, sample_data: Path) -> None:
    first = client.get("/api/search", query_string={"q": "honey", "per_page": 1}).get_json()
    assert first["total"] >= 2 and first["pages"] == first["total"]
    last = client.get("/api/search", query_string={"q": "honey", "per_page": 1, "page": first["pages"]}).get_json()
    assert len(last["hits"]) == 1
    past = client.get("/api/search", query_string={"q": "honey", "per_page": 1, "page": first["pages"] + 1}).get_json()
    assert past["hits"] == [] and past["total"] == first["total"] and past["pages"] == first["pages"]
    page = client.get("/search", query_string={"q": "honey", "per_page": 1, "page": first["pages"] + 1})
    html = page.get_data(as_text=True)
    assert page.status_code == 200 and "is past the last page" in html
    assert f"page={first['pages']}" in html  # the link to the last page
    cli = runner.invoke(main, ["--data", str(sample_data), "search", "honey", "--per-page", "1", "--page",
                               str(first["pages"] + 1)])
    assert cli.exit_code == 0 and "past the last page" in cli.output


def test_the_400_page_helps_with_the_query_only_when_the_query_was_wrong(client) -> None:
    bad_page = client.get("/search", query_string={"q": "bees", "page": "0"})
    html = bad_page.get_data(as_text=True)
    assert bad_page.status_code == 400 and "page must be between" in html
    assert "A pattern needs letters" not in html
    assert 'href="/search?q=bees"' in html  # the way back: the same words
    bad_query = client.get("/search", query_string={"q": "*olcano"})  # (unbalanced quotes are repaired, not refused)
    assert bad_query.status_code == 400 and "A pattern needs letters" in bad_query.get_data(as_text=True)


def test_the_openapi_parameters_are_the_declared_limits(client) -> None:
    doc = client.get("/api/openapi.json").get_json()
    params = doc["components"]["parameters"]
    declared = SearchParams.model_fields
    assert params["per_page"]["schema"]["maximum"] == declared["per_page"].metadata[1].le
    assert params["q"]["schema"]["maxLength"] == 500
    assert params["from"]["schema"]["pattern"] == declared["from_"].metadata[0].pattern
    assert params["sort"]["schema"]["enum"] == ["relevance", "date", "oldest"]


def test_pages_counts_only_the_pages_that_can_be_asked_for() -> None:
    """``pages`` counted every match: ``-bitcoin`` 7 a page said 178 pages on the site corpus, and page 143 was a
    400 (past the first MAX_DEPTH results). It is the last page that can be asked for."""
    from podsearch.answers import SearchResult

    assert SearchResult(query="x", total=1245, page=1, per_page=7, hits=[]).pages == MAX_DEPTH // 7 == 142
    assert SearchResult(query="x", total=1245, page=1, per_page=10, hits=[]).pages == 100
    assert SearchResult(query="x", total=45, page=1, per_page=7, hits=[]).pages == 7
    assert SearchResult(query="x", total=0, page=1, per_page=7, hits=[]).pages == 1
    assert search_request({"q": "x", "page": "142", "per_page": "7"}).page == 142  # the last page is served


@pytest.mark.parametrize("raw", ["q=%ED%A0%80", "q=%FF", "q=%C0%AF", "q=ok&show=%FE"])
def test_a_query_string_that_is_not_utf8_is_refused(client, raw: str) -> None:
    """Percent-escapes that name no character were searched as the escapes written out (``%ED%A0%80``: 422 site
    episodes)."""
    for path in ("/api/search", "/search", "/search.rss", "/api/suggest"):
        resp = client.get(f"{path}?{raw}")
        assert resp.status_code == 400, (path, raw)
    assert "not UTF-8" in client.get(f"/api/search?{raw}").get_json()["error"]["message"]
    assert client.get("/api/search?q=caf%C3%A9+%E2%98%83").status_code == 200  # UTF-8 escapes are text


@pytest.mark.parametrize("path", ["/api/v1/episodes/%ff", "/episodes/%C0%AF", "/similar/%ED%A0%80", "/shows/%fe"])
def test_a_path_that_is_not_utf8_is_refused(client, path: str) -> None:
    """`/api/v1/episodes/%ff` was a 404 for the id "\\ufffd" (what Werkzeug puts for bytes it cannot read), while the
    same escape in the query string is a 400."""
    resp = client.get(path)
    assert resp.status_code == 400, (path, resp.status_code)
    assert client.get("/api/v1/episodes/caf%C3%A9").status_code == 404  # UTF-8 escapes are text: no such episode
