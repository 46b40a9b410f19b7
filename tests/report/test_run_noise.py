"""Run-to-run noise on constructed runs: per-cell disagreement and the share of cells
whose difference is beyond noise, counted by hand."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from synthetic_runs import make_trial, write_run

from toolbench.cli.app import run_cli
from toolbench.report.compare import compare_runs
from toolbench.report.metrics import load_table

SCENARIOS = [f"calc_{i}" for i in range(8)]


def _run(path: Path, fails: dict[str, set[str]]) -> Path:
    """Formats steady and shaky of model m, 8 scenarios: a scenario in ``fails[fmt]``
    fails there. chitchat_nocall has no call accuracy and stays out of the pairs."""
    trials = [
        make_trial("m", fmt, sid, ok=sid not in fails.get(fmt, set()), run_id=path.name)
        for fmt in ("shaky", "steady")
        for sid in [*SCENARIOS, "chitchat_nocall"]
    ]
    return write_run(path, trials)


@pytest.fixture
def two_runs(tmp_path: Path) -> tuple[Path, Path]:
    # steady: identical in both runs. shaky: every scenario passes in A, fails in B.
    a = _run(tmp_path / "runs" / "a", {"steady": {"calc_0"}})
    b = _run(tmp_path / "runs" / "b", {"steady": {"calc_0"}, "shaky": set(SCENARIOS)})
    return a, b


def test_noise_per_cell(two_runs: tuple[Path, Path]) -> None:
    a, b = two_runs
    noise = compare_runs(load_table(a), load_table(b)).noise
    assert noise is not None
    cells = {c.format: c for c in noise.cells}
    assert (cells["shaky"].pairs, cells["shaky"].only_a, cells["shaky"].only_b) == (8, 8, 0)
    assert (cells["steady"].pairs, cells["steady"].only_a, cells["steady"].only_b) == (8, 0, 0)
    assert cells["shaky"].disagreement == 1.0 and cells["steady"].disagreement == 0.0
    assert cells["shaky"].p_value == pytest.approx(2 / 2**8)  # exact sign test, 8 of 8
    assert cells["shaky"].beyond_noise and not cells["steady"].beyond_noise
    assert noise.share_beyond == 0.5 and noise.disagreement == pytest.approx(8 / 16)


def test_noise_through_the_cli(
    two_runs: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    a, b = two_runs
    assert run_cli(["compare", str(a), str(b)]) == 0
    out = capsys.readouterr().out
    assert "m / shaky   8      8       0       100.0%    0.007812  yes" in out.splitlines()
    assert out.rstrip().endswith(
        "1 of 2 cells differ beyond noise (exact McNemar p < 0.05; about 1 in 20 by chance)"
        ": 50%; 50.0% of paired trials disagree"
    )
    assert run_cli(["compare", str(a), str(b), "--json"]) == 0
    noise = json.loads(capsys.readouterr().out)["noise"]
    assert noise["share_beyond_noise"] == 0.5
    assert [c["beyond_noise"] for c in noise["cells"]] == [True, False]
    # Within one run (formats) there is no run-to-run noise to report.
    assert run_cli(["compare", str(a), "--formats", "shaky,steady", "--json"]) == 0
    assert "noise" not in json.loads(capsys.readouterr().out)
