"""How toolbench starts or reaches an MCP server: ``[mcp.NAME]`` in ``toolbench.toml``, or
``toolbench run --mcp NAME=COMMAND``.

A server is reached over stdio (``command``: toolbench starts it, one fresh process per
trial, so every trial starts from the same state) or over streamable HTTP on this
machine (``url``): with a ``command`` too, toolbench starts that command per trial,
``{port}`` in the command and the URL standing for a free port it picks; with a ``url``
alone the server is the user's, already running, and its ``reset`` tool (when it names
one) is called at the start of each trial. Only localhost URLs are taken: a tool server
elsewhere would be someone else's state, not a trial's. A server toolbench starts may be
pooled instead (``pool = true``, :mod:`.mcp_pool`) when its state can be put back: it
names its ``reset`` tool, or declares itself ``stateless``.

Each problem of a table or an option is one line naming the file, the field or the
option (:class:`~toolbench.errors.UserError`, exit 2).
"""

from __future__ import annotations

import re
import shlex
from typing import Any
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from toolbench.environments.execute import TOOL_TIMEOUT_S
from toolbench.errors import UserError

OPTION = "--mcp"
NAME_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
"""A server's name is an environment's name: what a scenario's ``environment`` gives."""
LOCAL_HOSTS = frozenset({"127.0.0.1", "localhost", "::1"})
PORT = "{port}"


class McpServer(BaseModel):
    """One configured MCP server."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    command: list[str] | None = Field(default=None, min_length=1)
    """The server's command line (the program, then its arguments)."""
    url: str | None = None
    """A streamable HTTP endpoint on this machine (``http://127.0.0.1:PORT/mcp``)."""
    env: dict[str, str] = Field(default_factory=dict)
    """Variables added to the server's environment; their values are treated as secrets
    (never written to a cassette, a result or a report)."""
    cwd: str | None = None
    reset: str | None = None
    """A tool called with no arguments at the start of each trial (a server shared by the
    trials, the user's or a pooled one, offers one to return to its first state)."""
    state_tool: str | None = Field(default=None, min_length=1)
    """A tool called with no arguments after each user turn of a loop scenario, its JSON
    result the server's state (:mod:`.mcp_state`); never offered to the model. Without
    one a loop scenario (``expect.turns``) cannot name the server."""
    pool: bool = False
    """Start the server once per run and reset it before each trial,
    instead of a fresh process per trial (needs ``reset`` or ``stateless``)."""
    stateless: bool = False
    """The server keeps no state between calls: pooled, it needs no reset."""
    start_timeout_s: float = Field(default=20.0, gt=0, le=600)
    """Longest the server may take to start and answer ``initialize`` and ``tools/list``."""
    call_timeout_s: float = Field(default=8.0, gt=0, lt=TOOL_TIMEOUT_S)
    """Longest one ``tools/call`` may take; then the model is told it timed out (under
    the bound every tool call has, so the server answers the trial's next call)."""

    @model_validator(mode="after")
    def _reachable(self) -> McpServer:
        if self.command is None and self.url is None:
            raise ValueError("give 'command' (stdio) or 'url' (streamable HTTP on localhost)")
        if self.url is not None:
            parts = urlsplit(self.url.replace(PORT, "1"))
            if parts.scheme != "http" or (parts.hostname or "") not in LOCAL_HOSTS:
                raise ValueError(f"url: '{self.url}' is not http:// on localhost")
        port_in_url = self.url is not None and PORT in self.url
        port_in_command = self.command is not None and any(PORT in p for p in self.command)
        if self.command is not None and port_in_url and not port_in_command:
            raise ValueError("url: '{port}' in the url needs '{port}' in the command too")
        if self.state_tool is not None and self.command is None and self.reset is None:
            raise ValueError("state_tool: a server toolbench does not start needs 'reset' too "
                             "(the ground truth runs on it first)")  # fmt: skip
        if self.pool and self.command is None:
            raise ValueError("pool: only a server toolbench starts ('command') is pooled")
        if self.pool and self.reset is None and not self.stateless:
            raise ValueError("pool: a pooled server needs 'reset' (a tool that puts its "
                             "first state back) or 'stateless = true'")  # fmt: skip
        return self

    @property
    def started(self) -> bool:
        """toolbench starts the server (a fresh process per trial)."""
        return self.command is not None

    def bound(self, port: int) -> McpServer:
        """This server with ``{port}`` replaced by ``port``."""
        command = (
            None if self.command is None else [p.replace(PORT, str(port)) for p in self.command]
        )
        url = None if self.url is None else self.url.replace(PORT, str(port))
        return self.model_copy(update={"command": command, "url": url})


def _first_error(exc: ValidationError, at: str) -> str:
    """The first problem, after ``at`` and the field it is in (``at.field: why``)."""
    err = exc.errors()[0]
    loc = ".".join(str(p) for p in err["loc"])
    msg = str(err["msg"]).removeprefix("Value error, ")
    return f"{at}.{loc}: {msg}" if loc else f"{at}: {msg}"


def server_of(where: str, name: str, table: Any) -> McpServer:
    """The server a ``[mcp.NAME]`` table describes; one line naming ``where`` and the
    field otherwise."""
    if not NAME_PATTERN.match(name):
        raise UserError(f"{where}: mcp.{name}: a server name is letters, digits, '_', '.', '-'")
    if not isinstance(table, dict):
        raise UserError(f"{where}: mcp.{name}: expected a table (command = [...] or url = ...)")
    try:
        return McpServer.model_validate(table)
    except ValidationError as exc:
        raise UserError(f"{where}: {_first_error(exc, f'mcp.{name}')}") from None


def servers_of(where: str, tables: Any) -> dict[str, McpServer]:
    """Every server of a file's ``[mcp]`` table."""
    if not isinstance(tables, dict):
        raise UserError(f"{where}: mcp: expected a table of servers ([mcp.NAME])")
    return {name: server_of(where, name, table) for name, table in tables.items()}


def parse_option(text: str) -> tuple[str, McpServer]:
    """``--mcp NAME=COMMAND`` (the command as a shell would split it) or
    ``--mcp NAME=http://127.0.0.1:PORT/mcp``."""
    name, eq, rest = text.partition("=")
    name, rest = name.strip(), rest.strip()
    if not eq or not name:
        raise UserError(
            f"{OPTION}: '{text}' is not NAME=COMMAND (or NAME=http://127.0.0.1:PORT/mcp)"
        )
    if not NAME_PATTERN.match(name):
        raise UserError(f"{OPTION}: '{name}': a server name is letters, digits, '_', '.', '-'")
    if not rest:
        raise UserError(f"{OPTION}: '{text}' gives no command")
    if rest.startswith(("http://", "https://")):
        table: dict[str, Any] = {"url": rest}
    else:
        try:
            table = {"command": shlex.split(rest)}
        except ValueError as exc:
            raise UserError(f"{OPTION}: '{name}': cannot split the command ({exc})") from None
    try:
        return name, McpServer.model_validate(table)
    except ValidationError as exc:
        raise UserError(_first_error(exc, f"{OPTION} {name}")) from None
