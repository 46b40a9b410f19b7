"""docs/ci.md's Kubernetes Indexed Job and Slurm array script work as written.

Both are read out of the page. The Job's env and command are checked against what
``toolbench run`` takes, and its command and the Slurm script are run through a shell once
per index, with the variables the scheduler would set, against the committed cassettes:
the parts merged are the whole replay, each trial once.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
import yaml

from toolbench.cli.app import app
from toolbench.store import iter_results

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "ci.md"
SCHEDULER_VARS = ("TOOLBENCH_SHARD_", "SLURM_", "JOB_COMPLETION")


def _job() -> dict[str, Any]:
    text = DOC.read_text(encoding="utf-8")
    blocks = [yaml.safe_load(textwrap.dedent(b))
              for b in re.findall(r"```yaml\n(.*?)```", text, flags=re.DOTALL)]  # fmt: skip
    (job,) = [b for b in blocks if isinstance(b, dict) and b.get("kind") == "Job"]
    return job


def _slurm_script() -> str:
    text = DOC.read_text(encoding="utf-8")
    (script,) = [b for b in re.findall(r"```bash\n(.*?)```", text, flags=re.DOTALL)
                 if "#SBATCH" in b]  # fmt: skip
    return str(script)


def _container(job: dict[str, Any]) -> dict[str, Any]:
    (container,) = job["spec"]["template"]["spec"]["containers"]
    return dict(container)


def _toolbench_args(command: str) -> list[str]:
    """The arguments after ``toolbench`` in a shell command line (variables left as
    written: they are values of ``--out``, which takes any path)."""
    words = shlex.split(command.replace("\\\n", " "))
    return words[words.index("toolbench") + 1 :]


def test_the_job_is_indexed_and_its_count_is_its_completions() -> None:
    job = _job()
    spec = job["spec"]
    assert (job["apiVersion"], spec["completionMode"]) == ("batch/v1", "Indexed")
    env = {e["name"]: e["value"] for e in _container(job)["env"]}
    assert env == {"TOOLBENCH_SHARD_COUNT": str(spec["completions"])}
    assert spec["template"]["spec"]["restartPolicy"] == "Never"


def _parses_as_run(args: list[str]) -> dict[str, Any]:
    """What ``toolbench run`` makes of ``args`` (a bad option raises here)."""
    import typer.main

    command = typer.main.get_command(app)
    ctx = command.make_context("toolbench", list(args), resilient_parsing=False)
    sub = command.get_command(ctx, args[0])  # type: ignore[attr-defined]
    assert sub is not None
    return dict(sub.make_context("run", list(args[1:])).params)


@pytest.mark.parametrize("which", ["kubernetes", "slurm"])
def test_the_command_is_a_toolbench_run_with_shard_auto(which: str) -> None:
    if which == "kubernetes":
        container = _container(_job())
        assert container["command"] == ["/bin/sh", "-c"]
        line = container["args"][0]
    else:
        (line,) = [ln for ln in _slurm_script().replace("\\\n", " ").splitlines()
                   if ln.startswith("toolbench ")]  # fmt: skip
    args = _toolbench_args(line)
    assert args[0] == "run"
    params = _parses_as_run(args)
    assert params["shard"] == "auto"
    assert params["record"] == "none"


def _array(script: str) -> list[int]:
    """The task ids of the script's ``#SBATCH --array=A-B[:S]``."""
    m = re.search(r"^#SBATCH --array=(\d+)-(\d+)(?::(\d+))?$", script, flags=re.MULTILINE)
    assert m is not None, "the script declares an array A-B[:S]"
    low, high, step = int(m[1]), int(m[2]), int(m[3] or 1)
    return list(range(low, high + 1, step))


def _slurm_env(task: int, tasks: list[int], submit_dir: Path) -> dict[str, str]:
    step = tasks[1] - tasks[0] if len(tasks) > 1 else 1
    return {"SLURM_ARRAY_TASK_ID": str(task), "SLURM_ARRAY_TASK_MIN": str(tasks[0]),
            "SLURM_ARRAY_TASK_MAX": str(tasks[-1]), "SLURM_ARRAY_TASK_STEP": str(step),
            "SLURM_ARRAY_TASK_COUNT": str(len(tasks)), "SLURM_ARRAY_JOB_ID": "4242",
            "SLURM_SUBMIT_DIR": str(submit_dir)}  # fmt: skip


def _keys(run_dir: Path) -> list[tuple[str, str, str, int]]:
    return sorted(t.key for t in iter_results(run_dir))


@pytest.mark.skipif(shutil.which("bash") is None, reason="the script is bash")
@pytest.mark.parametrize("which", ["kubernetes", "slurm"])
def test_every_part_run_by_the_scheduler_merges_into_the_whole_replay(
    which: str, tmp_path: Path
) -> None:
    work = tmp_path / "toolbench"
    work.mkdir()
    for name in ("scenarios", "cassettes", "toolbench.toml"):  # a checkout: its MCP servers
        (work / name).symlink_to(ROOT / name)
    base = {k: v for k, v in os.environ.items() if not k.startswith(SCHEDULER_VARS)}
    base["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{base.get('PATH', '')}"

    def sh(argv: list[str], env: dict[str, str]) -> None:
        proc = subprocess.run(argv, cwd=work, env={**base, **env}, capture_output=True,
                              text=True, timeout=600)  # fmt: skip
        assert proc.returncode == 0, f"{argv}\n{proc.stdout}\n{proc.stderr}"

    if which == "kubernetes":
        job = _job()
        container = _container(job)
        env = {e["name"]: e["value"] for e in container["env"]}
        indexes = range(job["spec"]["completions"])
        for i in indexes:
            sh([*container["command"], container["args"][0]],
               {**env, "JOB_COMPLETION_INDEX": str(i)})  # fmt: skip
        parts = [work / "shards" / f"shard-{i}" for i in indexes]
    else:
        script = tmp_path / "toolbench-array.sbatch"
        script.write_text(_slurm_script(), encoding="utf-8")
        tasks = _array(script.read_text(encoding="utf-8"))
        for task in tasks:
            sh(["bash", str(script)], _slurm_env(task, tasks, work))
        parts = [work / "shards" / f"shard-{t}" for t in tasks]
    sh(["toolbench", "run", "--record", "none", "--scenarios", "recorded", "--quiet",
        "--no-report", "--out", "whole"], {})  # fmt: skip
    sh(["toolbench", "merge", *map(str, parts), "-o", "merged"], {})
    part_keys = [_keys(p) for p in parts]
    assert all(part_keys), "every part ran trials"
    assert sum(map(len, part_keys)) == len(_keys(work / "whole")), "no trial twice"
    assert _keys(work / "merged") == _keys(work / "whole")
