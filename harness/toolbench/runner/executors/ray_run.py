"""The ``ray`` executor: a run's trials sent to a Ray cluster as tasks, batch by batch,
while this process (the driver) keeps the run.

What stays with the driver: the run's lock, ``run.json``, resume (the plan's trials are
those not yet finished), the ``--budget`` (no batch is sent after it is used up) and the
one results writer: every line of ``results.jsonl`` is written here, as each batch's
results arrive, so a run killed at any moment keeps every trial it was told of.

What a task does: :func:`drive_batch` carries out a plan of its batch's trials through
the same scheduler as the local executor (:func:`toolbench.runner.schedule.run_schedule`,
the one place a trial's replay policy, concurrency and scoring are decided) and returns
their results. Trials are batched (one model's trials per batch) so Ray's per-task cost
is paid once per batch, not per trial.

Cassettes are read and written by the workers, at their paths: the cassette directory
must be on a filesystem every node shares (on a local instance it is this machine's).
A relative ``--cassettes`` is taken from the driver's working directory, which each task
enters when its node has it.

A worker killed mid-run loses nothing: Ray runs its task again on another worker
(``max_retries``), and the batch's results arrive once, when its task completes; the
driver still writes a trial at most once (by its key). A batch whose task fails for good
is written as ``harness_error`` lines, the run goes on.
"""

from __future__ import annotations

import dataclasses
import math
import os
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

from toolbench import codes
from toolbench.errors import StorageError
from toolbench.providers.rate_limits import install, read_rate_limits
from toolbench.redaction import register_url_secrets
from toolbench.results import TrialResult
from toolbench.runner.compact import compact
from toolbench.runner.drive import harness_result
from toolbench.runner.executors import Executor
from toolbench.runner.executors.ray_cluster import check_ray, connect, import_ray, placement
from toolbench.runner.model_params import CONFIG_FILE
from toolbench.runner.plan import Plan, PlannedTrial
from toolbench.runner.schedule import ProgressHook, run_schedule
from toolbench.store import ResultsAppender, results_path

MAX_BATCH = 64
"""Most trials in one task: a killed worker's batch runs again whole."""
BATCHES_PER_CPU = 4
"""Batches per cluster CPU a plan is cut into (when that leaves them under MAX_BATCH):
enough to keep every CPU busy to the end of the run."""
IN_FLIGHT_PER_CPU = 2
"""Tasks sent ahead per cluster CPU; the rest wait on the driver (for the budget)."""
MAX_RETRIES = 3
"""Times Ray runs a task again after its worker died."""


def drive_batch(shell: Plan, trials: list[PlannedTrial], cwd: str) -> list[TrialResult]:
    """On a worker: ``trials`` of the run ``shell`` describes, carried out, their results.

    The one adapter between Ray and the scheduler: the plan's results file goes to a
    scratch directory (the driver writes the run's), the process state a run sets up in
    the driver is set up here (secrets of the api base to redact, rate limits)."""
    if os.path.isdir(cwd):
        os.chdir(cwd)
    opts = shell.options
    register_url_secrets(opts.api_base)
    for url in shell.matrix.api_bases.values():
        register_url_secrets(url)
    install(read_rate_limits(CONFIG_FILE), live=opts.record != "none")
    out: list[TrialResult] = []
    with tempfile.TemporaryDirectory(prefix="toolbench-ray-") as scratch:
        plan = dataclasses.replace(shell, run_dir=Path(scratch) / shell.run_id, trials=trials)
        plan.run_dir.mkdir()
        run_schedule(plan, out.append)
    return out


def batches(trials: list[PlannedTrial], cpus: int) -> Iterator[list[PlannedTrial]]:
    """The plan cut into batches of one model's trials each."""
    size = max(1, min(MAX_BATCH, math.ceil(len(trials) / max(1, cpus * BATCHES_PER_CPU))))
    by_model: dict[str, list[PlannedTrial]] = {}
    for t in trials:
        by_model.setdefault(t.spec.model, []).append(t)
    for group in by_model.values():
        for i in range(0, len(group), size):
            yield group[i : i + size]


def run_on_ray(plan: Plan, on_result: ProgressHook) -> int:
    """Drive ``plan`` on Ray; returns how many trials the budget left unstarted. Raises
    the run's first storage fault (after cancelling the tasks in flight)."""
    ray = import_ray()
    started = connect(ray, plan.trials)
    try:
        return _Driver(ray, plan, on_result).run()
    finally:
        if started:
            ray.shutdown()


class _Driver:
    def __init__(self, ray: ModuleType, plan: Plan, on_result: ProgressHook) -> None:
        self.ray, self.plan, self.on_result = ray, plan, on_result
        budget = plan.options.budget_s
        self.deadline = None if budget is None else time.monotonic() + budget
        self.written: set[tuple[str, str, str, int]] = set()

    def run(self) -> int:
        ray, plan = self.ray, self.plan
        cpus = max(1, int(ray.cluster_resources().get("CPU", 1)))
        shell = dataclasses.replace(
            plan, trials=[], lock=None, redo=set(),
            options=dataclasses.replace(plan.options, budget_s=None),  # the driver's
        )  # fmt: skip
        shell_ref = ray.put(shell)
        task = ray.remote(max_retries=MAX_RETRIES)(drive_batch)
        queue = list(batches(plan.trials, cpus))
        queue.reverse()
        pending: dict[Any, list[PlannedTrial]] = {}
        not_run = 0
        with ResultsAppender(results_path(plan.run_dir)) as out:
            try:
                while queue or pending:
                    if self.deadline is not None and time.monotonic() >= self.deadline:
                        not_run += sum(len(b) for b in queue)
                        queue.clear()
                    while queue and len(pending) < cpus * IN_FLIGHT_PER_CPU:
                        batch = queue.pop()
                        ref = task.options(**placement(batch)).remote(shell_ref, batch, os.getcwd())
                        pending[ref] = batch
                    if not pending:
                        break
                    (ref,), _ = ray.wait(list(pending), num_returns=1)
                    self._write(out, pending.pop(ref), ref)
            except BaseException:
                for ref in pending:
                    ray.cancel(ref, force=True)
                raise
        return not_run

    def _write(self, out: ResultsAppender, batch: list[PlannedTrial], ref: Any) -> None:
        try:
            results: list[TrialResult] = self.ray.get(ref)
        except self.ray.exceptions.RayError as exc:  # the task failed for good
            results = [harness_result(t.spec, exc) for t in batch]
        for result in results:
            if result.key in self.written:
                continue  # a retried task's trial already written
            self.written.add(result.key)
            out.append(compact(result))  # a storage fault stops the run here
            self.on_result(result)
            if result.error_code == codes.HARNESS_CASSETTE_WRITE:
                why = result.infra_error or "a cassette could not be written"
                raise StorageError(why.removeprefix("CassetteWriteError: "))


RAY = Executor(
    "ray", "a Ray cluster (--address, or one started here): batches of trials as tasks",
    check_ray, run_on_ray,
)  # fmt: skip
