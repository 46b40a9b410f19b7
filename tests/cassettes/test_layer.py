"""``cassettes/`` sits below ``providers/`` and ``runner/`` (a module imports only from
layers below it): the cassette package imports the ground modules and itself, nothing
above, not even through a lazy import inside a function; and the providers, which record
through it, import nothing of the runner (``streaming/``: tests/runner/test_stream_layer.py).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import toolbench.cassettes
import toolbench.providers

PACKAGE = Path(toolbench.cassettes.__file__).parent
PROVIDERS = Path(toolbench.providers.__file__).parent
GROUND = {
    "toolbench.codes", "toolbench.errors", "toolbench.eventstream", "toolbench.framings",
    "toolbench.redaction", "toolbench.run_modes",
}  # fmt: skip
"""The ground modules the cassettes use (codes, secret_shapes, ... would be as welcome)."""


def _imports(path: Path) -> set[str]:
    """Every module ``path`` imports, absolute (``module.name`` for each ``from`` name)."""
    package = "toolbench." + path.parent.name
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = ".".join(package.split(".")[: len(package.split(".")) - node.level + 1])
            module = node.module or ""
            if node.level:
                module = f"{base}.{module}" if module else base
            names.update(f"{module}.{a.name}" for a in node.names)
    return names


def _toolbench_imports(root: Path) -> set[tuple[str, str]]:
    return {
        (path.name, name)
        for path in sorted(root.glob("*.py"))
        for name in _imports(path)
        if name.startswith("toolbench.")
    }


def _upward(name: str) -> bool:
    inside = name == "toolbench.cassettes" or name.startswith("toolbench.cassettes.")
    return not inside and not any(name == g or name.startswith(f"{g}.") for g in GROUND)


def test_the_cassette_package_imports_only_the_ground_and_itself() -> None:
    found = _toolbench_imports(PACKAGE)
    assert ("persist.py", "toolbench.errors.CassetteWriteError") in found  # the scan sees
    assert {(f, n) for f, n in found if _upward(n)} == set()


@pytest.mark.parametrize(
    ("source", "name"),
    [
        ("from toolbench.runner.drive import x", "toolbench.runner.drive.x"),
        ("from toolbench import providers", "toolbench.providers"),
        ("def f():\n    import toolbench.streaming.sse", "toolbench.streaming.sse"),
        ("from ..engine import run", "toolbench.engine.run"),
        ("from . import persist", "toolbench.cassettes.persist"),
    ],
)
def test_the_scan_resolves_every_spelling_of_an_import(
    source: str, name: str, tmp_path: Path
) -> None:
    path = tmp_path / "cassettes" / "bad.py"
    path.parent.mkdir()
    path.write_text(source, encoding="utf-8")
    assert _imports(path) == {name}
    assert _upward(name) == (not name.startswith("toolbench.cassettes."))


def test_providers_import_nothing_of_the_runner() -> None:
    found = _toolbench_imports(PROVIDERS)
    assert ("local_api.py", "toolbench.cassettes.LOCAL_BASE") in found  # the scan sees
    assert {(f, n) for f, n in found if n.startswith("toolbench.runner.")} == set()
