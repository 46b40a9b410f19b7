"""Analysis commands that weigh one run against another: compare, recommend, rescore.

They read ``runs/<id>/`` only (no model calls, no network) and import their library
modules when they run, so ``toolbench --help`` stays fast.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Annotated

import typer

from toolbench.cli.conventions import Command, choices
from toolbench.cli.report_cmd import RunArg
from toolbench.errors import UnknownNameError, UserError

RECOMMEND_KINDS = ("text", "yaml")
COMPARE_BY = ("model", "format", "variant")
"""``compare --by``; the same as ``toolbench.report.compare.BY_CHOICES`` (which imports
pandas, too slow for ``--help``)."""
MODELS_NEED_BY = "compare: --models picks models to compare; give --by model or variant with it"


def _restrict(table: object, formats: list[str]) -> None:
    from toolbench.report.metrics import TrialTable

    assert isinstance(table, TrialTable)
    table.df = table.df[table.df["format"].isin(formats)].reset_index(drop=True)


def compare(
    run_a: RunArg,
    run_b: Annotated[
        Path | None,
        typer.Argument(
            help="Second run (leave out, with --formats X,Y or --by, to compare within run_a)."
        ),
    ] = None,
    formats: Annotated[
        str | None,
        typer.Option(
            "--formats",
            metavar="SPEC,SPEC",
            help="X,Y: compare format X with Y (in one run), or restrict two runs to these.",
        ),
    ] = None,
    by: Annotated[
        str | None,
        typer.Option(
            "--by",
            metavar=choices(COMPARE_BY),
            help="Pair trials across models (the model string names the provider), "
            "formats, or the variants of one model (MODEL@NAME): every pair, or the two of "
            "--models / --formats; with RUN_B, the two runs are read as one.",
        ),
    ] = None,
    models: Annotated[
        str | None,
        typer.Option(
            "--models",
            metavar="MODEL,MODEL",
            help="With --by model or variant: the two models to compare (default: every "
            "pair of the run).",
        ),
    ] = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the comparison as one JSON object.")
    ] = False,
) -> None:
    """Per-cell metric deltas and paired McNemar tests between runs, formats or models."""
    from toolbench.cli.json_out import comparison_json, comparisons_json, dumps
    from toolbench.cli.run_cmd import split_specs
    from toolbench.report.compare import (
        By,
        combine,
        compare_by,
        compare_formats,
        compare_runs,
        render_comparison,
        render_comparisons,
    )
    from toolbench.report.metrics import load_table

    picked = split_specs(formats)
    picked_models = [m.strip() for m in (models or "").split(",") if m.strip()]
    if by is not None:
        if by not in COMPARE_BY:
            raise UnknownNameError("compare --by value", by, COMPARE_BY)
        by_models = by in ("model", "variant")
        if picked_models and not by_models:
            raise UserError(MODELS_NEED_BY)
        table = load_table(run_a)
        if run_b is not None:
            table = combine(table, load_table(run_b))
        if by_models and picked:
            _restrict(table, picked)
        picks = picked_models if by_models else picked
        if picks and len(picks) != 2:
            option = "--models" if by_models else "--formats"
            raise UserError(f"compare --by {by}: {option} takes exactly two (got {len(picks)})")
        dim: By = "variant" if by == "variant" else "model" if by == "model" else "format"
        cmps = compare_by(table, dim, picks or None)
        text = dumps(comparisons_json(f"{dim}s", cmps)) if as_json else None
        typer.echo(text if text is not None else render_comparisons(cmps, dim))
        return
    if picked_models:
        raise UserError(MODELS_NEED_BY)
    if run_b is None:
        if len(picked) != 2:
            raise UserError(
                "compare: give RUN_B, --formats X,Y with exactly two formats, or --by"
                " model|format|variant"
            )
        cmp = compare_formats(load_table(run_a), picked[0], picked[1])
        mode = "formats"
    else:
        ta, tb = load_table(run_a), load_table(run_b)
        if picked:
            _restrict(ta, picked)
            _restrict(tb, picked)
        cmp = compare_runs(ta, tb)
        mode = "runs"
    typer.echo(dumps(comparison_json(mode, cmp)) if as_json else render_comparison(cmp))


def recommend(
    run: RunArg,
    to: Annotated[
        str,
        typer.Option(
            "--to",
            metavar=choices(RECOMMEND_KINDS),
            help="text: the ranking and its reasons; yaml: each model's format, a file "
            "toolbench run reads back (stdout without -o).",
        ),
    ] = "text",
    out: Annotated[
        Path | None,
        typer.Option("-o", "--out", metavar="FILE", help="Write the --to yaml file here."),
    ] = None,
    break_ties: Annotated[
        bool,
        typer.Option(
            "--break-ties",
            help="--to yaml: also write a tied model's pick where a later criterion broke "
            "the tie (by default only recommendations the data holds are written).",
        ),
    ] = False,
    pairs: Annotated[
        bool,
        typer.Option(
            "--pairs",
            help="Rank (model, format) pairs together for the workload, cost and latency "
            "as tie-breakers, with whether the suite can separate the top two "
            "(--to yaml then holds the winning pair).",
        ),
    ] = False,
    scenarios: Annotated[
        list[str] | None,
        typer.Option(
            "--scenarios",
            metavar="ID|TAG|PATH",
            help="The workload: scenario ids, tags, files or suites (repeatable or "
            "comma-separated; default: every scenario of the run).",
        ),
    ] = None,
    weights: Annotated[
        list[str] | None,
        typer.Option(
            "--weight",
            metavar="METRIC=W",
            help="With --pairs: weight of a rate in the workload score (repeatable; "
            "default call_accuracy=1).",
        ),
    ] = None,
    floor: Annotated[
        float | None,
        typer.Option(
            "--floor",
            metavar="RATE",
            help="Call accuracy (0 to 1) a format must reach to be recommended; below it "
            "for every format: no format works for the model (default 0.5).",
        ),
    ] = None,
    detect: Annotated[
        str | None,
        typer.Option(
            "--detect",
            metavar="POINTS",
            help="A call-accuracy difference in points (5pt): say how many samples per "
            "scenario the leader and runner-up would need to detect it (power 0.8).",
        ),
    ] = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the recommendations as one JSON object.")
    ] = False,
) -> None:
    """The default format for each model, or the best (model, format) pair for a workload.

    A format is recommended only where the data holds one: every format below the floor
    is "no format works", no significant difference is a "tie" with its candidates."""
    from toolbench.cli.json_out import dumps, pair_ranking_json, recommendations_json
    from toolbench.report.metrics import load_table
    from toolbench.report.recommend import DEFAULT_FLOOR, emit_yaml, render
    from toolbench.report.recommend import recommend as rec
    from toolbench.report.workload import Workload, parse_weights, rank_pairs, select_trials
    from toolbench.report.workload import render as render_pairs

    if to == "json":
        raise UserError("recommend --to: for JSON give --json (--to takes text or yaml)")
    if to not in RECOMMEND_KINDS:
        raise UnknownNameError("recommend --to value", to, RECOMMEND_KINDS)
    if as_json and to != "text":
        raise UserError(f"recommend: --json and --to {to} are exclusive (give one)")
    if out is not None and to != "yaml":
        raise UserError("recommend: -o writes the --to yaml file; give --to yaml with it")
    if break_ties and to != "yaml":
        raise UserError("recommend: --break-ties chooses what --to yaml writes; give --to yaml")
    if weights and not pairs:
        raise UserError("recommend: --weight weighs the --pairs ranking; give --pairs with it")
    if pairs and (floor is not None or detect is not None):
        option = "--floor" if floor is not None else "--detect"
        raise UserError(f"recommend: {option} applies to the per-model ranking, not --pairs")
    if floor is not None and not 0 <= floor <= 1:
        raise UserError(f"--floor: expected a call accuracy from 0 to 1 (got {floor:g})")
    delta = None if detect is None else parse_points(detect)
    selectors = [s.strip() for item in (scenarios or []) for s in item.split(",") if s.strip()]
    workload = Workload(selectors, parse_weights(weights or []))
    table = load_table(run)
    if pairs:
        ranking = rank_pairs(table, workload)
        if as_json:
            typer.echo(dumps(pair_ranking_json(ranking)))
            return
        if to == "text":
            typer.echo(render_pairs(ranking))
            return
        win = ranking.ranked[0].cell
        yaml_text = _pair_yaml(win.model, win.format)
    else:
        recs = rec(select_trials(table, selectors), DEFAULT_FLOOR if floor is None else floor)
        if as_json:
            typer.echo(dumps(recommendations_json(recs, delta)))
            return
        if to == "text":
            typer.echo(render(recs, delta))
            return
        yaml_text = emit_yaml(recs, break_ties)
    if out is None:
        typer.echo(yaml_text, nl=False)
        return
    from toolbench.outpath import prepare_file

    prepare_file(out)
    try:
        out.write_text(yaml_text, encoding="utf-8")
    except OSError as exc:
        raise UserError(f"{out}: cannot write: {exc.strerror}") from None
    typer.echo(f"wrote {out}")


def parse_points(text: str) -> float:
    """``--detect``: ``5pt``, ``5`` or ``5%`` -> 0.05; outside (0, 100) points refused."""
    raw = text.strip().lower().removesuffix("pt").removesuffix("%").strip()
    try:
        points = float(raw)
    except ValueError:
        points = math.nan
    if not 0 < points < 100:
        raise UserError(
            f"--detect: expected a difference in points between 0 and 100, exclusive "
            f"(e.g. 5pt); got '{text}'"
        )
    return points / 100


def _pair_yaml(model: str, fmt: str) -> str:
    from toolbench.formats.auto import FormatsFile, ModelChoice

    return FormatsFile(models={model: ModelChoice(tool_format=fmt)}).dump()


def rescore(
    run: RunArg,
    out: Annotated[
        Path | None,
        typer.Option(
            "-o", "--out", metavar="DIR", help="New run directory (default: RUN-rescored)."
        ),
    ] = None,
    scenarios: Annotated[
        list[str] | None,
        typer.Option(
            "--scenarios",
            metavar="PATH",
            help="Scenario file or directory (repeatable; default: the files the run read, "
            "refused when one changed; the bundled suite for older runs).",
        ),
    ] = None,
    display: Annotated[
        str | None,
        typer.Option(
            "--display",
            metavar="careful|naive",
            help="Measure streamed text trials' leak under this display policy "
            "(default: the one each trial ran with).",
        ),
    ] = None,
) -> None:
    """Re-parse and re-score stored replies into a new run directory (no model calls)."""
    from toolbench.runner.rescore import rescore_run
    from toolbench.scenarios.loader import load_scenarios

    if display is not None and display not in ("careful", "naive"):
        raise UserError(f"--display: must be one of careful, naive (got '{display}')")
    scs = load_scenarios(scenarios) if scenarios else None
    summary = rescore_run(run, out, scs, display=display)  # type: ignore[arg-type]
    typer.echo(summary.render())


def register(app: typer.Typer) -> None:
    for name, fn in (("compare", compare), ("recommend", recommend), ("rescore", rescore)):
        app.command(name, cls=Command)(fn)
