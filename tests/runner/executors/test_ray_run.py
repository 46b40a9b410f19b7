"""``--executor ray`` on a local Ray instance (two CPUs, this machine) against the fake
server: the same matrix as the local executor gives the same results file up to order
and timing, and with a worker killed mid-run every trial is still written exactly once.

The driver keeps the cassettes: a Ray run writes the local run's cassettes, and replays
with no cassette directory where its workers run. One Ray instance serves the package
(conftest.py).
"""

from __future__ import annotations

import os
import re
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
def fake() -> Iterator[FakeServer]:
    with FakeServer(by_last_user({"Weather in Paris?": GOOD_CALL}), delay_s=0.01) as server:
        yield server


def _run(fake: FakeServer, tmp: Path, name: str, *extra: str, cassettes: str = "") -> int:
    scen = tmp / "mini.yaml"
    scen.write_text(SCENARIO, encoding="utf-8")
    return run_cli([
        "run", "--models", "openai/fake", "--formats", FORMATS, "--scenarios", str(scen),
        "--samples", str(SAMPLES), "--api-base", fake.base_url, "--out", str(tmp / name),
        "--cassettes", cassettes or str(tmp / f"cas-{name}"), "--quiet", "--no-report", *extra,
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
        row["cassette"] = row["cassette"].partition(f"cas-{name}/")[2]
        row["run_id"] = "run"
        out[r.key] = row
    return out


CLOCK = re.compile(rb'"(latency_s|date)": ("[^"]*"|[0-9.e+-]+)')
"""What a recorded exchange holds of the clock (the provider's time, the response's
``Date`` header): it differs between any two live runs."""


def _cassettes(root: Path) -> dict[str, bytes]:
    """Every cassette under ``root`` by its path there, its bytes with the clock's
    values blanked."""
    return {
        str(p.relative_to(root)): CLOCK.sub(rb'"\1": 0', p.read_bytes())
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


@pytest.fixture(scope="module")
def local_tmp(tmp_path_factory: pytest.TempPathFactory, fake: FakeServer) -> Path:
    """The matrix run by the local executor (results in ``local``, cassettes in
    ``cas-local``)."""
    tmp = tmp_path_factory.mktemp("local")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("OPENAI_API_KEY", "test-key-not-secret-0000")
        assert _run(fake, tmp, "local") == 0
    return tmp


@pytest.fixture(scope="module")
def local_run(local_tmp: Path) -> dict[Any, Any]:
    results = load_results(local_tmp / "local")
    assert len(results) == TRIALS
    return _comparable(results, "local")


@pytest.mark.usefixtures("cluster")
def test_ray_results_and_cassettes_equal_local(
    tmp_path: Path, fake: FakeServer, local_tmp: Path, local_run: dict[Any, Any]
) -> None:
    assert _run(fake, tmp_path, "ray", "--executor", "ray") == 0
    results = load_results(tmp_path / "ray")
    assert len(results) == TRIALS == len({r.key for r in results})
    assert _comparable(results, "ray") == local_run
    # The driver wrote the cassettes the workers recorded: the local run's bytes (the
    # clock's values aside), no file more or less, none left half-written.
    written = _cassettes(tmp_path / "cas-ray")
    assert len(written) == TRIALS
    assert written == _cassettes(local_tmp / "cas-local")


def _cwd() -> str:
    """Where a worker runs (a Ray task)."""
    return os.getcwd()


@pytest.mark.usefixtures("cluster")
def test_a_replay_needs_no_cassettes_where_the_workers_run(
    tmp_path: Path, fake: FakeServer, local_run: dict[Any, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A relative --cassettes is the driver's: the workers' working directory (not the
    driver's) holds none, and every trial replays, no request sent."""
    monkeypatch.chdir(tmp_path)
    assert _run(fake, tmp_path, "rec", cassettes="cas-rel") == 0  # the local executor
    before = len(fake.received)
    rc = _run(fake, tmp_path, "rel", "--record", "none", "--executor", "ray", cassettes="cas-rel")
    assert rc == 0
    where = {Path(p) for p in ray.get([ray.remote(_cwd).remote() for _ in range(4)])}
    assert tmp_path not in where, "a worker ran in the driver's working directory"
    assert not any((w / "cas-rel").exists() for w in where)
    results = load_results(tmp_path / "rel")
    assert len(results) == TRIALS == len({r.key for r in results})
    assert _comparable(results, "rel") == local_run
    assert all(r.cassette and r.cassette.startswith("cas-rel/") for r in results)
    assert len(fake.received) == before


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
