"""The package's imports form no loop, and no module of it is over 400 lines.

The imports are read from the source with ``ast``, every one of them: at the top of a
module, inside a function (an import deferred to hold a loop open is still a loop), under
``if TYPE_CHECKING:`` (a loop that only the type checker sees is still two modules that
need each other), and ``import_module("toolbench...")`` with a literal name. Each is
resolved to the module it loads:

* ``from .x import y`` and ``from .. import y`` from the importing module's package;
* ``from toolbench.pkg import name``: the submodule ``toolbench.pkg.name`` when there is
  one, else the package ``toolbench.pkg`` itself (its ``__init__``, whose own imports
  then count: a package that re-exports its modules' names depends on them);
* ``import toolbench.a.b``: ``toolbench.a.b``.

The parent packages a submodule import runs first are not counted as edges: every
module would then depend on every ``__init__`` above it, and an ``__init__`` that
imports its own modules would make a loop of every package.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator, Mapping
from pathlib import Path

import toolbench

MAX_LINES = 400
PACKAGE = Path(toolbench.__file__).parent


def module_files(root: Path) -> dict[str, Path]:
    """Every module of the package under ``root`` by its dotted name (a package by the
    name of its ``__init__``)."""
    found: dict[str, Path] = {}
    for path in sorted(root.rglob("*.py")):
        parts = [root.name, *path.relative_to(root).with_suffix("").parts]
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def _known(name: str, modules: Mapping[str, Path]) -> str | None:
    """``name`` if it is a module of the package, else its nearest enclosing one."""
    while name not in modules and "." in name:
        name = name.rsplit(".", 1)[0]
    return name if name in modules else None


def _imports(node: ast.AST, module: str, modules: Mapping[str, Path]) -> Iterator[str]:
    """The package modules one import statement (or ``import_module`` call) loads."""
    top = module.split(".")[0]
    if isinstance(node, ast.Import):
        for alias in node.names:
            if alias.name.split(".")[0] == top and (got := _known(alias.name, modules)):
                yield got
    elif isinstance(node, ast.ImportFrom):
        if node.level:
            is_package = modules[module].name == "__init__.py"
            base = module if is_package else module.rsplit(".", 1)[0]
            for _ in range(node.level - 1):
                base = base.rsplit(".", 1)[0]
            target = f"{base}.{node.module}" if node.module else base
        else:
            target = node.module or ""
        if target.split(".")[0] != top:
            return
        for alias in node.names:
            sub = f"{target}.{alias.name}"
            got = sub if sub in modules else _known(target, modules)
            if got:
                yield got
    elif isinstance(node, ast.Call):
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        if name == "import_module" and node.args:
            arg = node.args[0]
            text = arg.value if isinstance(arg, ast.Constant) else None
            if isinstance(text, str) and text.split(".")[0] == top:
                got = _known(text, modules)
                if got:
                    yield got


def import_graph(modules: Mapping[str, Path]) -> dict[str, set[str]]:
    """Module -> the package modules it imports anywhere in its source."""
    graph: dict[str, set[str]] = {}
    for module, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        edges = {got for node in ast.walk(tree) for got in _imports(node, module, modules)}
        edges.discard(module)
        graph[module] = edges
    return graph


def cycles(graph: Mapping[str, set[str]]) -> list[list[str]]:
    """One loop for each group of modules that import one another (Tarjan's strongly
    connected components), written ``[a, b, ..., a]``, shortest found first."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[set[str]] = []

    def visit(start: str) -> None:
        # iterative, so a long chain of imports cannot exhaust the recursion limit
        work: list[tuple[str, Iterator[str]]] = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                group: set[str] = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.add(member)
                    if member == node:
                        break
                if len(group) > 1:
                    groups.append(group)

    for module in sorted(graph):
        if module not in index:
            visit(module)
    return sorted((_loop_in(group, graph) for group in groups), key=len)


def _loop_in(group: set[str], graph: Mapping[str, set[str]]) -> list[str]:
    """The shortest loop through the group's first module (breadth first)."""
    start = min(group)
    came: dict[str, str] = {}
    frontier = [start]
    while frontier:
        nxt: list[str] = []
        for node in frontier:
            for child in sorted(graph[node] & group):
                if child == start:
                    path = [node]
                    while path[-1] != start:
                        path.append(came[path[-1]])
                    return [start, *reversed(path[:-1]), start] if node != start else [start]
                if child not in came:
                    came[child] = node
                    nxt.append(child)
        frontier = nxt
    raise AssertionError(f"no loop in the group {sorted(group)}")  # pragma: no cover


def test_the_walker_finds_a_loop_held_open_by_a_deferred_relative_import(
    tmp_path: Path,
) -> None:
    """The reader itself: a loop through a function-level relative import, a package's
    ``__init__`` re-export and ``from pkg import submodule`` is found and named."""
    pkg = tmp_path / "toolbench"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("from toolbench.sub import thing\n")
    (pkg / "sub" / "__init__.py").write_text("from .a import thing\n")
    (pkg / "sub" / "a.py").write_text("def thing():\n    from ..b import other\n")
    (pkg / "b.py").write_text("from toolbench import c\n")
    (pkg / "c.py").write_text("import importlib\nimportlib.import_module('toolbench.sub')\n")
    (pkg / "leaf.py").write_text("from toolbench import b\nfrom typing import Any\n")
    modules = module_files(pkg)
    graph = import_graph(modules)
    assert graph["toolbench.sub.a"] == {"toolbench.b"}
    assert graph["toolbench.b"] == {"toolbench.c"}
    assert graph["toolbench"] == {"toolbench.sub"}
    assert cycles(graph) == [
        ["toolbench.b", "toolbench.c", "toolbench.sub", "toolbench.sub.a", "toolbench.b"]
    ]
    (pkg / "sub" / "a.py").write_text("def thing():\n    pass\n")
    assert cycles(import_graph(module_files(pkg))) == []


def test_the_package_has_no_import_loop() -> None:
    loops = cycles(import_graph(module_files(PACKAGE)))
    assert not loops, "import loops:\n" + "\n".join(" -> ".join(loop) for loop in loops)


def test_no_module_of_the_package_is_over_400_lines() -> None:
    long = {
        name: n
        for name, path in module_files(PACKAGE).items()
        if (n := len(path.read_text(encoding="utf-8").splitlines())) > MAX_LINES
    }
    assert not long, f"modules over {MAX_LINES} lines: " + ", ".join(
        f"{name} ({n})" for name, n in sorted(long.items())
    )
