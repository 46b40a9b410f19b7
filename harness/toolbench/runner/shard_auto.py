"""``--shard auto``: the part and count from the environment of the job that runs it.

A cluster that starts N copies of one job already numbers them; writing ``--shard K/N``
by hand into each copy is the step that goes wrong (an off-by-one between a 0-based
index and toolbench's 1-based K, an N that drifted from the job's count). ``auto`` reads
the scheduler's own variables, in this order:

1. ``TOOLBENCH_SHARD_INDEX`` (1-based, as K in ``--shard K/N``) and
   ``TOOLBENCH_SHARD_COUNT``: what a GitHub Actions matrix (or anything else) passes,
   e.g. ``${{ matrix.shard }}`` and ``${{ strategy.job-total }}``. Given, they win: they
   are the user's own statement.
2. Kubernetes Indexed Jobs: ``JOB_COMPLETION_INDEX`` (0-based). Kubernetes does not
   export the Job's ``completions``, so the Job sets ``TOOLBENCH_SHARD_COUNT`` to it.
3. Slurm job arrays: ``SLURM_ARRAY_TASK_ID`` with ``SLURM_ARRAY_TASK_MIN``, ``_MAX``,
   ``_STEP`` and ``_COUNT``. An array need not start at 0 or 1 and may step
   (``--array=10-40:10`` is four tasks); the part is the task's position in it. An
   array given as a list (``--array=1,5,6``) has no position to derive and is refused.

Every problem (nothing found, two schedulers at once, an index out of range or
inconsistent with the count) is one line naming ``--shard`` and what was found, raised
as a :class:`~toolbench.errors.UserError` before the run is planned, so before any call.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping

from toolbench.errors import UserError
from toolbench.results import Shard
from toolbench.store.shards import parse_shard

__all__ = ["AUTO", "COUNT_ENV", "INDEX_ENV", "shard_from_env", "shard_option"]

AUTO = "auto"
OPTION = "--shard auto"
INDEX_ENV = "TOOLBENCH_SHARD_INDEX"
COUNT_ENV = "TOOLBENCH_SHARD_COUNT"
K8S_INDEX = "JOB_COMPLETION_INDEX"
SLURM_ID = "SLURM_ARRAY_TASK_ID"

Env = Mapping[str, str]


def shard_option(text: str, env: Env | None = None) -> Shard:
    """The shard ``--shard`` names: ``auto`` from ``env`` (the process's by default),
    else ``K/N`` as written."""
    if text == AUTO:
        return shard_from_env(os.environ if env is None else env)
    return parse_shard(text)


def _int(env: Env, name: str) -> int | None:
    """The whole number ``env`` holds under ``name`` (None: absent or empty)."""
    raw = env.get(name, "").strip()
    if not raw:
        return None
    try:
        return int(raw)
    except ValueError:
        raise UserError(f"{OPTION}: {name}='{raw}' is not a whole number") from None


def _checked(index: int, count: int, found: str) -> Shard:
    """Part ``index`` (1-based) of ``count``, or one line saying what is inconsistent."""
    if count < 1:
        raise UserError(f"{OPTION}: {found}: the count must be at least 1")
    if not 1 <= index <= count:
        raise UserError(f"{OPTION}: {found}: part {index} is outside 1..{count}")
    return Shard(index=index, count=count)


def _explicit(env: Env) -> Shard | None:
    index = _int(env, INDEX_ENV)
    if index is None:
        return None
    count = _int(env, COUNT_ENV)
    if count is None:
        raise UserError(f"{OPTION}: {INDEX_ENV}={index} is set but {COUNT_ENV} is not")
    return _checked(index, count, f"{INDEX_ENV}={index} {COUNT_ENV}={count}")


def _kubernetes(env: Env) -> Shard | None:
    index = _int(env, K8S_INDEX)
    if index is None:
        return None
    count = _int(env, COUNT_ENV)
    if count is None:
        raise UserError(
            f"{OPTION}: Kubernetes {K8S_INDEX}={index} is set but {COUNT_ENV} is not "
            "(set it in the Job's env to spec.completions)"
        )
    found = f"Kubernetes {K8S_INDEX}={index} (0-based) {COUNT_ENV}={count}"
    return _checked(index + 1, count, found)


def _slurm(env: Env) -> Shard | None:
    task = _int(env, SLURM_ID)
    if task is None:
        return None
    low, high = _int(env, "SLURM_ARRAY_TASK_MIN"), _int(env, "SLURM_ARRAY_TASK_MAX")
    step = _int(env, "SLURM_ARRAY_TASK_STEP") or 1
    count = _int(env, "SLURM_ARRAY_TASK_COUNT")
    found = (
        f"Slurm {SLURM_ID}={task} MIN={low} MAX={high} STEP={step}"
        + (f" COUNT={count}" if count is not None else "")
    )  # fmt: skip
    if low is None or high is None:
        raise UserError(f"{OPTION}: {found}: SLURM_ARRAY_TASK_MIN and _MAX must be set")
    if step < 1 or high < low or (high - low) % step:
        raise UserError(f"{OPTION}: {found}: not an array A-B:S")
    tasks = (high - low) // step + 1
    if count is not None and count != tasks:
        raise UserError(
            f"{OPTION}: {found}: {count} tasks are not the {tasks} of {low}-{high}:{step} "
            "(an array given as a list has no index to derive: write --array=A-B[:S])"
        )
    if task < low or task > high or (task - low) % step:
        raise UserError(f"{OPTION}: {found}: task {task} is not one of {low}-{high}:{step}")
    return _checked((task - low) // step + 1, tasks, found)


SCHEDULERS: tuple[tuple[str, Callable[[Env], Shard | None]], ...] = (
    ("Kubernetes", _kubernetes),
    ("Slurm", _slurm),
)
"""The schedulers read when no explicit index is given; two found at once is refused."""


def shard_from_env(env: Env) -> Shard:
    """The shard the environment names (see the module's docstring for the order)."""
    explicit = _explicit(env)
    if explicit is not None:
        return explicit
    found = [(name, shard) for name, read in SCHEDULERS if (shard := read(env)) is not None]
    if len(found) > 1:
        names = " and ".join(f"{name} ({shard.label})" for name, shard in found)
        raise UserError(f"{OPTION}: found {names}; set {INDEX_ENV} and {COUNT_ENV} to say which")
    if not found:
        raise UserError(
            f"{OPTION}: no shard index in the environment (looked for {INDEX_ENV} and "
            f"{COUNT_ENV}, Kubernetes {K8S_INDEX}, Slurm {SLURM_ID})"
        )
    return found[0][1]
