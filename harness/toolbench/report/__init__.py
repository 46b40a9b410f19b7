"""Analysis of finished runs: reports, CI gate, comparisons, recommendations, export,
rescoring. Everything here reads ``runs/<id>/`` only: no model calls, no network.
"""

from __future__ import annotations

from pathlib import Path

from toolbench.errors import UserError
from toolbench.outpath import prepare_file

REPORT_FORMATS = ("html", "md", "junit")


def render_report(
    run_dir: str | Path, fmt: str = "html", baseline: str | Path | None = None
) -> str:
    """The report of a run as text (HTML, Markdown or JUnit XML), every known secret
    value redacted (a results file written elsewhere, or by an older toolbench, may hold
    one)."""
    from toolbench.redaction import redact

    return redact(_render(run_dir, fmt, baseline))


def _render(run_dir: str | Path, fmt: str, baseline: str | Path | None) -> str:
    from toolbench.errors import UnknownNameError
    from toolbench.report.baseline import diff
    from toolbench.report.metrics import load_table

    if fmt not in REPORT_FORMATS:
        raise UnknownNameError("report format", fmt, REPORT_FORMATS)
    table = load_table(run_dir)
    base = diff(table, load_table(baseline)) if baseline is not None else None
    if fmt == "md":
        from toolbench.report.markdown import markdown_summary

        return markdown_summary(table, base)
    if fmt == "junit":
        from toolbench.report.junit import junit_xml

        return junit_xml(table)
    from toolbench.report.html import render_html

    return render_html(table, base)


def write_report(
    run_dir: str | Path,
    out_path: str | Path,
    baseline: str | Path | None = None,
    fmt: str = "html",
) -> Path:
    """Write the report of ``run_dir`` to ``out_path`` (parents created); return the path.

    ``toolbench run`` calls this at the end of a run.
    """
    path = Path(out_path)
    prepare_file(path)
    text = render_report(run_dir, fmt, baseline)
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as exc:  # a parent that is a file, a directory as -o, no permission
        raise UserError(f"{path}: cannot write: {exc.strerror}") from None
    return path


__all__ = ["REPORT_FORMATS", "render_report", "write_report"]
