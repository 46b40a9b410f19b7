"""A report output that exists only in the tests: the test of the report registry's design.

Its module and one entry point (``cells-csv = "toy_csv_report:OUTPUT"`` in
``toolbench.reports``; ``test_toy_report.py`` adds it) are all a new output needs:
``toolbench report --to`` lists and writes it, redacted like every other output. It
imports public names only.
"""

from __future__ import annotations

import csv
import io

from toolbench.plugin import ReportInput, ReportOutput


def _render(report: ReportInput) -> str:
    df = report.table.df
    out = io.StringIO()
    rows = csv.writer(out, lineterminator="\n")
    rows.writerow(["model", "format", "trials", "ok"])
    for (model, fmt), cell in df.groupby(["model", "format"], sort=True):
        rows.writerow([model, fmt, len(cell), int((cell["status"] == "ok").sum())])
    return out.getvalue()


OUTPUT = ReportOutput(
    "cells-csv", "trials and ok trials per model and format, as CSV", _render, "csv"
)
