"""Analysis commands: report, export, gate, compare, recommend, rescore.

They read ``runs/<id>/`` only (no model calls, no network) and import their library
modules lazily so ``toolbench --help`` stays fast.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from toolbench.errors import UnknownNameError, UserError

RunArg = Annotated[Path, typer.Argument(help="A run directory (runs/<id>) or its results.jsonl.")]


def _restrict(table: object, formats: list[str]) -> None:
    from toolbench.report.metrics import TrialTable

    assert isinstance(table, TrialTable)
    table.df = table.df[table.df["format"].isin(formats)].reset_index(drop=True)


def report(
    run: RunArg,
    baseline: Annotated[
        Path | None, typer.Option("--baseline", help="Show deltas against this run.")
    ] = None,
    out: Annotated[
        Path | None,
        typer.Option("-o", "--out", help="Output file (html default: reports/<id>.html)."),
    ] = None,
    fmt: Annotated[str, typer.Option("--format", help="html, md or junit.")] = "html",
) -> None:
    """Write a report of a run: self-contained HTML, a Markdown summary, or JUnit XML."""
    from toolbench.report import REPORT_FORMATS, render_report, write_report
    from toolbench.results import results_path

    if fmt not in REPORT_FORMATS:
        raise UnknownNameError("report format", fmt, REPORT_FORMATS)
    if out is None and fmt != "html":
        typer.echo(render_report(run, fmt, baseline), nl=False)
        return
    if out is None:
        out = Path("reports") / f"{results_path(run).parent.name}.html"
    path = write_report(run, out, baseline, fmt)
    typer.echo(f"wrote {path}")


def export(
    run: RunArg,
    to: Annotated[str, typer.Option("--to", help="csv, parquet or jsonl.")],
    out: Annotated[
        Path | None, typer.Option("-o", "--out", help="Output file (default: RUN/trials.<ext>).")
    ] = None,
) -> None:
    """Export the trial table (one row per trial, flat columns)."""
    from toolbench.report.export import EXPORT_FORMATS
    from toolbench.report.export import export as do_export
    from toolbench.report.metrics import load_table
    from toolbench.results import results_path

    if to not in EXPORT_FORMATS:
        raise UnknownNameError("export format", to, EXPORT_FORMATS)
    table = load_table(run)
    target = out if out is not None else results_path(run).parent / f"trials.{to}"
    path = do_export(table, to, target)
    typer.echo(f"wrote {len(table.df)} trials to {path}")


def gate(
    run: RunArg,
    mins: Annotated[
        list[str] | None, typer.Option("--min", help="metric=value lower bound (repeatable).")
    ] = None,
    maxs: Annotated[
        list[str] | None, typer.Option("--max", help="metric=value upper bound (repeatable).")
    ] = None,
    baseline: Annotated[
        Path | None, typer.Option("--baseline", help="Baseline run for --max-drop.")
    ] = None,
    drops: Annotated[
        list[str] | None,
        typer.Option("--max-drop", help="metric=value largest allowed worsening vs baseline."),
    ] = None,
    per_cell: Annotated[
        bool, typer.Option("--per-cell", help="Check every model x format cell too.")
    ] = False,
    config: Annotated[
        Path | None, typer.Option("--config", help="TOML file with a [gate] table.")
    ] = None,
) -> int:
    """Exit 0 when every threshold holds, 1 with a table of violations, 2 on bad input."""
    from toolbench.report import gate as g
    from toolbench.report.metrics import aggregate, load_table

    cli = g.from_options(mins or [], maxs or [], drops or [], per_cell)
    cfg = g.load_config(config).merged(cli, per_cell)
    if cfg.empty:
        raise UserError(
            "gate: no thresholds (give --min/--max/--max-drop or a [gate] table in toolbench.toml)"
        )
    if cfg.max_drop and baseline is None:
        raise UserError("--max-drop needs --baseline RUN")
    table = load_table(run)
    if table.df.empty:
        raise UserError(f"{table.path}: no trials to gate")
    cells = aggregate(table.df)
    base = aggregate(load_table(baseline).df) if baseline is not None else None
    violations = g.evaluate(cfg, cells, base)
    n_bounds = len(cfg.min) + len(cfg.max) + len(cfg.max_drop)
    scope = "every cell" if cfg.per_cell else "the overall cell"
    overall = cells[-1]
    for m in sorted({*cfg.min, *cfg.max, *cfg.max_drop}):
        if overall.values.get(m) is None:
            typer.echo(f"note: {m} does not apply to any trial of run {table.run_id}; not checked")
    if violations:
        typer.echo(f"gate failed: {len(violations)} violation(s) in run {table.run_id}")
        typer.echo(g.render_violations(violations))
        return 1
    typer.echo(f"gate passed: {n_bounds} bound(s) hold on {scope} of run {table.run_id}")
    return 0


def compare(
    run_a: RunArg,
    run_b: Annotated[
        Path | None, typer.Argument(help="Second run (omit to compare formats in RUN_A).")
    ] = None,
    formats: Annotated[
        str | None,
        typer.Option("--formats", help="X,Y: compare format X with Y (in one run), or restrict."),
    ] = None,
) -> None:
    """Per-cell metric deltas and paired McNemar tests between two runs or two formats."""
    from toolbench.report.compare import compare_formats, compare_runs, render_comparison
    from toolbench.report.metrics import load_table

    picked = [f.strip() for f in (formats or "").split(",") if f.strip()]
    if run_b is None:
        if len(picked) != 2:
            raise UserError("compare: give RUN_B, or --formats X,Y with exactly two formats")
        typer.echo(render_comparison(compare_formats(load_table(run_a), picked[0], picked[1])))
        return
    ta, tb = load_table(run_a), load_table(run_b)
    if picked:
        _restrict(ta, picked)
        _restrict(tb, picked)
    typer.echo(render_comparison(compare_runs(ta, tb)))


def recommend(
    run: RunArg,
    emit: Annotated[
        str | None, typer.Option("--emit", help="yaml: print a config snippet only.")
    ] = None,
) -> None:
    """The default format for each model, by a documented rule, with the deciding numbers."""
    from toolbench.report.metrics import load_table
    from toolbench.report.recommend import emit_yaml, render
    from toolbench.report.recommend import recommend as rec

    if emit is not None and emit != "yaml":
        raise UnknownNameError("--emit format", emit, ["yaml"])
    recs = rec(load_table(run))
    typer.echo(emit_yaml(recs) if emit else render(recs), nl=not emit)


def rescore(
    run: RunArg,
    out: Annotated[
        Path | None,
        typer.Option("-o", "--out", help="New run directory (default: RUN-rescored)."),
    ] = None,
    scenarios: Annotated[
        list[str] | None,
        typer.Option("--scenarios", help="Scenario files/directories (default: bundled)."),
    ] = None,
) -> None:
    """Re-parse and re-score stored replies into a new run directory (no model calls)."""
    from toolbench.runner.rescore import rescore_run
    from toolbench.scenarios.loader import load_scenarios

    scs = load_scenarios(scenarios) if scenarios else None
    summary = rescore_run(run, out, scs)
    typer.echo(summary.render())


def register(app: typer.Typer) -> None:
    app.command("report")(report)
    app.command("export")(export)
    app.command("gate")(gate)
    app.command("compare")(compare)
    app.command("recommend")(recommend)
    app.command("rescore")(rescore)
