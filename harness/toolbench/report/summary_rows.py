"""The run summary's cells without pandas: what ``toolbench run`` prints when it ends.

Importing pandas is a large share of the CPU of replaying the 1,000 ``bfcl-smoke`` trials
as a whole command, and the summary only shows rates. When every metric of the
``summary`` view declares its per-row value
(:attr:`~toolbench.metrics.metric_registry.Metric.per_row`: the built-in rates do), its
cells are counted here from the rows of one read of the results file; a plugin's metric
without one makes the caller build the pandas trial table as every other view does.
The two give the same cells (a test holds it on the committed run fixtures). The same
read also yields what the unmeasured check (:func:`~toolbench.runner.measured.unmeasured`)
needs: the results file is read once.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from toolbench.metrics import metric_registry as registry
from toolbench.report.metrics import OVERALL, CellStats, table_columns, trial_row
from toolbench.store import read_info, read_projected


@dataclass(frozen=True)
class TrialSeen:
    """What the unmeasured check reads of a trial."""

    model: str
    format: str
    status: str
    error_code: str | None
    infra_error: str | None


@dataclass
class SummaryRows:
    """A run read for its summary: the cells of the shown rates and the trials seen."""

    run_id: str
    trials: int
    cells: list[CellStats]
    seen: list[TrialSeen]


def _project(d: dict[str, Any]) -> tuple[tuple[Any, ...], TrialSeen]:
    status = str(d.get("status", "ok"))
    seen = TrialSeen(str(d["model"]), str(d["format"]), status, d.get("error_code"),
                     d.get("infra_error"))  # fmt: skip
    return trial_row(d), seen


def _cell(
    model: str, fmt: str, rows: list[dict[str, Any]], shown: list[registry.Metric]
) -> CellStats:
    values: dict[str, float | None] = {}
    counts: dict[str, tuple[int, int]] = {}
    for m in shown:
        assert m.per_row is not None
        got = [v for v in map(m.per_row, rows) if v is not None]
        k = int(sum(got))
        values[m.name] = k / len(got) if got else None
        counts[m.name] = (k, len(got))
    return CellStats(model, fmt, values, counts)


def summary_rows(
    run_dir: Path, shown: tuple[str, ...], written_from: int | None = None
) -> SummaryRows | None:
    """The cells of the ``shown`` metrics per ``(model, format)``, sorted, then the
    overall cell, as :func:`~toolbench.report.metrics.aggregate` gives them; None when a
    shown metric has no per-row value (then the caller builds the pandas table).
    ``written_from``: where the lines this process wrote begin (not validated again:
    :func:`~toolbench.store.read_projected`)."""
    metrics = [registry.get_metric(name) for name in shown]
    if any(m.per_row is None for m in metrics):
        return None
    read = read_projected(run_dir, _project, written_from)
    columns = table_columns()
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for row, seen in read.rows:
        cell = groups.setdefault((seen.model, seen.format), [])
        cell.append(dict(zip(columns, row, strict=True)))
    order = sorted(groups)
    cells = [_cell(m, f, groups[(m, f)], metrics) for m, f in order]
    every = [r for key in order for r in groups[key]]
    if every:
        cells.append(_cell(OVERALL, OVERALL, every, metrics))
    info = read_info(read.path.parent)
    run_id = info.run_id if info else read.path.parent.name
    return SummaryRows(run_id, len(read.rows), cells, [seen for _, seen in read.rows])
