"""``toolbench run``: the model x format x scenario x sample matrix.

Everything the user typed is validated before the first model call. Each finished
trial is appended to ``runs/<id>/results.jsonl`` at once (flushed), so a run killed at
any moment loses no finished trial, and ``resume`` completes it without repeating or
duplicating trials. Concurrency is asyncio with a per-model limit.

One bad trial never ends a run: :func:`~toolbench.runner.drive.run_trial` turns every
fault into a status, and the gather below keeps going (and still writes a line) even if
something escapes it. One process writes a run directory at a time (:mod:`.lock`).

``--shard K/N`` runs only the trials whose key hashes into part K of N
(:mod:`toolbench.store.shards`: a stable hash of the key, not the order of the matrix);
``run.json`` records the shard and how many trials it holds, so ``merge`` can refuse a
partial one and ``--resume`` completes the same part.

``--budget SECONDS`` bounds a run's wall time: once it is used up no further trial is
started; trials in flight finish (each request is bounded by ``--timeout``). Trials not
started are not written: ``--resume`` completes them later.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import math
import os
import platform
import re
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Any, Literal

from toolbench import __version__
from toolbench.cassettes import (
    RecordOption,
    cassette_api_base,
    register_api_base,
    router,
)
from toolbench.errors import StorageError, UserError
from toolbench.formats.auto import AUTO, resolve_formats
from toolbench.formats.base import Format
from toolbench.formats.registry import get_format
from toolbench.formats.streamed import expand_stream
from toolbench.providers.base import Endpoint, ModelAPI, ProviderSettings
from toolbench.providers.llama_server import server_chat_template
from toolbench.providers.local_models import DEFAULT_MODELS, report_notes
from toolbench.providers.registry import DEFAULT_KIND, Providers, api_class, kind_of, kinds
from toolbench.redaction import redact, redact_uri, register_url_secrets
from toolbench.results import RunInfo, Shard, TrialResult, TurnRecord
from toolbench.runner.collector import run_collector
from toolbench.runner.compact import compact
from toolbench.runner.drive import (
    OnLoop,
    TrialSpec,
    cassette_path,
    harness_result,
    run_trial,
)
from toolbench.runner.halt import Halt, not_kept
from toolbench.runner.lock import RunLock
from toolbench.runner.model_params import (
    API_BASE,
    CONFIG_FILE,
    ModelParams,
    api_bases,
    model_params,
)
from toolbench.runner.param_values import base_url_problem
from toolbench.runner.records import scenario_files
from toolbench.runner.resume import resume_config
from toolbench.runner.variants import bare_model, check_models
from toolbench.scenarios.loader import DEFAULT_SELECTION, select_scenarios
from toolbench.scenarios.model import Scenario
from toolbench.scoring.leakage import (
    builtin_markers,
    compile_markers,
    installed_markers,
    marker_texts,
)
from toolbench.scoring.quick import replies_are_short, scenario_scores_quickly
from toolbench.store import (
    ResultsAppender,
    drop_torn_tail,
    drop_trials,
    iter_results,
    read_info,
    results_path,
    write_info,
)
from toolbench.store.shards import shard_of

DEFAULT_FORMATS = ("prompt-json", "prompt-json:shots=2", "react", "xml", "native")
"""The four formats, plus prompt-json with two examples: small models differ most there."""
MAX_TRIALS = 1_000_000
"""Twenty times the largest run measured (50,040 trials: a 117 MB results file)."""


@dataclass
class RunConfig:
    models: list[str] = field(default_factory=list)
    formats: list[str] = field(default_factory=lambda: list(DEFAULT_FORMATS))
    scenarios: list[str] = field(default_factory=list)
    samples: int = 1
    concurrency: int = 4
    record: RecordOption = "new"
    max_turns: int | None = None
    retry_on_parse_error: bool = False
    out: Path | None = None
    resume: bool = False
    cassette_dir: Path = Path("cassettes")
    runs_dir: Path = Path("runs")
    max_tokens: int | None = None
    api_base: str | None = None
    """An OpenAI-compatible server for every non-local model (LiteLLM's ``api_base``)."""
    report: bool = True
    timeout_s: float | None = None
    """Per-request timeout (``--timeout``); None: 120 s remote, 60 s for local models."""
    budget_s: float | None = None
    """Run wall-time budget (``--budget``): no trial starts after it is used up."""
    formats_from: dict[str, str] | None = None
    """Per model, its format (``--formats-from FILE``); its models are the default models."""
    model_params: list[str] = field(default_factory=list)
    """``--model-param MODEL:key=value`` texts (over ``params_file``'s)."""
    params_file: Path | None = CONFIG_FILE
    """The TOML file of ``[models."MODEL"]`` parameter tables (absent: none)."""
    given: frozenset[str] | None = None
    """The fields given on the command line (``--resume`` takes the others from
    ``run.json``); None: all of them."""
    cells: dict[str, list[str]] | None = None
    """Per model, its format specs, resolved (set by ``--resume`` from ``run.json``)."""
    auto: dict[str, str] = field(default_factory=dict)
    """What ``auto`` resolved to (set by ``--resume``)."""
    resolved_params: ModelParams | None = None
    """Per model, its parameters (set by ``--resume`` from ``run.json``)."""
    loaded_scenarios: list[Scenario] | None = None
    """The scenarios, read (set by ``--resume`` from the recorded files)."""
    shard: Shard | None = None
    """Run only this part of the matrix (``--shard K/N``); on ``--resume`` the run's own."""
    stream: Literal["off", "on", "both"] = "off"
    """``--stream``: ``on`` streams every format (adds ``:stream`` to each spec), ``both``
    runs each format streamed and not; ``off`` leaves the specs as given."""
    display: Literal["careful", "naive"] = "careful"
    """``--display``: the display policy streamed text trials are measured under."""


@dataclass
class Plan:
    """A validated run: the objects every trial needs."""

    run_dir: Path
    run_id: str
    models: list[str]
    formats: list[Format]
    scenarios: list[Scenario]
    specs: list[TrialSpec]
    skipped: int
    lock: RunLock | None = None
    """Held from planning (before the finished trials are read) to the end of the run."""
    not_run: int = 0
    """Trials not started because the ``--budget`` was used up (left for ``--resume``)."""
    markers: tuple[re.Pattern[str], ...] = ()
    """The run's leakage marker set: fixed when the run started, recorded in run.json."""
    by_model: dict[str, list[Format]] = field(default_factory=dict)
    """Each model's formats (``auto`` resolved per model); empty: every model, ``formats``."""
    auto: dict[str, str] = field(default_factory=dict)
    """What ``auto`` resolved to per model (recorded in run.json's ``auto_formats``)."""
    warnings: list[str] = field(default_factory=list)
    """Lines to print once before the run (an unknown model under ``auto``)."""
    model_params: ModelParams = field(default_factory=dict)
    """Per model, the request parameters of ``--model-param`` and ``toolbench.toml``."""
    config: RunConfig | None = None
    """The configuration the run executes with (a resumed run's, from its run.json)."""
    shard: Shard | None = None
    """The part of the matrix planned (with its trial count), as run.json records it."""
    redo: set[tuple[str, str, str, int]] = field(default_factory=set)
    """Trials a resumed run found written but not kept (:func:`.halt.not_kept`): their
    lines are dropped before they run again."""
    written_from: int | None = None
    """Where this run's own lines begin in results.jsonl (bytes; set by :func:`execute_run`):
    what a resumed run found before it is read back checked, what it wrote is not."""


def _validate_models(
    models: Sequence[str], record: RecordOption, api_base: str | None,
    own: dict[str, str] | None = None,
) -> None:  # fmt: skip
    settings = ProviderSettings(api_base=api_base, api_bases=dict(own or {}))
    for m in models:
        if not m.strip():
            raise UserError("--models: empty model name")
        # Its provider kind refuses what it cannot call (exit 2 before any call); a
        # variant's provider is asked for the bare model.
        bare = bare_model(m)
        api_class(kind_of(bare))(settings).preflight(bare, record)


def check_api_base(value: str) -> None:
    """An ``--api-base`` must be an absolute http(s) URL with a host, without a query."""
    problem = base_url_problem(value)
    if problem is None:
        return
    kind, detail = problem
    if kind == "invalid":
        raise UserError(f"--api-base: '{value}' is not a valid URL: {detail}")
    if kind == "not_http":
        raise UserError(f"--api-base: '{value}' is not an http:// or https:// URL with a host")
    raise UserError(
        f"--api-base: '{redact(value)}' has a query string or fragment (give the base"
        " URL alone; a key goes in the provider's environment variable)"
    )


def check_writable_dir(path: Path, option: str) -> None:
    """Refuse a directory toolbench could not create or write, before any model call."""
    probe = path
    while not probe.exists():
        if probe.parent == probe:
            return
        probe = probe.parent
    if not probe.is_dir():
        where = "is a file" if probe == path else f"is under a file ({probe})"
        raise UserError(f"{option}: {path} {where}, not a directory")
    if not os.access(probe, os.W_OK | os.X_OK):
        raise UserError(f"{option}: {path} is not writable ({probe})")


def _reported_templates(models: Sequence[str], cfg: RunConfig) -> dict[str, str]:
    """Per non-local model, the chat template the ``--api-base`` server reports, when
    ``auto`` is asked for and the run records (a replay asks no server)."""
    wants_auto = any(s.strip() == AUTO for s in cfg.formats) or any(
        s.strip() == AUTO for s in (cfg.formats_from or {}).values()
    )
    if not wants_auto or not cfg.api_base or cfg.record == "none":
        return {}
    template = server_chat_template(cfg.api_base)
    if template is None:
        return {}
    return {m: template for m in models if kind_of(bare_model(m)) == DEFAULT_KIND}


def _check_options(cfg: RunConfig) -> None:
    if cfg.samples < 1:
        raise UserError("--samples: must be at least 1")
    if cfg.concurrency < 1:
        raise UserError("--concurrency: must be at least 1")
    if cfg.max_turns is not None and cfg.max_turns < 1:
        raise UserError("--max-turns: must be at least 1")
    for option, seconds in (("--timeout", cfg.timeout_s), ("--budget", cfg.budget_s)):
        if seconds is not None and not seconds > 0:
            raise UserError(f"{option}: must be more than 0 seconds")
        if seconds is not None and not math.isfinite(seconds):
            raise UserError(f"{option}: must be a finite number of seconds (got {seconds:g})")
    check_models(cfg.models)
    for model in cfg.models:
        if "/" in model and not all(part.strip() for part in model.split("/")):
            raise UserError(
                f"--models: '{model}' has an empty part (write PROVIDER/MODEL, e.g. openai/gpt-4o)"
            )
    if not [f for f in cfg.formats if f.strip()]:
        raise UserError("--formats: give at least one format")
    for spec in cfg.formats:
        if spec.strip().startswith("auto:"):
            raise UserError(f"--formats: auto takes no options (got '{spec.strip()}')")
        if spec.strip().endswith(":"):
            name = spec.strip()[:-1]
            raise UserError(f"--formats: '{spec}' has a ':' but no options (write '{name}')")
    if cfg.api_base is not None:
        check_api_base(cfg.api_base)
    if cfg.resume and cfg.out is not None and not cfg.out.is_dir():
        raise UserError(f"--resume: {cfg.out} does not exist (nothing to resume)")
    if cfg.out is not None:
        check_writable_dir(cfg.out, "--out")
    else:
        check_writable_dir(cfg.runs_dir, "--out")
    if cfg.record != "none":
        check_writable_dir(cfg.cassette_dir, "--cassettes")


def _check_size(samples: int, cells: int, scenarios: int) -> None:
    """Refuse a matrix no run could hold, before it is built (``--samples 100000000``
    grew the plan past 1.5 GB in silence)."""
    trials = samples * cells * scenarios
    if trials > MAX_TRIALS:
        raise UserError(
            f"--samples: {samples} samples make {trials} trials ({cells} model-format"
            f" cell(s) x {scenarios} scenario(s) x {samples}); a run holds at most"
            f" {MAX_TRIALS} trials"
        )


def _check_cells(formats: Sequence[Format], scenarios: Sequence[Scenario]) -> None:
    """Refuse a format whose options cannot run a selected scenario (``native:strict`` on
    a schema strict mode does not take, ``native:tool_choice=NAME`` on a scenario without
    that tool), naming both, before any call."""
    for fmt in formats:
        for sc in scenarios:
            why = fmt.refuses(sc.tools)
            if why is not None:
                raise UserError(f"--formats: {fmt.spec}: scenario '{sc.id}': {why}")


def _check_apis(
    by_model: dict[str, list[Format]], api_base: str | None, own: dict[str, str]
) -> None:
    """Refuse a format asking for an API the model's provider does not have
    (``native:api=responses`` on ``anthropic/`` or ``local/``), naming the option and the
    model, before any call."""
    from toolbench.providers.responses_request import API, refusal

    for model, fmts in by_model.items():
        asked = [f for f in fmts if getattr(f.options, "api", None) == API]
        if not asked:
            continue
        bare = bare_model(model)
        why = refusal(bare, own.get(model, own.get(bare, api_base)), kind_of(bare))
        if why is not None:
            raise UserError(
                f"--formats: {asked[0].spec}: model '{model}' does not take the Responses"
                f" API ({why})"
            )


def plan_run(cfg: RunConfig) -> Plan:
    """Validate options and build the trial list (no model call happens here).

    Takes the run directory's lock (refused, exit 2, while another process holds it)
    before reading which trials are done; :func:`execute_run` releases it.
    """
    # A user:pw@ or ?token= in the api base never reaches disk, whoever calls this.
    register_url_secrets(cfg.api_base)
    if cfg.resume and cfg.out is not None and cfg.out.is_dir():
        cfg = resume_config(cfg)  # the run's matrix and settings, from its run.json
        register_url_secrets(cfg.api_base)
    _check_options(cfg)
    # Repeats on the command line would run (and count) the same trials twice.
    models = list(dict.fromkeys(cfg.models or list(cfg.formats_from or ()) or DEFAULT_MODELS))
    if cfg.cells is not None:
        cells, auto, warning = cfg.cells, dict(cfg.auto), None
    else:
        templates = _reported_templates(models, cfg)
        resolved = resolve_formats(models, cfg.formats, cfg.formats_from, templates)
        cells = {m: expand_stream(v, cfg.stream) for m, v in resolved.specs.items()}
        warning = resolved.warning()
        auto = {m: d.format for m, d in resolved.auto.items()}
    built = {s: get_format(s) for spec in cells.values() for s in spec}
    formats = list({f.spec: f for f in built.values()}.values())
    if not formats:
        raise UserError("--formats: give at least one format")
    by_model = {m: [built[s] for s in specs] for m, specs in cells.items()}
    scenarios = (
        cfg.loaded_scenarios
        if cfg.loaded_scenarios is not None
        else select_scenarios(cfg.scenarios or [DEFAULT_SELECTION])
    )
    if not scenarios:
        raise UserError("--scenarios: no scenario selected")
    _check_size(cfg.samples, sum(len(v) for v in cells.values()), len(scenarios))
    _check_cells(formats, scenarios)
    params = (
        cfg.resolved_params
        if cfg.resolved_params is not None
        else model_params(cfg.model_params, models, cfg.params_file)
    )
    own = api_bases(params)
    for url in own.values():
        register_url_secrets(url)  # a resumed run's, read back from its run.json
    _validate_models(models, cfg.record, cfg.api_base, own)
    _check_apis(by_model, cfg.api_base, own)

    if cfg.out is not None:
        run_dir = cfg.out
    else:
        stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M%S")
        run_dir = cfg.runs_dir / stamp
    res = results_path(run_dir)
    if res.exists() and not cfg.resume:
        raise UserError(f"--out: {run_dir} already holds a run; pass --resume to complete it")
    created = not run_dir.exists()
    try:
        run_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UserError(f"--out: cannot create {run_dir}: {exc.strerror or exc}") from None
    lock = RunLock(run_dir)
    lock.acquire()
    try:
        plan = _plan(cfg, run_dir, models, formats, scenarios, lock, by_model, own, params)
    except BaseException:
        lock.release()
        if created:  # refused before any trial: leave no empty run directory behind
            _remove_empty_run_dir(run_dir)
        raise
    plan.auto = auto
    plan.warnings = [warning] if warning else []
    plan.model_params = params
    plan.config = cfg
    return plan


def _plan(
    cfg: RunConfig, run_dir: Path, models: list[str], formats: list[Format],
    scenarios: list[Scenario], lock: RunLock, by_model: dict[str, list[Format]] | None = None,
    own: dict[str, str] | None = None, params: ModelParams | None = None,
) -> Plan:  # fmt: skip
    own = own or {}
    params = params or {}
    res = results_path(run_dir)
    done: set[tuple[str, str, str, int]] = set()
    redo: set[tuple[str, str, str, int]] = set()
    shard = cfg.shard
    if res.exists():
        # A run.json of a newer toolbench is refused before any trial.
        shard = _resumed_shard(run_dir, cfg.shard, read_info(run_dir))
        for r in iter_results(run_dir):  # a trial whose cassette was not kept runs again
            (redo if not_kept(r) else done).add(r.key)
    run_id = run_dir.name
    markers = _run_markers(run_dir, cfg.resume)
    specs: list[TrialSpec] = []
    skipped = 0
    in_shard = 0
    for model in models:
        for fmt in (by_model or {}).get(model, formats):
            for sc in scenarios:
                for k in range(cfg.samples):
                    if shard is not None and (
                        shard_of(model, fmt.spec, sc.id, k, shard.count) != shard.index
                    ):
                        continue
                    in_shard += 1
                    if (model, fmt.spec, sc.id, k) in done:
                        skipped += 1
                        continue
                    specs.append(
                        TrialSpec(
                            run_id=run_id, model=model, fmt=fmt, scenario=sc, sample=k,
                            max_turns=cfg.max_turns, retry_on_parse_error=cfg.retry_on_parse_error,
                            record=cfg.record,
                            cassette=cassette_path(cfg.cassette_dir, model, fmt.spec, sc.id, k),
                            markers=markers, api_base=own.get(model, cfg.api_base),
                            cassette_dir=cfg.cassette_dir,
                            display=cfg.display, model_params=dict(params.get(model, {})),
                        )
                    )  # fmt: skip
    if cfg.record != "none":
        live = {
            bare_model(s.model) for s in specs if cfg.record == "all" or not s.cassette.is_file()
        }
        settings = ProviderSettings(api_base=cfg.api_base, max_tokens=cfg.max_tokens)
        for kind in sorted({kind_of(m) for m in live}):
            # Each kind refuses what cannot serve its live models (a server binary, a file).
            api_class(kind)(settings).ready(sorted(m for m in live if kind_of(m) == kind))
    if shard is not None:
        shard = shard.model_copy(update={"trials": in_shard})
    redo &= {(s.model, s.fmt.spec, s.scenario.id, s.sample) for s in specs}
    return Plan(run_dir, run_id, models, formats, scenarios, specs, skipped, lock,
                markers=markers, by_model=dict(by_model or {}), shard=shard,
                redo=redo)  # fmt: skip


def _remove_empty_run_dir(run_dir: Path) -> None:
    """Remove a run directory this plan created, if it holds nothing but its lock file."""
    with contextlib.suppress(OSError):
        if all(p.name == ".lock" for p in run_dir.iterdir()):
            for p in run_dir.iterdir():
                p.unlink()
            run_dir.rmdir()


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


def _run_markers(run_dir: Path, resume: bool) -> tuple[re.Pattern[str], ...]:
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


def _run_info(cfg: RunConfig, plan: Plan) -> RunInfo:
    return RunInfo(
        run_id=plan.run_id, toolbench_version=__version__,
        created_at=datetime.now(UTC).isoformat(timespec="seconds"),
        models=plan.models, formats=[f.spec for f in plan.formats],
        scenarios=[s.id for s in plan.scenarios], samples=cfg.samples,
        max_turns=cfg.max_turns, record=cfg.record,
        retry_on_parse_error=cfg.retry_on_parse_error,
        markers=marker_texts(plan.markers) if plan.markers else None,
        auto_formats=plan.auto, shard=plan.shard, display=cfg.display,
        cells={m: [f.spec for f in fmts] for m, fmts in plan.by_model.items()},
        format_options={f.spec: f.options.model_dump() for f in plan.formats},
        scenario_files=scenario_files(plan.scenarios),
        scenario_tags={s.id: list(s.tags) for s in plan.scenarios if s.tags},
        model_notes=report_notes(plan.models),
        model_params=plan.model_params,
        api_base=redact_uri(cfg.api_base) if cfg.api_base else None,
        cassette_api_base=cassette_api_base(cfg.api_base) if cfg.api_base else None,
        cassette_dir=str(cfg.cassette_dir),
        params={"temperature": 0, "concurrency": cfg.concurrency,
                **_kind_params(cfg), "timeout_s": cfg.timeout_s, "budget_s": cfg.budget_s},
        environment={"python": sys.version.split()[0], "platform": platform.platform(),
                     "toolbench": __version__, "litellm": _version("litellm")},
    )  # fmt: skip


def _kind_params(cfg: RunConfig) -> dict[str, Any]:
    """What every registered provider kind records of the run (``local_max_tokens``)."""
    settings = ProviderSettings(api_base=cfg.api_base, max_tokens=cfg.max_tokens)
    out: dict[str, Any] = {}
    for make in kinds().values():
        out.update(make(settings).run_params())
    return out


def _version(package: str) -> str:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return "not installed"


ProgressHook = Callable[[TrialResult], None]


async def _execute(cfg: RunConfig, plan: Plan, on_result: ProgressHook) -> None:
    own = api_bases(plan.model_params)
    providers = Providers(ProviderSettings(
        api_base=cfg.api_base, api_bases=own, timeout_s=cfg.timeout_s,
        max_tokens=cfg.max_tokens, log_dir=str(plan.run_dir / "logs"),
    ))  # fmt: skip
    limits: dict[str, asyncio.Semaphore] = {}
    res_file = results_path(plan.run_dir)
    deadline = None if cfg.budget_s is None else time.monotonic() + cfg.budget_s
    # Recorded and matched as a placeholder host: a replay finds its cassettes whatever
    # the port (and needs no server: a matched request never leaves the process).
    register_api_base(cfg.api_base)
    for url in own.values():
        register_api_base(url)

    async def endpoint_for(model: str, fmt: Format, live: bool) -> tuple[ModelAPI, Endpoint]:
        # A variant (MODEL@NAME) is its bare model called with the variant's parameters.
        api = providers.for_model(bare_model(model))
        endpoint = await api.endpoint(bare_model(model), fmt, live)
        mine = dict(plan.model_params.get(model, {}))
        mine.pop(API_BASE, None)  # where the requests go (the endpoint's), not a parameter
        if "max_tokens" in mine:
            # A --model-param max_tokens replaces the harness's cap (it is asked instead).
            endpoint.params.pop("max_tokens", None)
        endpoint.model_params = mine
        return api, endpoint

    # Trials talking to a server now: while none is, a trial is scored on the event loop
    # (no request in flight for its scoring to stall; see ``drive._score``); while one
    # is, only a trial whose scoring is known to be quick is.
    live = 0
    quick: dict[int, bool] = {}  # by scenario (the plan holds each for the whole run)

    def on_loop(spec: TrialSpec) -> OnLoop:
        def ask(turns: Sequence[TurnRecord]) -> bool:
            if live == 0:
                return True
            known = quick.get(id(spec.scenario))
            if known is None:
                known = quick[id(spec.scenario)] = scenario_scores_quickly(spec.scenario)
            return known and replies_are_short(turns)

        return ask

    async def live_trial(spec: TrialSpec) -> TrialResult:
        nonlocal live
        live += 1
        try:
            return await run_trial(spec, lambda m, f: endpoint_for(m, f, True), on_loop(spec))
        finally:
            live -= 1

    async def trial(spec: TrialSpec) -> TrialResult:
        replay_first = spec.record == "none" or (spec.record == "new" and spec.cassette.is_file())
        if not replay_first:
            return await live_trial(spec)
        first = dataclasses.replace(spec, record="none")
        result = await run_trial(first, lambda m, f: endpoint_for(m, f, False), on_loop(spec))
        redo = ("cassette_missing", "cassette_unreadable")
        if result.status in redo and spec.record == "new":
            result = await live_trial(spec)
        return result

    halt = Halt()  # the first storage fault stops the run (runner/halt.py)

    async def one(spec: TrialSpec) -> None:
        # A kind with a width shares it across its models (the embedded models share
        # this machine's cores: one request at a time); else --concurrency per model.
        # A replay calls no server: every kind replays --concurrency trials at once.
        api = providers.for_model(bare_model(spec.model))
        shared = api.width is not None and spec.record != "none"
        key = api.name if shared else bare_model(spec.model)  # variants share a model's limit
        width = (api.width if shared else None) or cfg.concurrency
        sem = limits.setdefault(key, asyncio.Semaphore(width))
        async with sem:
            if halt.stopped or (deadline is not None and time.monotonic() >= deadline):
                plan.not_run += 1
                return
            try:
                result = await trial(spec)
            except Exception as exc:  # run_trial never raises; this is the last net
                result = harness_result(spec, exc)
        try:
            results.append(compact(result))
        except StorageError as exc:
            halt.stop(exc)
            return
        on_result(result)
        halt.check(result)

    try:
        with router(), ResultsAppender(res_file) as results:
            halt.tasks = [asyncio.ensure_future(one(s)) for s in plan.specs]
            outcomes = await asyncio.gather(*halt.tasks, return_exceptions=True)
    finally:
        providers.close()
    if halt.fault is not None:
        raise halt.fault
    # Every other trial has finished and been written; now report what could not be.
    for outcome in outcomes:
        if isinstance(outcome, BaseException):
            raise outcome


def execute_run(cfg: RunConfig, plan: Plan, on_result: ProgressHook) -> Path:
    """Run every planned trial; returns the run directory. Releases the run's lock."""
    cfg = plan.config or cfg
    lock = plan.lock or RunLock(plan.run_dir)
    try:
        if plan.lock is None:
            plan.run_dir.mkdir(parents=True, exist_ok=True)
            lock.acquire()
        info_path = plan.run_dir / "run.json"
        try:  # before any trial: a disk that cannot take them is the --out's fault
            if not (cfg.resume and info_path.exists()):
                write_info(plan.run_dir, _run_info(cfg, plan))
            drop_torn_tail(results_path(plan.run_dir))
            drop_trials(results_path(plan.run_dir), plan.redo)
            results_path(plan.run_dir).touch()
        except OSError as exc:
            raise UserError(f"--out: cannot write {plan.run_dir}: {exc.strerror or exc}") from None
        plan.written_from = results_path(plan.run_dir).stat().st_size
        os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
        try:
            with run_collector():  # see runner/collector.py: why, and what is given back
                asyncio.run(_execute(cfg, plan, on_result))
        except StorageError as exc:
            raise StorageError(
                f"{exc}; the run stopped (no trial started after it); once it can be"
                f" written, complete it with: toolbench run --resume --out {plan.run_dir}"
            ) from None
    finally:
        lock.release()
    return plan.run_dir
