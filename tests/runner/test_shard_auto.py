"""``run --shard auto``: the part and count read from the environment a scheduler gives
(Kubernetes Indexed Jobs, Slurm arrays, TOOLBENCH_SHARD_INDEX/COUNT from a CI matrix);
every part of a scheduler's job together covers the matrix exactly once; every problem
is one line naming ``--shard``, exit 2, before anything is run."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.runner.conftest import run_fake
from tests.runner.test_shards import SCENARIOS, keys
from tests.support.fake_openai import FakeOpenAI
from toolbench.errors import UserError
from toolbench.results import Shard
from toolbench.runner.shard_auto import shard_from_env, shard_option

Env = dict[str, str]


def slurm(task: int, low: int, high: int, step: int = 1, count: int | None = None) -> Env:
    env = {"SLURM_ARRAY_TASK_ID": str(task), "SLURM_ARRAY_TASK_MIN": str(low),
           "SLURM_ARRAY_TASK_MAX": str(high), "SLURM_ARRAY_TASK_STEP": str(step),
           "SLURM_ARRAY_JOB_ID": "7001", "SLURM_JOB_ID": str(7001 + task)}  # fmt: skip
    n = (high - low) // step + 1 if count is None else count
    return {**env, "SLURM_ARRAY_TASK_COUNT": str(n)}


def k8s(index: int, count: int | None) -> Env:
    env = {"JOB_COMPLETION_INDEX": str(index), "KUBERNETES_SERVICE_HOST": "10.0.0.1"}
    return env if count is None else {**env, "TOOLBENCH_SHARD_COUNT": str(count)}


def explicit(index: int | str, count: int | str | None) -> Env:
    env = {"TOOLBENCH_SHARD_INDEX": str(index), "GITHUB_ACTIONS": "true"}
    return env if count is None else {**env, "TOOLBENCH_SHARD_COUNT": str(count)}


# --------------------------------------------------------------------------- the tables

FOUND: dict[str, tuple[Env, str]] = {
    "matrix-first": (explicit(1, 4), "1/4"),
    "matrix-last": (explicit(4, 4), "4/4"),
    "matrix-over-a-scheduler": ({**k8s(0, 9), **explicit(2, 3)}, "2/3"),
    "k8s-index-0": (k8s(0, 3), "1/3"),
    "k8s-last": (k8s(2, 3), "3/3"),
    "k8s-one": (k8s(0, 1), "1/1"),
    "slurm-from-0": (slurm(0, 0, 3), "1/4"),
    "slurm-from-1": (slurm(4, 1, 4), "4/4"),
    "slurm-from-5": (slurm(6, 5, 8), "2/4"),
    "slurm-step": (slurm(30, 10, 40, 10), "3/4"),
    "slurm-step-odd-end": (slurm(7, 1, 10, 3), "3/4"),
    "slurm-no-count": ({k: v for k, v in slurm(2, 0, 2).items() if "COUNT" not in k}, "3/3"),
    "slurm-no-step": ({k: v for k, v in slurm(2, 1, 3).items() if "STEP" not in k}, "2/3"),
    "slurm-one": (slurm(5, 5, 5), "1/1"),
}

A = "--shard auto: "
REFUSED: dict[str, tuple[Env, str]] = {
    "nothing": (
        {"HOME": "/root", "GITHUB_ACTIONS": "true", "SLURM_JOB_ID": "12"},
        A + "no shard index in the environment (looked for TOOLBENCH_SHARD_INDEX and "
        "TOOLBENCH_SHARD_COUNT, Kubernetes JOB_COMPLETION_INDEX, Slurm SLURM_ARRAY_TASK_ID)",
    ),
    "matrix-no-count": (explicit(2, None),
                        A + "TOOLBENCH_SHARD_INDEX=2 is set but TOOLBENCH_SHARD_COUNT is not"),
    "matrix-index-0": (explicit(0, 4),
                       A + "TOOLBENCH_SHARD_INDEX=0 TOOLBENCH_SHARD_COUNT=4: "
                       "part 0 is outside 1..4"),
    "matrix-over": (explicit(5, 4),
                    A + "TOOLBENCH_SHARD_INDEX=5 TOOLBENCH_SHARD_COUNT=4: part 5 is outside 1..4"),
    "matrix-count-0": (explicit(1, 0),
                       A + "TOOLBENCH_SHARD_INDEX=1 TOOLBENCH_SHARD_COUNT=0: the count must be at "
                       "least 1"),
    "matrix-not-a-number": (explicit("one", 4),
                            A + "TOOLBENCH_SHARD_INDEX='one' is not a whole number"),
    "k8s-no-count": (k8s(1, None),
                     A + "Kubernetes JOB_COMPLETION_INDEX=1 is set but TOOLBENCH_SHARD_COUNT is "
                     "not (set it in the Job's env to spec.completions)"),
    "k8s-index-is-count": (k8s(3, 3),
                           A + "Kubernetes JOB_COMPLETION_INDEX=3 (0-based) TOOLBENCH_SHARD_COUNT=3"
                           ": part 4 is outside 1..3"),
    "k8s-negative": (k8s(-1, 3),
                     A + "Kubernetes JOB_COMPLETION_INDEX=-1 (0-based) TOOLBENCH_SHARD_COUNT=3: "
                     "part 0 is outside 1..3"),
    "slurm-below-min": (slurm(0, 1, 4),
                        A + "Slurm SLURM_ARRAY_TASK_ID=0 MIN=1 MAX=4 STEP=1 COUNT=4: task 0 is "
                        "not one of 1-4:1"),
    "slurm-off-step": (slurm(15, 10, 40, 10),
                       A + "Slurm SLURM_ARRAY_TASK_ID=15 MIN=10 MAX=40 STEP=10 COUNT=4: task 15 "
                       "is not one of 10-40:10"),
    "slurm-list-array": (slurm(5, 1, 6, 1, count=3),
                         A + "Slurm SLURM_ARRAY_TASK_ID=5 MIN=1 MAX=6 STEP=1 COUNT=3: 3 tasks are "
                         "not the 6 of 1-6:1 (an array given as a list has no index to derive: "
                         "write --array=A-B[:S])"),
    "slurm-no-bounds": ({"SLURM_ARRAY_TASK_ID": "3"},
                        A + "Slurm SLURM_ARRAY_TASK_ID=3 MIN=None MAX=None STEP=1: "
                        "SLURM_ARRAY_TASK_MIN and _MAX must be set"),
    "k8s-and-slurm": ({**k8s(0, 2), **slurm(1, 1, 2)},
                      A + "found Kubernetes (1/2) and Slurm (1/2); set TOOLBENCH_SHARD_INDEX and "
                      "TOOLBENCH_SHARD_COUNT to say which"),
}  # fmt: skip


@pytest.mark.parametrize("case", sorted(FOUND))
def test_the_shard_the_environment_names(case: str) -> None:
    env, label = FOUND[case]
    assert shard_from_env(env).label == label


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_what_the_environment_cannot_name_is_one_line(case: str) -> None:
    env, line = REFUSED[case]
    with pytest.raises(UserError) as err:
        shard_from_env(env)
    assert str(err.value) == line


def test_k_n_is_still_k_n_and_auto_reads_the_process_env(monkeypatch: pytest.MonkeyPatch) -> None:
    assert shard_option("2/5", env={}) == Shard(index=2, count=5)
    for name in [*os.environ]:
        if name.startswith(("TOOLBENCH_SHARD_", "SLURM_", "JOB_COMPLETION")):
            monkeypatch.delenv(name)
    monkeypatch.setenv("JOB_COMPLETION_INDEX", "1")
    monkeypatch.setenv("TOOLBENCH_SHARD_COUNT", "2")
    assert shard_option("auto") == Shard(index=2, count=2)


# --------------------------------------------------------------------------- the cover

JOBS: dict[str, list[Env]] = {
    "github-matrix": [explicit(k, 4) for k in (1, 2, 3, 4)],
    "kubernetes-indexed-job": [k8s(i, 3) for i in range(3)],
    "slurm-array-5-13-step-4": [slurm(t, 5, 13, 4) for t in (5, 9, 13)],
    "slurm-array-0-1": [slurm(t, 0, 1) for t in (0, 1)],
}


@pytest.mark.usefixtures("openai_key")
@pytest.mark.parametrize("job", sorted(JOBS))
def test_every_task_of_a_job_together_runs_the_matrix_once(
    job: str, fake: FakeOpenAI, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    suite = tmp_path / "scen" / "six.yaml"
    suite.parent.mkdir()
    suite.write_text(SCENARIOS, encoding="utf-8")
    fmts = "prompt-json,xml"
    assert run_fake(fake, tmp_path, suite, "--samples", "2", out="whole", formats=fmts) == 0
    parts = []
    for n, env in enumerate(JOBS[job]):
        with monkeypatch.context() as m:
            for name, value in env.items():
                m.setenv(name, value)
            rc = run_fake(fake, tmp_path, suite, "--samples", "2", "--record", "none",
                          "--shard", "auto", out=f"part{n}", formats=fmts)  # fmt: skip
        assert rc == 0
        parts.append(keys(tmp_path / f"part{n}"))
    whole = keys(tmp_path / "whole")
    assert len(whole) == 24 and all(parts)
    assert sum(map(len, parts)) == len(whole), "no trial in two parts"
    assert set().union(*parts) == whole, "every trial in one part"


# --------------------------------------------------------------------------- the CLI


@pytest.mark.parametrize("case", ["nothing", "k8s-index-is-count", "slurm-list-array"])
def test_a_refused_auto_is_one_line_through_the_installed_cli(case: str, tmp_path: Path) -> None:
    exe = shutil.which("toolbench", path=str(Path(sys.executable).parent))
    assert exe is not None, "the toolbench console script is installed beside python"
    base = {k: v for k, v in os.environ.items()
            if not k.startswith(("TOOLBENCH_SHARD_", "SLURM_", "JOB_COMPLETION"))}  # fmt: skip
    env, line = REFUSED[case]
    harness = str(Path(__file__).resolve().parents[2] / "harness")
    proc = subprocess.run(
        [exe, "run", "--record", "none", "--out", str(tmp_path / "r"), "--shard", "auto"],
        capture_output=True, text=True, env={**base, **env, "PYTHONPATH": harness}, timeout=120,
    )  # fmt: skip
    assert (proc.returncode, proc.stdout, proc.stderr) == (2, "", f"error: {line}\n")
    assert not (tmp_path / "r").exists()
