"""docs/formats.md's table of formats is generated from the format registry and current."""

from __future__ import annotations

from pathlib import Path

from toolbench.formats import formats_doc as table

DOC = Path(__file__).resolve().parents[2] / "docs" / "formats.md"


def test_formats_table_is_current() -> None:
    page = DOC.read_text(encoding="utf-8")
    assert page == table.splice(page, table.render()), f"stale: run {table.REGENERATE}"


def test_check_mode_fails_on_a_stale_page(tmp_path: Path) -> None:
    stale = tmp_path / "formats.md"
    stale.write_text(f"# x\n\n{table.BEGIN}\nold\n{table.END}\n", encoding="utf-8")
    assert table.main(["--check", "--doc", str(stale)]) == 1
    assert table.main(["--write", "--doc", str(stale)]) == 0
    assert table.main(["--check", "--doc", str(stale)]) == 0
    assert "| `xml` |" in stale.read_text(encoding="utf-8")
