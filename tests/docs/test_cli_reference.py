"""docs/cli.md's reference is generated from the commands and must be current."""

from __future__ import annotations

from pathlib import Path

import pytest

from toolbench.cli import cli_doc as reference

DOC = Path(__file__).resolve().parents[2] / "docs" / "cli.md"


def test_reference_is_current() -> None:
    page = DOC.read_text(encoding="utf-8")
    wanted = reference.splice(page, reference.render())
    assert page == wanted, f"docs/cli.md is stale: run {reference.REGENERATE}"


def test_check_mode_fails_on_a_stale_page(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    stale = tmp_path / "cli.md"
    stale.write_text(f"# x\n\n{reference.BEGIN}\nold\n{reference.END}\n", encoding="utf-8")
    assert reference.main(["--check", "--doc", str(stale)]) == 1
    assert capsys.readouterr().err == f"{stale} is stale: run {reference.REGENERATE}\n"
    assert reference.main(["--write", "--doc", str(stale)]) == 0
    assert reference.main(["--check", "--doc", str(stale)]) == 0
    text = stale.read_text(encoding="utf-8")
    assert text.startswith("# x\n\n") and "### `toolbench gate`" in text


def test_reference_lists_every_command_and_option_but_not_hidden_ones() -> None:
    text = reference.render()
    for command in ("run", "parse", "report", "export", "gate", "compare", "recommend",
                    "rescore", "scenarios list", "scenarios validate", "formats list",
                    "formats show", "cassettes audit"):  # fmt: skip
        assert f"### `toolbench {command}`" in text
    assert "| `--min` | `METRIC=VALUE` |  | Lower bound on a metric (repeatable). |" in text
    assert "| `--to` | `html\\|md\\|junit\\|csv\\|parquet\\|jsonl` | `html` |" in text
    assert "TOML file with a [gate] table" in text
    assert "--emit" not in text and "`--format` | `html" not in text
