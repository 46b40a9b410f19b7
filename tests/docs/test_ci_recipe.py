"""docs/ci.md works as written: every command of its workflow runs against the committed
cassettes with the committed ``toolbench.toml``, and every step passes.

The commands are read out of the page itself, so the recipe cannot drift from what the
test runs. Only the install step is left out (the test runs in the installed project).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import textwrap
import tomllib
from itertools import product
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "ci.md"


def _yaml_blocks() -> list[Any]:
    text = DOC.read_text(encoding="utf-8")
    blocks = re.findall(r"```yaml\n(.*?)```", text, flags=re.DOTALL)
    return [yaml.safe_load(textwrap.dedent(b)) for b in blocks]


def _steps(block: Any) -> list[dict[str, Any]]:
    """Every step in order; a job with a ``matrix`` runs its steps once per combination
    (``${{ matrix.X }}`` filled in), as GitHub Actions would, one job after the other."""
    if not isinstance(block, dict):
        return list(block)  # a list of steps to add to a workflow
    out: list[dict[str, Any]] = []
    for job in block["jobs"].values():
        matrix = job.get("strategy", {}).get("matrix", {})
        names = list(matrix)
        combos = [dict(zip(names, vals, strict=True)) for vals in product(*matrix.values())]
        for combo in combos or [{}]:
            for step in job["steps"]:
                run = step.get("run")
                for k, v in combo.items():
                    run = run.replace("${{ matrix." + k + " }}", str(v)) if run else run
                out.append({**step, "run": run} if run else step)
    return out


def _commands() -> list[str]:
    cmds: list[str] = []
    for block in _yaml_blocks():
        for step in _steps(block):
            run = step.get("run")
            if run and not run.lstrip().startswith("pip install"):
                cmds.append(run)
    return cmds


def test_recipe_names_the_commands_this_test_runs() -> None:
    cmds = _commands()
    joined = "\n".join(cmds)
    for needle in ("toolbench run --record none", "toolbench gate runs/ci", "--baseline",
                   "--shard 1/4", "--shard 4/4", "toolbench merge shards/shard-*"):  # fmt: skip
        assert needle in joined
    assert "${{" not in joined, "every matrix value is filled in"
    assert (ROOT / "toolbench.toml").is_file(), "docs/ci.md relies on a committed toolbench.toml"


def test_recipe_shows_the_committed_gate_configuration() -> None:
    text = DOC.read_text(encoding="utf-8")
    shown = re.findall(r"```toml\n(.*?)```", text, flags=re.DOTALL)
    committed = tomllib.loads((ROOT / "toolbench.toml").read_text(encoding="utf-8"))
    assert [tomllib.loads(b) for b in shown] == [committed]


@pytest.mark.skipif(shutil.which("bash") is None, reason="the recipe's steps are bash")
def test_every_recipe_step_passes_on_the_committed_cassettes(tmp_path: Path) -> None:
    work = tmp_path / "repo"
    work.mkdir()
    for name in ("scenarios", "cassettes"):
        (work / name).symlink_to(ROOT / name)
    shutil.copy(ROOT / "toolbench.toml", work / "toolbench.toml")
    summary = tmp_path / "summary.md"
    env = dict(os.environ)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env["GITHUB_STEP_SUMMARY"] = str(summary)
    for cmd in _commands():
        if "baselines/main" in cmd and not (work / "baselines" / "main").exists():
            # The regression recipe compares against a stored run: store this one.
            shutil.copytree(work / "runs" / "ci", work / "baselines" / "main")
        proc = subprocess.run(
            ["bash", "-e", "-c", cmd], cwd=work, env=env, capture_output=True, text=True,
            timeout=600,
        )  # fmt: skip
        assert proc.returncode == 0, f"step failed: {cmd}\n{proc.stdout}\n{proc.stderr}"
        assert "Traceback" not in proc.stderr
    assert (work / "reports" / "ci.html").is_file()
    # The sharded workflow: four shards merged into one run equal to the whole replay.
    merged = sorted((work / "runs" / "sharded" / "results.jsonl").read_text().splitlines())
    assert len(merged) == len((work / "runs" / "ci" / "results.jsonl").read_text().splitlines())
    assert (work / "reports" / "junit.xml").is_file()
    assert "toolbench run" in summary.read_text(encoding="utf-8")
