"""The faults of environments, each with the typed code recorded on the trial.

An environment fault is never an exception that ends a run: the runner records its code
on the trial (``harness_error`` status), and at plan or validate time a name that is not
configured is a :class:`~toolbench.errors.UserError` (one line, exit 2). A tool's own
failure is not a fault at all: it is a result the model is told about
(:mod:`toolbench.environments.execute`).
"""

from __future__ import annotations

from toolbench.codes import (
    ENV_SNAPSHOT_NOT_JSON,
    ENV_STATE_INVALID,
    ENV_UNAVAILABLE,
    ENV_UNKNOWN,
    TOOL_RAISED,
    TOOL_RESULT_NOT_JSON,
    TOOL_TIMEOUT,
    TOOL_UNKNOWN,
)
from toolbench.errors import ToolbenchError, UnknownNameError

__all__ = [
    "ENV_SNAPSHOT_NOT_JSON",
    "ENV_STATE_INVALID",
    "ENV_UNAVAILABLE",
    "ENV_UNKNOWN",
    "TOOL_RAISED",
    "TOOL_RESULT_NOT_JSON",
    "TOOL_TIMEOUT",
    "TOOL_UNKNOWN",
    "EnvironmentFault",
    "EnvironmentUnavailable",
    "StateInvalid",
    "UnknownEnvironmentError",
]


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
