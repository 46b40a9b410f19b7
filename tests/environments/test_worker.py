"""The worker thread that runs a trial's tool calls."""

from __future__ import annotations

import gc
import threading
import time

from toolbench.environments.worker import Worker


def _workers() -> int:
    return sum(1 for t in threading.enumerate() if t.name == "toolbench-tools")


def _settle(expected: int) -> int:
    for _ in range(100):
        if _workers() <= expected:
            break
        time.sleep(0.01)
    return _workers()


def test_jobs_run_in_order_on_one_thread() -> None:
    w = Worker()
    seen: list[str] = []
    for i in range(3):
        job = w.run(lambda i=i: seen.append(threading.current_thread().name) or i, 1.0)
        assert job is not None and job.value == i and job.error is None
    assert seen == ["toolbench-tools"] * 3
    w.close()


def test_an_exception_is_the_jobs_and_a_hang_is_bounded() -> None:
    w = Worker()
    job = w.run(lambda: 1 / 0, 1.0)
    assert job is not None and isinstance(job.error, ZeroDivisionError)
    release = threading.Event()
    assert w.run(lambda: release.wait(5), 0.05) is None  # did not finish in time
    release.set()
    w.close()


def test_the_thread_ends_when_closed_or_collected() -> None:
    before = _settle(0)
    w = Worker()
    w.run(lambda: None, 1.0)
    assert _workers() == before + 1
    w.close()
    assert _settle(before) == before
    w2 = Worker()
    w2.run(lambda: None, 1.0)
    del w2
    gc.collect()
    assert _settle(before) == before
