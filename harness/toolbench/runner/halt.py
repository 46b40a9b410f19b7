"""A run stops when what it writes can no longer be kept.

A full disk, a cassette folder turned read-only, a ``results.jsonl`` deleted under the
run: every trial after that would call the model for a result or a recording nothing
keeps (a run once went on for 70 trials, each failing ``harness.cassette_write``). So
the first such fault stops the run: no trial starts after it, the trials in flight are
cancelled (their model calls stop; their lines are not written, and ``--resume`` runs
them again, replaying what their cassettes kept), and the run ends with one line naming
the cause (:class:`~toolbench.errors.StorageError`, exit 4).
"""

from __future__ import annotations

import asyncio

from toolbench import codes
from toolbench.errors import StorageError
from toolbench.results import TrialResult


class Halt:
    """The run's stop: the first storage fault, and the trials to cancel on it."""

    def __init__(self) -> None:
        self.fault: StorageError | None = None
        self.tasks: list[asyncio.Task[None]] = []
        self.cancelled = 0
        """Trials in flight that the stop cancelled (not written: ``--resume`` runs them)."""

    @property
    def stopped(self) -> bool:
        return self.fault is not None

    def stop(self, fault: StorageError) -> None:
        """Stop on ``fault`` (the first one is the cause): cancel every other trial."""
        if self.fault is not None:
            return
        self.fault = fault
        me = asyncio.current_task()
        for task in self.tasks:
            if task is not me and not task.done() and task.cancel():
                self.cancelled += 1

    def check(self, result: TrialResult) -> None:
        """Stop when ``result`` says its cassette could not be written: the cassette
        folder is full or read-only, and the next trial's would be too."""
        if result.error_code == codes.HARNESS_CASSETTE_WRITE:
            why = (result.infra_error or "a cassette could not be written").removeprefix(
                "CassetteWriteError: "
            )
            self.stop(StorageError(why))


def not_kept(result: TrialResult) -> bool:
    """Whether ``result`` is of a trial whose recording was not kept (its cassette
    could not be written): ``--resume`` runs it again rather than counting it done."""
    return result.error_code == codes.HARNESS_CASSETTE_WRITE
