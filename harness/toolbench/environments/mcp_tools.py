"""A scenario's tools taken from the MCP servers it names: their ``tools/list``.

A scenario that names an environment and lists no ``tools`` offers the tools its MCP
servers list (in the order the scenario names them), with its own expectations and
checks beside; a scenario that lists ``tools`` keeps its own (they win). The tools are
resolved once per server per run, before any trial, so every trial of the run offers
the same tools:

* replaying (``--record none``/``new``), from a ``tools/list`` recorded in the cassettes
  of the scenarios that name the server: no server process is started;
* else (nothing recorded, or ``--record all``) by starting the server once and listing,
  unless ``--record none`` forbids live servers.

A server whose tools cannot be listed is not the end of the run: its scenarios keep no
tools and each of their trials that would go live fails with the fault kept in
:data:`.mcp_listing.FAILED` (read by :class:`~.mcp_env.McpEnvironment`):
``environment.mcp_start``, ``environment.mcp_protocol`` or ``environment.mcp_unrecorded``.
The Ray executor carries it to its workers (:mod:`toolbench.runner.executors.ray_worker`),
so their trials fail the same way and no worker starts the server again.
"""

from __future__ import annotations

import glob
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from toolbench.codes import ENV_MCP_PROTOCOL, ENV_MCP_UNRECORDED
from toolbench.environments.env_faults import EnvironmentFault, UnknownEnvironmentError
from toolbench.environments.env_registry import get_environment
from toolbench.environments.mcp_kind import McpKind
from toolbench.environments.mcp_listing import FAILED, checked, without_state_tool
from toolbench.environments.toml_envs import register_configured
from toolbench.errors import ToolbenchError, UserError
from toolbench.scenarios.model import Scenario
from toolbench.scenarios.toolschema import schema_problem
from toolbench.tools import ToolDef


def server_of(name: str) -> McpKind | None:
    """The configured MCP server called ``name`` (None: no such server)."""
    try:
        kind = get_environment(name)
    except UnknownEnvironmentError:
        return None
    return kind if isinstance(kind, McpKind) else None


def takes_server_tools(sc: Scenario) -> bool:
    """The scenario lists no tools: its MCP servers' ``tools/list`` are its tools."""
    return not sc.tools and bool(sc.environment)


def starts_servers(sc: Scenario) -> bool:
    """The scenario names a configured MCP server: opening its session may start a
    process and wait for it (what the engine does off the run's event loop)."""
    return any(server_of(use.name) is not None for use in sc.environment)


def unlisted_tools_problems(scenarios: Iterable[Scenario]) -> list[str]:
    """One line per scenario that lists no tools and names no MCP server to list them."""
    out = []
    for sc in scenarios:
        if takes_server_tools(sc) and not any(server_of(u.name) for u in sc.environment):
            names = ", ".join(f"'{u.name}'" for u in sc.environment)
            out.append(f"{sc.source or sc.id}: {sc.id}: tools: none given, and no environment "
                       f"it names ({names}) is an MCP server to list them")  # fmt: skip
    return out


def tool_def(tool: dict[str, Any]) -> ToolDef:
    """An MCP tool definition (``name``, ``description``, ``inputSchema``) as a ToolDef."""
    return ToolDef(name=tool["name"], description=str(tool.get("description") or ""),
                   parameters=tool["inputSchema"])  # fmt: skip


def listed_tools(server: str, tools: list[dict[str, Any]]) -> list[ToolDef]:
    """The server's listed tools as ToolDefs; ``environment.mcp_protocol`` when one is not
    a tool (checked as a trial checks its listing, then as a scenario file's schema)."""
    out = []
    for tool in checked(server, tools):
        problem = schema_problem(tool["inputSchema"])
        if problem is not None:
            raise EnvironmentFault(f"MCP server '{server}': tool '{tool['name']}': inputSchema "
                                   f"{problem}", ENV_MCP_PROTOCOL)  # fmt: skip
        out.append(tool_def(tool))
    return out


