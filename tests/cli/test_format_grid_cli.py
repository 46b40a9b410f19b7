"""A format grid's bad input through the installed ``toolbench`` script: one exact line on
stderr, exit 2, before any call (issue 37: an axis value a format does not take, an axis
it does not have, a grid past its bound); and ``formats list`` naming each format's axes."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

HARNESS = Path(__file__).resolve().parents[2] / "harness"
SCRIPT = Path(sys.executable).parent / "toolbench"
GRID_144 = (
    "prompt-json:doc=text|json|python|xml,markup=plain|markdown,"
    "style=own|classic|experimental,tag=on|off,shots=0|1|2"
)


def toolbench(args: list[str], cwd: Path, **extra: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(HARNESS), "NO_COLOR": "1", "COLUMNS": "200", **extra}
    env.pop("TOOLBENCH_SCENARIOS", None)
    if "TOOLBENCH_MAX_CELLS" not in extra:
        env.pop("TOOLBENCH_MAX_CELLS", None)
    return subprocess.run(
        [str(SCRIPT), *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120
    )


def run(formats: str, models: str = "openai/a") -> list[str]:
    scenarios = ["--scenarios", "weather-paris"]
    out = ["--out", "runs/x", "--quiet", "--no-report"]
    return ["run", "--record", "none", "--models", models, "--formats", formats, *scenarios, *out]


CASES = {
    "bad-axis-value": (
        run("native,prompt-json:doc=python|yaml"),
        "error: --formats: 'prompt-json:doc=python|yaml': doc takes text, json, python, xml"
        " (got 'yaml')",
    ),
    "bad-axis-value-no-grid": (
        run("pythonic:style=fancy"),
        "error: --formats: 'pythonic:style=fancy': style takes own, classic, experimental"
        " (got 'fancy')",
    ),
    "axis-the-format-lacks": (
        run("xml:tag=on|off"),
        "error: --formats: 'xml:tag=on|off': format 'xml' has no axis 'tag' (its axes: none)",
    ),
    "unknown-option-in-a-grid": (
        run("prompt-json:doc=json|xml,colour=red|blue"),
        "error: --formats: 'prompt-json:doc=json|xml,colour=red|blue': format 'prompt-json'"
        " has no option 'colour' (its axes: doc, markup, style, tag)",
    ),
    "past-the-bound": (
        run(GRID_144, models="openai/a,openai/b"),
        "error: --formats: the grid expands to 288 cells (2 model(s) x 144 format(s)), more"
        " than 200 (set $TOOLBENCH_MAX_CELLS to raise it)",
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_grid_error_is_one_line_and_exit_2(case: str, tmp_path: Path) -> None:
    argv, line = CASES[case]
    done = toolbench(argv, tmp_path)
    assert "Traceback" not in done.stderr + done.stdout
    assert done.stderr == line + "\n"
    assert done.returncode == 2
    assert not (tmp_path / "runs").exists()  # refused before the run directory


def test_the_bound_can_be_raised(tmp_path: Path) -> None:
    """Raised, the same grid is accepted (then replayed without cassettes: nothing is
    measured, exit 3, not a usage error)."""
    done = toolbench(run(GRID_144, models="openai/a,openai/b"), tmp_path, TOOLBENCH_MAX_CELLS="300")
    assert done.returncode == 3, done.stderr
    assert (tmp_path / "runs" / "x" / "results.jsonl").read_text().count("\n") == 288


def test_formats_list_names_the_axes(tmp_path: Path) -> None:
    done = toolbench(["formats", "list"], tmp_path)
    lines = {line.split()[0]: line for line in done.stdout.splitlines()}
    for name in ("prompt-json", "pythonic"):
        assert lines[name].endswith(" Axes: doc, markup, style, tag.")
    assert lines["react"].endswith(" Axes: doc, markup, style.")
    assert "Axes" not in lines["native"] + lines["xml"]
