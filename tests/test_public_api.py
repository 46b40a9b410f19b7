"""The public API is ``toolbench`` itself (docs/library.md): its names are listed once,
importing them pulls in none of the heavy dependencies, and the page's examples run and
type-check with ``mypy --strict`` as an application would write them."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

import toolbench

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "library.md"
HEAVY = ("litellm", "pandas", "pyarrow", "matplotlib", "vcr", "httpx")


def _example() -> str:
    """The page's Python blocks, in order: one program."""
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)
    assert len(blocks) >= 6
    return "\n".join(blocks)


def test_all_lists_every_public_name_and_each_resolves() -> None:
    assert set(toolbench.__all__) == {"__version__", "codes", *toolbench._EXPORTS}
    assert len(toolbench.__all__) == len(set(toolbench.__all__))
    for name in toolbench.__all__:
        assert getattr(toolbench, name) is not None, name
    # Through the module's own __getattr__: once another test imported toolbench.runner,
    # the submodule is an attribute of the package whatever the public API says.
    with pytest.raises(AttributeError, match="no attribute 'runner'"):
        toolbench.__getattr__("runner")


def test_the_public_api_imports_no_heavy_dependency() -> None:
    """In a fresh interpreter: every public name loaded, a format used, a trial scored
    (the docs' program), and still none of the heavy modules imported."""
    probe = (
        "import sys\n"
        "import toolbench\n"
        "for name in toolbench.__all__: getattr(toolbench, name)\n"
        + _example()
        + f"\nprint(sorted(m for m in {HEAVY!r} if m in sys.modules))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == "[]"


def test_the_docs_example_type_checks_strictly(tmp_path: Path) -> None:
    # In a subprocess: mypy's in-process API raises the interpreter's recursion limit
    # for the rest of the session, which hides the recursion guards other tests check.
    example = tmp_path / "library_example.py"
    example.write_text(_example(), encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-error-summary",
         "--cache-dir", str(ROOT / ".mypy_cache"), "--python-version", "3.11",
         "--follow-imports", "silent", str(example)],
        capture_output=True, text=True, cwd=ROOT, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr


# --------------------------------------------------------------------------- toolbench.plugin

SHOWCASE = (
    "tests/formats/toy_dialect.py",
    "tests/scoring/toy_scorer.py",
    "tests/scoring/strict_calls.py",
    "tests/metrics/toy_metric.py",
    "tests/cli/toy_csv_report.py",
    "tests/providers/toy_wire.py",
)
"""The plugins the tests install through entry points, written as a third party would."""


def test_the_plugin_module_lists_every_name_and_each_resolves() -> None:
    import toolbench.plugin as plugin

    assert len(plugin.__all__) == len(set(plugin.__all__))
    public = {n for n in vars(plugin) if not n.startswith("_") and n != "annotations"}
    assert set(plugin.__all__) == public
    for name in plugin.__all__:
        assert getattr(plugin, name) is not None, name


def test_every_registry_is_in_the_plugin_module() -> None:
    """Each group's registry is reachable for a plugin's tests (``installing``)."""
    import toolbench.plugin as plugin
    from toolbench.registry import Registry

    groups = {
        r.group for r in (getattr(plugin, n) for n in plugin.__all__) if isinstance(r, Registry)
    }
    assert groups == {
        "toolbench.formats",
        "toolbench.providers",
        "toolbench.scorers",
        "toolbench.metrics",
        "toolbench.reports",
        "toolbench.environments",
        "toolbench.wires",
    }


@pytest.mark.parametrize("path", SHOWCASE)
def test_showcase_plugins_import_only_public_names(path: str) -> None:
    import ast

    tree = ast.parse((ROOT / path).read_text(encoding="utf-8"))
    imported = [
        node.module if isinstance(node, ast.ImportFrom) else alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.Import | ast.ImportFrom)
        for alias in node.names
    ]
    ours = {m for m in imported if m and m.split(".")[0] == "toolbench"}
    assert ours == {"toolbench.plugin"}, path
