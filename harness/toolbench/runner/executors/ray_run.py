"""The ``ray`` executor: a run's trials sent to a Ray cluster as tasks, batch by batch,
while this process (the driver) keeps the run.

What stays with the driver: the run's lock, ``run.json``, resume (the plan's trials are
those not yet finished), the ``--budget`` (no batch is sent after it is used up), the
one results writer (every line of ``results.jsonl`` is written here, as each batch's
results arrive, so a run killed at any moment keeps every trial it was told of) and
the cassettes: the driver sends with each batch the cassettes its trials replay, and
writes those they recorded when the batch comes back (:mod:`.ray_cassettes`), so no
node needs a filesystem the driver shares, nor its working directory. A trial's
cassette is written before its line, as in a local run; a save that fails stops the
run (``harness.cassette_write``, then the storage fault).

What a task does: :func:`~.ray_worker.drive_batch` carries out its batch through the
same scheduler as the local executor against a scratch cassette directory and returns
the results and the cassettes written. Trials are batched (one model's trials per
batch) so Ray's per-task cost is paid once per batch, not per trial. What the driver
set up for the run travels once, in :class:`~.ray_worker.WorkerSetup`: the rate limits,
counted for every worker in one actor of the cluster (:mod:`.ray_rates`), the
configured environments and the MCP servers whose ``tools/list`` failed here.

A worker killed mid-run loses nothing: Ray runs its task again on another worker
(``max_retries``), and the batch's results arrive once, when its task completes; the
driver still writes a trial at most once (by its key). A batch whose task fails for good
is written as ``harness_error`` lines, the run goes on.
"""

from __future__ import annotations

import dataclasses
import math
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

from toolbench import codes
from toolbench.environments.toml_envs import configured
from toolbench.errors import CassetteWriteError, StorageError
from toolbench.providers.rate_limits import installed, reinstall
from toolbench.results import TrialResult
from toolbench.runner.compact import compact
from toolbench.runner.drive import harness_result
from toolbench.runner.executors import Executor
from toolbench.runner.executors.ray_cassettes import HERE, keep, to_send
from toolbench.runner.executors.ray_cluster import check_ray, connect, import_ray, placement
from toolbench.runner.executors.ray_rates import shared_rates
from toolbench.runner.executors.ray_worker import (
    Batch,
    BatchDone,
    WorkerSetup,
    drive_batch,
    listing_faults,
)
from toolbench.runner.plan import Plan, PlannedTrial, TrialKey
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
    limiter = installed()  # moved onto the cluster's actor for the run (ray_rates)
    try:
        return _Driver(ray, plan, on_result).run()
    finally:
        reinstall(limiter)
        if started:
            ray.shutdown()


class _Driver:
    def __init__(self, ray: ModuleType, plan: Plan, on_result: ProgressHook) -> None:
        self.ray, self.plan, self.on_result = ray, plan, on_result
        budget = plan.options.budget_s
        self.deadline = None if budget is None else time.monotonic() + budget
        self.written: set[TrialKey] = set()
        self.here: list[PlannedTrial] = []
        """Trials whose cassette only the driver can read as it is (:data:`HERE`)."""

    def _over(self) -> bool:
        return self.deadline is not None and time.monotonic() >= self.deadline

    def run(self) -> int:
        ray, plan = self.ray, self.plan
        cpus = max(1, int(ray.cluster_resources().get("CPU", 1)))
        shell = dataclasses.replace(
            plan, trials=[], lock=None, redo=set(),
            options=dataclasses.replace(plan.options, budget_s=None),  # the driver's
        )  # fmt: skip
        setup = WorkerSetup(shell, shared_rates(ray, installed()), configured(), listing_faults())
        setup_ref = ray.put(setup)
        task = ray.remote(max_retries=MAX_RETRIES)(drive_batch)
        queue = list(batches(plan.trials, cpus))
        queue.reverse()
        pending: dict[Any, list[PlannedTrial]] = {}
        not_run = 0
        with ResultsAppender(results_path(plan.run_dir)) as out:
            try:
                while queue or pending:
                    if self._over():
                        not_run += sum(len(b) for b in queue)
                        queue.clear()
                    while queue and len(pending) < cpus * IN_FLIGHT_PER_CPU:
                        batch = self._batch(queue.pop())
                        if batch.trials:
                            ref = task.options(**placement(batch.trials)).remote(setup_ref, batch)
                            pending[ref] = batch.trials
                    if not pending:
                        continue
                    (ref,), _ = ray.wait(list(pending), num_returns=1)
                    self._write(out, pending.pop(ref), ref)
            except BaseException:
                for ref in pending:
                    ray.cancel(ref, force=True)
                raise
            not_run += self._run_here(out)
        return not_run

    def _batch(self, trials: list[PlannedTrial]) -> Batch:
        """The batch to send of ``trials``: those the driver must run kept back."""
        batch = Batch([], [])
        for trial in trials:
            sent = to_send(trial)
            if sent is HERE:
                self.here.append(trial)
            else:
                batch.trials.append(trial)
                batch.cassettes.append(sent if isinstance(sent, bytes) else None)
        return batch

    def _run_here(self, out: ResultsAppender) -> int:
        """The trials kept back, run by this process as the local executor would."""
        if not self.here:
            return 0
        if self._over():
            return len(self.here)
        done: list[TrialResult] = []
        with tempfile.TemporaryDirectory(prefix="toolbench-here-") as scratch:
            run_dir = Path(scratch) / self.plan.run_id
            run_dir.mkdir()
            shell = dataclasses.replace(self.plan, run_dir=run_dir, trials=self.here, lock=None)
            run_schedule(shell, done.append)
        for result in done:
            self._append(out, result)
        return 0

    def _write(self, out: ResultsAppender, batch: list[PlannedTrial], ref: Any) -> None:
        try:
            done: BatchDone = self.ray.get(ref)
        except self.ray.exceptions.RayError as exc:  # the task failed for good
            done = BatchDone([harness_result(t.spec, exc) for t in batch])
        by_key = {(t.spec.model, t.spec.fmt.spec, t.spec.scenario.id, t.spec.sample): t
                  for t in batch}  # fmt: skip
        for result in done.results:
            if result.key in self.written:
                continue  # a retried task's trial already written
            trial = by_key[result.key]
            try:
                keep(trial, done.written.get(result.key), done.moved_aside.get(result.key))
            except CassetteWriteError as exc:
                result = harness_result(trial.spec, exc)
                result.error_code = codes.HARNESS_CASSETTE_WRITE
            self._append(out, result)

    def _append(self, out: ResultsAppender, result: TrialResult) -> None:
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
