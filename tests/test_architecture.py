"""The layering docs/architecture.md describes, checked on the source: no import cycle, Whoosh imported by its
engine alone, engines that know nothing of the catalog, a CLI and web layer that do not reach below the library."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parent.parent / "src"
PACKAGE = SRC / "podsearch"


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _imports(path: Path) -> set[str]:
    """Every module ``path`` imports, anywhere in it (function-level imports count too), as absolute names."""
    name = _module_name(path)
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                stem = ".".join(base + ([node.module] if node.module else []))
            else:
                stem = node.module or ""
            out.add(stem)
            out.update(f"{stem}.{alias.name}" for alias in node.names)  # "from . import api" names a module
    return out


@pytest.fixture(scope="module")
def graph() -> dict[str, set[str]]:
    modules = {_module_name(p): p for p in PACKAGE.rglob("*.py")}
    return {name: {m for m in _imports(path) if m in modules and m != name} for name, path in modules.items()}


def test_no_import_cycle(graph: dict[str, set[str]]) -> None:
    """Modules import down only: no module reaches, through its imports, back to itself. (A package's
    ``__init__`` importing its own submodules is the package, not a cycle.)"""
    def edges(name: str) -> set[str]:
        return {m for m in graph[name] if not name.startswith(m + ".")}  # a submodule using its package's names

    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(name: str) -> None:
        state[name] = 1
        stack.append(name)
        for dep in sorted(edges(name)):
            if state.get(dep) == 1:
                cycle = stack[stack.index(dep):] + [dep]
                pytest.fail("import cycle: " + " -> ".join(cycle))
            if dep not in state:
                visit(dep)
        stack.pop()
        state[name] = 2

    for name in sorted(graph):
        if name not in state:
            visit(name)


def test_whoosh_is_imported_by_its_engine_alone() -> None:
    outside = []
    for path in PACKAGE.rglob("*.py"):
        name = _module_name(path)
        if name.startswith("podsearch.engines.whoosh"):
            continue
        if any(m == "whoosh" or m.startswith("whoosh.") for m in _imports(path)):
            outside.append(name)
    assert outside == []


def test_engines_know_nothing_of_the_catalog_or_the_layers_above(graph: dict[str, set[str]]) -> None:
    above = ("podsearch.catalog", "podsearch.answers", "podsearch.service", "podsearch.web", "podsearch.cli",
             "podsearch.reindex", "podsearch.ingest", "podsearch.similar", "podsearch.documents")
    for name, deps in graph.items():
        if name.startswith("podsearch.engines"):
            assert not [d for d in deps if d.startswith(above)], name


def test_cli_and_web_go_through_the_library(graph: dict[str, set[str]]) -> None:
    """The edges parse and render; SQLite and the engines are the library's."""
    below = ("podsearch.catalog", "podsearch.engines")
    for name, deps in graph.items():
        if name == "podsearch.cli" or name.startswith("podsearch.web"):
            assert not [d for d in deps if d.startswith(below)], name
        if name.startswith("podsearch.web"):
            assert "podsearch.cli" not in deps
    assert not [d for d in graph["podsearch.cli"] if d.startswith("podsearch.web.")
                and d not in {"podsearch.web", "podsearch.web.app"}], "the CLI borrows from the web layer"


def test_an_engines_helpers_reach_it_by_its_public_methods() -> None:
    """The helper classes of an engine module (OpenSearch's spelling vocabulary and phrase counts, Whoosh's) hold
    the engine and ask it through its interface: until 5 December 2026 OpenSearchVocabulary.languages_of and four
    other questions named the served index through ``engine._target()``, a private member."""
    reached = []
    for path in sorted((PACKAGE / "engines").rglob("*.py")):
        for cls in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(cls, ast.ClassDef):
                continue
            for node in ast.walk(cls):
                if (isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__")
                        and isinstance(node.value, ast.Attribute) and node.value.attr == "engine"):
                    reached.append(f"{_module_name(path)}.{cls.name}: engine.{node.attr}")
    assert reached == []
