"""recommend's three outcomes through the CLI, on constructed runs: a recommendation only
where one format beats the others significantly, a tie otherwise, and "no format works"
when every format is below the floor; ``--detect`` and ``--floor`` checked before any work."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import pytest
import yaml

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "report"))
from synthetic_runs import make_trial, write_run

from toolbench.cli.app import run_cli
from toolbench.report.paired_stats import mcnemar_exact, pairs_needed

SCENARIOS = [f"calc_{i}" for i in range(8)]


def _run(tmp: Path, name: str, passes_a: int, passes_b: int, samples: int = 1) -> Path:
    """Model m, formats a and b on 8 call scenarios: a passes the first ``passes_a``
    scenarios, b the first ``passes_b`` (every sample alike)."""
    trials = [
        make_trial("m", fmt, sid, s, ok=i < passes, run_id=name)
        for fmt, passes in (("a", passes_a), ("b", passes_b))
        for i, sid in enumerate(SCENARIOS)
        for s in range(samples)
    ]
    return write_run(tmp / "runs" / name, trials)


def cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = run_cli(argv)
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    _run(tmp_path, "clear", 8, 0)  # 8 discordant pairs one way: p = 2/256
    _run(tmp_path, "close", 8, 7)  # 1 discordant pair: p = 1
    _run(tmp_path, "broken", 0, 0)  # every format 0%
    return tmp_path


def test_recommendation_when_one_format_wins(
    runs: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert mcnemar_exact(8, 0) == pytest.approx(2 / 256)
    code, out, _ = cli(["recommend", "runs/clear"], capsys)
    assert code == 0
    assert out.splitlines()[0] == "m: use a (decided by call_accuracy)"
    code, out, _ = cli(["recommend", "runs/clear", "--to", "yaml"], capsys)
    assert code == 0 and yaml.safe_load(out)["models"] == {"m": {"tool_format": "a"}}
    code, out, _ = cli(["recommend", "runs/clear", "--json"], capsys)
    (m,) = json.loads(out)["models"]
    assert (m["outcome"], m["candidates"], m["tie_broken_by"]) == ("recommend", ["a"], None)


def test_tie_when_no_difference_is_significant(
    runs: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = cli(["recommend", "runs/close"], capsys)
    assert code == 0
    assert out.splitlines()[0] == (
        "m: tie between a, b (no significant call_accuracy difference; "
        "broken by call_accuracy: a first)"
    )
    code, out, _ = cli(["recommend", "runs/close", "--json"], capsys)
    (m,) = json.loads(out)["models"]
    assert (m["outcome"], m["candidates"], m["tie_broken_by"]) == (
        "tie",
        ["a", "b"],
        "call_accuracy",
    )
    code, _, err = cli(["recommend", "runs/close", "--to", "yaml"], capsys)
    assert code == 2 and err == (
        "error: recommend --to yaml: no model has a recommendation (their formats tie or "
        "none works; --break-ties writes a broken tie's pick; see recommend's text): no "
        "formats file written\n"
    )
    # The tie was broken (call accuracy, not significant): asked for knowingly, its pick.
    code, out, _ = cli(["recommend", "runs/close", "--to", "yaml", "--break-ties"], capsys)
    assert code == 0 and yaml.safe_load(out)["models"] == {"m": {"tool_format": "a"}}
    code, _, err = cli(["recommend", "runs/close", "--break-ties"], capsys)
    assert (code, err) == (
        2,
        "error: recommend: --break-ties chooses what --to yaml writes; give --to yaml\n",
    )


def test_no_format_works_below_the_floor(runs: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = cli(["recommend", "runs/broken"], capsys)
    assert code == 0
    assert out.splitlines()[0] == (
        "no format works for m (every format's call_accuracy is below the floor 50%)"
    )
    code, out, _ = cli(["recommend", "runs/broken", "--json"], capsys)
    (m,) = json.loads(out)["models"]
    assert (m["outcome"], m["floor"]) == ("none", 0.5)
    # The floor is the user's: at 0 even 0% passes it (and a, b tie); at 1, 100% does.
    code, out, _ = cli(["recommend", "runs/broken", "--floor", "0"], capsys)
    assert out.splitlines()[0].startswith("m: tie between a, b")
    code, out, _ = cli(["recommend", "runs/clear", "--floor", "1"], capsys)
    assert out.splitlines()[0] == "m: use a (decided by call_accuracy)"


def test_detect_names_samples_needed(runs: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = cli(["recommend", "runs/close", "--detect", "5pt"], capsys)
    assert code == 0
    # 8 paired trials, 1 discordant: psi = 1/8; 8 scenarios share the pairs.
    need = math.ceil(pairs_needed(0.05, 1 / 8) / 8)
    assert (
        f"  to detect a 5.0-point call-accuracy difference between a and b: {need} samples "
        "per scenario over 8 scenarios (alpha 0.05, power 0.8)"
    ) in out.splitlines()
    code, out, _ = cli(["recommend", "runs/close", "--detect", "5pt", "--json"], capsys)
    data = json.loads(out)
    assert data["detect"] == 0.05 and data["models"][0]["samples_needed"] == need


@pytest.mark.parametrize(
    ("argv", "error"),
    [
        (
            ["recommend", "runs/nope", "--detect", "0pt"],
            "error: --detect: expected a difference in points between 0 and 100, exclusive "
            "(e.g. 5pt); got '0pt'\n",
        ),
        (
            ["recommend", "runs/nope", "--detect", "100"],
            "error: --detect: expected a difference in points between 0 and 100, exclusive "
            "(e.g. 5pt); got '100'\n",
        ),
        (
            ["recommend", "runs/nope", "--detect", "lots"],
            "error: --detect: expected a difference in points between 0 and 100, exclusive "
            "(e.g. 5pt); got 'lots'\n",
        ),
        (
            ["recommend", "runs/nope", "--floor", "1.5"],
            "error: --floor: expected a call accuracy from 0 to 1 (got 1.5)\n",
        ),
    ],
)
def test_bad_detect_and_floor_exit_2_before_reading(
    runs: Path, capsys: pytest.CaptureFixture[str], argv: list[str], error: str
) -> None:
    """The run does not exist: the option is refused before anything is read."""
    code, out, err = cli(argv, capsys)
    assert (code, out, err) == (2, "", error)
