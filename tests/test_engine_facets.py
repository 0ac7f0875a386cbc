"""Facet counting over matched documents (the per-generation document x value matrix)."""

from __future__ import annotations

from podsearch.engines.whoosh.facets import DocFacets


def test_counts_follow_the_matched_documents() -> None:
    facets = DocFacets({
        "show": [("a",), ("b",), ("a",), ()],
        "year": [("2023",), ("2023",), ("2024",), ("2024",)],
        "person": [("ann", "bob"), ("bob",), (), ("ann", "bob", "cy")],
    }, doc_count=4)
    assert facets.count([0, 2, 3]) == {
        "show": {"a": 2}, "year": {"2023": 1, "2024": 2}, "person": {"ann": 2, "bob": 2, "cy": 1}, "language": {}}
    assert facets.count(iter([1])) == {"show": {"b": 1}, "year": {"2023": 1}, "person": {"bob": 1}, "language": {}}
    assert facets.count([]) == {"show": {}, "year": {}, "person": {}, "language": {}}


def test_an_index_without_documents() -> None:
    assert DocFacets({}, doc_count=0).count([]) == {"show": {}, "year": {}, "person": {}, "language": {}}
