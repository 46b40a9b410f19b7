"""Analysis commands over one run: report, export, gate.

They read ``runs/<id>/`` only (no model calls, no network) and import their library
modules when they run, so ``toolbench --help`` stays fast. ``report --to`` and
``export --to`` list the registered report outputs (:mod:`toolbench.report.outputs`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from toolbench.cli.conventions import Command, RegistryChoices
from toolbench.errors import UnknownNameError, UserError
from toolbench.report.outputs import (
    REPORTS,
    ReportOutput,
    render,
    render_output,
    report_names,
    write,
)
from toolbench.run_paths import existing_results

RunArg = Annotated[Path, typer.Argument(help="A run directory (runs/<id>) or its results.jsonl.")]


def report(
    run: RunArg,
    baseline: Annotated[
        Path | None,
        typer.Option("--baseline", metavar="RUN", help="Show deltas against this run."),
    ] = None,
    out: Annotated[
        Path | None,
        typer.Option(
            "-o",
            "--out",
            metavar="FILE",
            help="Output file (html: reports/<id>.html, a trial-table export: "
            "RUN/trials.<ext>, the other outputs: stdout).",
        ),
    ] = None,
    to: Annotated[
        str,
        typer.Option(
            "--to",
            metavar=RegistryChoices("OUTPUT", report_names),
            help="What to write (the registered report outputs): self-contained HTML, a "
            "Markdown summary, JUnit XML, the trial table as CSV, Parquet or JSONL, ...",
        ),
    ] = "html",
    pass_k: Annotated[
        int | None,
        typer.Option(
            "--pass-k",
            metavar="K",
            help="The k of pass@k and pass^k in the html and md reports (2 to the run's "
            "--samples; default: its --samples; a one-sample run has no such section).",
        ),
    ] = None,
) -> None:
    """Write a report of a run: self-contained HTML, a Markdown summary, JUnit XML, ..."""
    output = REPORTS.get(to)
    if pass_k is not None:
        _check_pass_k(run, pass_k)
    done = render(run, output.name, baseline, pass_k)
    if out is None and output.stdout and isinstance(done, str):
        typer.echo(done, nl=False)
        return
    typer.echo(f"wrote {write(out or _default_file(run, output), done)}")


def _check_pass_k(run: Path, k: int) -> None:
    """``--pass-k`` against the run's samples (run.json), before the trials are read."""
    from toolbench.store import read_info, results_path

    info = read_info(results_path(run).parent)
    samples = info.samples if info is not None else None
    if samples is not None and samples < 2:
        raise UserError(
            f"--pass-k: run '{info.run_id if info else run}' has 1 sample per scenario; "
            "pass@k and pass^k need 2 or more (toolbench run --samples K)"
        )
    if k < 2 or (samples is not None and k > samples):
        most = f"{samples}, the run's samples" if samples is not None else "the run's samples"
        raise UserError(f"--pass-k: expected a k from 2 to {most} (got {k})")


def _table_names() -> list[str]:
    """The outputs that export the trial table (``export --to``)."""
    return report_names(table=True)


def _default_file(run: Path, output: ReportOutput) -> Path:
    from toolbench.store import results_path

    run_dir = results_path(run).parent
    if output.table:
        return run_dir / f"trials.{output.suffix}"
    return Path("reports") / f"{run_dir.name}.{output.suffix}"


def export(
    run: RunArg,
    to: Annotated[
        str,
        typer.Option(
            "--to", metavar=RegistryChoices("OUTPUT", _table_names), help="What to write."
        ),
    ],
    out: Annotated[
        Path | None,
        typer.Option(
            "-o", "--out", metavar="FILE", help="Output file (default: RUN/trials.<ext>)."
        ),
    ] = None,
) -> None:
    """Export the trial table (one row per trial, flat columns)."""
    from toolbench.report.outputs import load_input

    if to not in _table_names():
        raise UnknownNameError("export format", to, _table_names())
    output = REPORTS.get(to)
    report = load_input(run, None)
    path = write(out or _default_file(run, output), render_output(to, report))
    typer.echo(f"wrote {len(report.table.df)} trials to {path}")


