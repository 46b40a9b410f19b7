"""The format-sensitivity section (issue 37): known accuracies on a constructed run give a
known spread, intervals and the axis that moves accuracy most."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from synthetic_runs import make_trial, standard_trials, write_run

from toolbench import grid_axes
from toolbench.formats.format_registry import format_class
from toolbench.formats.prompt_axes import AXIS_NAMES
from toolbench.report import write_report
from toolbench.report.metrics import aggregate, load_table, wilson
from toolbench.report.sensitivity import Grid, grids, sensitivity_view
from toolbench.results import TrialResult
from toolbench.runner.format_grid import axes_of, base_of

MODEL = "m<i>x"
"""A model name with markup in it: it must reach the page as text."""
# point -> correct calls out of 10
GRID = {
    "prompt-json:doc=python,tag=off": 9,
    "prompt-json:doc=python,tag=on": 7,
    "prompt-json:doc=json,tag=off": 5,
    "prompt-json:doc=json,tag=on": 3,
}


def trials(points: dict[str, int], model: str = MODEL, n: int = 10) -> list[TrialResult]:
    return [
        make_trial(model, fmt, f"s{i}", 0, ok=i < k, run_id="sens")
        for fmt, k in points.items()
        for i in range(n)
    ]


def constructed(tmp_path: Path) -> Path:
    """The grid above, plus cells that make no grid: one xml cell of the same model and a
    second model with two different formats."""
    rows = trials(GRID) + trials({"xml": 6}) + trials({"xml": 4, "native": 8}, model="m-two")
    return write_run(tmp_path / "runs" / "sens", rows)


def the_grids(run: Path) -> list[Grid]:
    return grids(aggregate(load_table(run).df))


def test_known_accuracies_give_known_spread_and_axis(tmp_path: Path) -> None:
    (grid,) = the_grids(constructed(tmp_path))
    assert (grid.model, grid.base) == (MODEL, "prompt-json")
    got = {p.format: (p.value, p.k, p.n, p.interval) for p in grid.points}
    assert got == {f: (k / 10, k, 10, wilson(k, 10)) for f, k in GRID.items()}
    assert grid.spread == pytest.approx(0.6)
    assert grid.best is not None and grid.best.format == "prompt-json:doc=python,tag=off"
    assert grid.worst is not None and grid.worst.format == "prompt-json:doc=json,tag=on"
    doc, tag = grid.effects()
    assert doc.axis == "doc" and doc.means == pytest.approx({"json": 0.4, "python": 0.8})
    assert tag.axis == "tag" and tag.means == pytest.approx({"off": 0.7, "on": 0.5})
    assert grid.top_axis == doc and doc.range == pytest.approx(0.4)


def test_a_point_that_does_not_set_an_axis_is_at_the_formats_default(tmp_path: Path) -> None:
    points = {
        "prompt-json": 2,
        "prompt-json:doc=python": 6,
        "prompt-json:doc=json": 8,
        "prompt-json:shots=2": 10,  # another base: worked examples are no prompt axis
        "prompt-json:doc=python|xml": 10,  # a fallback: its own base, one point alone
        "xml": 1,
        "xml:shots=2": 9,  # no axes: no grid
    }
    (grid,) = the_grids(write_run(tmp_path / "runs" / "d", trials(points)))
    assert grid.base == "prompt-json"
    assert [p.format for p in grid.points] == [
        "prompt-json",
        "prompt-json:doc=json",
        "prompt-json:doc=python",
    ]
    assert grid.spread == pytest.approx(0.6)
    (doc,) = grid.effects()  # markup, style and tag take one value each here
    assert doc.means == pytest.approx({"default": 0.2, "json": 0.8, "python": 0.6})


SPECS = [
    "prompt-json",
    "prompt-json:doc=python,tag=on",
    "prompt-json:markup=markdown,shots=2,style=classic",
    "prompt-json:doc=json,stream",
    "prompt-json:doc=python|xml",
    "pythonic:doc=xml",
    "xml:shots=2",
    "native|xml",
]


@pytest.mark.parametrize("spec", SPECS)
def test_the_reports_reading_of_a_spec_is_the_runs(spec: str) -> None:
    """The leaf the report reads specs with (it may not import the runner or the formats)
    groups cells as runner/format_grid does, an unwritten axis at its default."""
    assert grid_axes.AXIS_NAMES == AXIS_NAMES
    assert grid_axes.grid_base(spec) == base_of(spec)
    defaults = {
        a: str(f.default)
        for a, f in format_class(
            spec.partition(":")[0].partition("|")[0]
        ).Options.model_fields.items()
        if a in AXIS_NAMES
    }
    written = {a: v for a, v in grid_axes.grid_point(spec).items() if v != grid_axes.DEFAULT}
    assert {**defaults, **written} == axes_of(spec)
    assert grid_axes.writes_axes(spec) == bool(written)


def test_none_and_all_correct_are_drawn(tmp_path: Path) -> None:
    """0 of n and n of n: the interval's bound at the value itself (a recorded grid of the
    embedded models, where every call fails, drew no chart before)."""
    run = write_run(tmp_path / "runs" / "z", trials({"prompt-json": 0, "prompt-json:tag=on": 10}))
    view = sensitivity_view(aggregate(load_table(run).df))
    assert view is not None
    (grid,) = view["grids"]
    assert grid["spread"] == "100.0 pp" and grid["chart"].startswith("data:image/png;base64,")
    assert [p["value"] for p in grid["points"]] == ["0.0%", "100.0%"]


def test_a_level_grid_names_no_best_worst_or_axis(tmp_path: Path) -> None:
    """Every point at 0%, as the embedded models are: nothing to rank, no axis moves it."""
    points = {"prompt-json": 0, "prompt-json:doc=python": 0, "prompt-json:tag=on": 0}
    run = write_run(tmp_path / "runs" / "z", trials(points))
    (grid,) = the_grids(run)
    assert grid.spread == 0.0 and grid.ends is None and grid.top_axis is None
    assert [e.range for e in grid.effects()] == [0.0, 0.0]
    html = write_report(run, tmp_path / "report.html").read_text("utf-8")
    section = html.split('<section id="sensitivity">')[1].split("</section>")[0]
    assert "prompt-json: spread 0.0 pp, no axis moves it</h3>" in section
    assert "best</span>" not in section and "worst</span>" not in section


def test_a_run_of_the_default_formats_has_no_grid(tmp_path: Path) -> None:
    points = {"prompt-json": 3, "prompt-json:shots=2": 5, "react": 4, "xml": 6, "native": 7}
    assert the_grids(write_run(tmp_path / "runs" / "d", trials(points))) == []


def test_a_run_without_a_grid_has_no_section(tmp_path: Path) -> None:
    run = write_run(tmp_path / "runs" / "r1", standard_trials("r1"))
    assert sensitivity_view(aggregate(load_table(run).df)) is None
    html = write_report(run, tmp_path / "report.html").read_text(encoding="utf-8")
    assert 'id="sensitivity"' not in html


def test_the_html_section_shows_the_numbers_escaped(tmp_path: Path) -> None:
    html = write_report(constructed(tmp_path), tmp_path / "report.html").read_text("utf-8")
    section = html.split('<section id="sensitivity">')[1].split("</section>")[0]
    assert (
        "m&lt;i&gt;x · prompt-json: spread 60.0 pp, moved most by <code>doc</code> (40.0 pp)"
        in (section)
    )
    assert "<i>" not in section
    lo, hi = wilson(9, 10) or (0.0, 0.0)
    row = re.search(
        r"prompt-json:doc=python,tag=off <span class=\"good\">best</span></td>(.*?)</tr>", section
    )
    assert row is not None
    assert row.group(1) == f"<td>90.0%</td><td>[{100 * lo:.1f}, {100 * hi:.1f}]</td><td>10</td>"
    assert "json: 40.0%, python: 80.0%" in section and "off: 70.0%, on: 50.0%" in section
    assert section.count('<img src="data:image/png;base64,') == 1  # m-two has no grid


GRID_REPLAY = Path(__file__).resolve().parents[1] / "data" / "grid_replay.json"


def test_the_committed_grid_over_the_embedded_models(tmp_path: Path) -> None:
    """The committed grid (native and prompt-json:doc=text|python,tag=off|on on both
    embedded models, tests/data/grid_replay.json) as the report draws it: a grid per model,
    four points of four call scenarios each, all at 0%: level, no axis moves it."""
    rows = json.loads(GRID_REPLAY.read_text(encoding="utf-8"))
    run = write_run(
        tmp_path / "runs" / "grid",
        [
            make_trial(
                r["model"],
                r["format"],
                r["scenario"],
                r["sample"],
                run_id="grid",
                ok=bool(r["call_accuracy"]),
                call_accuracy=r["call_accuracy"],
            )
            for r in rows
        ],
    )
    found = the_grids(run)
    assert [(g.model, g.base) for g in found] == [
        ("local/gemma3-270m", "prompt-json"),
        ("local/smollm2-135m", "prompt-json"),
    ]
    for g in found:
        assert [(p.format, p.k, p.n) for p in g.points] == [
            ("prompt-json", 0, 4),
            ("prompt-json:doc=python", 0, 4),
            ("prompt-json:doc=python,tag=on", 0, 4),
            ("prompt-json:tag=on", 0, 4),
        ]
        assert g.spread == 0.0 and g.top_axis is None and g.ends is None
