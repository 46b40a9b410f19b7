"""``toolbench run --batch`` refused before any call, one line and exit 2, when no
provider batch could serve the run: a replay-only run, a streamed format, a model whose
provider has no batch API toolbench speaks."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.runner.conftest import SCENARIO
from tests.support.fake_batch import FakeBatchServer

from toolbench.cli.app import run_cli

BATCHED = "a batch reply is whole (no stream to measure); leave out one of them"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--record", "none"],
         "error: --batch: --record none only replays, a batch sends requests (use --record new"
         " or all)"),
        (["--stream", "on"], f"error: --batch: --stream on streams, {BATCHED}"),
        (["--stream", "both"], f"error: --batch: --stream both streams, {BATCHED}"),
        (["--formats", "prompt-json,xml:stream"],
         f"error: --batch: format 'xml:stream' is streamed, {BATCHED}"),
        (["--models", "gemini/gemini-2.0-flash"],
         "error: --batch: model 'gemini/gemini-2.0-flash' has no batch API toolbench speaks (it"
         " speaks openai and anthropic's: openai/..., anthropic/...)"),
        (["--models", "local/smollm2-135m"],
         "error: --batch: model 'local/smollm2-135m' has no batch API toolbench speaks (it"
         " speaks openai and anthropic's: openai/..., anthropic/...)"),
    ],
)  # fmt: skip
def test_batch_refused_before_any_call(
    args: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    for env in ("OPENAI_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY"):
        monkeypatch.setenv(env, "test-key-not-secret-0000")
    scen = tmp_path / "s.yaml"
    scen.write_text(SCENARIO, encoding="utf-8")
    with FakeBatchServer() as server:
        argv = ["run", "--quiet", "--no-report", "--batch", "--scenarios", str(scen),
                "--api-base", server.base_url, "--out", str(tmp_path / "r"),
                "--cassettes", str(tmp_path / "cas")]  # fmt: skip
        if "--models" not in args:
            argv += ["--models", "openai/fake"]
        if "--formats" not in args:
            argv += ["--formats", "prompt-json"]
        rc = run_cli([*argv, *args])
        assert (rc, capsys.readouterr().err) == (2, message + "\n")
        assert server.live == [] and server.batches == {} and server.files == {}
    assert not (tmp_path / "r").exists()


def test_resume_batch_of_a_live_run_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """run.json records how the run's trials reached their models: a live run completed
    by batches would hold trials priced and timed two ways. Nothing is sent, nothing of
    the run changes."""
    monkeypatch.setenv("OPENAI_API_KEY", "test-key-not-secret-0000")
    scen = tmp_path / "s.yaml"
    scen.write_text(SCENARIO, encoding="utf-8")
    run = tmp_path / "r"
    with FakeBatchServer() as server:
        argv = ["run", "--quiet", "--no-report", "--scenarios", str(scen),
                "--api-base", server.base_url, "--out", str(run),
                "--cassettes", str(tmp_path / "cas")]  # fmt: skip
        assert run_cli([*argv, "--models", "openai/fake", "--formats", "prompt-json",
                        "--budget", "0.000001"]) == 0  # fmt: skip
        assert server.live == []  # nothing started: every trial is left for --resume
        capsys.readouterr()
        rc = run_cli([*argv, "--resume", "--batch"])
        assert (rc, capsys.readouterr().err) == (
            2,
            f"error: --resume: --batch differs from the run in {run / 'run.json'}"
            " (run: live; given: batch)\n",
        )
        assert server.live == [] and server.batches == {} and server.files == {}
    assert (run / "results.jsonl").read_text(encoding="utf-8") == ""
