"""Running a trial's calls against its environments, bounded, and snapshotting them.

:class:`Session` holds the environments a scenario names, built from its initial state.
:meth:`Session.run` executes the calls of one reply in the order the model made them and
returns, for each, the text fed back and a :class:`~toolbench.tool_runs.ToolRun` record.
A tool that raises, returns something JSON cannot hold, or does not return within
:data:`TOOL_TIMEOUT_S` is a tool error written the environment's way and fed back to the
model; it never ends the trial. Calls run on the trial's worker thread
(:mod:`.worker`); a tool that never returned keeps it busy (Python cannot stop it), so
the trial's environments take no further call: each is refused as ``tool.timeout``
rather than racing the call still running. The wait blocks the caller (the engine runs
on the event loop): the bound is what keeps a hung tool from stalling a run for long.
"""

from __future__ import annotations

import contextlib
import copy
import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from toolbench.environments.env_faults import (
    ENV_SNAPSHOT_NOT_JSON,
    TOOL_RAISED,
    TOOL_RESULT_NOT_JSON,
    TOOL_TIMEOUT,
    TOOL_UNKNOWN,
    EnvironmentFault,
    StateInvalid,
)
from toolbench.environments.env_registry import get_environment
from toolbench.environments.environment import Environment, JsonObject
from toolbench.environments.worker import Worker
from toolbench.formats.base import ToolCall
from toolbench.tool_runs import ToolRun

TOOL_TIMEOUT_S = 10.0
"""Longest a tool may run: a tool in a loop must answer in a chat's time; one that never
returns must not hold the trial past its deadline."""

ERROR_CHARS = 500
"""Longest exception message fed back (a traceback-sized message is noise to a model)."""


def build(name: str, state: Mapping[str, Any]) -> Environment:
    """The environment ``name`` built from ``state``; a state that does not fit is
    :class:`StateInvalid` whatever the environment raised."""
    kind = get_environment(name)
    try:
        return kind.build(state)
    except EnvironmentFault:
        raise
    except Exception as exc:  # the environment's own check of the state, in its words
        raise StateInvalid(f"environment '{name}': {type(exc).__name__}: {exc}") from None


class Session:
    """The environments of one trial and the calls run against them."""

    def __init__(
        self, envs: Iterable[tuple[str, Environment]], timeout_s: float | None = None
    ) -> None:
        self.envs = list(envs)
        self.timeout_s = TOOL_TIMEOUT_S if timeout_s is None else timeout_s
        self._stuck = False
        self._owners: dict[str, int] | None = None
        self._worker = Worker()

    @classmethod
    def open(cls, uses: Iterable[tuple[str, Mapping[str, Any]]]) -> Session:
        """Build each named environment from its initial state (in the order given)."""
        return cls((name, build(name, state)) for name, state in uses)

    def owner(self, tool: str) -> int | None:
        """The index of the first environment that has ``tool``."""
        if self._owners is None:  # the tools of an environment are its class's methods
            self._owners = {}
            for i, (_, env) in reversed(list(enumerate(self.envs))):
                self._owners.update(dict.fromkeys(env.tool_names(), i))
        return self._owners.get(tool)

    def has(self, tool: str) -> bool:
        return self.owner(tool) is not None

    def run_call(self, call: ToolCall) -> tuple[str, ToolRun]:
        """Execute one call: the text fed back, and its record."""
        at = self.owner(call.name)
        if at is None:
            return self.refuse(call)
        env = self.envs[at][1]
        if self._stuck:
            return self._error(env, call, TOOL_TIMEOUT, "an earlier call is still running")
        # A copy: a tool that keeps or changes its arguments (a list stored in its state,
        # then appended to) must not change the recorded call or a scenario's ground truth.
        arguments = copy.deepcopy(call.arguments)
        out = self._worker.run(lambda: env.invoke(call.name, arguments), self.timeout_s)
        if out is None:
            self._stuck = True
            return self._error(env, call, TOOL_TIMEOUT, f"no result within {self.timeout_s:g} s")
        if out.error is not None:
            detail = str(out.error)[:ERROR_CHARS]
            message = f"{type(out.error).__name__}: {detail}"
            return self._error(env, call, TOOL_RAISED, message, out.error)
        try:
            text = env.result_text(out.value)
        except (TypeError, ValueError) as exc:
            return self._error(env, call, TOOL_RESULT_NOT_JSON,
                               f"the result is not JSON ({str(exc)[:ERROR_CHARS]})")  # fmt: skip
        return text, ToolRun(name=call.name, arguments=call.arguments, result=text)

    def refuse(self, call: ToolCall) -> tuple[str, ToolRun]:
        """The answer to a call of a tool that is not offered: ``tool.unknown``, told to
        the model the first environment's way, nothing run."""
        message = f"unknown tool '{call.name}'"
        if not self.envs:
            text = json.dumps({"error": message}, ensure_ascii=False)
            return text, ToolRun(name=call.name, arguments=call.arguments, result=text,
                                 error=TOOL_UNKNOWN)  # fmt: skip
        return self._error(self.envs[0][1], call, TOOL_UNKNOWN, message)

    def _error(
        self,
        env: Environment,
        call: ToolCall,
        code: str,
        message: str,
        exc: BaseException | None = None,
    ) -> tuple[str, ToolRun]:
        text = env.error_text(code, message, exc)
        return text, ToolRun(name=call.name, arguments=call.arguments, result=text, error=code)

    def run(self, calls: Sequence[ToolCall]) -> list[tuple[ToolCall, str, ToolRun]]:
        """Execute ``calls`` in order (each sees the state the one before left)."""
        out = []
        for call in calls:
            text, run = self.run_call(call)
            out.append((call, text, run))
        return out

    def close(self) -> None:
        """Close every environment and stop the worker thread once it is idle (the engine
        closes a trial's session when its conversation ends, however it ends). A failing
        close is the environment's own: the trial's turns are already what they are."""
        self._worker.close()
        for _, env in self.envs:
            with contextlib.suppress(Exception):  # nothing of the trial depends on it
                env.close()

    def snapshot(self) -> dict[str, JsonObject]:
        """Every environment's state, by name (the last of a repeated name wins its slot
        with an index suffix), checked to be JSON."""
        snap: dict[str, JsonObject] = {}
        for i, (name, env) in enumerate(self.envs):
            key = name if name not in snap else f"{name}#{i}"
            state = env.snapshot()
            try:
                json.dumps(state, allow_nan=False)
            except (TypeError, ValueError) as exc:
                raise EnvironmentFault(
                    f"environment '{name}': its snapshot is not JSON ({exc})", ENV_SNAPSHOT_NOT_JSON
                ) from None
            snap[key] = state
        return snap
