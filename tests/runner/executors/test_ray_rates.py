"""``[rate_limits]`` under ``--executor ray``: the two workers of a local Ray instance
count against one window and obey one pause, held by the cluster's actor (the SQLite
file of this machine is never written by them). The window is made a second (the
driver's, given to the workers), so a minute's rule is checked in seconds.

The matrix is cut into batches, two running at once (one per worker), each at its own
``--concurrency``: without a shared store each worker would keep its own window and the
server would see twice the limit."""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.providers.test_rate_limits import SUITE, Timed, most_in_any_window
from tests.runner.conftest import run_fake
from toolbench.providers import rate_limits
from toolbench.providers.fake import Fault, Hang, Reply
from toolbench.providers.rate_limits import RateLimits
from toolbench.providers.rate_store import SqliteRateStore

pytest.importorskip("ray", reason="the ray extra is not installed (pip install -e '.[ray]')")

SAMPLES = 2  # eight scenarios: 16 trials, eight batches of two


@pytest.fixture
def work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.chdir(tmp_path)  # the driver reads toolbench.toml here
    monkeypatch.setattr(rate_limits, "WINDOW_S", 1.0)
    (tmp_path / "scen").mkdir()
    (tmp_path / "scen" / "eight.yaml").write_text(SUITE, encoding="utf-8")
    yield tmp_path
    rate_limits.install(RateLimits())


def _config(work: Path, table: str) -> None:
    text = (f'[rate_limits]\nstate_file = "{work / "rates.sqlite"}"\n\n'
            f"[rate_limits.openai]\n{table}\n")  # fmt: skip
    (work / "toolbench.toml").write_text(text, encoding="utf-8")


def _run(fake: Timed, work: Path, concurrency: int) -> int:
    return run_fake(fake, work, work / "scen" / "eight.yaml", "--executor", "ray",
                    "--samples", str(SAMPLES), "--concurrency", str(concurrency))  # fmt: skip


def _rows_in_the_file(work: Path) -> int:
    """Requests and pauses the machine's SQLite store holds (the driver opened it when
    it read the limits; nothing should have counted there)."""
    with sqlite3.connect(work / "rates.sqlite") as db:
        sent = db.execute("SELECT count(*) FROM sent").fetchone()[0]
        paused = db.execute("SELECT count(*) FROM paused").fetchone()[0]
    return int(sent) + int(paused)


@pytest.mark.usefixtures("cluster")
def test_two_workers_together_keep_one_rpm(work: Path) -> None:
    _config(work, "rpm = 3")
    with Timed() as fake:
        assert _run(fake, work, concurrency=4) == 0
    assert len(fake.arrived) == 8 * SAMPLES
    assert most_in_any_window(fake.arrived, 1.0) <= 3
    assert _rows_in_the_file(work) == 0
    # The driver's own limiter is its machine's again once the run is over.
    assert isinstance(rate_limits.installed().store, SqliteRateStore)


@pytest.mark.usefixtures("cluster")
def test_a_429_seen_by_one_worker_pauses_the_other(work: Path) -> None:
    _config(work, "")  # no rpm or tpm: the table alone shares the provider's pauses
    lock = threading.Lock()
    first: list[float] = []
    seen = [0]

    def respond(body: dict[str, Any]) -> Reply:
        with lock:
            seen[0] += 1
            if seen[0] == 5:  # both workers sending by then, most trials still to run
                first.append(time.time())
                return Fault(429, headers={"retry-after": "1.5"})
        return Hang(0.2, "Hello.")

    with Timed(respond) as fake:
        assert _run(fake, work, concurrency=1) == 0
    assert first, "the run ended before the 429 was sent"
    assert len(fake.arrived) == 8 * SAMPLES + 1  # one trial asked again
    t429 = first[0]
    # Each worker has one request in flight at a time: the other's, sent before it heard
    # of the pause, arrives within a reply's time of the 429; none after that until the
    # pause is over.
    held = [t for t in fake.arrived if t429 + 0.3 < t < t429 + 1.45]
    assert held == [], "a request was sent while the provider was paused"
    assert [t for t in fake.arrived if t >= t429 + 1.45], "the run went on after the pause"
    assert _rows_in_the_file(work) == 0
