"""An MCP server's state, read through the tool its configuration declares.

MCP has no standard way to read a server's state, so a server that is to judge a loop
(``expect.turns``) names one of its tools as its state: ``state_tool = "NAME"`` under
``[mcp.NAME]`` in ``toolbench.toml``. In a loop scenario's trial that tool is called
with no arguments after each user turn, and its result's JSON is the server's snapshot
(what the loop scorers compare with the ground truth's). It is never offered to the
model (:func:`.mcp_listing.without_state_tool`) and a call of it by name is not run. Its exchanges
are recorded in the trial's cassette like any call, and replayed from it.

The ground truth runs on an instance of its own (:func:`truth_environment`), recorded
under the server's name with :data:`TRUTH` after it, so a replay tells its exchanges
from the model's.

What goes wrong is a typed code on the trial, never a tool error told to the model: the
tool not in the server's ``tools/list`` (``environment.mcp_state_missing``); it answers
an error, ``isError`` or nothing in time (``environment.mcp_state_raised``; a server
that exited, ``environment.mcp_died``; a replayed read not in the cassette,
``environment.mcp_unrecorded``); its text is not JSON (``environment.mcp_state_not_json``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from toolbench.codes import (
    ENV_MCP_STATE_MISSING,
    ENV_MCP_STATE_NOT_JSON,
    ENV_MCP_STATE_RAISED,
    ENV_MCP_UNRECORDED,
)
from toolbench.environments.env_faults import EnvironmentFault
from toolbench.environments.environment import JsonObject
from toolbench.environments.mcp_config import McpServer
from toolbench.environments.mcp_env import McpEnvironment, ToolError
from toolbench.environments.mcp_tape import Tape, trial_cassette

TRUTH = "#truth"
"""After a server's name, the instance the ground truth runs on (a configured name
never holds '#', so it cannot be another server's)."""

STATE_KEY = "value"
"""The key a state that is JSON but not an object is kept under (a snapshot is an object)."""


def state_value(server: str, tool: str, value: Any) -> JsonObject:
    """The snapshot a state tool's answer stands for: its structured content, or its
    text read as JSON (an object as it is, any other JSON value under :data:`STATE_KEY`)."""
    if isinstance(value, str):
        try:
            value = json.loads(value, parse_constant=_no_constant)
        except ValueError as exc:
            raise EnvironmentFault(
                f"MCP server '{server}': its state_tool '{tool}' answered text that is not "
                f"JSON ({exc})", ENV_MCP_STATE_NOT_JSON,
            ) from None  # fmt: skip
    return value if isinstance(value, dict) else {STATE_KEY: value}


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


class McpStateEnvironment(McpEnvironment):
    """An MCP server whose snapshot is what its state tool answers."""

    def __init__(self, name: str, server: McpServer, state: Mapping[str, Any]) -> None:
        if server.state_tool is None:
            raise ValueError(f"MCP server '{name}' declares no state_tool")
        self.state_tool = server.state_tool
        cassette = trial_cassette()
        if (
            cassette is not None
            and cassette.record == "none"
            and not Tape(name, cassette).replaying
        ):
            raise EnvironmentFault(f"MCP server '{name}': nothing of it is recorded in the "
                                   "trial's cassette, and a replay starts no server",
                                   ENV_MCP_UNRECORDED)  # fmt: skip
        super().__init__(name, server, state)
        if self.state_tool not in super().tool_names():
            self.close()
            raise EnvironmentFault(
                f"MCP server '{name}': its state_tool '{self.state_tool}' is not in its "
                "tools/list", ENV_MCP_STATE_MISSING,
            )  # fmt: skip

    def tool_names(self) -> frozenset[str]:
        return super().tool_names() - {self.state_tool}

    def snapshot(self) -> JsonObject:
        """Call the state tool (live, or its next recorded read) and read its answer."""
        if self.fault is not None:
            raise self.fault
        try:
            value = self.invoke(self.state_tool, {})
        except ToolError as exc:
            if self.fault is not None:  # the server exited, or the read is not recorded
                raise self.fault from None
            raise EnvironmentFault(
                f"MCP server '{self.name}': its state_tool '{self.state_tool}' failed: {exc}",
                ENV_MCP_STATE_RAISED,
            ) from None
        return state_value(self.name, self.state_tool, value)


def truth_environment(
    name: str, server: McpServer, state: Mapping[str, Any]
) -> McpStateEnvironment:
    """The server ``name`` started again for the ground truth, recorded as ``name#truth``."""
    return McpStateEnvironment(name + TRUTH, server, state)
