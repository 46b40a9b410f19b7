"""The ``--json`` objects of ``gate``, ``compare`` and ``recommend`` (docs/cli.md, "JSON").

Each is built from the objects the report functions already return, so the JSON says
exactly what the text says. The keys are a contract for scripts: adding a key is
compatible, renaming or removing one is not (``tests/cli/test_json_output.py`` pins them).
Values are plain numbers (rates as fractions in [0, 1]), ``null`` where a metric does not
apply; labels are the ones the text output prints.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from toolbench.report.compare import Comparison, PairedTest
    from toolbench.report.gate import GateConfig, Violation
    from toolbench.report.metrics import CellStats
    from toolbench.report.recommend import Recommendation
    from toolbench.report.run_noise import RunNoise
    from toolbench.report.workload import PairRanking

JSON_VERSION = 1
"""Bumped when a key is renamed or removed."""


def dumps(obj: dict[str, Any]) -> str:
    """Indented, key order as built, never NaN (``null`` instead)."""
    return json.dumps(_finite(obj), indent=2, ensure_ascii=False, allow_nan=False)


def _finite(x: Any) -> Any:
    if isinstance(x, float) and not math.isfinite(x):
        return None
    if isinstance(x, dict):
        return {k: _finite(v) for k, v in x.items()}
    if isinstance(x, list | tuple):
        return [_finite(v) for v in x]
    return x


def _cell_ids(cell: CellStats | None, label: str) -> dict[str, Any]:
    if cell is None:
        return {"cell": label, "model": None, "format": None}
    return {"cell": label, "model": cell.model, "format": cell.format}


def gate_json(
    run_id: str,
    baseline_id: str | None,
    cfg: GateConfig,
    cells: Sequence[CellStats],
    violations: Sequence[Violation],
    not_applicable: Sequence[str],
) -> dict[str, Any]:
    """``gate --json``: the verdict, the bounds checked and every violation."""
    by_label = {c.label: c for c in cells}
    return {
        "version": JSON_VERSION,
        "command": "gate",
        "run": run_id,
        "baseline": baseline_id,
        "passed": not violations,
        "per_cell": cfg.per_cell,
        "bounds": {"min": cfg.min, "max": cfg.max, "max_drop": cfg.max_drop},
        "config": cfg.source,
        "not_applicable": list(not_applicable),
        "violations": [
            {
                **_cell_ids(by_label.get(v.cell), v.cell),
                "metric": v.metric,
                "kind": v.kind,
                "value": v.value,
                "bound": v.bound,
                "baseline": v.baseline,
                **({} if v.p_value is None else {"p_value": v.p_value}),
            }
            for v in violations
        ],
        **({"significant": True} if cfg.significant else {}),
    }


def _test_json(t: PairedTest) -> dict[str, Any]:
    return {
        "group": t.group,
        "metric": t.metric,
        "pairs": t.n_pairs,
        "a": t.a_rate,
        "b": t.b_rate,
        "only_a": t.only_a,
        "only_b": t.only_b,
        "p_value": t.p_value,
        "significant": t.n_pairs > 0 and t.significant,
        "detectable_difference": t.detectable,
    }


def comparison_json(mode: str, cmp: Comparison) -> dict[str, Any]:
    """``compare --json``: per cell and metric the two values and the delta, then the tests."""
    from toolbench.metrics import all_metrics
    from toolbench.report.compare import delta
    from toolbench.report.paired_stats import ALPHA

    names = [m.name for m in all_metrics()]
    cells = []
    for label, a, b in cmp.cells:
        metrics = {}
        for m in names:
            va = a.values.get(m) if a else None
            vb = b.values.get(m) if b else None
            if va is None and vb is None:
                continue
            metrics[m] = {"a": va, "b": vb, "delta": delta(m, a, b)}
        cells.append({"cell": label, "metrics": metrics})
    return {
        "version": JSON_VERSION,
        "command": "compare",
        "mode": mode,
        "a": cmp.a_name,
        "b": cmp.b_name,
        "alpha": ALPHA,
        "cells": cells,
        "tests": [_test_json(t) for t in cmp.tests],
        **({} if cmp.noise is None else {"noise": _noise_json(cmp.noise)}),
    }


def _noise_json(noise: RunNoise) -> dict[str, Any]:
    """Run against run: per cell the paired trials, how they disagree, and whether the
    difference is beyond noise; then the share of cells beyond noise."""
    return {
        "cells": [
            {
                "cell": c.label,
                "model": c.model,
                "format": c.format,
                "pairs": c.pairs,
                "only_a": c.only_a,
                "only_b": c.only_b,
                "disagreement": c.disagreement,
                "p_value": c.p_value,
                "beyond_noise": c.beyond_noise,
            }
            for c in noise.cells
        ],
        "share_beyond_noise": noise.share_beyond,
        "disagreement": noise.disagreement,
    }


def comparisons_json(mode: str, cmps: Sequence[Comparison]) -> dict[str, Any]:
    """``compare --by --json``: one entry per pair (``a``, ``b``, ``cells``, ``tests``)."""
    from toolbench.report.paired_stats import ALPHA

    pairs = []
    for cmp in cmps:
        one = comparison_json(mode, cmp)
        pairs.append({k: one[k] for k in ("a", "b", "cells", "tests")})
    return {
        "version": JSON_VERSION,
        "command": "compare",
        "mode": mode,
        "alpha": ALPHA,
        "comparisons": pairs,
    }


def pair_ranking_json(r: PairRanking) -> dict[str, Any]:
    """``recommend --pairs --json``: the workload, the rule, the ranking and the top two."""
    from toolbench.report.paired_stats import ALPHA, POWER
    from toolbench.report.workload import TIE_BREAKERS

    top = None
    if r.top is not None:
        a, b = r.ranked[0].cell, r.ranked[1].cell
        top = {
            "a": {"model": a.model, "format": a.format},
            "b": {"model": b.model, "format": b.format},
            "pairs": r.top.pairs,
            "only_a": r.top.only_a,
            "only_b": r.top.only_b,
            "p_value": r.top.p_value,
            "significant": r.top.significant,
            "detectable_difference": r.top.detectable,
            "alpha": ALPHA,
            "power": POWER,
        }
    return {
        "version": JSON_VERSION,
        "command": "recommend",
        "mode": "pairs",
        "workload": {
            "scenarios": r.workload.selectors,
            "weights": r.weights,
            "dropped": r.dropped,
            "trials": r.trials,
        },
        "rule": ["workload score", *TIE_BREAKERS, "model and format name"],
        "decided_by": r.decided_by,
        "ranking": [
            {
                "rank": i,
                "model": x.cell.model,
                "format": x.cell.format,
                "score": x.score,
                "metrics": {m: x.cell.values.get(m) for m in r.weights},
                "cost_per_trial": x.cost_per_trial,
                "latency_p50": x.latency,
            }
            for i, x in enumerate(r.ranked, 1)
        ],
        "top_two": top,
    }


def recommendations_json(
    recs: Sequence[Recommendation], detect: float | None = None
) -> dict[str, Any]:
    """``recommend --json``: per model the leader, why, the full ranking, and the outcome
    (``recommend``, ``tie`` with its ``candidates`` and ``tie_broken_by``, or ``none``:
    every format below ``floor``); ``format`` is the leader whatever the outcome. With
    ``--detect``: ``detect`` and per model ``samples_needed``."""
    from toolbench.report.metrics import OVERALL
    from toolbench.report.recommend import needed, rule

    ranking_rule = rule()

    models = []
    for r in recs:
        if r.model == OVERALL:
            continue
        models.append(
            {
                "model": r.model,
                "format": r.winner.format,
                "decided_by": r.decided_by,
                "significant": r.significant,
                "test": _test_json(r.test) if r.test is not None else None,
                "ranking": [
                    {
                        "rank": i,
                        "format": c.format,
                        "metrics": {m: c.values.get(m) for m, _ in ranking_rule},
                    }
                    for i, c in enumerate(r.ranked, 1)
                ],
                "outcome": r.outcome,
                "candidates": [c.format for c in r.candidates],
                "tie_broken_by": r.tie_broken_by,
                "floor": r.floor,
                **({} if detect is None else {"samples_needed": needed(r, detect)}),
            }
        )
    return {
        "version": JSON_VERSION,
        "command": "recommend",
        "rule": [
            {"metric": m, "better": "higher" if sign < 0 else "lower"} for m, sign in ranking_rule
        ],
        "models": models,
        **({} if detect is None else {"detect": detect}),
    }
