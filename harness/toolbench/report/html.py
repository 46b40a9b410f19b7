"""The self-contained HTML report (jinja2 with autoescape on; charts as data URIs).

Model output is hostile: every reply, parsed call and reason reaches the page only
through autoescaped template variables, never ``|safe``. The page carries no script.

Huge runs stay usable: the drill-down shows at most :data:`DETAIL_LIMIT` trials in full,
failures first, then unscored trials, then passes, and says how many were left out
(``toolbench export`` has every trial).
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import jinja2
import pandas as pd

from toolbench import codes
from toolbench.metrics import all_metrics, view
from toolbench.redaction import redact_error
from toolbench.report.baseline import BaselineDiff
from toolbench.report.charts import heatmap_png
from toolbench.report.knobs import not_applied_lines
from toolbench.report.metrics import (
    CellStats,
    TrialTable,
    aggregate,
    fmt_delta,
    fmt_value,
)
from toolbench.report.recommend import recommend
from toolbench.report.repeats_section import repeats_view
from toolbench.report.sensitivity import sensitivity_view
from toolbench.report.stream_section import streaming_view
from toolbench.report.visible import show_invisible
from toolbench.results import TrialResult, TrialScores
from toolbench.version import __version__

DETAIL_LIMIT = 300
"""Most trials shown in full in the drill-down."""
CHANGED_LIMIT = 500
"""Most changed trials listed against a baseline."""
TEXT_LIMIT = 20_000
"""Longest text block shown per field (longer ones are cut with a note)."""

_ORDER = {"fail": 0, "infra_error": 1, "unsupported": 1, "cassette_missing": 1, "pass": 2}


def _env() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(Path(__file__).parent / "templates")),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        # Runs before autoescaping, on every {{ value }} of the page.
        finalize=_finalize,
    )
    env.filters["metric"] = _metric_filter
    env.filters["delta"] = _delta_filter
    return env


def _finalize(value: Any) -> Any:
    return show_invisible(value) if isinstance(value, str) else value


def _metric_filter(value: float | None, metric: str) -> str:
    return fmt_value(metric, value)


def _delta_filter(value: float | None, metric: str) -> str:
    return fmt_delta(metric, value)


def _cut(text: str) -> str:
    if len(text) <= TEXT_LIMIT:
        return text
    return text[:TEXT_LIMIT] + f"\n… [{len(text) - TEXT_LIMIT} more characters not shown]"


def _json(obj: Any) -> str:
    return _cut(json.dumps(obj, indent=2, ensure_ascii=False, default=str))


def _seconds(value: float | None) -> str:
    """A latency for display; None (a replay of a cassette with no recorded time) is n/a."""
    return "n/a" if value is None else f"{value:.2f}s"


def _named(s: TrialScores) -> dict[str, Any]:
    """The drill-down's scores: each value by name (with its reason, when it has one)."""
    return {n: v.model_dump() if v.reason else v.value for n, v in s.values.items()}


def _trial_view(t: TrialResult, outcome: str) -> dict[str, Any]:
    turns = []
    for i, turn in enumerate(t.turns, 1):
        req = turn.request
        turns.append(
            {
                "n": i,
                "retry": turn.retry,
                "messages": _json(req.get("messages", [])),
                "stop": _json(req.get("stop")),
                "tools": _json(req.get("tools")) if req.get("tools") else None,
                "tool_choice": _json(req.get("tool_choice")) if "tool_choice" in req else None,
                "params": _json(
                    {k: v for k, v in req.items() if k not in ("messages", "stop", "tools")}
                ),
                "reply_text": _cut(turn.reply.text),
                "native_calls": _json(turn.reply.tool_calls) if turn.reply.tool_calls else None,
                "finish_reason": turn.reply.finish_reason or "",
                "parse_status": turn.parsed.status,
                "calls": _json([c.model_dump() for c in turn.parsed.calls]),
                "content": _cut(turn.parsed.content),
                "parse_errors": [f"{e.code}: {e.message}" for e in turn.parsed.errors],
                "stop_signals": turn.parsed.stop_signals,
                "latency": _seconds(turn.latency_s),
            }
        )
    s = t.scores
    reasons = list(zip(s.errors, s.reasons, strict=False)) if s else []
    if s and len(s.reasons) > len(s.errors):
        reasons += [("", r) for r in s.reasons[len(s.errors) :]]
    return {
        "model": t.model,
        "format": t.format,
        "sample": t.sample,
        "outcome": outcome,
        "status": t.status,
        "infra_error": redact_error(t.infra_error or ""),
        "turns": turns,
        "scores": _json(_named(s)) if s else None,
        "errors": s.errors if s else [],
        "reasons": reasons,
        "latency": _seconds(t.latency_s),
    }


def _taxonomy(table: TrialTable, cells: list[CellStats]) -> dict[str, Any]:
    df = table.df
    counts: dict[str, Counter[str]] = defaultdict(Counter)
    errs = df[df["errors"] != ""]
    for (m, f), g in errs.groupby(["model", "format"], sort=True):
        for text in g["errors"]:
            for code in set(text.split(";")):
                counts[code][f"{m} / {f}"] += 1
    labels = [c.label for c in cells if c.model != "overall"]
    rows = [
        {
            "code": code,
            "description": codes.DESCRIPTIONS.get(code, ""),
            "counts": [counts[code].get(lab, 0) for lab in labels],
            "total": sum(counts[code].values()),
        }
        for code in sorted(counts, key=lambda c: (-sum(counts[c].values()), c))
    ]
    return {"labels": labels, "rows": rows}


