"""``streaming/`` sits below the runner (a module imports only from layers below it): the
runner drives a streamed trial and calls into streaming, never the other way round, not
even through a lazy import inside a function."""

from __future__ import annotations

import ast
from pathlib import Path

import toolbench.streaming.sse

STREAMING = Path(toolbench.streaming.sse.__file__).parent


def _imports(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:  # module.name, each
            names.update(f"{node.module}.{a.name}" for a in node.names)
    return names


def test_streaming_imports_nothing_of_the_runner() -> None:
    """SSE cassettes share the cassette layer's matching and placeholders: they import
    ``toolbench.cassettes``, which sits below both."""
    assert "toolbench.cassettes" in _imports(STREAMING / "sse.py")  # the scan sees
    found = {
        (path.name, name)
        for path in sorted(STREAMING.glob("*.py"))
        for name in _imports(path)
        if name.startswith("toolbench.runner.")
    }
    assert found == set()
