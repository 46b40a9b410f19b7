"""``gate --significant``: a --max-drop on a rate fails only when the drop is significant
(paired exact McNemar against the baseline), through the CLI, on constructed runs."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "report"))
from synthetic_runs import make_trial, write_run

from toolbench.cli.app import run_cli

SCENARIOS = [f"calc_{i}" for i in range(8)]


def _run(name: str, failing: int) -> None:
    """Model m, format xml, 8 call scenarios; the first ``failing`` fail."""
    trials = [
        make_trial("m", "xml", sid, ok=i >= failing, run_id=name) for i, sid in enumerate(SCENARIOS)
    ]
    write_run(Path("runs") / name, trials)


@pytest.fixture
def runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    _run("base", 0)
    _run("blip", 1)  # 12.5 points down, 1 discordant pair: p = 1
    _run("broke", 8)  # 100 points down, 8 discordant pairs: p = 2/256
    return tmp_path


def cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = run_cli(argv)
    out, err = capsys.readouterr()
    return code, out, err


GATE = ["--baseline", "runs/base", "--max-drop", "call_accuracy=0.05", "--per-cell"]


def test_absolute_bound_fails_on_noise(runs: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = cli(["gate", "runs/blip", *GATE], capsys)
    assert code == 1 and "gate failed: 2 violation(s) in run blip" in out


def test_significant_passes_a_drop_within_noise(
    runs: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = cli(["gate", "runs/blip", *GATE, "--significant"], capsys)
    assert (code, out) == (0, "gate passed: 1 bound(s) hold on every cell of run blip\n")


def test_significant_fails_a_significant_drop(
    runs: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = cli(["gate", "runs/broke", *GATE, "--significant"], capsys)
    assert code == 1
    assert "m / xml  call_accuracy  0.0%   drop <= 5.0 pp, significant (p=0.00781)  100.0%" in (
        out.splitlines()
    )
    code, out, _ = cli(["gate", "runs/broke", *GATE, "--significant", "--json"], capsys)
    data = json.loads(out)
    assert data["significant"] is True
    assert [v["p_value"] for v in data["violations"]] == [pytest.approx(2 / 256)] * 2


def test_significant_from_toolbench_toml(runs: Path, capsys: pytest.CaptureFixture[str]) -> None:
    Path("toolbench.toml").write_text(
        "[gate]\nsignificant = true\nper_cell = true\n[gate.max_drop]\ncall_accuracy = 0.05\n"
    )
    assert cli(["gate", "runs/blip", "--baseline", "runs/base"], capsys)[0] == 0
    assert cli(["gate", "runs/broke", "--baseline", "runs/base"], capsys)[0] == 1
    Path("toolbench.toml").write_text("[gate]\nsignificant = 1\n")
    code, _, err = cli(["gate", "runs/blip", "--baseline", "runs/base"], capsys)
    assert (code, err) == (2, "error: toolbench.toml: gate.significant: expected true or false\n")


def test_significant_needs_a_drop_bound(runs: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = cli(
        ["gate", "runs/nope", "--min", "call_accuracy=0.5", "--significant"], capsys
    )
    assert (code, out) == (2, "")
    assert err == "error: --significant tests --max-drop bounds; give --max-drop and --baseline\n"
