"""A trial's environments, opened from what its scenario names.

Kept apart from :mod:`.execute` so the scenario schema stays the only thing this module
reads: the engine calls :func:`open_session` once per trial, and every fault of opening
(a name nobody registered, a state that does not fit, code that is not installed) is an
:class:`~toolbench.environments.env_faults.EnvironmentFault` whose code the runner records on
the trial.
"""

from __future__ import annotations

from collections.abc import Iterable

from toolbench.environments.env_faults import ENV_UNKNOWN, EnvironmentFault, UnknownEnvironmentError
from toolbench.environments.env_registry import get_environment
from toolbench.environments.execute import Session
from toolbench.environments.ground_truth import open_stateful, reads_server_state
from toolbench.environments.mcp_tools import server_of, unlisted_tools_problems
from toolbench.environments.toml_envs import register_configured
from toolbench.scenarios.model import Scenario


def open_session(scenario: Scenario) -> Session | None:
    """The environments ``scenario`` names, built from its initial states (None when it
    names none: its results are scripted)."""
    if not scenario.environment:
        return None
    try:
        if reads_server_state(scenario):  # a loop on a server: its state tool read
            return open_stateful(scenario)
        return Session.open((use.name, use.state) for use in scenario.environment)
    except UnknownEnvironmentError as exc:
        raise EnvironmentFault(str(exc), ENV_UNKNOWN) from None


def scenario_problems(scenarios: Iterable[Scenario]) -> list[str]:
    """One line per scenario naming an environment nobody registered (what plan and
    validate refuse with exit 2), after registering those ``toolbench.toml`` and
    ``--mcp`` name (:mod:`.toml_envs`; a bad entry is a
    :class:`~toolbench.errors.UserError`); a state is checked by building it only when
    the trial runs, where its fault is a typed code on that trial."""
    register_configured()
    out = []
    for sc in scenarios:
        where = sc.source or sc.id
        for i, use in enumerate(sc.environment):
            try:
                get_environment(use.name)
            except UnknownEnvironmentError as exc:
                out.append(f"{where}: {sc.id}: environment[{i}].name: {exc}")
            else:
                server = server_of(use.name)
                if (
                    server is not None
                    and sc.expect.turns is not None
                    and (server.server is None or server.server.state_tool is None)
                ):
                    out.append(f"{where}: {sc.id}: environment[{i}].name: MCP server "
                               f"'{use.name}' has no state to judge a loop (expect.turns) by: "
                               f'add state_tool = "TOOL" under [mcp.{use.name}] in '
                               "toolbench.toml (a tool answering its state as JSON)")  # fmt: skip
    return out + unlisted_tools_problems(scenarios)
