"""How the ray executor cuts a plan into tasks and where it places them (no Ray needed)."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

from toolbench.runner.executors.ray_cluster import RESOURCE_PREFIX, placement
from toolbench.runner.executors.ray_run import MAX_BATCH, batches
from toolbench.runner.plan import PlannedTrial, ReplayPolicy


def _trial(model: str, sample: int, policy: ReplayPolicy = "live") -> PlannedTrial:
    spec = SimpleNamespace(model=model, sample=sample, cassette=Path("c.json"))
    return PlannedTrial(cast(Any, spec), policy)


def test_batches_hold_one_model_each_and_every_trial_once() -> None:
    trials = [_trial(m, k) for m in ("openai/a", "local/b", "openai/a@low") for k in range(50)]
    cut = list(batches(trials, cpus=2))
    assert all(len({t.spec.model for t in b}) == 1 for b in cut)
    assert sorted((t.spec.model, t.spec.sample) for b in cut for t in b) == sorted(
        (t.spec.model, t.spec.sample) for t in trials
    )
    assert max(len(b) for b in cut) == 19  # 150 trials / (2 CPUs x 4 batches each)


def test_batches_are_bounded() -> None:
    cut = list(batches([_trial("openai/a", k) for k in range(10_000)], cpus=2))
    assert max(len(b) for b in cut) == MAX_BATCH
    assert sum(len(b) for b in cut) == 10_000


def test_embedded_models_go_where_they_are_held() -> None:
    assert placement([_trial("local/smollm2-135m", 0)]) == {
        "resources": {RESOURCE_PREFIX + "local/smollm2-135m": 0.01}
    }
    # A variant runs on its model's nodes; a replay calls no server; a remote model
    # runs anywhere.
    assert placement([_trial("local/smollm2-135m@hot", 0, "replay_then_live")]) == {
        "resources": {"toolbench-model:local/smollm2-135m": 0.01}
    }
    assert placement([_trial("local/smollm2-135m", 0, "replay")]) == {}
    assert placement([_trial("openai/gpt-4o", 0)]) == {}
