"""A loop scenario's ground truth: its calls run turn by turn in fresh environments, and
the state and results each turn leaves (what :mod:`toolbench.scoring.loop` judges a
trial against).

For Python environments it is run when the trial is scored. A loop on an MCP server
that declares a ``state_tool`` (:mod:`.mcp_state`) runs it in the trial instead
(:func:`run_trial_truth`, which the runner calls in the trial's cassette context
before the conversation, so before the model's server starts): on an instance of its
own (a second process, or the same server after its ``reset``), its exchanges
recorded in the trial's cassette, so that a replay answers it from there and starts
no process. The truth is kept for that trial's scoring in a context variable set in
the trial's own context (the runner scores a trial there, after its conversation);
``rescore`` replays it from each stored trial's cassette (:mod:`.recorded_truth`).
"""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from toolbench.environments.env_faults import ENV_UNKNOWN, EnvironmentFault, UnknownEnvironmentError
from toolbench.environments.env_registry import get_environment
from toolbench.environments.environment import Environment
from toolbench.environments.execute import Session, build
from toolbench.environments.mcp_kind import McpKind
from toolbench.formats.base import ToolCall
from toolbench.scenarios.model import Scenario


class GroundTruthError(RuntimeError):
    """The scenario's own ground truth does not run (a scenario bug, not the model's)."""


@dataclass(frozen=True)
class Truth:
    """What the ground truth does, turn by turn, from the initial state."""

    states: list[dict[str, Any]]
    results: list[list[str]]


_TRIAL: contextvars.ContextVar[tuple[Scenario, Truth | GroundTruthError] | None] = (
    contextvars.ContextVar("toolbench_trial_truth", default=None)
)
"""The ground truth the running trial ran for its scenario (or why it does not run)."""


def reads_server_state(scenario: Scenario) -> bool:
    """A loop scenario naming an MCP server that declares a state tool."""
    if scenario.expect.turns is None:
        return False
    try:
        return any(_stateful(use.name) is not None for use in scenario.environment)
    except EnvironmentFault:  # a name nobody registered: opening it says so
        return False


def _stateful(name: str) -> McpKind | None:
    try:
        kind = get_environment(name)
    except UnknownEnvironmentError as exc:
        raise EnvironmentFault(str(exc), ENV_UNKNOWN) from None
    if isinstance(kind, McpKind) and kind.server is not None and kind.server.state_tool:
        return kind
    return None


def _open(name: str, state: Mapping[str, Any], truth: bool) -> Environment:
    """Environment ``name``: an MCP server with a state tool read through it (an instance
    of the truth's own when ``truth``), any other as registered."""
    kind = _stateful(name)
    if kind is None or kind.server is None:
        return build(name, state)
    # heavy (the mcp client): loaded when a loop on a server first runs
    from toolbench.environments.mcp_state import McpStateEnvironment, truth_environment

    if truth:
        return truth_environment(name, kind.server, state)
    return McpStateEnvironment(name, kind.server, state)


def _opened(scenario: Scenario, truth: bool) -> Session:
    """The scenario's environments, opened fresh (those opened already closed when a
    later one cannot open)."""
    envs: list[tuple[str, Environment]] = []
    try:
        for use in scenario.environment:
            envs.append((use.name, _open(use.name, use.state, truth)))
    except BaseException:
        Session(envs).close()
        raise
    return Session(envs)


def run_truth(scenario: Scenario) -> Truth:
    """Run the scenario's ground-truth calls in fresh environments, turn by turn;
    :class:`GroundTruthError` when a call of it fails."""
    if not scenario.environment:
        raise GroundTruthError(f"{scenario.id}: a loop without an environment")
    states, results = [], []
    session = _opened(scenario, truth=True)
    try:
        for n, turn in enumerate(scenario.expect.turns or []):
            ran = session.run([ToolCall(name=c.name, arguments=c.arguments) for c in turn.calls])
            broken = [r for _, _, r in ran if r.error is not None]
            if broken:
                raise GroundTruthError(
                    f"{scenario.id}: ground truth of turn {n} does not run: {broken[0].name}: "
                    f"{broken[0].error} ({broken[0].result[:200]})"
                )
            results.append([text for _, text, _ in ran])
            states.append(session.snapshot())
    finally:
        session.close()  # the truth's own server must not outlive its run
    return Truth(states, results)


def open_stateful(scenario: Scenario) -> Session:
    """The trial's session of a loop on a server with a state tool (read after each
    user turn); the ground truth is not run here (:func:`run_trial_truth` ran it)."""
    return _opened(scenario, truth=False)


async def run_trial_truth(scenario: Scenario) -> None:
    """The runner's call in the trial's cassette context, before its conversation (so
    before the model's server starts): for a loop on a server with a state tool, run its
    ground truth, recorded in the trial's cassette (in a worker thread: it may start a
    server), and keep it for the trial's scoring (:func:`trial_truth`); an environment
    that cannot serve it raises its fault (the trial's typed code). Kept in the trial's
    own context, not the thread's: the engine may open its session in another."""
    forget_trial_truth()
    if reads_server_state(scenario):
        _TRIAL.set((scenario, await asyncio.to_thread(_truth_or_error, scenario)))


def keep_trial_truth(scenario: Scenario) -> None:
    """Run the ground truth of ``scenario`` now and keep it for this context's scoring
    (:func:`trial_truth`); an environment that cannot serve it raises its fault."""
    _TRIAL.set((scenario, _truth_or_error(scenario)))


def _truth_or_error(scenario: Scenario) -> Truth | GroundTruthError:
    try:
        return run_truth(scenario)
    except GroundTruthError as exc:  # judged when scoring, as a Python environment's
        return exc


def forget_trial_truth() -> None:
    """Keep no ground truth in this context (a later trial must not score by another's)."""
    _TRIAL.set(None)


def trial_truth(scenario: Scenario) -> Truth | None:
    """The ground truth this trial ran for ``scenario`` (None: none ran here); its
    :class:`GroundTruthError` raised when it did not run."""
    kept = _TRIAL.get()
    if kept is None or kept[0] is not scenario:
        return None
    if isinstance(kept[1], GroundTruthError):
        raise kept[1]
    return kept[1]
