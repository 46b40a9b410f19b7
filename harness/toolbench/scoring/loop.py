"""Judging a loop: the state each user turn leaves, against the ground truth's.

A loop scenario (``expect.turns``) is judged the way BFCL's multi-turn checker judges an
entry, turn by turn, on what the trial's environments recorded (``TurnRecord.environment``)
against what the ground-truth calls produce when run from the same initial state in
fresh environments:

* a turn whose ground truth makes calls fails when the model made none in it
  (``loop.empty_turn``), when any environment's state after it differs from the ground
  truth's (``loop.state_mismatch``), or when some ground-truth result of the turn is not
  among the results of the model's calls so far, as a multiset, in any order
  (``loop.result_missing``, BFCL's execution-response check);
* a turn whose ground truth is empty is not checked (the model should not act, or
  cannot), but its calls still run, so the next turn's state check sees them;
* a turn the conversation never reached, or ended at the step limit still calling
  (BFCL's force-termination), fails (``loop.not_reached``, ``loop.step_limit``).

The trial succeeds when every turn passes; the ``calls`` scorer reports that verdict as
``call_accuracy`` (:mod:`.accuracy`), and the ``loop`` scorer here gives the details:
per-turn verdicts, turns passed, the first failing turn, calls made against calls
needed, tool errors and those recovered from, and whether the model asked where the
scenario expects it to (``ask``).

A ground truth that does not run (its environment cannot open, a call of it errors)
makes the trial's scoring raise: the runner records ``harness.scoring`` on that trial.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from toolbench.codes import (
    LOOP_EMPTY_TURN,
    LOOP_NOT_REACHED,
    LOOP_RESULT_MISSING,
    LOOP_STATE_MISMATCH,
    LOOP_STEP_LIMIT,
)
from toolbench.environments.ground_truth import GroundTruthError as GroundTruthError  # its home
from toolbench.environments.ground_truth import Truth, run_truth, trial_truth
from toolbench.results import TurnRecord
from toolbench.scenarios.model import Scenario
from toolbench.scoring.matchers import Problem
from toolbench.scoring.scorer import Scored, Scorer, TrialInput
from toolbench.tool_runs import EnvironmentStep
from toolbench.trial_scores import ScoreValue

Verdict = Literal["pass", "fail", "skip"]


@dataclass
class Judgement:
    """A loop trial judged turn by turn."""

    verdicts: list[Verdict] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    state_ok: bool = True
    results_ok: bool = True

    @property
    def success(self) -> bool:
        return "fail" not in self.verdicts


_TRUTHS: dict[int, tuple[Scenario, Truth]] = {}
_TRUTHS_LOCK = threading.Lock()
TRUTHS_KEPT = 256
"""Ground truths kept (a run scores each scenario once per model, format and sample)."""


def truth_of(scenario: Scenario) -> Truth:
    """:func:`ground_truth` of ``scenario``, run once per scenario object (the entry holds
    the scenario, so its id cannot be reused while the entry lives); the one the trial
    ran itself when it did (a loop on an MCP server,
    :mod:`toolbench.environments.ground_truth`)."""
    ran = trial_truth(scenario)
    if ran is not None:
        return ran
    with _TRUTHS_LOCK:
        hit = _TRUTHS.get(id(scenario))
    if hit is not None and hit[0] is scenario:
        return hit[1]
    truth = ground_truth(scenario)
    with _TRUTHS_LOCK:
        if len(_TRUTHS) >= TRUTHS_KEPT:
            _TRUTHS.pop(next(iter(_TRUTHS)))
        _TRUTHS[id(scenario)] = (scenario, truth)
    return truth


def ground_truth(scenario: Scenario) -> Truth:
    """Run the scenario's ground-truth calls in fresh environments, turn by turn."""
    return run_truth(scenario)


def steps_by_turn(turns: Sequence[TurnRecord], n_turns: int) -> list[list[EnvironmentStep]]:
    """The recorded environment steps of each user turn, in order."""
    out: list[list[EnvironmentStep]] = [[] for _ in range(n_turns)]
    for turn in turns:
        env = turn.environment
        if env is not None and 0 <= env.user_turn < n_turns:
            out[env.user_turn].append(env)
    return out


