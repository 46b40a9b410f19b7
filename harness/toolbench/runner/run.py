"""``toolbench run``: the model x format x scenario x sample matrix, planned, then scheduled.

:func:`plan_run` checks everything the user typed (:mod:`.options`), takes the matrix
from the options or, to resume, from the run's ``run.json`` (:mod:`.resume`,
:mod:`.matrix`), and plans the trials (:mod:`.plan`) before the first model call.
:func:`execute_run` writes ``run.json`` and hands the plan to the scheduler
(:mod:`.schedule`). Each finished trial is appended to ``runs/<id>/results.jsonl`` at
once (flushed), so a run killed at any moment loses no finished trial, and ``resume``
completes it without repeating or duplicating trials. One process writes a run
directory at a time (:mod:`.lock`): the lock is taken before the finished trials are
read, and held until the run ends.

``--shard K/N`` runs only the trials whose key hashes into part K of N
(:mod:`toolbench.store.shards`: a stable hash of the key, not the order of the matrix);
``run.json`` records the shard and how many trials it holds, so ``merge`` can refuse a
partial one and ``--resume`` completes the same part.

``--budget SECONDS`` bounds a run's wall time: once it is used up no further trial is
started; trials in flight finish (each request is bounded by ``--timeout``). Trials not
started are not written: ``--resume`` completes them later.
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from toolbench.environments.mcp_pool import close_pools
from toolbench.errors import StorageError, UserError
from toolbench.providers.rate_limits import install, read_rate_limits
from toolbench.redaction import register_url_secrets
from toolbench.runner.batch.batch_options import check_batch
from toolbench.runner.batch.phase import Say, run_batch
from toolbench.runner.executors import EXECUTORS, executor_for
from toolbench.runner.lock import RunLock
from toolbench.runner.matrix import matrix_of
from toolbench.runner.model_params import CONFIG_FILE
from toolbench.runner.options import RunOptions, check_options
from toolbench.runner.plan import Plan, build_plan, check_ready, run_info
from toolbench.runner.resume import resume
from toolbench.runner.schedule import ProgressHook as ProgressHook
from toolbench.store import drop_torn_tail, drop_trials, results_path, write_info


@dataclass(frozen=True)
class Finished:
    """What a run's execution leaves for the command to report."""

    run_dir: Path
    not_run: int
    """Trials not started because the ``--budget`` was used up (left for ``--resume``)."""
    written_from: int
    """Where this run's own lines begin in results.jsonl (bytes): what a resumed run
    found before it is read back checked, what it wrote is not."""


def plan_run(opts: RunOptions) -> Plan:
    """Check the options and plan the trials (no model call happens here).

    Takes the run directory's lock (refused, exit 2, while another process holds it)
    before reading which trials are done; :func:`execute_run` releases it.
    """
    # A user:pw@ or ?token= in the api base never reaches disk, whoever calls this.
    register_url_secrets(opts.api_base)
    recorded = None
    if opts.resume and opts.out is not None and opts.out.is_dir():
        opts, recorded = resume(opts)  # the run's matrix and settings, from its run.json
        register_url_secrets(opts.api_base)
    check_options(opts)
    executor_for(opts)  # --executor, --address: refused (exit 2) before any call
    install(read_rate_limits(CONFIG_FILE), live=opts.record != "none")  # bad: exit 2
    matrix = matrix_of(opts, recorded)
    if opts.batch:
        check_batch(opts, matrix)
    if opts.out is not None:
        run_dir = opts.out
    else:
        run_dir = opts.runs_dir / datetime.now(UTC).strftime("%Y%m%d-%H%M%S")
    if results_path(run_dir).exists() and not opts.resume:
        raise UserError(f"--out: {run_dir} already holds a run; pass --resume to complete it")
    created = not run_dir.exists()
    try:
        run_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UserError(f"--out: cannot create {run_dir}: {exc.strerror or exc}") from None
    lock = RunLock(run_dir)
    lock.acquire()
    try:
        plan = build_plan(opts, matrix, run_dir)
        check_ready(plan)
    except BaseException:
        lock.release()
        if created:  # refused before any trial: leave no empty run directory behind
            _remove_empty_run_dir(run_dir)
        raise
    plan.lock = lock
    return plan


def _remove_empty_run_dir(run_dir: Path) -> None:
    """Remove a run directory this plan created, if it holds nothing but its lock file."""
    with contextlib.suppress(OSError):
        if all(p.name == ".lock" for p in run_dir.iterdir()):
            for p in run_dir.iterdir():
                p.unlink()
            run_dir.rmdir()


def execute_run(plan: Plan, on_result: ProgressHook, say: Say | None = None) -> Finished:
    """Run every planned trial (``--batch``: its single-turn ones answered by provider
    batches first, :mod:`.batch`; ``say`` prints the batches' progress lines). Releases
    the run's lock."""
    run_dir = plan.run_dir
    lock = plan.lock or RunLock(run_dir)
    try:
        if plan.lock is None:
            run_dir.mkdir(parents=True, exist_ok=True)
            lock.acquire()
        info_path = run_dir / "run.json"
        try:  # before any trial: a disk that cannot take them is the --out's fault
            if not (plan.options.resume and info_path.exists()):
                write_info(run_dir, run_info(plan))
            drop_torn_tail(results_path(run_dir))
            drop_trials(results_path(run_dir), plan.redo)
            results_path(run_dir).touch()
        except OSError as exc:
            raise UserError(f"--out: cannot write {run_dir}: {exc.strerror or exc}") from None
        written_from = results_path(run_dir).stat().st_size
        os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
        try:
            if plan.options.batch:
                plan = run_batch(plan, on_result, say)
            not_run = EXECUTORS.get(plan.options.executor).run(plan, on_result)
        except StorageError as exc:
            raise StorageError(
                f"{exc}; the run stopped (no trial started after it); once it can be"
                f" written, complete it with: toolbench run --resume --out {run_dir}"
            ) from None
    finally:
        close_pools()  # no pooled MCP server outlives its run, however it ended
        lock.release()
    return Finished(run_dir, not_run, written_from)
