"""The fixed query mix, and how each engine is asked the same question.

One- to three-word queries, quoted phrases, the same kinds with filters (a show, a range of years), and one
misspelled word.
Every engine gets the words ANDed (podsearch's default), phrases as phrases, and the filter as a filter.
Show filters name podsearch's show id (the slug of the feed's title), which the synthetic corpora keep.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class Query:
    text: str  # as typed in the search box (phrases in double quotes)
    kind: str  # "1 word", "2 words", "3 words", "phrase", "filter", "typo"
    show: str = ""  # show filter (a show id)
    years: tuple[int, int] | None = None

    @property
    def phrase(self) -> bool:
        return self.text.startswith('"')

    @property
    def words(self) -> list[str]:
        return self.text.strip('"').split()


MIX: tuple[Query, ...] = (
    Query("kubernetes", "1 word"), Query("generics", "1 word"), Query("lightning", "1 word"),
    Query("python", "1 word"), Query("taproot", "1 word"), Query("rust", "1 word"), Query("privacy", "1 word"),
    Query("testing", "1 word"), Query("mempool", "1 word"), Query("docker", "1 word"),
    Query("machine learning", "2 words"), Query("open source", "2 words"), Query("error handling", "2 words"),
    Query("hardware wallet", "2 words"), Query("type hints", "2 words"), Query("data science", "2 words"),
    Query("large language models", "3 words"), Query("go module proxy", "3 words"),
    Query("lightning network channels", "3 words"), Query("bitcoin core developers", "3 words"),
    Query('"open source"', "phrase"), Query('"machine learning"', "phrase"), Query('"lightning network"', "phrase"),
    Query('"pull request"', "phrase"), Query('"error handling"', "phrase"),
    Query("kubernetes", "filter", show="ship-it"), Query("generics", "filter", show="go-time"),
    Query("python packaging", "filter", show="talk-python-to-me"), Query("privacy", "filter", show="stephan-livera-podcast"),
    Query("lightning", "filter", years=(2019, 2021)), Query("mining", "filter", years=(2020, 2022)),
    Query('"smart contracts"', "filter", years=(2016, 2023)),
    Query("kubernetis", "typo"),  # in no transcript: podsearch looks for a spelling suggestion ("did you mean")
)


def api_params(q: Query) -> dict[str, Any]:
    params: dict[str, Any] = {"q": q.text}
    if q.show:
        params["show"] = q.show
    if q.years:
        params["from"], params["to"] = str(q.years[0]), str(q.years[1])
    return params


def search_request(q: Query) -> Any:
    from podsearch.requests import SearchRequest

    return SearchRequest(q=q.text, shows=[q.show] if q.show else [],
                         published_from=str(q.years[0]) if q.years else "",
                         published_to=str(q.years[1]) if q.years else "")


def fts5_match(q: Query) -> str:
    """FTS5 query syntax: each word quoted (implicit AND), or the phrase."""
    if q.phrase:
        return '"' + " ".join(q.words) + '"'
    return " ".join(f'"{w}"' for w in q.words)


def tantivy_text(q: Query) -> str:
    """tantivy's query parser ORs by default: each word gets a ``+``; a phrase stays one."""
    if q.phrase:
        return '"' + " ".join(q.words) + '"'
    return " ".join(f"+{w}" for w in q.words)


def real_queries(evals: Path) -> list[str]:
    """The development sets' queries as people typed them (``eval/known_items.dev.tsv`` and
    ``eval/topical_queries.dev.tsv`` of the shared corpus); none when the corpus is absent."""
    out: list[str] = []
    for name in ("known_items.dev.tsv", "topical_queries.dev.tsv"):
        path = evals / name
        if path.exists():
            with path.open(encoding="utf-8") as f:
                out += [row["query"] for row in csv.DictReader(f, delimiter="\t")]
    return out
