"""The README's reference tables keep up with the code they describe."""

from __future__ import annotations

from pathlib import Path

import pytest

from toolbench import codes
from toolbench.formats.registry import format_names

README = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("code", sorted(codes.DESCRIPTIONS))
def test_every_error_code_is_documented(code: str) -> None:
    assert f"`{code}`" in README


@pytest.mark.parametrize("name", format_names())
def test_every_built_in_format_is_named(name: str) -> None:
    assert f"`{name}`" in README
