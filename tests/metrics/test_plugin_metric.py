"""Adding a metric is one module: a toy plugin metric, registered through the entry-point
mechanism a third party would use, shows up in the terminal table, gate, export, the HTML
report, JUnit, compare and the reference without any other module edited."""

from __future__ import annotations

import sys
import xml.etree.ElementTree as ET
from importlib.metadata import EntryPoint
from pathlib import Path

import pandas as pd
import pytest

from toolbench.cli.app import run_cli
from toolbench.cli.run_view import print_summary
from toolbench.metrics import metric_registry as registry
from toolbench.metrics.metrics_doc import markdown_table

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "report"))
from synthetic_runs import make_trial, write_run

TOY = EntryPoint("first_try", "tests.metrics.toy_metric:METRICS", registry.ENTRY_POINT_GROUP)


@pytest.fixture
def run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Four trials per format; ``first_try_ok`` holds for 3 of 4 xml and 1 of 4 react."""
    monkeypatch.chdir(tmp_path)
    trials = [
        make_trial("m", fmt, "weather_basic", s, first_try_ok=(s < n_ok))
        for fmt, n_ok in (("xml", 3), ("react", 1))
        for s in range(4)
    ]
    registry.load_entry_points([TOY])
    return write_run(tmp_path / "runs" / "r1", trials)


def test_terminal_table(run: Path, capsys: pytest.CaptureFixture[str]) -> None:
    print_summary(run, write_report=False, quiet=True)
    out = capsys.readouterr().out
    lines = out.splitlines()
    head = lines[2 : next(i for i, line in enumerate(lines) if line.startswith("┡"))]
    assert "".join(line.split("┃")[-2].strip() for line in head) == "first_try_rate"
    xml_row = next(line for line in out.splitlines() if "m / xml" in line)
    react_row = next(line for line in out.splitlines() if "m / react" in line)
    assert xml_row.rstrip(" │").endswith("75.0%")
    assert react_row.rstrip(" │").endswith("25.0%")


def test_gate(run: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run_cli(["gate", str(run), "--min", "first_try_rate=0.5"]) == 0
    assert run_cli(["gate", str(run), "--per-cell", "--min", "first_try_rate=0.5"]) == 1
    out = capsys.readouterr().out
    assert "m / react" in out and "first_try_rate" in out and "25.0%" in out
    assert run_cli(["gate", str(run), "--min", "first_try_rat=0.5"]) == 2
    assert "Did you mean 'first_try_rate'" in capsys.readouterr().err


def test_export(run: Path) -> None:
    assert run_cli(["export", str(run), "--to", "csv", "-o", "t.csv"]) == 0
    df = pd.read_csv("t.csv")
    assert "first_try_ok" in df.columns
    assert sorted(df["first_try_ok"]) == [False] * 4 + [True] * 4


def test_html_report(run: Path) -> None:
    assert run_cli(["report", str(run), "-o", "r.html"]) == 0
    page = Path("r.html").read_text(encoding="utf-8")
    assert '<th title="share of trials whose calls parsed without the retry">first_try_rate' in page
    assert 'title="first_try_rate: n=4">75.0%' in page


def test_junit_compare_and_reference(run: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run_cli(["report", str(run), "--to", "junit", "-o", "r.xml"]) == 0
    root = ET.parse("r.xml").getroot()
    props = {
        (s.get("name"), p.get("name")): p.get("value")
        for s in root.iter("testsuite")
        for p in s.iter("property")
    }
    assert props[("m / xml", "toolbench.first_try_rate")] == "75.0%"
    assert run_cli(["compare", str(run), "--formats", "xml,react"]) == 0
    out = capsys.readouterr().out
    # paired McNemar test on the toy rate: 2 pairs where only xml held.
    assert any(
        line.split()[:5] == ["m", "first_try_rate", "4", "75.0%", "25.0%"]
        for line in out.splitlines()
    )
    assert "| `first_try_rate` | rate | higher | trial flag `first_try_ok`" in markdown_table()


def _completion(df: pd.DataFrame) -> pd.Series[float]:
    return df["completion_tokens"].astype("Float64").astype("float64")


def test_an_aggregate_metric_registered_through_the_api(
    run: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A value metric (not a trial flag): a reduction over the cell, gated and ranked."""
    registry.register_metric(
        registry.Metric(
            "completion_tokens_max",
            "largest completion of any trial",
            _completion,
            "`completion_tokens`, all trials, max",
            kind="value",
            reduce=lambda s: None if s.dropna().empty else float(s.max()),
            direction="lower",
            unit="number",
            ranking=5,
        )
    )
    assert run_cli(["gate", str(run), "--max", "completion_tokens_max=20"]) == 1
    out = capsys.readouterr().out
    assert "completion_tokens_max" in out and "30.0" in out and "<= 20.0" in out
    assert run_cli(["recommend", str(run)]) == 0
    out = capsys.readouterr().out
    assert "rule: lowest completion_tokens_max, then highest call_accuracy" in out
