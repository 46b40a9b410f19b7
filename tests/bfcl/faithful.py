"""BFCL's multi-turn checker and toolbench's loop verdict side by side, on trajectories.

A trajectory is what a model did: per user turn, its steps, each a list of calls. The
same trajectory is judged twice: by BFCL's own ``multi_turn_checker`` (loaded from the
unpacked wheel the no-deps way, fed the calls as BFCL's decoded strings), and by
toolbench (the loop scenario driven through the engine with ``prompt-json`` replies, a
text reply ending each turn, then scored).
"""

from __future__ import annotations

import copy
import itertools
import json
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from toolbench.bfcl.multi_turn import STEP_LIMIT, entry_scenario
from toolbench.bfcl.package import PACKAGE, load_module
from toolbench.engine import Conversation, TurnReply, effective_settings
from toolbench.formats import ModelReply, get_format
from toolbench.scenarios.model import Scenario
from toolbench.scoring import score_trial

CHECKER = f"{PACKAGE}.eval_checker.multi_turn_eval"
"""BFCL's own multi-turn checker, loaded beside toolbench's verdict (only the tests run it)."""

Call = tuple[str, dict[str, Any]]
Trajectory = list[list[list[Call]]]
"""Turns, each a list of steps, each a list of calls."""

FMT = get_format("prompt-json")
_ids = itertools.count()


def entries(root: Path, cat: str) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    data = root / PACKAGE / "data"
    qs = [json.loads(x) for x in (data / f"BFCL_v4_{cat}.json").read_text().splitlines()]
    lines = (data / "possible_answer" / f"BFCL_v4_{cat}.json").read_text().splitlines()
    answers = {a["id"]: a for a in map(json.loads, lines)}
    return [(q, answers[q["id"]]) for q in qs]


def scenario(root: Path, cat: str, q: dict[str, Any], a: dict[str, Any]) -> Scenario:
    return Scenario.model_validate(entry_scenario(cat, q, a, root / PACKAGE / "data"))


def ground_truth(sc: Scenario) -> Trajectory:
    """The scenario's ground truth as a trajectory: one step a turn."""
    return [[[(c.name, dict(c.arguments)) for c in t.calls]] if t.calls else []
            for t in sc.expect.turns or []]  # fmt: skip


def one_call_a_step(traj: Trajectory) -> Trajectory:
    """The same calls, one a step (a model that calls one function at a time)."""
    return [[[c] for step in turn for c in step] for turn in traj]


def call_text(call: Call) -> str:
    name, args = call
    return f"{name}({', '.join(f'{k}={v!r}' for k, v in args.items())})"


def bfcl_verdict(q: dict[str, Any], traj: Trajectory, truth: list[list[str]]) -> bool:
    """BFCL's own checker on ``traj`` (a model name of its own: the checker keeps its
    instances in module globals by model name and entry id)."""
    if any(sum(1 for step in turn if step) > STEP_LIMIT for turn in traj):
        # BFCL's inference loop force-quits a turn past its step limit, and its runner
        # then fails the entry (``multi_turn:force_terminated``) before the checker runs.
        return False
    checker = load_module(f"{CHECKER}.multi_turn_checker")
    utils = load_module(f"{CHECKER}.multi_turn_utils")
    model = f"toolbench_faithful_{next(_ids)}"
    decoded = [[[call_text(c) for c in step] for step in turn if step] for turn in traj]
    entry = {k: copy.deepcopy(q[k]) for k in ("id", "initial_config", "involved_classes")}
    cat = q["id"].rsplit("_", 1)[0]
    try:
        return bool(checker.multi_turn_checker(decoded, truth, entry, cat, model)["valid"])
    finally:
        for name in [n for n in vars(utils) if n.startswith(model)]:
            delattr(utils, name)


def toolbench_verdict(sc: Scenario, traj: Trajectory) -> bool:
    """toolbench's verdict: the loop driven with ``traj`` as the model's replies."""
    replies: Iterator[str] = iter(
        [*(json.dumps([{"tool": n, "arguments": a} for n, a in step]) for step in turn if step),
         "Done."][i] for turn in traj for i in range(sum(1 for s in turn if s) + 1)
    )  # fmt: skip
    conv = Conversation(FMT, sc, effective_settings(sc))
    while not conv.done:
        conv.feed(TurnReply(reply=ModelReply(text=next(replies, "Done.")), request={}))
    return score_trial(sc, FMT, conv.turns, conv.settings).get("call_accuracy") is True


def _mutate(value: Any, rng: random.Random) -> Any:
    if isinstance(value, bool):
        return not value
    if isinstance(value, int | float):
        return value + 1
    if isinstance(value, str):
        return value + "_x" if value else "x"
    if isinstance(value, list):
        return value[:-1] if value else ["x"]
    if isinstance(value, dict):
        return {**value, "x": 1}
    return "x"


def perturbations(traj: Trajectory, rng: random.Random) -> Iterator[tuple[str, Trajectory]]:
    """The ways models fail, each applied once at a random place (where it can be)."""
    where = [(t, s, c) for t, turn in enumerate(traj) for s, step in enumerate(turn)
             for c in range(len(step))]  # fmt: skip
    if not where:
        return
    t, s, c = rng.choice(where)
    with_args = [w for w in where if traj[w[0]][w[1]][w[2]][1]]
    if with_args:
        wt, ws, wc = rng.choice(with_args)
        bad = copy.deepcopy(traj)
        _name, args = bad[wt][ws][wc]
        key = rng.choice(sorted(args))
        args[key] = _mutate(args[key], rng)
        yield "wrong_argument", bad
    missing = copy.deepcopy(traj)
    del missing[t][s][c]
    yield "missing_step", missing
    extra = copy.deepcopy(traj)
    extra[t][s].insert(c, copy.deepcopy(extra[t][s][c]))
    yield "extra_step", extra
    pairs = [(t2, s2, c2) for t2, s2, c2 in where if c2 + 1 < len(traj[t2][s2])]
    if pairs:
        pt, ps, pc = rng.choice(pairs)
        swapped = copy.deepcopy(traj)
        step = swapped[pt][ps]
        step[pc], step[pc + 1] = step[pc + 1], step[pc]
        yield "swapped_steps", swapped
    for to in (t + 1, t - 1):
        if 0 <= to < len(traj):
            moved = copy.deepcopy(traj)
            call = moved[t][s].pop(c)
            moved[to].append([call])
            yield "wrong_turn", moved
            break
