"""The ``local`` executor: the plan's trials on this process's event loop
(:func:`toolbench.runner.schedule.run_schedule`), the default."""

from __future__ import annotations

from toolbench.errors import UserError
from toolbench.runner.executors import Executor
from toolbench.runner.options import RunOptions
from toolbench.runner.schedule import run_schedule


def _check(opts: RunOptions) -> None:
    if opts.address is not None:
        raise UserError("--address: only with --executor ray (the local executor has no cluster)")


LOCAL = Executor("local", "this process: asyncio, --concurrency per model", _check, run_schedule)
