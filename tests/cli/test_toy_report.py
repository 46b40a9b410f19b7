"""The design test of the report-output registry: a CSV output that is only a module
(``toy_csv_report.py``) and one entry point is written by ``toolbench report --to``,
listed by its ``--help``, redacted like the built-ins, and refused by ``export`` (which
writes the trial table only)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from importlib.metadata import EntryPoint
from pathlib import Path

import pytest
from tests.report.synthetic_runs import standard_trials, write_run

from toolbench.cli.app import run_cli
from toolbench.plugin import REPORTS

ROOT = Path(__file__).resolve().parents[2]
GROUP = "toolbench.reports"
CELLS = (
    "model,format,trials,ok\n"
    "m-alpha,prompt-json,6,6\nm-alpha,xml,6,5\nm-beta,prompt-json,6,6\nm-beta,xml,6,6\n"
)


@pytest.fixture
def toy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.chdir(tmp_path)
    run = write_run(Path("runs/r1"), standard_trials("r1"))
    with REPORTS.installing(EntryPoint("cells-csv", "toy_csv_report:OUTPUT", GROUP)):
        yield run


def test_report_writes_the_toy_output(toy: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run_cli(["report", str(toy), "--to", "cells-csv"]) == 0
    assert capsys.readouterr().out == CELLS
    assert run_cli(["report", str(toy), "--to", "cells-csv", "-o", "out/cells.csv"]) == 0
    assert capsys.readouterr().out == "wrote out/cells.csv\n"
    assert Path("out/cells.csv").read_text(encoding="utf-8") == CELLS


def test_its_text_is_redacted(
    toy: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "m-alpha-secret-key-1234567890")
    write_run(Path("runs/r2"), standard_trials("r2"))
    trials = Path("runs/r2/results.jsonl")
    trials.write_text(
        trials.read_text(encoding="utf-8").replace("m-alpha", "m-alpha-secret-key-1234567890"),
        encoding="utf-8",
    )
    assert run_cli(["report", "runs/r2", "--to", "cells-csv"]) == 0
    out = capsys.readouterr().out
    assert "m-alpha-secret-key-1234567890" not in out and out.count("\n") == 5


def test_export_takes_only_trial_table_outputs(
    toy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run_cli(["export", str(toy), "--to", "cells-csv"]) == 2
    assert capsys.readouterr().err == (
        "error: unknown export format 'cells-csv'. Available: csv, jsonl, parquet\n"
    )


def test_without_its_entry_point_it_is_unknown(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    run = write_run(Path("runs/r1"), standard_trials("r1"))
    assert run_cli(["report", str(run), "--to", "cells-csv"]) == 2
    assert "unknown report output 'cells-csv'" in capsys.readouterr().err


def test_help_lists_it_when_installed(tmp_path: Path) -> None:
    """Installed for real (a dist-info on the path): ``--help`` reads the registry."""
    dist = tmp_path / "site" / "toyreport-0.1.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: toyreport\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text(f"[{GROUP}]\ncells-csv = toy_csv_report:OUTPUT\n")
    path = os.pathsep.join(
        [str(ROOT / "harness"), str(tmp_path / "site"), str(Path(__file__).parent)]
    )
    done = subprocess.run(
        [sys.executable, "-m", "toolbench", "report", "--help"],
        env={**os.environ, "PYTHONPATH": path, "NO_COLOR": "1", "COLUMNS": "200"},
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "html|md|junit|csv|parquet|jsonl|cells-csv" in done.stdout
