"""``report --pass-k``: the k of pass@k and pass^k, refused on a one-sample run and
outside 2..samples before the trials are read."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "report"))
from synthetic_runs import make_trial, write_run

from toolbench.cli.app import run_cli


@pytest.fixture
def runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """k3: s_two passes 2 of 3 samples, s_all 3 of 3; one: a single sample."""
    monkeypatch.chdir(tmp_path)
    plan = {"s_all": [True, True, True], "s_two": [True, False, True]}
    trials = [
        make_trial("m", "xml", sid, i, ok=ok, run_id="k3")
        for sid, oks in plan.items()
        for i, ok in enumerate(oks)
    ]
    write_run(Path("runs/k3"), trials)
    write_run(Path("runs/one"), [make_trial("m", "xml", "s_all", 0, run_id="one")])
    return tmp_path


def cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = run_cli(argv)
    out, err = capsys.readouterr()
    return code, out, err


def test_pass_k_in_markdown(runs: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = cli(["report", "runs/k3", "--to", "md"], capsys)
    assert code == 0 and "| cell | per trial | pass@3 | pass^3 | flipping scenarios |" in out
    # pass^3: s_all 1, s_two 0 -> 50%; at k = 2, s_two is C(2,2)/C(3,2) = 1/3.
    assert "| m / xml | 83.3% [" in out and " | 50.0% [" in out
    code, out, _ = cli(["report", "runs/k3", "--to", "md", "--pass-k", "2"], capsys)
    assert code == 0 and "| pass@2 | pass^2 |" in out
    assert f" | {100 * (1 + 1 / 3) / 2:.1f}% [" in out
    code, out, _ = cli(["report", "runs/one", "--to", "md"], capsys)
    assert code == 0 and "Repeated samples" not in out


@pytest.mark.parametrize(
    ("argv", "error"),
    [
        (
            ["report", "runs/one", "--pass-k", "2"],
            "error: --pass-k: run 'one' has 1 sample per scenario; pass@k and pass^k need 2 "
            "or more (toolbench run --samples K)\n",
        ),
        (
            ["report", "runs/k3", "--pass-k", "4"],
            "error: --pass-k: expected a k from 2 to 3, the run's samples (got 4)\n",
        ),
        (
            ["report", "runs/k3", "--pass-k", "1"],
            "error: --pass-k: expected a k from 2 to 3, the run's samples (got 1)\n",
        ),
    ],
)
def test_bad_pass_k_exit_2(
    runs: Path, capsys: pytest.CaptureFixture[str], argv: list[str], error: str
) -> None:
    assert cli(argv, capsys) == (2, "", error)
    assert not Path("reports").exists()  # nothing written
