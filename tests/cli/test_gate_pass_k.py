"""``gate`` bounds on pass^k (``pass_hat_k``) and pass@k (``pass_at_k``) over repeated
samples, loop trials read by their ``loop_success``, through the CLI on constructed runs;
a bad bound or k is one line and exit 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.report.synthetic_runs import make_trial, write_run

from toolbench.cli.app import run_cli
from toolbench.report.repeat_samples import estimate

PLAN: dict[tuple[str, str], list[tuple[bool, bool | None]]] = {
    # (format, scenario): per sample (call_accuracy, loop_success); None: not a loop
    ("xml", "loop_a"): [(True, True)] * 3,
    ("xml", "loop_b"): [(True, True), (False, False), (True, True)],
    ("xml", "calc"): [(True, None)] * 3,
    # call_accuracy says pass, loop_success fail: the gate must read loop_success
    ("native", "loop_a"): [(True, False)] * 3,
    ("native", "loop_b"): [(True, True)] * 3,
    ("native", "calc"): [(True, None)] * 3,
}
"""pass^3: xml 1, 0, 1 (2/3); native 0, 1, 1 (2/3); overall 4/6. pass^2: xml 1, 1/3, 1
(7/9); native 2/3. pass@3: xml 1; native 2/3; overall 5/6."""


@pytest.fixture
def runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    trials = []
    for (fmt, sid), samples in PLAN.items():
        for i, (ok, loop) in enumerate(samples):
            if loop is None:
                trials.append(make_trial("m", fmt, sid, i, ok=ok, run_id="k3"))
            else:
                trials.append(make_trial("m", fmt, sid, i, ok=ok, run_id="k3", loop_success=loop))
    write_run(Path("runs") / "k3", trials)
    write_run(Path("runs") / "one", [make_trial("m", "xml", "calc", run_id="one")])
    return tmp_path


def cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = run_cli(argv)
    out, err = capsys.readouterr()
    return code, out, err


def test_overall_pass_hat_k_holds_and_fails(runs: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = cli(["gate", "runs/k3", "--min", "pass_hat_k=0.6"], capsys)
    assert (code, out) == (0, "gate passed: 1 bound(s) hold on the overall cell of run k3\n")
    code, out, _ = cli(["gate", "runs/k3", "--min", "pass_hat_k=0.7"], capsys)
    assert code == 1
    lines = out.splitlines()
    assert lines[0] == "gate failed: 1 violation(s) in run k3"
    # the value with its interval over the 6 (cell, scenario) pairs
    want = estimate([1, 0, 1, 0, 1, 1]).text()
    assert want.startswith("66.7% [") and want.endswith(" s=6")
    assert lines[-1].split("  ")[0:1] == ["overall"]
    assert want in lines[-1] and ">= 70.0%" in lines[-1]


def test_loop_trials_count_by_loop_success(runs: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = cli(["gate", "runs/k3", "--per-cell", "--min", "pass_hat_k=0.7"], capsys)
    assert code == 1
    failing = sorted(line.split("  ")[0] for line in out.splitlines()[3:])
    assert failing == ["m / native", "m / xml", "overall"]
    # pass@3: xml passes (every scenario succeeded at least once); native's loop_a never
    # succeeded by loop_success, though its call_accuracy says it did every time
    code, out, _ = cli(
        ["gate", "runs/k3", "--per-cell", "--min", "pass_at_k=0.9", "--json"], capsys
    )
    data = json.loads(out)
    assert code == 1 and data["bounds"]["min"] == {"pass_at_k": 0.9}
    got = {v["cell"]: v["value"] for v in data["violations"]}
    assert got == {"m / native": pytest.approx(2 / 3), "overall": pytest.approx(5 / 6)}


def test_pass_k_from_the_command_line_and_toml(
    runs: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["gate", "runs/k3", "--per-cell", "--min", "pass_hat_k=0.7"]
    code, out, _ = cli([*argv, "--pass-k", "2", "--json"], capsys)
    got = {v["cell"]: v["value"] for v in json.loads(out)["violations"]}
    assert code == 1
    assert got == {"m / native": pytest.approx(2 / 3)}  # xml 7/9 and overall 13/18 hold at k = 2
    Path("toolbench.toml").write_text("[gate]\npass_k = 2\nper_cell = true\n")
    code, out, _ = cli(["gate", "runs/k3", "--min", "pass_hat_k=0.7", "--json"], capsys)
    assert code == 1 and [v["cell"] for v in json.loads(out)["violations"]] == ["m / native"]
    # the command line's k wins over the file's
    code, out, _ = cli(["gate", "runs/k3", "--min", "pass_hat_k=0.7", "--pass-k", "3"], capsys)
    assert code == 1 and "m / xml" in out


@pytest.mark.parametrize(
    ("argv", "err"),
    [
        (["--min", "pass_hat_k=1.5"],
         "error: --min 'pass_hat_k=1.5': pass_hat_k is a rate from 0 to 1 (got 1.5)\n"),
        (["--max", "pass_at_k=-0.1"],
         "error: --max 'pass_at_k=-0.1': pass_at_k is a rate from 0 to 1 (got -0.1)\n"),
        (["--max-drop", "pass_hat_k=0.1", "--baseline", "runs/k3"],
         "error: --max-drop 'pass_hat_k=0.1': pass_hat_k takes --min or --max bounds, "
         "not a drop\n"),
        (["--min", "pass_hat_k=0.5", "--pass-k", "4"],
         "error: --pass-k: expected a k from 2 to 3, the run's samples (got 4)\n"),
        (["--min", "pass_hat_k=0.5", "--pass-k", "1"],
         "error: --pass-k: expected a k of 2 or more (got 1)\n"),
        (["--min", "call_accuracy=0.5", "--pass-k", "2"],
         "error: --pass-k: no pass_hat_k or pass_at_k bound to apply it to\n"),
    ],
)  # fmt: skip
def test_bad_bounds_are_one_line_and_exit_2(
    runs: Path, capsys: pytest.CaptureFixture[str], argv: list[str], err: str
) -> None:
    assert cli(["gate", "runs/k3", *argv], capsys) == (2, "", err)


def test_a_one_sample_run_is_refused(runs: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli(["gate", "runs/one", "--min", "pass_hat_k=0.5"], capsys) == (
        2,
        "",
        "error: gate: pass_hat_k needs 2 or more samples per scenario; run 'one' has 1 "
        "(toolbench run --samples K)\n",
    )


@pytest.mark.parametrize(
    ("toml", "err"),
    [
        ("[gate]\npass_k = 1\n[gate.min]\npass_hat_k = 0.5\n",
         "error: toolbench.toml: gate.pass_k: expected a whole number of samples, 2 or more\n"),
        ("[gate]\npass_k = 5\n[gate.min]\npass_hat_k = 0.5\n",
         "error: toolbench.toml: gate.pass_k: expected a k from 2 to 3, the run's samples "
         "(got 5)\n"),
        ("[gate.min]\npass_hat_k = 2\n",
         "error: toolbench.toml: gate.min.pass_hat_k: pass_hat_k is a rate from 0 to 1 (got 2)\n"),
        ("[gate.max_drop]\npass_at_k = 0.1\n",
         "error: toolbench.toml: gate.max_drop.pass_at_k: takes min or max bounds, not a drop\n"),
    ],
)  # fmt: skip
def test_bad_toml_is_one_line_and_exit_2(
    runs: Path, capsys: pytest.CaptureFixture[str], toml: str, err: str
) -> None:
    Path("toolbench.toml").write_text(toml)
    assert cli(["gate", "runs/k3"], capsys) == (2, "", err)
