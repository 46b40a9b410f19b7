"""The metric reference in docs/metrics.md is the generated one."""

from __future__ import annotations

from pathlib import Path

import pytest

from toolbench.metrics import metric_names
from toolbench.metrics.metrics_doc import BEGIN, END, main, markdown_table, replace_section

DOC = Path(__file__).resolve().parents[2] / "docs" / "metrics.md"


def test_metric_reference_is_generated() -> None:
    text = DOC.read_text(encoding="utf-8")
    assert replace_section(text) == text, (
        "docs/metrics.md's metric table is stale: run `python -m toolbench.metrics.metrics_doc "
        "--write docs/metrics.md`"
    )


def test_every_metric_has_a_row() -> None:
    rows = markdown_table().splitlines()[2:]
    assert [r.split(" | ")[0].strip("| `") for r in rows] == list(metric_names())


def test_stale_section_is_replaced(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    doc = tmp_path / "R.md"
    doc.write_text(f"intro\n{BEGIN}\n| old |\n{END}\noutro\n", encoding="utf-8")
    assert main(["--write", str(doc)]) == 0
    assert doc.read_text(encoding="utf-8") == f"intro\n{BEGIN}\n{markdown_table()}{END}\noutro\n"
    assert main([]) == 0
    assert capsys.readouterr().out == markdown_table()


def test_missing_markers_are_named() -> None:
    with pytest.raises(ValueError, match="no '<!-- metrics:begin"):
        replace_section("no markers here")
