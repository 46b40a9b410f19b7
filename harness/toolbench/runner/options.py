"""The options ``toolbench run`` takes, typed, and the checks each one must pass.

Everything the user typed is checked here before the run directory is touched or any
model is called, and a bad option is one line naming it (:class:`~toolbench.errors.UserError`,
exit 2). What a resumed run takes from its ``run.json`` (its cells, scenarios and model
parameters) is not an option: :mod:`.resume` reads it into the run's matrix
(:class:`~toolbench.runner.matrix.Matrix`), so nothing here is "set by ``--resume``".

This module loads nothing a run needs (no format, cassette or provider, no pydantic):
the command line checks the options with it (:func:`check_given`) before it imports the
runner, so a bad option costs about what ``--help`` costs.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from toolbench.declared_formats import AUTO, declared_format_names
from toolbench.errors import UnknownNameError, UserError
from toolbench.redaction import redact, register_url_secrets
from toolbench.run_modes import DISPLAY_POLICIES as DISPLAY_POLICIES
from toolbench.run_modes import RECORD_MODES as RECORD_MODES
from toolbench.run_modes import REPLAY_MODES as REPLAY_MODES
from toolbench.run_modes import STREAM_MODES as STREAM_MODES
from toolbench.run_modes import DisplayPolicy as DisplayPolicy
from toolbench.run_modes import RecordOption, ReplayMode
from toolbench.run_modes import StreamMode as StreamMode
from toolbench.runner.param_values import base_url_problem
from toolbench.runner.variants import check_models
from toolbench.toml_file import CONFIG_FILE, read_toml

if TYPE_CHECKING:
    from toolbench.results import Shard

DEFAULT_FORMATS = ("prompt-json", "prompt-json:shots=2", "react", "xml", "native")
"""The four formats, plus prompt-json with two examples: small models differ most there."""
LOCAL_EXECUTOR = "local"
"""``--executor``'s default: this process (:mod:`toolbench.runner.executors.local`)."""
RATE_LIMITS_TABLE = "rate_limits"
"""The table of ``toolbench.toml`` a run reads its rate limits from (when planned)."""
MAX_TRIALS = 1_000_000
"""Twenty times the largest run measured (50,040 trials: a 117 MB results file)."""


@dataclass(frozen=True)
class RunOptions:
    """What a run is asked to do, as given (defaults where not)."""

    models: list[str] = field(default_factory=list)
    formats: list[str] = field(default_factory=lambda: list(DEFAULT_FORMATS))
    scenarios: list[str] = field(default_factory=list)
    samples: int = 1
    concurrency: int = 4
    record: RecordOption = "new"
    replay: ReplayMode = "boundary"
    """``--replay``: a recorded exchange answered at the provider boundary, or re-derived
    through LiteLLM in full (to check a LiteLLM upgrade; the results agree)."""
    max_turns: int | None = None
    retry_on_parse_error: bool = False
    out: Path | None = None
    resume: bool = False
    cassette_dir: Path = Path("cassettes")
    runs_dir: Path = Path("runs")
    max_tokens: int | None = None
    api_base: str | None = None
    """An OpenAI-compatible server for every non-local model (LiteLLM's ``api_base``)."""
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
    """The fields given on the command line: a resumed run takes the others from its
    ``run.json``, and checks these against it. None: all of them."""
    shard: Shard | None = None
    """Run only this part of the matrix (``--shard K/N``); on ``--resume`` the run's own."""
    stream: StreamMode = "off"
    """``--stream``: ``on`` streams every format (adds ``:stream`` to each spec), ``both``
    runs each format streamed and not; ``off`` leaves the specs as given."""
    display: DisplayPolicy = "careful"
    """``--display``: the display policy streamed text trials are measured under."""
    batch: bool = False
    """``--batch``: single-turn trials answered through provider batches first (:mod:`.batch`)."""
    executor: str = LOCAL_EXECUTOR
    """``--executor``: what carries out the plan (:mod:`.executors`); ``address``: its cluster."""
    address: str | None = None


def check_choice(option: str, value: str, allowed: Sequence[str]) -> None:
    """Refuse a value of a choice option (``--record``, ``--stream``, ...) it does not take."""
    if value not in allowed:
        raise UserError(f"{option}: must be one of {', '.join(allowed)} (got '{value}')")


