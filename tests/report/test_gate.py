from __future__ import annotations

from pathlib import Path

import pytest

from toolbench.errors import UserError
from toolbench.report.gate import GateConfig, evaluate, load_config, parse_bound
from toolbench.report.metrics import aggregate, load_table


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("call_accuracy", "--min 'call_accuracy': expected metric=value (e.g. call_accuracy=0.9)"),
        ("=0.5", "--min '=0.5': expected metric=value (e.g. call_accuracy=0.9)"),
        ("call_accuracy=high", "--min 'call_accuracy=high': value 'high' is not a number"),
        ("call_accuracy=nan", "--min 'call_accuracy=nan': value 'nan' is not a finite number"),
    ],
)
def test_parse_bound_errors(text: str, message: str) -> None:
    with pytest.raises(UserError) as exc:
        parse_bound("--min", text)
    assert str(exc.value) == message


def test_parse_bound_ok() -> None:
    assert parse_bound("--max", " leak_rate = 0.05 ") == ("leak_rate", 0.05)


def test_evaluate_overall_vs_per_cell(run_dir: Path) -> None:
    cells = aggregate(load_table(run_dir).df)
    cfg = GateConfig(min={"call_accuracy": 0.8})
    assert evaluate(cfg, cells) == []  # overall 86.7%
    cfg.per_cell = True
    bad = evaluate(cfg, cells)
    assert [(v.cell, v.metric, v.value) for v in bad] == [("m-beta / xml", "call_accuracy", 0.5)]


def test_evaluate_max_drop_direction(run_dir: Path, regressed_run: Path) -> None:
    base = aggregate(load_table(run_dir).df)
    new = aggregate(load_table(regressed_run).df)
    cfg = GateConfig(max_drop={"call_accuracy": 0.05, "leak_rate": 0.0})
    bad = evaluate(cfg, new, base)
    assert [(v.cell, v.metric, v.baseline) for v in bad] == [
        ("overall", "call_accuracy", pytest.approx(13 / 15))
    ]
    with pytest.raises(UserError, match="--max-drop needs --baseline RUN"):
        evaluate(cfg, new, None)


def test_config_from_toolbench_toml(tmp_path: Path) -> None:
    (tmp_path / "toolbench.toml").write_text(
        "[gate]\nper_cell = true\nmin = { call_accuracy = 0.9 }\n[gate.max]\nleak_rate = 0.1\n"
    )
    cfg = load_config(cwd=tmp_path)
    assert (cfg.min, cfg.max, cfg.per_cell) == ({"call_accuracy": 0.9}, {"leak_rate": 0.1}, True)


def test_config_from_pyproject(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        "[project]\nname='x'\n[tool.toolbench.gate.max_drop]\ncall_accuracy = 0.02\n"
    )
    assert load_config(cwd=tmp_path).max_drop == {"call_accuracy": 0.02}


def test_no_config_is_empty(tmp_path: Path) -> None:
    assert load_config(cwd=tmp_path).empty


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("[gate]\nmin = { parse_sucess = 0.9 }\n", "gate.min.parse_sucess: unknown metric"),
        ("[gate]\nminimum = { call_accuracy = 0.9 }\n", "gate.minimum: unknown key"),
        ("[gate]\nmin = { call_accuracy = 'x' }\n", "gate.min.call_accuracy: expected a number"),
        ("[gate]\nper_cell = 1\n", "gate.per_cell: expected true or false"),
        ("[gate\n", "invalid TOML"),
    ],
)
def test_config_errors_name_file_and_key(tmp_path: Path, body: str, message: str) -> None:
    (tmp_path / "toolbench.toml").write_text(body)
    with pytest.raises(UserError, match=r"toolbench\.toml: ") as exc:
        load_config(cwd=tmp_path)
    assert message in str(exc.value)


def test_cli_values_override_file() -> None:
    file = GateConfig(min={"call_accuracy": 0.9, "parse_success": 0.5})
    merged = file.merged(GateConfig(min={"call_accuracy": 0.7}), per_cell=False)
    assert merged.min == {"call_accuracy": 0.7, "parse_success": 0.5}
