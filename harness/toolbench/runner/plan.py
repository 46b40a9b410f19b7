"""A run's plan: every trial it will drive, and how each one reaches its model.

The plan is a value: built from the options and the checked matrix, plus what the run
directory already holds (the trials a resumed run finished, its shard and its marker
set). Building it sends nothing and writes nothing, so a plan can be made, looked at
(``bench_shards`` plans one matrix in eight shards) and dropped; the scheduler
(:mod:`.schedule`) carries it out.

Each trial's replay policy is decided here, once, from the record mode and its cassette
on disk: ``replay`` (``--record none``), ``live`` (``--record all``, or no cassette yet),
or ``replay_then_live`` (``--record new`` over a cassette: replayed, and live, recording
what is missing, from the first request the cassette cannot answer). The same decision
says which models the run may call, so their provider kinds are asked to be ready before
the first trial.
"""

from __future__ import annotations

import platform
import re
import sys
from dataclasses import dataclass, field
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Any, Literal

from toolbench import __version__
from toolbench.cassettes import RecordOption, cassette_api_base
from toolbench.errors import UserError
from toolbench.formats.base import Format
from toolbench.providers.kind_registry import api_class, kind_of, kinds
from toolbench.providers.local_models import report_notes
from toolbench.providers.model_api import ProviderSettings
from toolbench.redaction import redact_uri
from toolbench.results import RunInfo, Shard
from toolbench.runner.batch.batch_retry import submit_again
from toolbench.runner.drive import TrialSpec, cassette_path
from toolbench.runner.halt import not_kept
from toolbench.runner.lock import RunLock
from toolbench.runner.matrix import Matrix
from toolbench.runner.model_params import ModelParams
from toolbench.runner.options import RunOptions
from toolbench.runner.records import scenario_files
from toolbench.runner.variants import bare_model
from toolbench.scenarios.model import Scenario
from toolbench.scoring.leakage import (
    builtin_markers,
    compile_markers,
    installed_markers,
    marker_texts,
)
from toolbench.store import iter_results, read_info, results_path
from toolbench.store.shards import shard_of

ReplayPolicy = Literal["replay", "live", "replay_then_live"]
TrialKey = tuple[str, str, str, int]


def replay_policy(record: RecordOption, cassette: Path) -> ReplayPolicy:
    """How a trial of ``record`` mode whose cassette is ``cassette`` reaches its model."""
    if record == "none":
        return "replay"
    if record == "all" or not cassette.is_file():
        return "live"
    return "replay_then_live"


@dataclass(frozen=True)
class PlannedTrial:
    spec: TrialSpec
    policy: ReplayPolicy


@dataclass
class Plan:
    """A checked run: its directory, its matrix, and the trials left to drive."""

    run_dir: Path
    options: RunOptions
    """The options the run executes with (a resumed run's, from its run.json)."""
    matrix: Matrix
    trials: list[PlannedTrial]
    skipped: int
    """Trials of the matrix (in its shard) a resumed run found finished."""
    markers: tuple[re.Pattern[str], ...] = ()
    """The run's leakage marker set: fixed when the run started, recorded in run.json."""
    shard: Shard | None = None
    """The part of the matrix planned (with its trial count), as run.json records it."""
    redo: set[TrialKey] = field(default_factory=set)
    """Trials a resumed run found written but not kept (:func:`.halt.not_kept`): their
    lines are dropped before they run again."""
    lock: RunLock | None = None
    """Held from planning (before the finished trials are read) to the end of the run."""

    @property
    def run_id(self) -> str:
        return self.run_dir.name

    @property
    def specs(self) -> list[TrialSpec]:
        return [t.spec for t in self.trials]

    @property
    def warnings(self) -> list[str]:
        return self.matrix.warnings


def build_plan(opts: RunOptions, matrix: Matrix, run_dir: Path) -> Plan:
    """The trials of ``matrix`` in ``run_dir`` not yet finished there (its shard's only),
    each with its replay policy. Reads the run directory; writes nothing."""
    done: set[TrialKey] = set()
    redo: set[TrialKey] = set()
    shard = opts.shard
    if results_path(run_dir).exists():
        # A run.json of a newer toolbench is refused before any trial.
        shard = _resumed_shard(run_dir, opts.shard, read_info(run_dir))
        for r in iter_results(run_dir):  # a trial whose cassette was not kept runs again
            again = not_kept(r) or (opts.batch and submit_again(r))  # runner/batch/batch_retry
            (redo if again else done).add(r.key)
    markers = planned_markers(run_dir, opts.resume)
    own = matrix.api_bases
    trials: list[PlannedTrial] = []
    skipped = in_shard = 0
    for model in matrix.models:
        for fmt in matrix.by_model.get(model, matrix.formats):
            for sc in matrix.scenarios:
                for k in range(opts.samples):
                    if shard is not None and (
                        shard_of(model, fmt.spec, sc.id, k, shard.count) != shard.index
                    ):
                        continue
                    in_shard += 1
                    if (model, fmt.spec, sc.id, k) in done:
                        skipped += 1
                        continue
                    spec = _spec(opts, run_dir.name, model, fmt, sc, k, markers, own,
                                 matrix.params)  # fmt: skip
                    trials.append(PlannedTrial(spec, replay_policy(opts.record, spec.cassette)))
    if shard is not None:
        shard = shard.model_copy(update={"trials": in_shard})
    redo &= {(t.spec.model, t.spec.fmt.spec, t.spec.scenario.id, t.spec.sample) for t in trials}
    return Plan(run_dir, opts, matrix, trials, skipped, markers, shard, redo)


