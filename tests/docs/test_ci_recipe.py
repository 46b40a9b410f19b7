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
    """The page's GitHub Actions workflows and steps (a Kubernetes manifest, which has a
    ``kind``, is tested by tests/docs/test_ci_schedulers.py)."""
    text = DOC.read_text(encoding="utf-8")
    blocks = re.findall(r"```yaml\n(.*?)```", text, flags=re.DOTALL)
    loaded = [yaml.safe_load(textwrap.dedent(b)) for b in blocks]
    return [b for b in loaded if not (isinstance(b, dict) and "kind" in b)]


def _filled(text: str, values: dict[str, str]) -> str:
    for name, value in values.items():
        text = text.replace("${{ " + name + " }}", value)
    return text


def _steps(block: Any) -> list[dict[str, Any]]:
    """Every step in order; a job with a ``matrix`` runs its steps once per combination
    (``${{ matrix.X }}`` and ``${{ strategy.job-total }}`` filled in, in ``run`` and
    ``env``), as GitHub Actions would, one job after the other."""
    if not isinstance(block, dict):
        return list(block)  # a list of steps to add to a workflow
    out: list[dict[str, Any]] = []
    for job in block["jobs"].values():
        matrix = job.get("strategy", {}).get("matrix", {})
        names = list(matrix)
        combos = [dict(zip(names, vals, strict=True)) for vals in product(*matrix.values())]
        for combo in combos or [{}]:
            values = {f"matrix.{k}": str(v) for k, v in combo.items()}
            values["strategy.job-total"] = str(len(combos or [{}]))
            for step in job["steps"]:
                run = step.get("run")
                env = {k: _filled(str(v), values) for k, v in step.get("env", {}).items()}
                out.append({**step, "run": _filled(run, values), "env": env} if run else step)
    return out


def _commands() -> list[tuple[str, dict[str, str]]]:
    """Each step's command and the environment the step sets."""
    cmds: list[tuple[str, dict[str, str]]] = []
    for block in _yaml_blocks():
        for step in _steps(block):
            run = step.get("run")
            if run and not run.lstrip().startswith("pip install"):
                cmds.append((run, step.get("env", {})))
    return cmds


def test_recipe_names_the_commands_this_test_runs() -> None:
    cmds = _commands()
    joined = "\n".join(cmd for cmd, _ in cmds)
    for needle in ("toolbench run --record none", "toolbench gate runs/ci", "--baseline",
                   "--shard auto --out shards/shard-4",
                   "toolbench merge shards/shard-*"):  # fmt: skip
        assert needle in joined
    shards = [env for cmd, env in cmds if "--shard auto" in cmd]
    given = [(e["TOOLBENCH_SHARD_INDEX"], e["TOOLBENCH_SHARD_COUNT"]) for e in shards]
    assert given == [("1", "4"), ("2", "4"), ("3", "4"), ("4", "4")]
    assert "${{" not in joined + repr(shards), "every matrix value is filled in"
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
    scheduler_vars = ("TOOLBENCH_SHARD_", "SLURM_", "JOB_COMPLETION")
    base = {k: v for k, v in env.items() if not k.startswith(scheduler_vars)}
    for cmd, step_env in _commands():
        if "baselines/main" in cmd and not (work / "baselines" / "main").exists():
            # The regression recipe compares against a stored run: store this one.
            shutil.copytree(work / "runs" / "ci", work / "baselines" / "main")
        proc = subprocess.run(
            ["bash", "-e", "-c", cmd], cwd=work, env={**base, **step_env},
            capture_output=True, text=True,
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
