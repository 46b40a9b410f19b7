"""A configured MCP server as a registered environment kind, by its name.

Kept apart from :mod:`.mcp_env` so that registering the servers of ``toolbench.toml``
(which every command that checks scenarios does) loads neither the ``mcp`` client nor
the cassette layer (httpx): a server's environment is imported when a trial first
builds one.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from toolbench.environments.environment import Environment, EnvironmentKind
from toolbench.environments.mcp_config import McpServer


@dataclass(frozen=True)
class McpKind(EnvironmentKind):
    """A registered MCP server (an environment kind that starts a server when built)."""

    server: McpServer | None = None
    """How to start or reach it (what :mod:`.mcp_tools` lists the tools of)."""


def mcp_kind(name: str, server: McpServer) -> McpKind:
    """The environment a configured server is, by its name."""

    def build(state: Mapping[str, Any]) -> Environment:
        # heavy (the mcp client, httpx through the cassettes): loaded when first used
        from toolbench.environments.mcp_env import McpEnvironment

        return McpEnvironment(name, server, state)

    return McpKind(name, build, f"MCP server ({_how(server)})", server)


def _how(server: McpServer) -> str:
    wire = "stdio" if server.url is None else "streamable HTTP"
    if server.pool:
        return f"{wire}, pooled"
    if server.url is None:
        return wire
    return f"{wire}, started per trial" if server.started else f"{wire}, reset"
