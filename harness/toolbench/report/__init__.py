"""Analysis of finished runs: reports, CI gate, comparisons, recommendations, export,
rescoring. Everything here reads ``runs/<id>/`` only: no model calls, no network.
"""

from __future__ import annotations

from pathlib import Path

from toolbench.errors import UserError
from toolbench.report.outputs import render, write


def render_report(
    run_dir: str | Path, fmt: str = "html", baseline: str | Path | None = None
) -> str:
    """The report of a run as text (any registered text output: HTML, Markdown, JUnit
    XML, ...), every known secret value redacted (a results file written elsewhere, or
    by an older toolbench, may hold one)."""
    done = render(run_dir, fmt, baseline)
    if isinstance(done, bytes):
        raise UserError(f"report output '{fmt}' is binary: write it to a file (-o)")
    return done


def write_report(
    run_dir: str | Path,
    out_path: str | Path,
    baseline: str | Path | None = None,
    fmt: str = "html",
) -> Path:
    """Write the report of ``run_dir`` to ``out_path`` (parents created); return the path.

    ``toolbench run`` calls this at the end of a run.
    """
    return write(out_path, render(run_dir, fmt, baseline))


__all__ = ["render_report", "write_report"]
