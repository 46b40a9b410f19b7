"""A small MCP server with state, for the tests: notes added, listed, and ways to fail.

Run as ``python mcp_notes_server.py`` (stdio) or ``python mcp_notes_server.py --http
PORT`` (streamable HTTP on 127.0.0.1). ``NOTES_START=crash`` makes it exit before
serving, ``NOTES_DELAY=SECONDS`` makes it sleep before serving (a slow start);
``NOTES_PIDS=FILE`` appends its process id to FILE (tests check none outlives
its trial); ``NOTES_SECRET`` is a value the ``whoami`` tool hands back (tests check it
never reaches a cassette).
"""

from __future__ import annotations

import os
import sys
import time

from mcp.server.mcpserver import MCPServer

server = MCPServer("notes")
notes: list[str] = []


@server.tool()
def add_note(text: str) -> dict[str, int]:
    """Add a note; its id."""
    notes.append(text)
    return {"id": len(notes)}


@server.tool()
def list_notes() -> list[str]:
    """Every note, in the order added."""
    return list(notes)


@server.tool()
def delete_note(id: int) -> str:
    """Delete note ``id`` (from 1)."""
    if not 1 <= id <= len(notes):
        raise ValueError(f"no note {id}")
    notes.pop(id - 1)
    return "deleted"


@server.tool()
def reset() -> str:
    """Forget every note (a shared server's way back to its first state)."""
    notes.clear()
    return "reset"


@server.tool()
def whoami() -> str:
    """The secret the server was given (it must never be recorded)."""
    return f"token {os.environ.get('NOTES_SECRET', '')}"


@server.tool()
def slow(seconds: float) -> str:
    """Sleep, then answer."""
    time.sleep(seconds)
    return "slept"


@server.tool()
def big(chars: int) -> str:
    """A result of ``chars`` characters."""
    return "x" * chars


@server.tool()
def crash() -> str:
    """Exit without answering."""
    os._exit(3)


if __name__ == "__main__":
    pids = os.environ.get("NOTES_PIDS")
    if pids:
        with open(pids, "a", encoding="utf-8") as f:
            f.write(f"{os.getpid()}\n")
    if os.environ.get("NOTES_START") == "crash":
        print("notes: refusing to start", file=sys.stderr)
        sys.exit(1)
    time.sleep(float(os.environ.get("NOTES_DELAY", "0")))
    if len(sys.argv) == 3 and sys.argv[1] == "--http":
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        server.run("stdio")
