"""Executors registered by name: what carries out a run's plan (``toolbench run --executor``).

An executor takes a checked :class:`~toolbench.runner.plan.Plan` and drives every trial
in it, handing each finished trial to the progress hook after writing its line. The
``local`` one is the asyncio scheduler of this process (:mod:`toolbench.runner.schedule`);
``ray`` (:mod:`.ray_run`) sends batches of trials to a Ray cluster as tasks while this
process keeps the one results writer, the lock, resume and the cassettes. They come in through the
entry-point group ``toolbench.executors`` (:mod:`toolbench.registry`), so a new one is a
module and an entry point, not a branch in :mod:`toolbench.runner.run`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from toolbench.errors import UserError
from toolbench.registry import Registry, instances_of
from toolbench.runner.options import RunOptions
from toolbench.runner.plan import Plan
from toolbench.runner.schedule import ProgressHook

ENTRY_POINT_GROUP = "toolbench.executors"


@dataclass(frozen=True)
class Executor:
    """One way to carry out a plan. ``check`` refuses options it cannot serve (one
    line, exit 2) before any trial or model call; ``run`` drives the plan's trials and
    returns how many the ``--budget`` left unstarted."""

    name: str
    description: str
    check: Callable[[RunOptions], None]
    run: Callable[[Plan, ProgressHook], int]


EXECUTORS: Registry[Executor] = Registry(
    ENTRY_POINT_GROUP, instances_of(Executor), "executor", lambda e: e.name
)
"""Every executor by name, toolbench's own first."""


def executor_for(opts: RunOptions) -> Executor:
    """The executor ``--executor`` names, checked against the options (``--address``
    only with an executor that takes it)."""
    found = EXECUTORS.find_item(opts.executor)
    if found is None:
        names = ", ".join(EXECUTORS.names())
        raise UserError(f"--executor: must be one of {names} (got '{opts.executor}')")
    found.check(opts)
    return found
