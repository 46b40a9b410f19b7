"""``--executor ray`` on a local Ray instance (two CPUs, this machine) against the fake
server: the same matrix as the local executor gives the same results file up to order
and timing, and with a worker killed mid-run every trial is still written exactly once.

One Ray instance serves the module (starting one is most of a short run's time); the
executor uses the instance it finds and leaves it running.
"""

from __future__ import annotations

import logging
import os
import signal
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.runner.conftest import GOOD_CALL, SCENARIO
from toolbench.cli.app import run_cli
from toolbench.providers.fake import FakeServer, by_last_user
from toolbench.results import TrialResult
from toolbench.store import load_results, results_path

ray = pytest.importorskip("ray", reason="the ray extra is not installed (pip install -e '.[ray]')")

FORMATS = "prompt-json,xml,react,native"
SAMPLES = 20  # 2 scenarios x 4 formats x 20 samples: 160 trials
TRIALS = 2 * 4 * SAMPLES
TIMING = {"started_at", "finished_at", "harness_s", "provider_s", "latency_s"}
"""Fields that differ between any two runs of one matrix (the clock's)."""
TASK_TITLE = b"ray::drive_batch"
"""A Ray worker's process title while it runs a batch (``ray_run.drive_batch``)."""


@pytest.fixture(scope="module")
def cluster() -> Iterator[None]:
    with pytest.MonkeyPatch.context() as mp:
        # Before the instance starts: its workers take the environment they start with.
        mp.setenv("OPENAI_API_KEY", "test-key-not-secret-0000")
        ray.init(num_cpus=2, include_dashboard=False, logging_level=logging.ERROR,
                 log_to_driver=False)  # fmt: skip
        try:
            yield
        finally:
            ray.shutdown()


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeServer]:
    with FakeServer(by_last_user({"Weather in Paris?": GOOD_CALL}), delay_s=0.01) as server:
        yield server


def _run(fake: FakeServer, tmp: Path, name: str, *extra: str) -> int:
    scen = tmp / "mini.yaml"
    scen.write_text(SCENARIO, encoding="utf-8")
    return run_cli([
        "run", "--models", "openai/fake", "--formats", FORMATS, "--scenarios", str(scen),
        "--samples", str(SAMPLES), "--api-base", fake.base_url, "--out", str(tmp / name),
        "--cassettes", str(tmp / f"cas-{name}"), "--quiet", "--no-report", *extra,
    ])  # fmt: skip


def _untimed(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _untimed(v) for k, v in value.items() if k not in TIMING}
    if isinstance(value, list):
        return [_untimed(v) for v in value]
    return value


def _comparable(results: list[TrialResult], name: str) -> dict[tuple[str, str, str, int], Any]:
    """Each trial by key, without its timing, its cassette path made run-independent."""
    out = {}
    for r in results:
        row = _untimed(r.model_dump(mode="json"))
        row["cassette"] = row["cassette"].partition(f"/cas-{name}/")[2]
        row["run_id"] = "run"
        out[r.key] = row
    return out


@pytest.fixture(scope="module")
def local_run(tmp_path_factory: pytest.TempPathFactory, fake: FakeServer) -> dict[Any, Any]:
    tmp = tmp_path_factory.mktemp("local")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("OPENAI_API_KEY", "test-key-not-secret-0000")
        assert _run(fake, tmp, "local") == 0
    results = load_results(tmp / "local")
    assert len(results) == TRIALS
    return _comparable(results, "local")


@pytest.mark.usefixtures("cluster")
def test_ray_results_equal_local(
    tmp_path: Path, fake: FakeServer, local_run: dict[Any, Any]
) -> None:
    assert _run(fake, tmp_path, "ray", "--executor", "ray") == 0
    results = load_results(tmp_path / "ray")
    assert len(results) == TRIALS == len({r.key for r in results})
    assert _comparable(results, "ray") == local_run
    # The workers wrote the cassettes where the run asked (the directory is shared here).
    assert len(list((tmp_path / "cas-ray").rglob("*.json"))) == TRIALS


def _batch_workers() -> list[int]:
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                title = (entry / "cmdline").read_bytes()
            except OSError:
                continue
            if title.startswith(TASK_TITLE):
                pids.append(int(entry.name))
    return pids


@pytest.mark.usefixtures("cluster")
def test_killed_worker_loses_nothing(
    tmp_path: Path, fake: FakeServer, local_run: dict[Any, Any]
) -> None:
    killed: list[int] = []
    done = threading.Event()

    def kill_one() -> None:
        """Once the run has written its first lines, kill a worker running a batch."""
        lines = results_path(tmp_path / "ray")
        while not done.is_set() and not killed:
            written = lines.is_file() and lines.stat().st_size > 0
            busy = _batch_workers() if written else []
            if busy:
                os.kill(busy[0], signal.SIGKILL)  # a worker this test's instance started
                killed.append(busy[0])
            time.sleep(0.05)

    watcher = threading.Thread(target=kill_one, daemon=True)
    watcher.start()
    try:
        assert _run(fake, tmp_path, "ray", "--executor", "ray") == 0
    finally:
        done.set()
        watcher.join()
    assert killed, "no worker was running a batch after the first lines were written"
    results = load_results(tmp_path / "ray")
    assert len(results) == TRIALS == len({r.key for r in results})  # each exactly once
    assert _comparable(results, "ray") == local_run


@pytest.mark.usefixtures("cluster")
def test_resume_on_ray_runs_only_what_is_missing(
    tmp_path: Path, fake: FakeServer, local_run: dict[Any, Any]
) -> None:
    """The driver keeps resume: a run cut short (its last lines lost) is completed on
    Ray, each trial once, and the trials it had are not sent again."""
    assert _run(fake, tmp_path, "ray") == 0  # the local executor
    lines = results_path(tmp_path / "ray")
    kept = lines.read_bytes().splitlines(keepends=True)[:60]
    lines.write_bytes(b"".join(kept))
    before = len(fake.received)
    assert _run(fake, tmp_path, "ray", "--resume", "--executor", "ray") == 0
    results = load_results(tmp_path / "ray")
    assert len(results) == TRIALS == len({r.key for r in results})
    assert _comparable(results, "ray") == local_run
    assert len(fake.received) == before  # the missing trials replayed their cassettes


@pytest.mark.usefixtures("cluster")
def test_budget_is_kept_by_the_driver(
    tmp_path: Path, fake: FakeServer, capsys: pytest.CaptureFixture[str]
) -> None:
    """No batch is sent once the budget is used up; what was not sent is left for
    --resume, and said."""
    _run(fake, tmp_path, "ray", "--executor", "ray", "--budget", "0.001")
    assert load_results(tmp_path / "ray") == []
    assert (
        f"warning: --budget of 0.001s used up: {TRIALS} trial(s) not run; complete them"
        f" with --resume --out {tmp_path / 'ray'}"
    ) in capsys.readouterr().err
