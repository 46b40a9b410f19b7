"""``--json`` on gate, compare and recommend: one JSON object with the documented keys
(docs/cli.md, "JSON output"), the same verdict and exit code as the text."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "report"))
from synthetic_runs import standard_trials, write_run

from toolbench.cli.app import run_cli

TEST_KEYS = [
    "group", "metric", "pairs", "a", "b", "only_a", "only_b", "p_value", "significant",
    "detectable_difference",
]  # fmt: skip


@pytest.fixture
def runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    write_run(Path("runs/r1"), standard_trials("r1"))
    write_run(Path("runs/r2"), standard_trials("r2", regress=True))
    return tmp_path


def run_json(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, Any]:
    code = run_cli(argv)
    out, err = capsys.readouterr()
    assert err == ""
    return code, json.loads(out)


def test_gate_json_failed(runs: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["gate", "runs/r2", "--baseline", "runs/r1", "--max-drop", "call_accuracy=0.05",
            "--min", "call_accuracy=0.6", "--per-cell", "--json"]  # fmt: skip
    code, data = run_json(argv, capsys)
    assert code == 1
    assert list(data) == [
        "version", "command", "run", "baseline", "passed", "per_cell", "bounds", "config",
        "not_applicable", "violations",
    ]  # fmt: skip
    assert data["version"] == 1 and data["command"] == "gate"
    assert (data["run"], data["baseline"], data["passed"], data["per_cell"]) == (
        "r2", "r1", False, True
    )  # fmt: skip
    assert data["bounds"] == {"min": {"call_accuracy": 0.6}, "max": {},
                              "max_drop": {"call_accuracy": 0.05}}  # fmt: skip
    assert data["config"] is None and data["not_applicable"] == []
    assert len(data["violations"]) == 4  # as many as the text table lists
    assert data["violations"][0] == {
        "cell": "m-alpha / prompt-json", "model": "m-alpha", "format": "prompt-json",
        "metric": "call_accuracy", "kind": "min", "value": 0.5, "bound": 0.6, "baseline": None,
    }  # fmt: skip
    assert data["violations"][1]["kind"] == "max_drop"
    assert data["violations"][1]["baseline"] == 1.0
    assert data["violations"][3]["cell"] == "overall"


def test_gate_json_passed_and_not_applicable(
    runs: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["gate", "runs/r1", "--min", "call_accuracy=0.8", "--min", "retry_recovery=0.9",
            "--json"]  # fmt: skip
    code, data = run_json(argv, capsys)
    assert code == 0
    assert data["passed"] is True and data["violations"] == []
    assert data["baseline"] is None and data["per_cell"] is False
    assert data["not_applicable"] == ["retry_recovery"]


def test_gate_json_names_the_config_file(runs: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (runs / "toolbench.toml").write_text("[gate.min]\ncall_accuracy = 0.5\n")
    code, data = run_json(["gate", "runs/r1", "--json"], capsys)
    assert code == 0 and data["config"] == "toolbench.toml"


def test_compare_runs_json(runs: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, data = run_json(["compare", "runs/r1", "runs/r2", "--json"], capsys)
    assert code == 0
    assert list(data) == [
        "version", "command", "mode", "a", "b", "alpha", "cells", "tests", "noise",
    ]  # fmt: skip
    assert (data["command"], data["mode"], data["a"], data["b"], data["alpha"]) == (
        "compare", "runs", "r1", "r2", 0.05
    )  # fmt: skip
    cell = data["cells"][0]
    assert list(cell) == ["cell", "metrics"]
    assert cell["cell"] == "m-alpha / prompt-json"
    assert cell["metrics"]["call_accuracy"] == {"a": 1.0, "b": 0.5, "delta": -0.5}
    assert data["cells"][-1]["cell"] == "overall"
    test = data["tests"][0]
    assert list(test) == TEST_KEYS
    assert test == {"group": "m-alpha / prompt-json", "metric": "call_accuracy", "pairs": 4,
                    "a": 1.0, "b": 0.5, "only_a": 2, "only_b": 0, "p_value": 0.5,
                    "significant": False, "detectable_difference": 0.998}  # fmt: skip


def test_compare_formats_json(runs: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["compare", "runs/r1", "--formats", "prompt-json,xml", "--json"]
    code, data = run_json(argv, capsys)
    assert code == 0
    assert (data["mode"], data["a"], data["b"]) == ("formats", "prompt-json", "xml")
    assert [c["cell"] for c in data["cells"]] == ["m-alpha", "m-beta", "overall"]
    beta = next(t for t in data["tests"] if t["group"] == "m-beta")
    assert (beta["metric"], beta["a"], beta["b"]) == ("call_accuracy", 1.0, 0.5)


def test_recommend_json(runs: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, data = run_json(["recommend", "runs/r1", "--json"], capsys)
    assert code == 0
    assert list(data) == ["version", "command", "rule", "models"]
    assert data["rule"] == [
        {"metric": "call_accuracy", "better": "higher"},
        {"metric": "leak_rate", "better": "lower"},
        {"metric": "stop_compliance", "better": "higher"},
        {"metric": "prompt_tokens_mean", "better": "lower"},
    ]
    beta = data["models"][1]
    assert list(beta) == [
        "model", "format", "decided_by", "significant", "test", "ranking",
        "outcome", "candidates", "tie_broken_by", "floor",
    ]  # fmt: skip
    assert (beta["model"], beta["format"], beta["decided_by"], beta["significant"]) == (
        "m-beta", "prompt-json", "call_accuracy", False
    )  # fmt: skip
    assert list(beta["test"]) == TEST_KEYS
    assert beta["ranking"][0] == {
        "rank": 1, "format": "prompt-json",
        "metrics": {"call_accuracy": 1.0, "leak_rate": 0.0, "stop_compliance": 1.0,
                    "prompt_tokens_mean": 120.0},
    }  # fmt: skip
    assert [r["format"] for r in beta["ranking"]] == ["prompt-json", "xml"]


@pytest.mark.parametrize(
    ("argv", "error"),
    [
        (["recommend", "runs/r1", "--json", "--to", "yaml"],
         "error: recommend: --json and --to yaml are exclusive (give one)\n"),
        (["recommend", "runs/r1", "--to", "json"],
         "error: recommend --to: for JSON give --json (--to takes text or yaml)\n"),
    ],
)  # fmt: skip
def test_json_usage_errors(
    runs: Path, capsys: pytest.CaptureFixture[str], argv: list[str], error: str
) -> None:
    assert run_cli(argv) == 2
    assert capsys.readouterr() == ("", error)
