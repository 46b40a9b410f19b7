"""What ``toolbench run`` shows: a rich progress bar, then a compact table per cell."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table

from toolbench.cli.progress_lines import ProgressLines
from toolbench.results import TrialResult
from toolbench.runner.measured import EXIT_UNMEASURED, Unmeasured, unmeasured, unmeasured_in
from toolbench.runner.run import ProgressHook


@contextmanager
def progress_hook(total: int, quiet: bool) -> Iterator[ProgressHook]:
    """A callback per finished trial that advances the bar (or does nothing when quiet);
    without a terminal, a progress line now and then instead (:mod:`.progress_lines`)."""
    if quiet or total == 0:
        yield lambda _r: None
        return
    console = Console(stderr=True)
    if not console.is_terminal:
        lines = ProgressLines(total, sys.stderr)
        yield lambda result: lines.advance(result.status == "ok")
        return
    counts = {"ok": 0, "other": 0}
    with Progress(
        TextColumn("[bold]trials"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[status]}"),
        TimeElapsedColumn(),
        TextColumn("eta"),
        TimeRemainingColumn(),
        console=console,
    ) as progress:
        task = progress.add_task("run", total=total, status="")

        def hook(result: TrialResult) -> None:
            counts["ok" if result.status == "ok" else "other"] += 1
            status = f"ok {counts['ok']}, not run {counts['other']}"
            progress.update(task, advance=1, status=status)

        yield hook


def print_summary(
    run_dir: Path, write_report: bool, quiet: bool, written_from: int | None = None
) -> list[Unmeasured]:
    """The registered summary metrics per (model, format), the models and cells that
    measured nothing (with why), and where the results and report are. Returns those
    unmeasured models and cells (the command's exit code depends on them).
    ``written_from``: where the lines this process wrote begin in the results file."""
    from toolbench.metrics import view
    from toolbench.report.metrics import fmt_with_interval
    from toolbench.report.summary_rows import summary_rows

    shown = view("summary")
    # The built-in rates are counted without pandas (slow to import); a plugin's metric
    # in the summary without a per-row value takes the pandas table.
    quick = summary_rows(run_dir, shown, written_from)
    if quick is not None:
        run_id, trials, cells = quick.run_id, quick.trials, quick.cells
        missing = unmeasured(quick.seen)
    else:
        from toolbench.report.metrics import aggregate, load_table

        table = load_table(run_dir)
        run_id, trials, cells = table.run_id, len(table.df), aggregate(table.df)
        missing = unmeasured_in(run_dir)
    # Wide enough for every shown name in full (a plugin may add columns).
    console = Console(width=max(140, 30 + sum(len(m) + 3 for m in shown)))
    if trials:
        grid = Table(title=f"run {run_id}: {trials} trials", show_lines=False)
        grid.add_column("model / format")
        for m in shown:
            # Folded, not cut: every name stays readable however many metrics are shown.
            grid.add_column(m, justify="right", overflow="fold")
        for cell in cells:
            # Rates: the value, under it the Wilson 95% interval, then the denominator.
            grid.add_row(cell.label, *(fmt_with_interval(cell, m, "\n") for m in shown))
        console.print(grid)
    if missing:
        console.print(f"not measured (no ok trial; exit code {EXIT_UNMEASURED}):", markup=False)
        for u in missing:
            console.print(f"  {u.label}: {u.trials} trial(s), {u.why}", markup=False,
                          highlight=False, soft_wrap=True)  # fmt: skip
    console.print(f"results: {run_dir / 'results.jsonl'}")
    if write_report:
        from toolbench.report import write_report as write_html

        out = Path("reports") / f"{run_id}.html"
        write_html(run_dir, out)
        console.print(f"report:  {out}")
    _ = quiet
    return missing
