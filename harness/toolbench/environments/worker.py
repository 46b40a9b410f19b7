"""One daemon thread per trial that runs its tool calls, each bounded in time.

A tool may never return, and Python cannot stop a thread, so a call runs on a thread of
its own while the caller waits at most its bound. Starting a thread for every call cost
more than the calls themselves; one worker per trial, handed each call through a queue,
keeps the bound at a fraction of that. The worker is a daemon (a tool that never returns
cannot hold the process open) and stops when its owner is collected or closes it.
"""

from __future__ import annotations

import queue
import threading
import weakref
from collections.abc import Callable
from typing import Any


class Job:
    """One call handed to the worker, and what it left: its value or its exception."""

    __slots__ = ("done", "error", "fn", "value")

    def __init__(self, fn: Callable[[], Any]) -> None:
        self.fn = fn
        self.done = threading.Event()
        self.value: Any = None
        self.error: BaseException | None = None


def _serve(jobs: queue.SimpleQueue[Job | None]) -> None:
    while True:
        job = jobs.get()
        if job is None:
            return
        try:
            job.value = job.fn()
        except BaseException as exc:  # a tool's failure is its result, whatever it is
            job.error = exc
        job.done.set()


class Worker:
    """Runs jobs one at a time on its own daemon thread, started at the first job."""

    def __init__(self) -> None:
        self._jobs: queue.SimpleQueue[Job | None] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._closer = weakref.finalize(self, self._jobs.put, None)

    def run(self, fn: Callable[[], Any], timeout_s: float) -> Job | None:
        """Run ``fn``; the finished job, or None when it did not finish in ``timeout_s``
        (it goes on running: the worker is then busy for good)."""
        if self._thread is None:
            self._thread = threading.Thread(
                target=_serve, args=(self._jobs,), name="toolbench-tools", daemon=True
            )
            self._thread.start()
        job = Job(fn)
        self._jobs.put(job)
        return job if job.done.wait(timeout_s) else None

    def close(self) -> None:
        """Let the thread end once it is idle (it ends by itself when collected)."""
        self._closer()