def gate(
    run: RunArg,
    mins: Annotated[
        list[str] | None,
        typer.Option("--min", metavar="METRIC=VALUE", help="Lower bound on a metric (repeatable)."),
    ] = None,
    maxs: Annotated[
        list[str] | None,
        typer.Option("--max", metavar="METRIC=VALUE", help="Upper bound on a metric (repeatable)."),
    ] = None,
    baseline: Annotated[
        Path | None, typer.Option("--baseline", metavar="RUN", help="Baseline run for --max-drop.")
    ] = None,
    drops: Annotated[
        list[str] | None,
        typer.Option(
            "--max-drop",
            metavar="METRIC=VALUE",
            help="Largest allowed worsening against --baseline (repeatable).",
        ),
    ] = None,
    per_cell: Annotated[
        bool, typer.Option("--per-cell", help="Check every model x format cell too.")
    ] = False,
    significant: Annotated[
        bool,
        typer.Option(
            "--significant",
            help="A --max-drop on a rate fails only when the drop is also significant "
            "(paired exact McNemar against --baseline, p < 0.05); toml: significant = true.",
        ),
    ] = False,
    pass_k: Annotated[
        int | None,
        typer.Option(
            "--pass-k",
            metavar="K",
            help="The k of pass_hat_k (pass^k) and pass_at_k (pass@k) bounds, e.g. --min "
            "pass_hat_k=0.8 (2 to the run's --samples; default: its --samples; toml: pass_k).",
        ),
    ] = None,
    config: Annotated[
        Path | None,
        typer.Option(
            "--config",
            metavar="FILE",
            help="TOML file with a [gate] table (default: toolbench.toml, else pyproject.toml's "
            "[tool.toolbench.gate]).",
        ),
    ] = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the verdict as one JSON object.")
    ] = False,
) -> int:
    """Exit 0 when every threshold holds, 1 with a table of violations, 2 on bad input."""
    # The bounds are checked, then the folder, before the report (pandas) is loaded.
    from toolbench.report.gate_config import from_options, load_config

    cli = from_options(mins or [], maxs or [], drops or [], per_cell, pass_k)
    cli.significant = significant
    cfg = load_config(config).merged(cli, per_cell)
    if cfg.empty:
        raise UserError(
            "gate: no thresholds (give --min/--max/--max-drop or a [gate] table in toolbench.toml)"
        )
    if cfg.max_drop and baseline is None:
        raise UserError("--max-drop needs --baseline RUN")
    if significant and not cfg.max_drop:
        raise UserError("--significant tests --max-drop bounds; give --max-drop and --baseline")
    existing_results(run)
    from toolbench.cli.json_out import dumps, gate_json
    from toolbench.report import gate as g
    from toolbench.report.drop_tests import drop_tests
    from toolbench.report.metrics import aggregate, load_table

    table = load_table(run)
    if table.df.empty:
        raise UserError(f"{table.path}: no trials to gate")
    cells = aggregate(table.df)
    estimates = g.apply_repeat_bounds(cfg, table, cells)
    base_table = load_table(baseline) if baseline is not None else None
    base = aggregate(base_table.df) if base_table is not None else None
    tests = None
    if cfg.significant and base_table is not None:
        tests = drop_tests(table.df, base_table.df, list(cfg.max_drop))
    violations = g.evaluate(cfg, cells, base, tests)
    overall = cells[-1]
    unchecked = [
        m for m in sorted({*cfg.min, *cfg.max, *cfg.max_drop}) if overall.values.get(m) is None
    ]
    if as_json:
        base_id = base_table.run_id if base_table is not None else None
        typer.echo(dumps(gate_json(table.run_id, base_id, cfg, cells, violations, unchecked)))
        return 1 if violations else 0
    for m in unchecked:
        typer.echo(f"note: {m} does not apply to any trial of run {table.run_id}; not checked")
    if violations:
        typer.echo(f"gate failed: {len(violations)} violation(s) in run {table.run_id}")
        typer.echo(g.render_violations(violations, estimates))
        return 1
    n_bounds = len(cfg.min) + len(cfg.max) + len(cfg.max_drop)
    scope = "every cell" if cfg.per_cell else "the overall cell"
    typer.echo(f"gate passed: {n_bounds} bound(s) hold on {scope} of run {table.run_id}")
    return 0


def register(app: typer.Typer) -> None:
    for name, fn in (("report", report), ("export", export), ("gate", gate)):
        app.command(name, cls=Command)(fn)
