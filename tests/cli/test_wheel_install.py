"""The built wheel carries the bundled suite: installed alone, ``toolbench`` finds it.

A checkout reads ``scenarios/`` through the link ``harness/toolbench/_bundled_scenarios``;
a wheel must hold real copies, or a plain ``pip install`` has no suite and the first
``toolbench run`` fails. This builds the wheel from a copy of the sources, installs it
with ``--no-deps`` into a fresh virtual environment (not ``--system-site-packages``:
this venv's dependencies are reached through a ``.pth`` line, which adds the folder but
not the editable install of toolbench it also holds), and runs the CLI there from an
empty directory.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from toolbench import __version__
from toolbench.scenarios.loader import bundled_dir, load_scenarios, scenario_files

ROOT = Path(__file__).resolve().parents[2]
SOURCES = ("pyproject.toml", "README.md", "harness", "scenarios")


def clean_env() -> dict[str, str]:
    """No PYTHONPATH: a checkout on the path (with its egg-info) would pass for installed."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "TOOLBENCH_SCENARIOS")}
    return {**env, "NO_COLOR": "1"}


def run(cmd: list[str], cwd: Path) -> str:
    done = subprocess.run(
        cmd, cwd=cwd, env=clean_env(), capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, f"{cmd}: exit {done.returncode}\n{done.stdout}\n{done.stderr}"
    return done.stdout


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh venv holding only the built toolbench wheel; returns its bin/ folder."""
    tmp = tmp_path_factory.mktemp("wheel")
    src = tmp / "src"
    src.mkdir()
    for name in SOURCES:
        path = ROOT / name
        if path.is_dir():
            ignore = shutil.ignore_patterns("__pycache__", "*.egg-info", "build")
            shutil.copytree(path, src / name, symlinks=True, ignore=ignore)
        else:
            shutil.copy2(path, src / name)
    run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(tmp / "dist"), "."], src
    )
    (wheel,) = (tmp / "dist").glob("toolbench_harness-*.whl")
    venv = tmp / "venv"
    run([sys.executable, "-m", "venv", "--without-pip", str(venv)], tmp)
    python = venv / "bin" / "python"
    run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(python),
            "install",
            "-q",
            "--no-deps",
            str(wheel),
        ],
        tmp,
    )
    purelib = run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], tmp
    )
    shared = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
    Path(purelib.strip(), "_shared_deps.pth").write_text("\n".join(sorted(shared)) + "\n")
    return venv / "bin"


def test_wheel_installs_the_bundled_suite(installed: Path, tmp_path: Path) -> None:
    where = run(
        [str(installed / "python"), "-c", "import toolbench; print(toolbench.__file__)"],
        tmp_path,
    )
    assert Path(where.strip()).is_relative_to(installed.parent)
    listing = run([str(installed / "toolbench"), "scenarios", "list"], tmp_path)
    suite = load_scenarios([bundled_dir()])
    assert listing.splitlines()[-1] == f"{len(suite)} scenarios"
    rows = listing.split("\n\n")[0].splitlines()[1:]  # then the count per tag, the total
    assert {line.split()[0] for line in rows} == {sc.id for sc in suite}
    checked = run([str(installed / "toolbench"), "scenarios", "validate"], tmp_path)
    files = scenario_files([ROOT / "scenarios"])
    assert checked == f"ok: {len(suite)} scenarios in {len(files)} files\n"


def test_wheel_version(installed: Path, tmp_path: Path) -> None:
    out = run([str(installed / "toolbench"), "--version"], tmp_path)
    assert out == f"toolbench {__version__}\n"


def test_wheel_registers_every_registry_through_its_entry_points(
    installed: Path, tmp_path: Path
) -> None:
    """Each registry of the installed wheel holds toolbench's own objects, read from the
    wheel's entry points (no stale-install warning, nothing left out)."""
    probe = (
        "from toolbench.plugin import ENVIRONMENTS, FORMATS, KINDS, METRICS, REPORTS, SCORERS\n"
        "for r in (FORMATS, KINDS, SCORERS, METRICS, REPORTS, ENVIRONMENTS):\n"
        "    print(r.group, len(r.builtin_names()))\n"
    )
    done = subprocess.run(
        [str(installed / "python"), "-c", probe],
        cwd=tmp_path, env=clean_env(), capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0 and done.stderr == "", done.stderr
    counts = dict(line.split() for line in done.stdout.splitlines())
    assert set(counts) == {
        "toolbench.formats", "toolbench.providers", "toolbench.scorers",
        "toolbench.metrics", "toolbench.reports", "toolbench.environments",
    }  # fmt: skip
    assert all(int(n) > 0 for n in counts.values()), counts
    assert "html|md|junit|csv|parquet|jsonl" in run(
        [str(installed / "toolbench"), "report", "--help"], tmp_path
    )
