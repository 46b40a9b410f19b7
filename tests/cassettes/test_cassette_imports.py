"""The cassette layer's imports form no loop, and none is deferred into a function to
hide one: every ``toolbench`` import in ``cassettes/`` sits at a module's top level.

The walk reads the source (ast), so an import inside a function or under
``TYPE_CHECKING`` counts as much as one at the top; ``from pkg import name`` runs
``pkg``'s ``__init__`` and counts as an import of the package too (a package's
re-exports are part of the graph)."""

from __future__ import annotations

import ast
from pathlib import Path

import toolbench.cassettes

PACKAGE = "toolbench.cassettes"
ROOT = Path(toolbench.cassettes.__file__).parent


def _modules() -> dict[str, Path]:
    out: dict[str, Path] = {}
    for path in sorted(ROOT.glob("*.py")):
        name = PACKAGE if path.stem == "__init__" else f"{PACKAGE}.{path.stem}"
        out[name] = path
    return out


def _imports(tree: ast.AST, known: set[str]) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name in known)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            if node.module in known:
                found.add(node.module)
            found.update(f"{node.module}.{a.name}" for a in node.names
                         if f"{node.module}.{a.name}" in known)  # fmt: skip
    return found


def _graph() -> dict[str, set[str]]:
    modules = _modules()
    known = set(modules)
    return {name: _imports(ast.parse(path.read_text()), known) for name, path in modules.items()}


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One loop of ``graph`` (its modules in order), or None."""
    state: dict[str, int] = {}
    trail: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        trail.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return [*trail[trail.index(nxt) :], nxt]
            if nxt not in state:
                found = visit(nxt)
                if found is not None:
                    return found
        state[node] = 2
        trail.pop()
        return None

    for node in sorted(graph):
        if node not in state:
            found = visit(node)
            if found is not None:
                return found
    return None


def test_no_import_loop_in_cassettes() -> None:
    graph = _graph()
    assert len(graph) > 5  # the walk found the package's modules
    assert _cycle(graph) is None, " -> ".join(_cycle(graph) or [])


def test_the_walk_sees_a_loop_through_a_package_reexport() -> None:
    """What the check above would catch: a submodule importing a sibling through the
    package whose ``__init__`` imports that submodule."""
    graph = {PACKAGE: {f"{PACKAGE}.a"}, f"{PACKAGE}.a": set()}
    assert _cycle(graph) is None
    tree = ast.parse(f"def f():\n    from {PACKAGE} import b\n")
    graph[f"{PACKAGE}.a"] = _imports(tree, {PACKAGE, f"{PACKAGE}.a", f"{PACKAGE}.b"})
    assert _cycle(graph) == [PACKAGE, f"{PACKAGE}.a", PACKAGE]


def test_no_toolbench_import_deferred_into_a_function() -> None:
    """Deferring a heavy third-party import (yaml, LiteLLM) for start-up is allowed; a
    toolbench module is imported at the top."""
    deferred: list[str] = []
    for name, path in _modules().items():
        tree = ast.parse(path.read_text())
        for fn in ast.walk(tree):
            if not isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            for node in ast.walk(fn):
                mod = node.module if isinstance(node, ast.ImportFrom) else None
                if isinstance(node, ast.Import):
                    mod = node.names[0].name
                if mod is not None and mod.split(".")[0] == "toolbench":
                    deferred.append(f"{name}:{node.lineno} {mod}")
    assert deferred == []