def judge(scenario: Scenario, turns: Sequence[TurnRecord], truth: Truth) -> Judgement:
    """The turn-by-turn verdict of a loop trial (see the module docstring)."""
    expected = scenario.expect.turns or []
    steps = steps_by_turn(turns, len(expected))
    j = Judgement()
    so_far: list[str] = []
    for n, exp in enumerate(expected):
        mine = steps[n]
        so_far.extend(run.result for step in mine for run in step.runs)
        if not mine:
            j.verdicts.append("fail")
            j.problems.append((LOOP_NOT_REACHED, f"turn {n}: the conversation ended before it"))
            continue
        limit = bool(mine[-1].runs)
        if limit:
            j.problems.append((LOOP_STEP_LIMIT, f"turn {n}: still calling at the step limit"))
        if not exp.calls:
            j.verdicts.append("fail" if limit else "skip")
            continue
        # judged on its state and results even when it failed already (step limit)
        found = _turn_problems(n, mine, so_far, truth)
        j.state_ok &= not any(code == LOOP_STATE_MISMATCH for code, _ in found)
        j.results_ok &= not any(code == LOOP_RESULT_MISSING for code, _ in found)
        j.verdicts.append("fail" if found or limit else "pass")
        j.problems.extend(found)
    return j


def _turn_problems(
    n: int, mine: list[EnvironmentStep], so_far: list[str], truth: Truth
) -> list[Problem]:
    out: list[Problem] = []
    if not any(step.runs for step in mine):  # and its state and results are judged too
        out.append((LOOP_EMPTY_TURN, f"turn {n}: no call where the ground truth makes some"))
    state, want = mine[-1].state or {}, truth.states[n]
    differ = sorted(k for k in want.keys() | state.keys() if state.get(k) != want.get(k))
    if differ:
        out.append((LOOP_STATE_MISMATCH, f"turn {n}: the state of {', '.join(differ)} differs"))
    missing = Counter(truth.results[n]) - Counter(so_far)
    if missing:
        first = next(iter(missing))[:120]
        out.append((LOOP_RESULT_MISSING, f"turn {n}: {sum(missing.values())} ground-truth "
                    f"result(s) never produced, e.g. {first!r}"))  # fmt: skip
    return out


_memo = threading.local()


def judged(inp: TrialInput) -> Judgement:
    """:func:`judge` of a loop trial, computed once for the scorers that read it."""
    last = getattr(_memo, "last", None)
    if last is not None and last[0] is inp.turns and last[1] is inp.scenario:
        cached: Judgement = last[2]
        return cached
    result = judge(inp.scenario, inp.effective, truth_of(inp.scenario))
    _memo.last = (inp.turns, inp.scenario, result)
    return result


def _value(v: bool | int | float | str | None, reason: str | None = None) -> ScoreValue:
    return ScoreValue(value=v, reason=reason)


def _score(inp: TrialInput) -> Scored:
    sc = inp.scenario
    if sc.expect.kind != "loop":
        return Scored()
    j = judged(inp)
    expected = sc.expect.turns or []
    steps = steps_by_turn(inp.effective, len(expected))
    runs = [(n, run) for n, turn in enumerate(steps) for step in turn for run in step.runs]
    errors = [(n, i, r) for i, (n, r) in enumerate(runs) if r.error is not None]
    recovered = sum(
        1
        for n, i, r in errors
        if any(m == n and later.name == r.name and later.error is None
               for m, later in runs[i + 1 :])
    )  # fmt: skip
    asked = [n for n, e in enumerate(expected) if e.ask]
    asked_ok = [n for n in asked if steps[n] and not any(s.runs for s in steps[n])]
    failing = next((n for n, v in enumerate(j.verdicts) if v == "fail"), None)
    checked = [v for v in j.verdicts if v != "skip"]
    values = {
        "loop_success": _value(j.success),
        "state_match": _value(j.state_ok if checked else None),
        "exec_match": _value(j.results_ok if checked else None),
        "turn_verdicts": _value(",".join(j.verdicts)),
        "turns_passed": _value(sum(v == "pass" for v in j.verdicts)),
        "turns_checked": _value(len(checked)),
        "first_failing_turn": _value(failing),
        "steps_taken": _value(len(runs), "tool calls run"),
        "steps_needed": _value(sum(len(e.calls) for e in expected), "ground-truth calls"),
        "tool_errors": _value(len(errors)),
        "tool_errors_recovered": _value(recovered if errors else None),
        "asked_when_missing": _value(
            len(asked_ok) == len(asked) if asked else None,
            f"asked in {len(asked_ok)} of {len(asked)} turn(s)" if asked else None,
        ),
    }
    return Scored(values, list(j.problems))


SCORER = Scorer(
    "loop",
    {
        "loop_success": "boolean",
        "state_match": "boolean",
        "exec_match": "boolean",
        "turn_verdicts": "label",
        "turns_passed": "number",
        "turns_checked": "number",
        "first_failing_turn": "number",
        "steps_taken": "number",
        "steps_needed": "number",
        "tool_errors": "number",
        "tool_errors_recovered": "number",
        "asked_when_missing": "boolean",
    },
    _score,
    "a loop scenario judged turn by turn: the state each user turn leaves and the results "
    "it produced against the ground truth's (BFCL's multi-turn check), turns passed, "
    "calls made against needed, tool errors recovered, asking where something is missing",
)
