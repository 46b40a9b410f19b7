"""Environments named in ``toolbench.toml`` and on the command line, beside entry points.

``[environments.NAME] class = "pkg.module:Class"`` registers a user's
:class:`~.environment.Environment` subclass under NAME (``description`` optional);
``[mcp.NAME]`` an MCP server (:mod:`.mcp_config`), as does ``toolbench run --mcp
NAME=COMMAND`` (over the file's table of that name). A scenario file still only names
the environment: this file is the user's configuration, and it is what is imported.

Read once per command, when its scenarios' environments are checked
(:func:`~.session.scenario_problems`); every problem is one line naming the file, the
table and the field, or the option (exit 2).
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from toolbench.environments.env_registry import ENVIRONMENTS, register_environment
from toolbench.environments.environment import Environment, EnvironmentKind
from toolbench.environments.mcp_config import McpServer, parse_option, servers_of
from toolbench.environments.mcp_kind import McpKind, mcp_kind
from toolbench.errors import UserError
from toolbench.redaction import register_secret
from toolbench.toml_file import read_toml

CONFIG_FILE = Path("toolbench.toml")
"""Read from the working directory, as the model parameters and ``gate`` read theirs."""

_given: dict[str, McpServer] = {}
"""The ``--mcp`` servers of this command."""
_configured: set[str] = set()
"""The names this module registered (replaced when the configuration is read again)."""
_servers: set[str] = set()
"""Those of them that are MCP servers."""


def mcp_names() -> frozenset[str]:
    """The names of the MCP servers configured now."""
    return frozenset(_servers)


def give_mcp_options(values: Sequence[str]) -> None:
    """Take ``--mcp NAME=COMMAND`` values (one line, exit 2, for a bad one)."""
    _given.clear()
    for text in values:
        name, server = parse_option(text)
        _given[name] = server


def class_kind(where: str, name: str, table: Any) -> EnvironmentKind:
    """The environment an ``[environments.NAME]`` table names."""
    at = f"{where}: environments.{name}"
    if not isinstance(table, dict):
        raise UserError(f'{at}: expected a table (class = "pkg.module:Class")')
    unknown = sorted(set(table) - {"class", "description"})
    if unknown:
        raise UserError(f"{at}.{unknown[0]}: unknown field (give class, description)")
    spec, description = table.get("class"), table.get("description", "")
    if not isinstance(spec, str) or spec.count(":") != 1 or not all(spec.split(":")):
        raise UserError(f'{at}.class: expected "pkg.module:Class", got {spec!r}')
    if not isinstance(description, str):
        raise UserError(f"{at}.description: expected text")
    module_name, attr = spec.split(":")
    try:
        module = importlib.import_module(module_name)
    except Exception as exc:  # the user's module, failing its own way
        raise UserError(f"{at}.class: cannot import '{module_name}' ({type(exc).__name__}: "
                        f"{str(exc).splitlines()[0] if str(exc) else ''})") from None  # fmt: skip
    cls = getattr(module, attr, None)
    if not isinstance(cls, type) or not issubclass(cls, Environment):
        raise UserError(f"{at}.class: '{spec}' is not an Environment subclass")
    return EnvironmentKind(name, cls, description)


def configured(path: Path = CONFIG_FILE) -> list[EnvironmentKind]:
    """The environments ``path`` and the ``--mcp`` options name (options over the file)."""
    data = read_toml(path)
    where = str(path)
    tables = data.get("environments", {})
    if not isinstance(tables, dict):
        raise UserError(f"{where}: environments: expected a table of environments")
    kinds = {name: class_kind(where, name, table) for name, table in tables.items()}
    servers = {**servers_of(where, data.get("mcp", {})), **_given}
    for name, server in servers.items():
        if name in kinds:
            raise UserError(f"{where}: mcp.{name}: also named in [environments]")
        for value in server.env.values():
            register_secret(value)  # a server's environment may hold keys: never written
        kinds[name] = mcp_kind(name, server)
    return list(kinds.values())


def register_configured(path: Path = CONFIG_FILE) -> None:
    """Register what :func:`configured` reads (again: a later command's file wins), over
    any registered environment of the same name.

    The installed plugins load first, so a configured name replaces a built-in's or a
    plugin's quietly (the user's file is the later, deliberate word); loaded after, the
    plugin would find its name taken and warn that it is left out."""
    kinds = configured(path)
    ENVIRONMENTS.load()
    for name in _configured - {k.name for k in kinds}:
        ENVIRONMENTS.unregister(name)
    _configured.clear()
    _servers.clear()
    _servers.update(k.name for k in kinds if isinstance(k, McpKind))
    for kind in kinds:
        register_environment(kind, replace=True)
        _configured.add(kind.name)
