"""The ``inventory`` MCP server shipped with toolbench, as a built-in environment.

The embedded default's ``mcp`` scenarios name it; registered through the
``toolbench.environments`` entry point group, they plan wherever toolbench is installed,
not only beside the repository's ``toolbench.toml`` (whose ``[mcp.inventory]``, like any
user's table of that name, replaces it). Started with this interpreter, so the server
runs with the toolbench that started it. The server itself is
:mod:`.demo_mcp_server`, imported only in its own process (it loads the ``mcp`` server).
"""

from __future__ import annotations

import sys

from toolbench.environments.mcp_config import McpServer
from toolbench.environments.mcp_kind import McpKind, mcp_kind

NAME = "inventory"
MODULE = "toolbench.environments.demo_mcp_server"

STATE_TOOL = "state"
"""Its tool answering the whole stock (what a loop on it compares after each turn)."""

KIND: McpKind = mcp_kind(
    NAME, McpServer(command=[sys.executable, "-m", MODULE], state_tool=STATE_TOOL)
)
