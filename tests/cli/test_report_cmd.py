"""The analysis commands through the CLI edge: output, exit codes and exact error lines."""

from __future__ import annotations

import json
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pandas as pd
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "report"))
from synthetic_runs import standard_trials, write_run

from toolbench.cli.app import run_cli


@pytest.fixture
def runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    write_run(Path("runs/r1"), standard_trials("r1"))
    write_run(Path("runs/r2"), standard_trials("r2", regress=True))
    return tmp_path


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = run_cli(argv)
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize(
    ("argv", "error"),
    [
        (
            ["report", "runs/nope"],
            "error: runs/nope/results.jsonl: no results file (is 'runs/nope' a run directory?)\n",
        ),
        (
            ["gate", "runs/r1", "--min", "parse_sucess=0.9"],
            "error: unknown metric 'parse_sucess'. Did you mean 'parse_success'? Available: "
            "asked_when_missing, call_accuracy, call_complete_p50, completion_tokens_mean, "
            "cost_total, exec_match, fallback_rescue_rate, final_answer_accuracy, "
            "first_call_byte_p50, harness_error_rate, holdback_p50, infra_error_rate, "
            "latency_p50, latency_p95, leak_rate, leak_rate_raw, leaked_chars_mean, "
            "loop_success, n_trials, no_call_accuracy, parse_success, parse_success_repaired, "
            "prompt_tokens_mean, retry_recovery, schema_validity, state_match, "
            "stop_compliance, stream_consistency, stream_error_rate, stream_leak_rate, "
            "tokens_per_s_p50, ttft_p50\n",
        ),
        (
            ["gate", "runs/r1", "--min", "call_accuracy"],
            "error: --min 'call_accuracy': expected metric=value (e.g. call_accuracy=0.9)\n",
        ),
        (
            ["gate", "runs/r1", "--max", "leak_rate=lots"],
            "error: --max 'leak_rate=lots': value 'lots' is not a number\n",
        ),
        (
            ["gate", "runs/r1", "--max-drop", "call_accuracy=0.1"],
            "error: --max-drop needs --baseline RUN\n",
        ),
        (
            ["gate", "runs/r1"],
            "error: gate: no thresholds (give --min/--max/--max-drop or a [gate] table in "
            "toolbench.toml)\n",
        ),
        (
            ["gate", "runs/r1", "--min", "call_accuracy=0.5", "--config", "nope.toml"],
            "error: --config: nope.toml: no such file\n",
        ),
        (
            ["report", "runs/r1", "--to", "pdf"],
            "error: unknown report output 'pdf'. Available: csv, html, jsonl, junit, md, parquet\n",
        ),
        (
            ["export", "runs/r1", "--to", "xls"],
            "error: unknown export format 'xls'. Available: csv, jsonl, parquet\n",
        ),
        (
            ["compare", "runs/r1"],
            "error: compare: give RUN_B, --formats X,Y with exactly two formats, "
            "or --by model|format|variant\n",
        ),
        (
            ["compare", "runs/r1", "--formats", "xml,react"],
            "error: --formats: format 'react' is not in run 'r1' (run has: prompt-json, xml)\n",
        ),
        (
            ["recommend", "runs/r1", "--to", "json"],
            "error: recommend --to: for JSON give --json (--to takes text or yaml)\n",
        ),
    ],
)
def test_bad_arguments_exit_2(
    runs: Path, capsys: pytest.CaptureFixture[str], argv: list[str], error: str
) -> None:
    code, out, err = run(argv, capsys)
    assert (code, err) == (2, error)
    assert out == ""


def test_report_html_default_path(runs: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["report", "runs/r1"], capsys)
    assert code == 0 and out == "wrote reports/r1.html\n"
    assert "toolbench report: r1" in (runs / "reports" / "r1.html").read_text()


def test_report_md_to_stdout_with_baseline(runs: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["report", "runs/r2", "--baseline", "runs/r1", "--to", "md"], capsys)
    assert code == 0
    assert out.startswith("## toolbench run `r2`")
    assert "**2 regression(s):**" in out


