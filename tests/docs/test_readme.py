"""The README and the docs pages keep up with the code they describe."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from toolbench import codes
from toolbench.formats.format_registry import format_names

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")
METRICS_PAGE = (ROOT / "docs" / "metrics.md").read_text(encoding="utf-8")
PAGES = sorted((ROOT / "docs").glob("*.md"))


@pytest.mark.parametrize("code", sorted(codes.DESCRIPTIONS))
def test_every_error_code_is_documented(code: str) -> None:
    """The codes table lives in docs/metrics.md (the README links to it)."""
    assert f"`{code}`" in METRICS_PAGE


@pytest.mark.parametrize("name", format_names())
def test_every_built_in_format_is_named(name: str) -> None:
    assert f"`{name}`" in README


@pytest.mark.parametrize("page", [p.name for p in PAGES])
def test_readme_links_every_docs_page(page: str) -> None:
    assert f"(docs/{page})" in README


@pytest.mark.parametrize("path", [ROOT / "README.md", *PAGES], ids=lambda p: p.name)
def test_relative_links_resolve(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    for target in re.findall(r"\]\(([^)#:\s]+)(?:#[^)]*)?\)", text):
        assert (path.parent / target).exists(), f"{path.name}: broken link {target}"


@pytest.mark.parametrize("model", ["RunInfo", "TrialResult"])
def test_every_stored_field_is_documented(model: str) -> None:
    """docs/run-format.md describes every field a run stores (a new field needs a row)."""
    from toolbench import results

    page = (Path(__file__).resolve().parents[2] / "docs" / "run-format.md").read_text(
        encoding="utf-8"
    )
    missing = [f for f in getattr(results, model).model_fields if f"`{f}`" not in page]
    assert missing == []
