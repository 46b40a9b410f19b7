"""The faults of environments, each with the typed code recorded on the trial.

An environment fault is never an exception that ends a run: the runner records its code
on the trial (``harness_error`` status), and at plan or validate time a name that is not
configured is a :class:`~toolbench.errors.UserError` (one line, exit 2). A tool's own
failure is not a fault at all: it is a result the model is told about
(:mod:`toolbench.environments.execute`).
"""

from __future__ import annotations

from toolbench.errors import ToolbenchError, UnknownNameError

ENV_UNKNOWN = "environment.unknown"
ENV_STATE_INVALID = "environment.state_invalid"
ENV_UNAVAILABLE = "environment.unavailable"
ENV_SNAPSHOT_NOT_JSON = "environment.snapshot_not_json"
TOOL_UNKNOWN = "tool.unknown"
TOOL_RAISED = "tool.raised"
TOOL_RESULT_NOT_JSON = "tool.result_not_json"
TOOL_TIMEOUT = "tool.timeout"

DESCRIPTIONS: dict[str, str] = {
    ENV_UNKNOWN: "the scenario names an environment that is not registered",
    ENV_STATE_INVALID: "the scenario's initial state does not fit its environment",
    ENV_UNAVAILABLE: "the environment's code is not installed here (e.g. BFCL's backends "
    "without the bfcl-eval wheel: `toolbench import bfcl --multi-turn`)",
    ENV_SNAPSHOT_NOT_JSON: "the environment's state snapshot is not JSON (its own bug)",
    TOOL_UNKNOWN: "a call names a tool no environment of the scenario has (told to the model)",
    TOOL_RAISED: "a tool raised (its error was fed back to the model in the format's shape)",
    TOOL_RESULT_NOT_JSON: "a tool returned something JSON cannot hold (fed back as an error)",
    TOOL_TIMEOUT: "a tool did not return within its time bound (fed back as an error; the "
    "environment takes no further calls in that trial)",
}
"""One line per code, for the codes reference."""


class EnvironmentFault(ToolbenchError):
    """An environment cannot serve the trial; ``code`` is recorded on it."""

    def __init__(self, message: str, code: str) -> None:
        super().__init__(message)
        self.code = code


class StateInvalid(EnvironmentFault):
    """The initial state a scenario gives does not fit the environment it names."""

    def __init__(self, message: str) -> None:
        super().__init__(message, ENV_STATE_INVALID)


class EnvironmentUnavailable(EnvironmentFault):
    """The environment is registered but its code cannot be loaded here."""

    def __init__(self, message: str) -> None:
        super().__init__(message, ENV_UNAVAILABLE)


class UnknownEnvironmentError(UnknownNameError):
    """A scenario names an environment nobody registered (a user error: exit 2)."""

    code = ENV_UNKNOWN