def test_report_junit_file(runs: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, _ = run(["report", "runs/r1", "--to", "junit", "-o", "junit.xml"], capsys)
    assert code == 0
    root = ET.parse(runs / "junit.xml").getroot()
    assert len(root.findall(".//testcase")) == 12


def test_gate_holds(runs: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(
        ["gate", "runs/r1", "--min", "call_accuracy=0.8", "--max", "infra_error_rate=0.1"], capsys
    )
    assert (code, err) == (0, "")
    assert out == "gate passed: 2 bound(s) hold on the overall cell of run r1\n"


def test_gate_not_applicable_metric_noted(runs: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["gate", "runs/r1", "--min", "retry_recovery=0.9"], capsys)
    assert code == 0
    assert out.splitlines()[0] == (
        "note: retry_recovery does not apply to any trial of run r1; not checked"
    )


def test_gate_empty_run(runs: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (runs / "runs" / "empty").mkdir()
    (runs / "runs" / "empty" / "results.jsonl").write_text("")
    code, _, err = run(["gate", "runs/empty", "--min", "call_accuracy=0.5"], capsys)
    assert (code, err) == (2, "error: runs/empty/results.jsonl: no trials to gate\n")


def test_gate_violations_table(runs: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(
        [
            "gate",
            "runs/r2",
            "--baseline",
            "runs/r1",
            "--max-drop",
            "call_accuracy=0.05",
            "--min",
            "call_accuracy=0.6",
            "--per-cell",
        ],
        capsys,
    )
    assert code == 1
    assert out.splitlines() == [
        "gate failed: 4 violation(s) in run r2",
        "cell                   metric         value  bound           baseline",
        "---------------------  -------------  -----  --------------  --------",
        "m-alpha / prompt-json  call_accuracy  50.0%  >= 60.0%        -",
        "m-alpha / prompt-json  call_accuracy  50.0%  drop <= 5.0 pp  100.0%",
        "m-beta / xml           call_accuracy  50.0%  >= 60.0%        -",
        "overall                call_accuracy  73.3%  drop <= 5.0 pp  86.7%",
    ]


def test_gate_thresholds_from_toolbench_toml(
    runs: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (runs / "toolbench.toml").write_text(
        "[gate]\nper_cell = true\n[gate.min]\ncall_accuracy = 0.9\n"
    )
    code, out, _ = run(["gate", "runs/r1"], capsys)
    assert code == 1
    assert "m-beta / xml  call_accuracy  50.0%  >= 90.0%  -" in out
    # The command line overrides the file's bound for the same metric.
    code, out, _ = run(["gate", "runs/r1", "--min", "call_accuracy=0.5"], capsys)
    assert code == 0, out


def test_gate_config_error_names_file(runs: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (runs / "toolbench.toml").write_text("[gate.min]\nparse_sucess = 0.9\n")
    code, _, err = run(["gate", "runs/r1"], capsys)
    assert code == 2
    assert err.startswith(
        "error: toolbench.toml: gate.min.parse_sucess: unknown metric 'parse_sucess'. "
        "Did you mean 'parse_success'?"
    )


def test_compare_runs_and_formats(runs: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["compare", "runs/r1", "runs/r2"], capsys)
    assert code == 0
    assert "compare r1 -> r2" in out
    assert (
        "m-alpha / prompt-json  call_accuracy  4      100.0%  50.0%   2        0        0.5" in out
    )
    code, out, _ = run(["compare", "runs/r1", "--formats", "prompt-json,xml"], capsys)
    assert code == 0
    assert "compare prompt-json vs xml in r1" in out
    assert "m-beta   call_accuracy  4      100.0%       50.0%" in out


def test_recommend_and_yaml(runs: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Two samples of three scenarios separate nothing: both models tie, no file is written
    (the outcomes on runs that do separate: test_recommend_outcomes.py)."""
    code, out, _ = run(["recommend", "runs/r1"], capsys)
    assert code == 0 and "m-beta: tie between prompt-json, xml (no significant" in out
    code, out, err = run(["recommend", "runs/r1", "--to", "yaml"], capsys)
    assert code == 2 and out == "" and "no model has a recommendation" in err


@pytest.mark.parametrize("to", ["csv", "parquet", "jsonl"])
def test_export(runs: Path, capsys: pytest.CaptureFixture[str], to: str) -> None:
    code, out, _ = run(["export", "runs/r1", "--to", to, "-o", f"out/t.{to}"], capsys)
    assert code == 0 and out == f"wrote 24 trials to out/t.{to}\n"
    reader = {
        "csv": pd.read_csv,
        "parquet": pd.read_parquet,
        "jsonl": lambda p: pd.read_json(p, lines=True),
    }[to]
    assert len(reader(runs / "out" / f"t.{to}")) == 24


def test_rescore_cli(runs: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("toolbench.scoring")
    (runs / "sc.yaml").write_text(
        json.dumps(
            {
                "id": "weather_basic",
                "tools": [
                    {
                        "name": "get_weather",
                        "parameters": {
                            "type": "object",
                            "properties": {"city": {"type": "string"}},
                        },
                    }
                ],
                "messages": [{"role": "user", "content": "Weather in Paris?"}],
                "expect": {"calls": [{"name": "get_weather", "arguments": {"city": "Paris"}}]},
            }
        )
    )
    code, out, err = run(["rescore", "runs/r1", "-o", "runs/r1b", "--scenarios", "sc.yaml"], capsys)
    assert code == 0, err
    assert out.startswith("rescored 8 of 24 trials into runs/r1b")
    assert (runs / "runs" / "r1b" / "results.jsonl").is_file()
