"""A small MCP server with state, shipped so the embedded default can show an MCP loop.

A shop's stock: items listed, added and removed. Each process starts from the same
stock (toolbench starts one per trial), so every trial begins from the same state.
Its ``state`` tool answers the whole stock, so a loop scenario (``expect.turns``) can
judge what a turn left (``state_tool = "state"``, :mod:`.mcp_state`). It is the
``inventory`` server of the repository's ``toolbench.toml``; run it as
``python -m toolbench.environments.demo_mcp_server`` (stdio). ``DEMO_MCP_TOKEN`` in its
environment adds a ``whoami`` tool that hands it back: a stand-in for a key a real
server is given, which toolbench must never write (without it the tool is not listed).
"""

from __future__ import annotations

import os

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

START_STOCK: dict[str, int] = {"hammer": 4, "screwdriver": 7, "nails": 120}
"""What every process starts with."""

server = MCPServer("inventory")
stock: dict[str, int] = dict(START_STOCK)


# ToolError: the model is told why (any other exception only that the tool failed)


@server.tool()
def list_items() -> dict[str, int]:
    """Every item in stock with its quantity."""
    return dict(stock)


@server.tool()
def add_item(name: str, quantity: int) -> dict[str, int]:
    """Add ``quantity`` of item ``name`` to the stock; the item's new quantity."""
    if quantity <= 0:
        raise ToolError("quantity must be positive")
    stock[name] = stock.get(name, 0) + quantity
    return {name: stock[name]}


@server.tool()
def remove_item(name: str, quantity: int) -> dict[str, int]:
    """Take ``quantity`` of item ``name`` out of the stock (sold or used); its new quantity."""
    if name not in stock:
        raise ToolError(f"no item {name!r} in stock")
    if not 0 < quantity <= stock[name]:
        raise ToolError(f"cannot remove {quantity} {name}: {stock[name]} in stock")
    stock[name] -= quantity
    return {name: stock[name]}


@server.tool()
def state() -> dict[str, int]:
    """The whole stock: toolbench's ``state_tool``, read after each turn of a loop (not
    offered to the model, which has ``list_items``)."""
    return dict(stock)


def whoami() -> str:
    """The account the server acts for (its token, which must never be recorded)."""
    return f"token {os.environ.get('DEMO_MCP_TOKEN', '')}"


def main() -> None:
    """Serve over stdio until the client closes it."""
    if os.environ.get("DEMO_MCP_TOKEN"):
        server.tool()(whoami)
    server.run("stdio")


if __name__ == "__main__":
    main()
