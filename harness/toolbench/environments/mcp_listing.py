"""What a server's ``tools/list`` must be, and the servers whose listing failed this run.

A leaf both the trial's environment (:mod:`.mcp_env`) and the run's resolution of a
scenario's tools (:mod:`.mcp_tools`) read: the resolution records a server it could not
list, and a trial of that server that would go live fails with that fault instead of
starting the server again.
"""

from __future__ import annotations

from typing import Any

from toolbench.codes import ENV_MCP_PROTOCOL
from toolbench.environments.env_faults import EnvironmentFault
from toolbench.environments.mcp_config import McpServer

FAILED: dict[str, EnvironmentFault] = {}
"""Per server name, why its tools could not be listed in this run (cleared per run)."""


def checked(name: str, tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The listed tools, each with a name and an object input schema; a server listing
    anything else answered outside MCP."""
    for i, tool in enumerate(tools):
        schema = tool.get("inputSchema") if isinstance(tool, dict) else None
        if not isinstance(tool, dict) or not isinstance(tool.get("name"), str):
            raise EnvironmentFault(f"MCP server '{name}': tools[{i}] has no name", ENV_MCP_PROTOCOL)
        if not isinstance(schema, dict) or schema.get("type") != "object":
            raise EnvironmentFault(
                f"MCP server '{name}': tool '{tool['name']}': inputSchema is not an object schema",
                ENV_MCP_PROTOCOL,
            )
    return tools


def without_state_tool(
    server: McpServer | None, tools: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """The listed tools the model is offered: all but the server's ``state_tool``
    (:mod:`.mcp_state`), which only toolbench calls."""
    if server is None or server.state_tool is None:
        return tools
    return [t for t in tools if not (isinstance(t, dict) and t.get("name") == server.state_tool)]