def _spec(
    opts: RunOptions, run_id: str, model: str, fmt: Format, sc: Scenario, sample: int,
    markers: tuple[re.Pattern[str], ...], own: dict[str, str], params: ModelParams,
) -> TrialSpec:  # fmt: skip
    return TrialSpec(
        run_id=run_id, model=model, fmt=fmt, scenario=sc, sample=sample,
        max_turns=opts.max_turns, retry_on_parse_error=opts.retry_on_parse_error,
        record=opts.record,
        cassette=cassette_path(opts.cassette_dir, model, fmt.spec, sc.id, sample),
        markers=markers, api_base=own.get(model, opts.api_base),
        cassette_dir=opts.cassette_dir, display=opts.display,
        model_params=dict(params.get(model, {})), replay=opts.replay,
    )  # fmt: skip


def check_ready(plan: Plan) -> None:
    """Ask each provider kind whether it can serve the models the plan will call live (a
    server binary, a model file), before any trial: refused, exit 2. A trial replayed
    first asks nothing of its kind unless its cassette cannot answer."""
    live = {bare_model(t.spec.model) for t in plan.trials if t.policy == "live"}
    settings = ProviderSettings(api_base=plan.options.api_base, max_tokens=plan.options.max_tokens)
    for kind in sorted({kind_of(m) for m in live}):
        api_class(kind)(settings).ready(sorted(m for m in live if kind_of(m) == kind))


def _resumed_shard(run_dir: Path, asked: Shard | None, info: RunInfo | None) -> Shard | None:
    """The shard a resumed run completes: its own (``--shard`` may repeat it, not change it)."""
    own = info.shard if info is not None else None
    if asked is None or info is None:
        return own if own is not None else asked
    if own is None or (own.index, own.count) != (asked.index, asked.count):
        held = f"shard {own.label}" if own is not None else "the whole matrix"
        raise UserError(
            f"--shard: {run_dir} holds {held}, not shard {asked.label}; resume it as it was"
        )
    return own


def planned_markers(run_dir: Path, resume: bool) -> tuple[re.Pattern[str], ...]:
    """The marker set of the run: a resumed run keeps the one its run.json recorded
    (whatever was installed since), a new run takes the formats installed now."""
    info = run_dir / "run.json"
    if resume and info.is_file():
        try:
            recorded = RunInfo.model_validate_json(info.read_bytes()).markers
        except ValueError:  # an unreadable run.json: scored as a new run would be
            recorded = None
        if recorded is not None:
            return compile_markers(recorded)
        return builtin_markers()
    return installed_markers()


def run_info(plan: Plan) -> RunInfo:
    """What ``run.json`` records of the plan: all a resume, replay, rescore or merge needs."""
    opts, matrix = plan.options, plan.matrix
    return RunInfo(
        run_id=plan.run_id, toolbench_version=__version__,
        created_at=datetime.now(UTC).isoformat(timespec="seconds"),
        models=matrix.models, formats=[f.spec for f in matrix.formats],
        scenarios=[s.id for s in matrix.scenarios], samples=opts.samples,
        max_turns=opts.max_turns, record=opts.record,
        retry_on_parse_error=opts.retry_on_parse_error,
        markers=marker_texts(plan.markers) if plan.markers else None,
        auto_formats=matrix.auto, shard=plan.shard, display=opts.display, batch=opts.batch,
        cells={m: [f.spec for f in fmts] for m, fmts in matrix.by_model.items()},
        format_options={f.spec: f.options.model_dump() for f in matrix.formats},
        scenario_files=scenario_files(matrix.scenarios),
        scenario_tags={s.id: list(s.tags) for s in matrix.scenarios if s.tags},
        model_notes=report_notes(matrix.models),
        model_params=matrix.params,
        api_base=redact_uri(opts.api_base) if opts.api_base else None,
        cassette_api_base=cassette_api_base(opts.api_base) if opts.api_base else None,
        cassette_dir=str(opts.cassette_dir),
        params={"temperature": 0, "concurrency": opts.concurrency,
                **_kind_params(opts), "timeout_s": opts.timeout_s, "budget_s": opts.budget_s},
        environment={"python": sys.version.split()[0], "platform": platform.platform(),
                     "toolbench": __version__, "litellm": _version("litellm")},
    )  # fmt: skip


def _kind_params(opts: RunOptions) -> dict[str, Any]:
    """What every registered provider kind records of the run (``local_max_tokens``)."""
    settings = ProviderSettings(api_base=opts.api_base, max_tokens=opts.max_tokens)
    out: dict[str, Any] = {}
    for make in kinds().values():
        out.update(make(settings).run_params())
    return out


def _version(package: str) -> str:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return "not installed"
