"""``toolbench run``: parse options, plan, execute, print a summary."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer

from toolbench.cli.conventions import Command, choices
from toolbench.run_modes import DISPLAY_POLICIES, RECORD_MODES, STREAM_MODES

if TYPE_CHECKING:
    from toolbench.results import Shard

_FIELDS = {"model_param": "model_params", "cassettes": "cassette_dir", "timeout": "timeout_s",
           "budget": "budget_s"}  # fmt: skip
"""Option name -> RunOptions field, where they differ (for ``--resume``)."""


def _split(value: str | None) -> list[str]:
    return [v.strip() for v in (value or "").split(",") if v.strip()]


def split_specs(value: str | None) -> list[str]:
    """``--formats`` split at its commas, except those between one spec's options:
    ``native:strict,tool_choice=required,xml`` is two specs. A piece continues the spec
    before it when that spec has options and the piece is not a spec of its own (it
    holds ``=`` but no ``:`` or ``|``, or is a bare word that names no format, or is
    empty: an empty option, which the format refuses). The format names are read only
    for such a bare word (reading them loads every format)."""
    out: list[str] = []
    for piece in (v.strip() for v in (value or "").split(",")):
        if out and ":" in out[-1].rpartition("|")[2] and not _names_a_spec(piece):
            # An empty piece here is an empty option of that spec (``shots=2,``): kept,
            # for the format's parser to refuse, never dropped as an empty list item.
            out[-1] += "," + piece
        elif piece:
            out.append(piece)
    return out


def _names_a_spec(piece: str) -> bool:
    """Whether a piece of ``--formats`` is a spec of its own (not an option of the last)."""
    if ":" in piece or "|" in piece:
        return True
    # Deferred for start-up: the registry imports every format (pydantic among them).
    from toolbench.declared_formats import AUTO
    from toolbench.formats.format_registry import format_names

    return piece in {*format_names(), AUTO}


def run_cmd(
    ctx: typer.Context,
    models: str = typer.Option(
        None,
        "--models",
        metavar="MODEL,MODEL",
        help="Comma-separated LiteLLM model strings (default: the embedded local models); "
        "MODEL@NAME is a variant: the model under its own --model-param set.",
    ),
    formats: str = typer.Option(
        None,
        "--formats",
        metavar="SPEC,SPEC",
        help="Comma-separated format specs, e.g. xml,prompt-json:shots=2,"
        "native:strict,tool_choice=required (a spec's own options follow it); auto: each "
        "model's own dialect; A|B: B parses what A finds no call in "
        "(default: prompt-json, prompt-json:shots=2, react, xml, native).",
    ),
    formats_from: Path = typer.Option(
        None,
        "--formats-from",
        metavar="FILE",
        help="YAML file of recommend --to yaml: each model's format (its models are the "
        "default --models).",
    ),
    scenarios: list[str] = typer.Option(
        None,
        "--scenarios",
        metavar="PATH|ID|TAG",
        help="Scenario files/dirs, ids or tags (repeatable or comma-separated); default the "
        "'recorded' selection (committed cassettes), 'all' for the whole bundled suite.",
    ),
    samples: int = typer.Option(
        1,
        "--samples",
        metavar="N",
        help="Samples per trial (seed varies); a run holds at most 1,000,000 trials.",
    ),
    concurrency: int = typer.Option(
        4, "--concurrency", metavar="N", help="Concurrent requests per model."
    ),
    record: str = typer.Option(
        "new",
        "--record",
        metavar=choices(RECORD_MODES),
        help="none: replay only; new: record what is missing; all: re-record.",
    ),
    replay: str = typer.Option(
        "boundary",
        "--replay",
        metavar="boundary|full",
        help="How a recorded exchange is replayed: boundary (read from the cassette"
        " without LiteLLM's request and stream machinery) or full (re-derived from the"
        " recorded bytes through LiteLLM, to check a LiteLLM upgrade); the results agree.",
    ),
    max_turns: int = typer.Option(
        None, "--max-turns", metavar="K", help="Cap on turns per multi-turn trial."
    ),
    retry_on_parse_error: bool = typer.Option(
        False, "--retry-on-parse-error", help="Feed a parse error back once."
    ),
    out: Path = typer.Option(
        None, "-o", "--out", metavar="DIR", help="Run directory (default runs/<timestamp>)."
    ),
    resume: bool = typer.Option(
        False,
        "--resume",
        help="Complete the run in --out with the matrix and settings its run.json "
        "records (an option that changes the matrix is refused).",
    ),
    api_base: str = typer.Option(
        None,
        "--api-base",
        metavar="URL",
        help="Base URL for every non-local model, whatever its provider (no query string; one "
        "model's own: --model-param MODEL:api_base=URL).",
    ),
    cassettes: Path = typer.Option(
        Path("cassettes"), "--cassettes", metavar="DIR", help="Cassette directory."
    ),
    quiet: bool = typer.Option(False, "--quiet", help="No progress bar (for CI)."),
    no_report: bool = typer.Option(False, "--no-report", help="Skip the HTML report."),
    timeout: float = typer.Option(
        None,
        "--timeout",
        metavar="SECONDS",
        help="Seconds per model request (default 120; 60 for local models).",
    ),
    model_param: list[str] = typer.Option(
        None,
        "--model-param",
        metavar="MODEL:KEY=VALUE",
        help="A request parameter for one model, e.g. anthropic/claude-x:temperature=1 or "
        "openai/o3:reasoning_effort=low (repeatable; VALUE is JSON where it parses, "
        'else text; over toolbench.toml\'s [models."MODEL"] tables; checked against what '
        "each known parameter takes; extra_headers values are secrets).",
    ),
    stream: str = typer.Option(
        "off",
        "--stream",
        metavar=choices(STREAM_MODES),
        help="on: stream every format (adds :stream to each spec); both: each format "
        "streamed and not, side by side; off: as the specs say (xml:stream streams xml).",
    ),
    display: str = typer.Option(
        "careful",
        "--display",
        metavar=choices(DISPLAY_POLICIES),
        help="Display policy of streamed text trials: careful holds back a tail that could "
        "become a marker; naive shows every delta at once.",
    ),
    budget: float = typer.Option(
        None,
        "--budget",
        metavar="SECONDS",
        help="Seconds of wall time for the run: no trial starts after that; "
        "the rest is left for --resume.",
    ),
    batch: bool = typer.Option(
        False,
        "--batch",
        help="Send the single-turn trials through the provider's batch API first (OpenAI "
        "Batch, Anthropic Message Batches: half price, answered within 24 h; waits at most "
        "--timeout, a batch still running when --budget ends is cancelled), their replies "
        "recorded as live ones; multi-turn trials stay live. Recorded in run.json: --resume "
        "completes a batch run as one, submitting again what its batches failed.",
    ),
    shard: str = typer.Option(
        None,
        "--shard",
        metavar="K/N|auto",
        help="Run part K of N of the trial matrix (a stable hash of each trial's key); "
        "toolbench merge joins the N parts. auto: K and N from the job's environment "
        "(Kubernetes Indexed Job, Slurm array, TOOLBENCH_SHARD_INDEX/COUNT; docs/ci.md).",
    ),
    executor: str = typer.Option(
        "local",
        "--executor",
        metavar="local|ray",
        help="What runs the trials: local (this process) or ray (a Ray cluster: batches "
        "of trials as tasks; needs the ray extra; docs/ray.md).",
    ),
    address: str = typer.Option(
        None,
        "--address",
        metavar="HOST:PORT",
        help="--executor ray: the Ray cluster's address (default: a Ray instance started "
        "on this machine for the run).",
    ),
    mcp: list[str] = typer.Option(
        None,
        "--mcp",
        metavar="NAME=COMMAND",
        help="An MCP server a scenario's environment may name: its command (started per "
        "trial, stdio) or http://127.0.0.1:PORT/mcp (repeatable; over toolbench.toml's "
        "[mcp.NAME]; docs/environments.md).",
    ),
) -> int:
    """Run scenarios against models x formats; record or replay cassettes."""
    # What a check needs is imported first and the runner after it: a bad option is
    # refused before the runner (formats, cassettes, providers, pydantic) is loaded.
    from toolbench.errors import UserError
    from toolbench.runner.options import DEFAULT_FORMATS, RunOptions, check_choices, check_given

    check_choices(record=record, replay=replay, stream=stream, display=display)
    if mcp:  # refused before the options below, as ever; none given: forgotten below
        _give_mcp(mcp)
    if resume and out is None:
        raise UserError("--resume: needs --out pointing at the run to complete")
    given = frozenset(
        name for name, value in ctx.params.items()
        if getattr(ctx.get_parameter_source(name), "name", None) == "COMMANDLINE"
        and value is not None
    )  # fmt: skip
    if formats is not None and not _split(formats):
        raise UserError(f"--formats: no format given in '{formats}'")
    options = RunOptions(
        models=_split(models),
        formats=split_specs(formats) if formats else list(DEFAULT_FORMATS),
        scenarios=[s for item in (scenarios or []) for s in _split(item)],
        samples=samples, concurrency=concurrency, record=record, replay=replay,  # type: ignore[arg-type]
        max_turns=max_turns, retry_on_parse_error=retry_on_parse_error, out=out,
        resume=resume, cassette_dir=cassettes, api_base=api_base,
        timeout_s=timeout, budget_s=budget, stream=stream, display=display,  # type: ignore[arg-type]
        formats_from=_formats_from(formats_from) if formats_from else None,
        model_params=list(model_param or []),
        given=frozenset(_FIELDS.get(name, name) for name in given),
        shard=_shard(shard) if shard is not None else None, batch=batch,
        executor=executor, address=address,
    )  # fmt: skip
    check_given(options)
    from toolbench.cli.run_view import print_summary, progress_hook
    from toolbench.runner.measured import EXIT_UNMEASURED
    from toolbench.runner.run import execute_run, plan_run

    if not mcp:
        _give_mcp([])  # an earlier command's --mcp (in this process) is not this one's
    plan = plan_run(options)
    for line in plan.warnings:
        typer.echo(line, err=True)
    with progress_hook(len(plan.trials), quiet) as hook:
        say = None if quiet else lambda line: typer.echo(line, err=True)
        done = execute_run(plan, hook, say)
    if done.not_run:
        typer.echo(
            f"warning: --budget of {budget:g}s used up: {done.not_run} trial(s) not run; "
            f"complete them with --resume --out {done.run_dir}",
            err=True,
        )
    missing = print_summary(
        done.run_dir, write_report=not no_report, quiet=quiet, written_from=done.written_from
    )
    # A model or cell without one ok trial measured nothing: say so in the exit code.
    return EXIT_UNMEASURED if missing else 0


def _give_mcp(values: list[str]) -> None:
    """Hand ``--mcp`` to the environments (a bad value: one line, exit 2)."""
    from toolbench.environments.toml_envs import give_mcp_options

    give_mcp_options(values)


def _formats_from(path: Path) -> dict[str, str]:
    """``--formats-from FILE``: each model's format (a bad file: one line, exit 2)."""
    from toolbench.formats.auto import read_formats_file

    return read_formats_file(path).formats()


def _shard(text: str) -> Shard:
    """``--shard K/N|auto`` (a bad one: one line, exit 2)."""
    from toolbench.runner.shard_auto import shard_option

    return shard_option(text)


def register(app: typer.Typer) -> None:
    app.command("run", cls=Command)(run_cmd)
