"""Report outputs registered by name: what ``toolbench report --to`` and ``export --to`` write.

Each output turns one stored run (its trial table, and a baseline's differences when one
is given) into one document: the self-contained HTML report, the Markdown summary, JUnit
XML, and the trial table as CSV, Parquet or JSONL. They come in through the entry-point
group ``toolbench.reports`` (:mod:`toolbench.registry`), toolbench's own as one entry
(:data:`BUILTIN`, in the order ``--help`` lists them) and a plugin's as its own, so a new
output is one module and one entry point: the command line reads its choices from here.

Text is redacted here, after the output renders it, so a plugin's output cannot write a
known secret; an output that gives bytes (Parquet, compressed) must redact its cells
itself (:func:`toolbench.report.export.redact_frame`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from toolbench.errors import UserError
from toolbench.outpath import prepare_file
from toolbench.registry import Registry, instances_of

if TYPE_CHECKING:  # pandas comes with the trial table: imported when a report is made
    from toolbench.report.baseline import BaselineDiff
    from toolbench.report.metrics import TrialTable

ENTRY_POINT_GROUP = "toolbench.reports"


@dataclass(frozen=True)
class ReportInput:
    """What an output reads: the run's trial table and, with ``--baseline``, the
    differences from the baseline run (None without one)."""

    table: TrialTable
    baseline: BaselineDiff | None = None
    pass_k: int | None = None
    """``report --pass-k``: the k of pass@k and pass^k (None: the run's samples)."""


@dataclass(frozen=True)
class ReportOutput:
    """One output. ``render`` gives text (redacted after it) or bytes; ``suffix`` is the
    default file's extension; ``table`` marks an export of the flat trial table (the
    ``export`` command's choices, written to ``RUN/trials.<suffix>`` without ``-o``); a
    text output with ``stdout`` goes to stdout without ``-o``, one without to
    ``reports/<run id>.<suffix>``."""

    name: str
    description: str
    render: Callable[[ReportInput], str | bytes]
    suffix: str
    table: bool = False
    stdout: bool = True


REPORTS: Registry[ReportOutput] = Registry(
    ENTRY_POINT_GROUP, instances_of(ReportOutput), "report output", lambda o: o.name
)
"""Every report output by name, toolbench's own first."""


def report_names(*, table: bool | None = None) -> list[str]:
    """The registered outputs' names; ``table``: only exports of the trial table (True)
    or only the others (False)."""
    return [o.name for o in REPORTS.values() if table is None or o.table == table]


def load_input(
    run: str | Path, baseline: str | Path | None, pass_k: int | None = None
) -> ReportInput:
    from toolbench.report.baseline import diff  # pandas: deferred for start-up
    from toolbench.report.metrics import load_table

    table = load_table(run)
    return ReportInput(table, diff(table, load_table(baseline)) if baseline else None, pass_k)


def render_output(name: str, report: ReportInput) -> str | bytes:
    """Output ``name`` of ``report``, text redacted of every known secret value."""
    from toolbench.redaction import redact

    done = REPORTS.get(name).render(report)
    return redact(done) if isinstance(done, str) else done


def render(
    run: str | Path, name: str, baseline: str | Path | None = None, pass_k: int | None = None
) -> str | bytes:
    """Output ``name`` of the stored run ``run`` (against ``baseline``)."""
    output = REPORTS.get(name)  # an unknown name is refused before the run is read
    return render_output(output.name, load_input(run, baseline, pass_k))


def write(path: str | Path, done: str | bytes) -> Path:
    """Write one rendered output to ``path`` (parents created)."""
    path = Path(path)
    prepare_file(path)
    try:
        if isinstance(done, str):
            path.write_text(done, encoding="utf-8")
        else:
            path.write_bytes(done)
    except OSError as exc:  # a parent that is a file, a directory as -o, no permission
        raise UserError(f"{path}: cannot write: {exc.strerror}") from None
    return path


# --------------------------------------------------------------------------- built-ins
# Each imports its module when it renders: those read pandas and templates, which
# ``toolbench --help`` must not import.


def _html(report: ReportInput) -> str:
    from toolbench.report.html import render_html

    return render_html(report.table, report.baseline, report.pass_k)


def _markdown(report: ReportInput) -> str:
    from toolbench.report.markdown import markdown_summary

    return markdown_summary(report.table, report.baseline, report.pass_k)


def _junit(report: ReportInput) -> str:
    from toolbench.report.junit import junit_xml

    return junit_xml(report.table)


def _csv(report: ReportInput) -> str:
    from toolbench.report.export import redact_frame, trial_frame

    return str(redact_frame(trial_frame(report.table)).to_csv(index=False))


def _parquet(report: ReportInput) -> bytes:
    from toolbench.report.export import redact_frame, trial_frame

    done = redact_frame(trial_frame(report.table)).to_parquet(index=False)
    assert isinstance(done, bytes)  # no path given: the bytes
    return done


def _jsonl(report: ReportInput) -> str:
    from toolbench.report.export import redact_frame, trial_frame

    return str(redact_frame(trial_frame(report.table)).to_json(orient="records", lines=True))


BUILTIN = (
    ReportOutput("html", "a self-contained HTML report", _html, "html", stdout=False),
    ReportOutput("md", "a Markdown summary", _markdown, "md"),
    ReportOutput("junit", "JUnit XML, a test case per scenario and cell", _junit, "xml"),
    ReportOutput("csv", "the trial table as CSV", _csv, "csv", table=True, stdout=False),
    ReportOutput(
        "parquet", "the trial table as Parquet", _parquet, "parquet", table=True, stdout=False
    ),
    ReportOutput(
        "jsonl", "the trial table as JSON lines", _jsonl, "jsonl", table=True, stdout=False
    ),
)
"""toolbench's own outputs (one entry point, ``builtin``, in ``pyproject.toml``)."""
