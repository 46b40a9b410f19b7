"""The report reads the store, nothing below it: no module of ``toolbench.report`` imports
(at the top or inside a function) the runner, a provider, a cassette, the engine, the
scenarios or the formats. What it needs of a run is in ``run.json`` and ``results.jsonl``
(:mod:`toolbench.store`), or in a small leaf (model names, the stream option of a spec,
the formats file)."""

from __future__ import annotations

import ast
from pathlib import Path

import toolbench.report

BELOW = ("runner", "providers", "cassettes", "engine", "scenarios", "formats", "bfcl",
         "environments")  # fmt: skip
REPORT = Path(toolbench.report.__file__).parent


def _imports(path: Path) -> list[str]:
    names: list[str] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.append(node.module)
        elif isinstance(node, ast.ImportFrom) and node.level:
            names.append("toolbench.report." + (node.module or ""))
        elif isinstance(node, ast.Import):
            names.extend(a.name for a in node.names)
    return names


def test_no_report_module_imports_below_the_store() -> None:
    bad = [
        f"{path.name}: {name}"
        for path in sorted(REPORT.glob("*.py"))
        for name in _imports(path)
        if name.split(".")[:2] in (["toolbench", b] for b in BELOW)
    ]
    assert bad == []


def test_the_report_modules_import_no_loop() -> None:
    graph = {
        f"toolbench.report.{p.stem}": {
            n for n in _imports(p) if n.startswith("toolbench.report.") and n != "toolbench.report."
        }
        for p in REPORT.glob("*.py")
        if p.stem != "__init__"
    }

    def reach(start: str) -> set[str]:
        seen: set[str] = set()
        todo = list(graph.get(start, ()))
        while todo:
            n = todo.pop()
            if n not in seen:
                seen.add(n)
                todo.extend(graph.get(n, ()))
        return seen

    loops = sorted(m for m in graph if m in reach(m))
    assert loops == []
