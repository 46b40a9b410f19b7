"""A short Markdown summary of a run, for a CI job summary or a PR comment."""

from __future__ import annotations

from toolbench.metrics import view
from toolbench.report.baseline import BaselineDiff, CellDelta
from toolbench.report.knobs import not_applied_lines
from toolbench.report.metrics import (
    CellStats,
    TrialTable,
    aggregate,
    fmt_delta,
    fmt_value,
    fmt_with_interval,
)
from toolbench.report.recommend import recommend, verdict
from toolbench.report.repeats_section import repeats_markdown
from toolbench.report.stream_section import streaming_markdown
from toolbench.report.visible import show_invisible

_MAX_CHANGED = 20


def _md(s: str) -> str:
    """Escape what would break a table cell or start markup."""
    out = show_invisible(s).replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")
    for ch in "<>*_`[]":
        out = out.replace(ch, "\\" + ch)
    return out


def markdown_summary(
    table: TrialTable, base: BaselineDiff | None = None, pass_k: int | None = None
) -> str:
    cells = aggregate(table.df)
    columns = view("markdown")
    df = table.df
    n = len(df)
    n_fail = int((df["outcome"] == "fail").sum())
    n_infra = int((~df["outcome"].isin(["pass", "fail"])).sum())
    lines = [
        f"## toolbench run `{_md(table.run_id)}`",
        "",
        f"{n} trials: {n - n_fail - n_infra} passed, {n_fail} failed, "
        f"{n_infra} not scored (infra/unsupported/cassette). Rates: value, Wilson 95% "
        "interval, n = trials in the denominator.",
        "",
        "| cell | " + " | ".join(columns) + " |",
        "|---" * (len(columns) + 1) + "|",
    ]
    dmap = {d.cell.key: d for d in base.cells} if base else {}
    for c in cells:
        lines.append(
            "| " + " | ".join([_md(c.label), *(_cell(c, m, dmap) for m in columns)]) + " |"
        )
    knobs = not_applied_lines(table)
    if knobs:
        lines += ["", "**Knobs not applied** (the provider does not take them; these cells"
                  " measured its default):", ""]  # fmt: skip
        lines += [f"- {_md(line)}" for line in knobs]
    lines += streaming_markdown(table, cells, _md)
    lines += repeats_markdown(table, _md, pass_k)
    recs = recommend(table)
    if recs:
        lines += ["", "**Recommended formats:**", ""]
        lines += [f"- {_md(verdict(r))}" for r in recs]
    if base is not None:
        regs = [(d, m) for d in base.cells for m in d.regressions]
        lines += ["", f"### Against baseline `{_md(base.base_id)}`", ""]
        if regs:
            lines.append(f"**{len(regs)} regression(s):**")
            lines.append("")
            for d, m in regs:
                b = d.base.values.get(m) if d.base else None
                lines.append(
                    f"- {_md(d.cell.label)}: {m} {fmt_value(m, b)} → "
                    f"{fmt_value(m, d.cell.values.get(m))} ({fmt_delta(m, d.delta(m))})"
                )
        else:
            lines.append("No regressions.")
        ch = base.changed
        if len(ch):
            lines += ["", f"{len(ch)} trial(s) changed outcome:", ""]
            for _, r in ch.head(_MAX_CHANGED).iterrows():
                lines.append(
                    f"- {_md(r['model'])} / {_md(r['format'])} / {_md(r['scenario_id'])} "
                    f"#{r['sample']}: {r['outcome_base']} → {r['outcome_new']}"
                )
            if len(ch) > _MAX_CHANGED:
                lines.append(f"- … and {len(ch) - _MAX_CHANGED} more (see the HTML report)")
    return "\n".join(lines) + "\n"


def _cell(c: CellStats, m: str, dmap: dict[tuple[str, str], CellDelta]) -> str:
    text = fmt_with_interval(c, m)
    d = dmap.get(c.key)
    dv = d.delta(m) if d is not None else None
    if d is not None and dv is not None and abs(dv) > 1e-9:
        text += f" ({fmt_delta(m, dv)}{' ⚠' if d.regressed(m) else ''})"
    return text