def recorded_listing(
    server: str, scenario_ids: Iterable[str], cassette_dir: Path
) -> list[dict[str, Any]] | None:
    """The first ``tools/list`` of ``server`` recorded in the cassettes of these scenarios
    (``<dir>/<model>/<format>/<id>[__sN].json``: an id too long to name its cassette
    as it is, which the runner shortens, is not found); None: none is."""
    from toolbench.cassettes.recording import load_if_present  # heavy: the cassette layer

    for sid in scenario_ids:
        root = glob.escape(str(cassette_dir))
        found = [*glob.glob(f"{root}/*/*/{glob.escape(sid)}.json"),
                 *glob.glob(f"{root}/*/*/{glob.escape(sid)}__s*.json")]  # fmt: skip
        for path in sorted(found):
            try:
                rec = load_if_present(Path(path))
            except ToolbenchError:  # an unreadable cassette is its trial's to report
                continue
            for ex in (rec.tools or []) if rec is not None else []:
                tools = ex.result.get("tools") if isinstance(ex.result, dict) else None
                if ex.server == server and ex.method == "tools/list" and isinstance(tools, list):
                    return tools
    return None


def live_listing(kind: McpKind) -> list[dict[str, Any]]:
    """Start the server once, list its tools, stop it (off this thread: a stdio server
    takes a while to stop and nothing waits on it); a pooled server is not stopped but
    kept in its pool for the run's first trial."""
    # heavy: the mcp client (and the cassette layer under it)
    from toolbench.environments.mcp_client import McpClient
    from toolbench.environments.mcp_pool import pool_for

    assert kind.server is not None
    client = McpClient(kind.name, kind.server, lambda _exchange: None)
    client.start()  # EnvironmentFault (environment.mcp_start) when it cannot
    tools = list(client.tools)
    if kind.server.pool:
        pool_for(kind.name, kind.server).adopt(client)
    else:
        client.close_soon()
    return tools


def server_tools(
    server: str, scenario_ids: Sequence[str], cassette_dir: Path, record: str
) -> list[ToolDef]:
    """The tools ``server`` lists for this run; :class:`EnvironmentFault` when it cannot."""
    kind = server_of(server)
    assert kind is not None
    listing = None if record == "all" else recorded_listing(server, scenario_ids, cassette_dir)
    if listing is None:
        if record == "none":
            raise EnvironmentFault(f"MCP server '{server}': no tools/list recorded in the "
                                   "cassettes of its scenarios, and a replay starts no server",
                                   ENV_MCP_UNRECORDED)  # fmt: skip
        listing = live_listing(kind)
    return listed_tools(server, without_state_tool(kind.server, listing))


def with_server_tools(
    scenarios: Sequence[Scenario], cassette_dir: Path, record: str
) -> list[Scenario]:
    """``scenarios`` with the tools of those that list none taken from their servers
    (each server asked once); a scenario whose server failed keeps none (its trials fail
    typed, :data:`.mcp_listing.FAILED`). A scenario expecting a call its servers do not
    list is the user's error: one line."""
    FAILED.clear()
    wanted = [sc for sc in scenarios if takes_server_tools(sc)]
    users: dict[str, list[str]] = {}
    for sc in wanted:
        for use in sc.environment:
            if server_of(use.name) is not None:
                users.setdefault(use.name, []).append(sc.id)
    listed: dict[str, list[ToolDef]] = {}
    for server, ids in users.items():
        try:
            listed[server] = server_tools(server, ids, cassette_dir, record)
        except EnvironmentFault as exc:
            FAILED[server] = exc
    return [_resolved(sc, listed) if takes_server_tools(sc) else sc for sc in scenarios]


def recorded_server_tools(
    scenarios: Sequence[Scenario], cassette_dir: Path | None
) -> list[Scenario]:
    """A stored run's scenarios with their servers' tools as its cassettes recorded them
    (what a rescore parses and scores against; it starts no server)."""
    if cassette_dir is None or not any(takes_server_tools(sc) for sc in scenarios):
        return list(scenarios)
    register_configured()
    return with_server_tools(scenarios, cassette_dir, "none")


def _resolved(sc: Scenario, listed: dict[str, list[ToolDef]]) -> Scenario:
    names = [u.name for u in sc.environment if server_of(u.name) is not None]
    if any(name in FAILED for name in names):
        return sc
    tools = [t for name in dict.fromkeys(names) for t in listed[name]]
    data = {**sc.model_dump(mode="json"), "tools": [t.model_dump() for t in tools]}
    try:
        out = Scenario.model_validate(data)
    except ValidationError as exc:
        why = str(exc.errors()[0]["msg"]).removeprefix("Value error, ")
        raise UserError(f"{sc.source or sc.id}: {sc.id}: with the tools its MCP servers list "
                        f"({', '.join(names)}): {why}") from None  # fmt: skip
    return out.model_copy(update={"source": sc.source})
