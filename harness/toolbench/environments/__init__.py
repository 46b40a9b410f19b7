"""Tools that run: environments execute a trial's calls against state they can snapshot.

A scenario names environments (registered in the ``toolbench.environments`` entry-point
group) and gives their initial state; the engine opens them once per trial
(:func:`open_session`), runs each reply's calls in order (:class:`Session`), feeds the
results back and stores the state after each turn. See ``docs/environments.md``.
"""

from toolbench.environments.env_faults import (
    EnvironmentFault,
    EnvironmentUnavailable,
    StateInvalid,
    UnknownEnvironmentError,
)
from toolbench.environments.env_registry import (
    ENTRY_POINT_GROUP,
    ENVIRONMENTS,
    environment_names,
    get_environment,
    register_environment,
    unregister_environment,
)
from toolbench.environments.environment import Environment, EnvironmentKind, JsonObject
from toolbench.environments.execute import TOOL_TIMEOUT_S, Session
from toolbench.environments.session import open_session, scenario_problems

__all__ = [
    "ENTRY_POINT_GROUP",
    "ENVIRONMENTS",
    "TOOL_TIMEOUT_S",
    "Environment",
    "EnvironmentFault",
    "EnvironmentKind",
    "EnvironmentUnavailable",
    "JsonObject",
    "Session",
    "StateInvalid",
    "UnknownEnvironmentError",
    "environment_names",
    "get_environment",
    "open_session",
    "register_environment",
    "scenario_problems",
    "unregister_environment",
]
