"""The driver keeps a Ray run's cassettes, faults included: a save that fails on the
driver stops the run as a local one stops (exit 4, the trial's ``harness.cassette_write``
line, ``--resume`` completes it); a cassette that no longer parses is moved aside on the
driver and recorded again; one the driver cannot send as bytes (a FIFO) fails its trial
typed, as locally."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.runner.conftest import GOOD_CALL, SCENARIO
from toolbench.cli.app import run_cli
from toolbench.providers.fake import FakeServer, by_last_user
from toolbench.results import TrialResult
from toolbench.store import load_results

pytest.importorskip("ray", reason="the ray extra is not installed (pip install -e '.[ray]')")

SAMPLES = 4
TRIALS = 2 * SAMPLES  # two scenarios, one format


@pytest.fixture
def fake() -> Iterator[FakeServer]:
    with FakeServer(by_last_user({"Weather in Paris?": GOOD_CALL})) as server:
        yield server


def _run(fake: FakeServer, tmp: Path, out: str, *extra: str) -> int:
    scen = tmp / "mini.yaml"
    scen.write_text(SCENARIO, encoding="utf-8")
    return run_cli([
        "run", "--models", "openai/fake", "--formats", "prompt-json", "--scenarios", str(scen),
        "--samples", str(SAMPLES), "--api-base", fake.base_url, "--out", str(tmp / out),
        "--cassettes", str(tmp / "cas"), "--quiet", "--no-report", "--executor", "ray", *extra,
    ])  # fmt: skip


def _by_key(run: Path) -> dict[tuple[str, int], TrialResult]:
    results = load_results(run)
    by = {(r.scenario_id, r.sample): r for r in results}
    assert len(by) == len(results), "a trial written twice"
    return by


def _cassette(tmp: Path, name: str) -> Path:
    return tmp / "cas" / "openai_fake" / "prompt-json" / name


@pytest.mark.usefixtures("cluster")
def test_a_cassette_the_driver_cannot_save_stops_the_run(
    tmp_path: Path, fake: FakeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = _cassette(tmp_path, "weather__s2.json")
    replace = os.replace

    def no_space(src: str | Path, dst: str | Path) -> None:
        if str(dst) == str(target):
            raise OSError(28, "No space left on device")
        replace(src, dst)

    with monkeypatch.context() as mp:
        mp.setattr(os, "replace", no_space)  # the driver's saves only: workers are processes
        assert _run(fake, tmp_path, "run") == 4
    lines = load_results(tmp_path / "run")
    assert lines[-1].key == ("openai/fake", "prompt-json", "weather", 2), "nothing after it"
    assert (lines[-1].status, lines[-1].error_code) == ("harness_error", "harness.cassette_write")
    assert lines[-1].infra_error == (
        f"CassetteWriteError: cannot write cassette {target}: No space left on device"
    )
    assert not target.exists()
    assert not list(target.parent.glob(".*.tmp")), "a temporary file left behind"
    assert _run(fake, tmp_path, "run", "--resume") == 0  # the failed trial runs again
    trials = _by_key(tmp_path / "run")
    assert len(trials) == TRIALS and all(r.status == "ok" for r in trials.values())
    assert target.is_file()


@pytest.mark.usefixtures("cluster")
def test_an_unreadable_cassette_is_moved_aside_on_the_driver(
    tmp_path: Path, fake: FakeServer
) -> None:
    assert _run(fake, tmp_path, "first") == 0
    broken = _cassette(tmp_path, "weather__s1.json")
    broken.write_text("{not json", encoding="utf-8")
    sent = len(fake.received)
    assert _run(fake, tmp_path, "again") == 0  # --record new: the rest replay
    assert len(fake.received) == sent + 1
    trial = _by_key(tmp_path / "again")[("weather", 1)]
    assert trial.status == "ok" and trial.cassette == str(broken)
    assert trial.notes[0].startswith(f"cassette {broken} is unreadable")
    (aside,) = broken.parent.glob("weather__s1.json.unreadable-*")
    assert f"moved to {aside.name} and recorded again" in trial.notes[0]
    assert aside.read_text(encoding="utf-8") == "{not json"
    assert broken.read_bytes().startswith(b'{\n "kind": "toolbench-cassette"')


@pytest.mark.usefixtures("cluster")
def test_a_cassette_the_driver_cannot_send_fails_its_trial_typed(
    tmp_path: Path, fake: FakeServer
) -> None:
    assert _run(fake, tmp_path, "first") == 0
    fifo = _cassette(tmp_path, "chat__s3.json")
    fifo.unlink()
    os.mkfifo(fifo)
    assert _run(fake, tmp_path, "again", "--record", "none") == 0
    trials = _by_key(tmp_path / "again")
    assert len(trials) == TRIALS
    trial = trials[("chat", 3)]
    assert (trial.status, trial.error_code) == ("cassette_unreadable", "cassette.unreadable")
    assert trial.infra_error == (
        f"cassette {fifo} is unreadable: not a regular file (a FIFO, a device or a socket);"
        " record it again with --record new"
    )
    assert all(r.status == "ok" for k, r in trials.items() if k != ("chat", 3))
