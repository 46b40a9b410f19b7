"""What a Ray task does with a batch: set the worker up as the driver is, run the batch's
trials against a scratch cassette directory, and hand back their results and the
cassettes they wrote.

The worker owns no file of the run. The driver sends, with the batch, the bytes of each
trial's cassette it holds (:class:`Batch`); the worker lays them out in a scratch
directory, points each trial's cassette there, and runs the trials through the same
scheduler as the local executor (:func:`toolbench.runner.schedule.run_schedule`: the
one place a trial's replay policy, concurrency and scoring are decided). What a trial
recorded comes back as the bytes the cassette layer wrote (:class:`BatchDone`), for
the driver to write at the trial's own path; so a node needs neither the driver's
working directory nor a shared filesystem. A path the trial names in its result (its
cassette, a missing cassette's message) is the driver's, never the scratch one.

The process state a run sets up in the driver is set up here from :class:`WorkerSetup`:
the secrets of the api bases (redacted), the rate limits (the cluster's actor,
:mod:`.ray_rates`), the environments ``toolbench.toml`` and ``--mcp`` configured, and the
MCP servers whose ``tools/list`` failed on the driver (their trials fail with the same
typed fault as in a local run: :data:`toolbench.environments.mcp_listing.FAILED`).
"""

from __future__ import annotations

import dataclasses
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from toolbench.environments.env_faults import EnvironmentFault
from toolbench.environments.env_registry import register_environment
from toolbench.environments.environment import EnvironmentKind
from toolbench.environments.mcp_listing import FAILED
from toolbench.providers.rate_limits import RateLimits, install
from toolbench.redaction import register_url_secrets
from toolbench.results import TrialResult
from toolbench.runner.executors.ray_cluster import import_ray
from toolbench.runner.executors.ray_rates import SharedRates
from toolbench.runner.plan import Plan, PlannedTrial, TrialKey
from toolbench.runner.schedule import run_schedule

ListingFault = tuple[type[EnvironmentFault], str, str]
"""A server's failed ``tools/list``: the fault's class, message and code (an exception
with a code of its own does not survive pickling as it is)."""


@dataclass(frozen=True)
class WorkerSetup:
    """What every task of a run needs besides its batch (put in Ray's store once)."""

    shell: Plan
    """The run's plan without trials, lock or budget (those stay with the driver)."""
    rates: SharedRates | None = None
    environments: list[EnvironmentKind] = field(default_factory=list)
    mcp_failed: dict[str, ListingFault] = field(default_factory=dict)

    def apply(self) -> None:
        """Make this worker process's state the driver's for the run."""
        opts = self.shell.options
        register_url_secrets(opts.api_base)
        for url in self.shell.matrix.api_bases.values():
            register_url_secrets(url)
        if self.rates is None:
            install(RateLimits())
        else:
            self.rates.install(import_ray())
        for kind in self.environments:
            register_environment(kind, replace=True)
        FAILED.clear()
        for name, (cls, message, code) in self.mcp_failed.items():
            fault = cls.__new__(cls)
            EnvironmentFault.__init__(fault, message, code)
            FAILED[name] = fault


def listing_faults() -> dict[str, ListingFault]:
    """The driver's failed listings, as :class:`WorkerSetup` carries them."""
    return {name: (type(exc), str(exc), exc.code) for name, exc in FAILED.items()}


@dataclass(frozen=True)
class Batch:
    """A task's trials and, per trial, its cassette's bytes on the driver (None: it has
    none, or the trial records afresh)."""

    trials: list[PlannedTrial]
    cassettes: list[bytes | None]


@dataclass
class BatchDone:
    """A task's answer: the trials' results, the cassettes they wrote (by trial, the
    whole file's bytes) and the unreadable ones the cassette layer moved aside (by trial,
    the name it gave)."""

    results: list[TrialResult]
    written: dict[TrialKey, bytes] = field(default_factory=dict)
    moved_aside: dict[TrialKey, str] = field(default_factory=dict)


def drive_batch(setup: WorkerSetup, batch: Batch) -> BatchDone:
    """On a worker: ``batch`` carried out against a scratch cassette directory."""
    setup.apply()
    out: list[TrialResult] = []
    with tempfile.TemporaryDirectory(prefix="toolbench-ray-") as scratch:
        root = Path(scratch)
        trials, places = _laid_out(batch, root / "cassettes")
        plan = dataclasses.replace(setup.shell, run_dir=root / setup.shell.run_id, trials=trials)
        plan.run_dir.mkdir()
        run_schedule(plan, out.append)
        done = BatchDone([])
        for result in out:
            trial, there, sent = places[result.key]
            done.results.append(_as_on_driver(result, str(there), str(trial.spec.cassette)))
            _collect(done, result.key, there, sent)
    return done


def _laid_out(
    batch: Batch, root: Path
) -> tuple[list[PlannedTrial], dict[TrialKey, tuple[PlannedTrial, Path, bytes | None]]]:
    """The batch's trials with their cassettes in ``root`` (the sent ones written
    there), and per trial: the driver's trial, its scratch path, the bytes sent."""
    trials: list[PlannedTrial] = []
    places: dict[TrialKey, tuple[PlannedTrial, Path, bytes | None]] = {}
    for trial, sent in zip(batch.trials, batch.cassettes, strict=True):
        spec = trial.spec
        home = spec.cassette_dir if spec.cassette_dir is not None else spec.cassette.parent
        there = root / spec.cassette.relative_to(home)
        if sent is not None:
            there.parent.mkdir(parents=True, exist_ok=True)
            there.write_bytes(sent)
        key = (spec.model, spec.fmt.spec, spec.scenario.id, spec.sample)
        places[key] = (trial, there, sent)
        trials.append(dataclasses.replace(trial, spec=dataclasses.replace(spec, cassette=there)))
    return trials, places


def _collect(done: BatchDone, key: TrialKey, there: Path, sent: bytes | None) -> None:
    """What the trial left in its scratch cassette: a file it wrote or changed, and an
    unreadable one moved aside."""
    try:
        now = there.read_bytes()
    except FileNotFoundError:
        now = None
    if now is not None and now != sent:
        done.written[key] = now
    if sent is not None:
        aside = sorted(p.name for p in there.parent.glob(f"{there.name}.unreadable-*"))
        if aside:
            done.moved_aside[key] = aside[-1]


def _as_on_driver(result: TrialResult, scratch: str, real: str) -> TrialResult:
    """``result`` naming the trial's cassette at the driver's path, not the scratch one."""
    result.cassette = real

    def mapped(text: str) -> str:
        return text.replace(scratch, real)

    if result.infra_error is not None:
        result.infra_error = mapped(result.infra_error)
    result.notes = [mapped(n) for n in result.notes]
    for attempt in result.attempts:
        if attempt.error is not None:
            attempt.error = mapped(attempt.error)
    return result