def check_choices(record: str, replay: str, stream: str, display: str) -> None:
    """The choice options as typed, before they are typed (the command line gives text)."""
    check_choice("--record", record, RECORD_MODES)
    check_choice("--replay", replay, REPLAY_MODES)
    check_choice("--stream", stream, STREAM_MODES)
    check_choice("--display", display, DISPLAY_POLICIES)


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


def check_options(opts: RunOptions) -> None:
    """Refuse the first option that no run could take, naming it."""
    if opts.samples < 1:
        raise UserError("--samples: must be at least 1")
    if opts.concurrency < 1:
        raise UserError("--concurrency: must be at least 1")
    if opts.max_turns is not None and opts.max_turns < 1:
        raise UserError("--max-turns: must be at least 1")
    for option, seconds in (("--timeout", opts.timeout_s), ("--budget", opts.budget_s)):
        if seconds is not None and not seconds > 0:
            raise UserError(f"{option}: must be more than 0 seconds")
        if seconds is not None and not math.isfinite(seconds):
            raise UserError(f"{option}: must be a finite number of seconds (got {seconds:g})")
    check_models(opts.models)
    for model in opts.models:
        if "/" in model and not all(part.strip() for part in model.split("/")):
            raise UserError(
                f"--models: '{model}' has an empty part (write PROVIDER/MODEL, e.g. openai/gpt-4o)"
            )
    if not [f for f in opts.formats if f.strip()]:
        raise UserError("--formats: give at least one format")
    for spec in opts.formats:
        if spec.strip().startswith("auto:"):
            raise UserError(f"--formats: auto takes no options (got '{spec.strip()}')")
        if spec.strip().endswith(":"):
            name = spec.strip()[:-1]
            raise UserError(f"--formats: '{spec}' has a ':' but no options (write '{name}')")
    if opts.api_base is not None:
        check_api_base(opts.api_base)
    if opts.resume and opts.out is not None and not opts.out.is_dir():
        raise UserError(f"--resume: {opts.out} does not exist (nothing to resume)")
    check_writable_dir(opts.out if opts.out is not None else opts.runs_dir, "--out")
    if opts.record != "none":
        check_writable_dir(opts.cassette_dir, "--cassettes")


def check_size(samples: int, cells: int, scenarios: int) -> None:
    """Refuse a matrix no run could hold, before it is built (``--samples 100000000``
    grew the plan past 1.5 GB in silence)."""
    trials = samples * cells * scenarios
    if trials > MAX_TRIALS:
        raise UserError(
            f"--samples: {samples} samples make {trials} trials ({cells} model-format"
            f" cell(s) x {scenarios} scenario(s) x {samples}); a run holds at most"
            f" {MAX_TRIALS} trials"
        )


def check_given(opts: RunOptions) -> None:
    """The checks :func:`toolbench.runner.run.plan_run` makes first, made before the
    runner is imported, in its order and as far as they need nothing loaded: the options
    (:func:`check_options`), then the names of ``--formats`` where each spec is a bare
    name (:func:`check_format_names`). ``plan_run`` makes them all again and goes on;
    a resumed run's options are its ``run.json``'s, read there, so none is checked here.
    """
    register_url_secrets(opts.api_base)  # as plan_run: an error quoting it hides it
    if opts.resume and opts.out is not None and opts.out.is_dir():
        return
    check_options(opts)
    if opts.executor != LOCAL_EXECUTOR or opts.address is not None:
        return  # another executor checks the options its own way (plan_run asks it)
    if RATE_LIMITS_TABLE in read_toml(CONFIG_FILE):
        return  # plan_run reads the rate limits next, and may refuse them first
    check_format_names(opts)


def check_format_names(opts: RunOptions) -> None:
    """Refuse an unknown format name as the format registry would (same words), where
    nothing the run checks before the formats' names can fail: every spec a bare name
    (no options, grid or fallback), no ``auto``, no ``--formats-from``, ``--stream off``,
    and the registry's names known without loading it (:func:`declared_format_names`).
    Anything else is left to the registry."""
    specs = [spec.strip() for spec in opts.formats]
    if opts.formats_from is not None or opts.stream != "off":
        return
    if any(":" in spec or "|" in spec or spec == AUTO for spec in specs):
        return
    names = declared_format_names()
    if names is None:
        return
    for spec in specs:
        if spec not in names:
            raise UnknownNameError("format", spec, names)