def _scenario_matrix(table: TrialTable, labels: list[str]) -> list[dict[str, Any]]:
    df = table.df
    scored = pd.DataFrame(
        {
            "scenario_id": df["scenario_id"],
            "cell": df["model"] + " / " + df["format"],
            "passed": (df["outcome"] == "pass").astype("int64"),
            "failed": (df["outcome"] == "fail").astype("int64"),
        }
    )
    agg = scored.groupby(["scenario_id", "cell"], sort=True).agg(
        k=("passed", "sum"), n=("passed", "size"), fails=("failed", "sum")
    )
    per: dict[str, dict[str, tuple[int, int, int]]] = defaultdict(dict)
    for (sid, cell), k, n, f in zip(
        agg.index, agg["k"].tolist(), agg["n"].tolist(), agg["fails"].tolist(), strict=True
    ):
        per[str(sid)][str(cell)] = (int(k), int(n), int(f))
    rows = []
    for sid in sorted(per, key=lambda s: (-sum(v[2] for v in per[s].values()), s)):
        rows.append(
            {
                "id": sid,
                "cells": [per[sid].get(lab) for lab in labels],
                "fails": sum(v[2] for v in per[sid].values()),
            }
        )
    return rows


def _details(table: TrialTable) -> tuple[dict[str, list[dict[str, Any]]], int]:
    df = table.df
    rank = df["outcome"].map(_ORDER).fillna(1)
    order = df.assign(_rank=rank).sort_values(
        ["_rank", "scenario_id", "model", "format", "sample"], kind="stable"
    )
    picked = order.head(DETAIL_LIMIT)
    outcomes = dict(zip(picked["_offset"], picked["outcome"], strict=True))
    by_scenario: dict[str, list[dict[str, Any]]] = defaultdict(list)
    trials = table.trials(int(o) for o in picked["_offset"])
    for off, t in zip(picked["_offset"], trials, strict=True):
        by_scenario[t.scenario_id].append(_trial_view(t, outcomes[off]))
    ordered = {k: by_scenario[k] for k in sorted(by_scenario)}
    return ordered, len(df) - len(picked)


def _baseline_view(diff: BaselineDiff) -> dict[str, Any]:
    names = [m.name for m in all_metrics()]
    cells = []
    for d in diff.cells:
        cells.append(
            {
                "label": d.cell.label,
                "has_base": d.base is not None,
                "metrics": [
                    {
                        "name": m,
                        "value": d.cell.values.get(m),
                        "base": d.base.values.get(m) if d.base else None,
                        "delta": d.delta(m),
                        "regressed": d.regressed(m),
                    }
                    for m in names
                ],
                "regressions": d.regressions,
            }
        )
    ch = diff.changed
    changed = [
        {
            "model": r["model"],
            "format": r["format"],
            "scenario_id": r["scenario_id"],
            "sample": int(r["sample"]),
            "before": r["outcome_base"],
            "after": r["outcome_new"],
            "worse": r["outcome_base"] == "pass" and r["outcome_new"] == "fail",
        }
        for _, r in ch.head(CHANGED_LIMIT).iterrows()
    ]
    return {
        "id": diff.base_id,
        "cells": cells,
        "changed": changed,
        "changed_total": len(ch),
        "changed_left_out": max(0, len(ch) - CHANGED_LIMIT),
        "only_new": diff.only_new,
        "only_base": diff.only_base,
        "n_regressions": sum(len(d.regressions) for d in diff.cells),
    }


def render_html(
    table: TrialTable, diff: BaselineDiff | None = None, pass_k: int | None = None
) -> str:
    cells = aggregate(table.df)
    tax = _taxonomy(table, cells)
    details, left_out = _details(table)
    recs = recommend(table)
    df = table.df
    metrics = all_metrics()
    rates = [m.name for m in metrics if m.kind == "rate"]
    summary_rows = [
        {
            "label": c.label,
            "overall": c.model == "overall",
            "metrics": [
                {
                    "name": m,
                    "value": c.values.get(m),
                    "ci": c.interval(m) if m in rates else None,
                    "n": c.counts.get(m, (0, 0))[1],
                }
                for m in (x.name for x in metrics)
            ],
        }
        for c in cells
    ]
    ctx: dict[str, Any] = {
        "run_id": table.run_id,
        "info": table.info.model_dump() if table.info else None,
        "model_notes": (table.info.model_notes if table.info else []) + not_applied_lines(table),
        "generated": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "version": __version__,
        "n_trials": len(df),
        "n_pass": int((df["outcome"] == "pass").sum()),
        "n_fail": int((df["outcome"] == "fail").sum()),
        "n_unscored": int((~df["outcome"].isin(["pass", "fail"])).sum()),
        "metrics": [m.name for m in metrics],
        "descriptions": {m.name: m.description for m in metrics},
        "rates": rates,
        "summary": summary_rows,
        "heatmaps": [(m, uri) for m in view("headline") if (uri := heatmap_png(cells, m))],
        "taxonomy": tax,
        "matrix": _scenario_matrix(table, tax["labels"]),
        "details": details,
        "detail_limit": DETAIL_LIMIT,
        "left_out": left_out,
        "recommendations": [
            {
                "model": r.model,
                "format": r.winner.format,
                "decided_by": r.decided_by,
                "significant": r.significant,
                "outcome": r.outcome,
                "candidates": [c.format for c in r.candidates],
                "tie_broken_by": r.tie_broken_by,
                "floor": f"{100 * r.floor:.0f}%",
                "p": f"{r.test.p_value:.3g}" if r.test else None,
                "runner_up": r.ranked[1].format if len(r.ranked) > 1 else None,
            }
            for r in recs
        ],
        "baseline": _baseline_view(diff) if diff else None,
        "streaming": streaming_view(table, cells),
        "repeats": repeats_view(table, pass_k),
        "sensitivity": sensitivity_view(cells),
    }
    return _env().get_template("report.html.j2").render(**ctx)
