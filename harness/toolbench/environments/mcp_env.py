"""An MCP server as a trial's environment: its ``tools/list`` are the tools, ``tools/call``
runs the model's calls in order, its exchanges recorded in the trial's cassette.

Registered under the server's configured name (:mod:`.mcp_kind`), like any environment:
the engine and the scorers see an :class:`~.environment.Environment`. Live, each trial
starts its own server (:mod:`.mcp_client`; a server toolbench does not start has its
``reset`` tool called first), so every trial starts from the same state; a pooled server
(``pool = true``, :mod:`.mcp_pool`) is taken from its pool, listed and reset, and given
back when the trial ends if the trial left it answering. Replayed, the trial is answered
from its cassette (:mod:`.mcp_tape`; the recorded reset first) and no process is started;
with ``--record new``, a call the cassette does not hold starts the server, runs the calls
played so far against it again and goes on live, recording the server's exchanges anew.

What goes wrong: a server that cannot start is ``environment.mcp_start`` on the trial; a
tool the server lists with an input schema that is not a JSON object schema,
``environment.mcp_protocol``; a call the server answers with an error or ``isError``, or
does not answer in time, is a tool error the model is told; a server that exits
mid-trial is told as a tool error too, and the trial then ends ``environment.mcp_died``
(at its next state snapshot: what it left cannot be trusted).
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Mapping
from typing import Any

from toolbench.codes import ENV_MCP_DIED, ENV_MCP_PROTOCOL, ENV_MCP_UNRECORDED
from toolbench.environments.env_faults import EnvironmentFault, StateInvalid
from toolbench.environments.environment import Environment, JsonObject
from toolbench.environments.mcp_client import EXITED, TIMED_OUT, CallFailed, McpClient
from toolbench.environments.mcp_config import McpServer
from toolbench.environments.mcp_listing import FAILED, checked
from toolbench.environments.mcp_pool import Pool, pool_for
from toolbench.environments.mcp_tape import Tape, trial_cassette


class ToolError(Exception):
    """A call the server answered as failed: its text is what the model is told."""


class McpEnvironment(Environment):
    """One configured MCP server, for one trial."""

    def __init__(self, name: str, server: McpServer, state: Mapping[str, Any]) -> None:
        self.name, self.server = name, server
        self.tape = Tape(name, trial_cassette())
        self.client: McpClient | None = None
        self.pool: Pool | None = None
        self.spoiled = False
        """A call did not end in time (or is running still): the server goes back to no pool."""
        self.played: list[tuple[str, dict[str, Any]]] = []
        self.fault: EnvironmentFault | None = None
        """What ends the trial at its next snapshot (the server exited, a replayed call
        not recorded): the call itself was told to the model as a tool error."""
        super().__init__(state)
        listed = self.tape.listed() if self.tape.replaying else None
        try:
            if listed is None and name in FAILED:  # this run could not list its tools
                raise FAILED[name]
            if listed is None:
                self.tape.forget()
                listed = self._start()
            elif self.server.reset is not None:  # the reset recorded before the calls
                self.tape.play("tools/call", {"name": self.server.reset, "arguments": {}})
            self.tools = checked(name, listed)
        except BaseException:
            self.close()  # a server must not outlive the trial that could not use it
            raise

    def load(self, state: JsonObject) -> None:
        if state:
            raise StateInvalid(f"MCP server '{self.name}' takes no initial state (its own)")

    def _start(self) -> list[dict[str, Any]]:
        try:
            if self.server.pool:
                self.pool = pool_for(self.name, self.server)
                self.client = self.pool.take(self.tape.keep, self._reset)
            else:
                self.client = McpClient(self.name, self.server, self.tape.keep)
                self.client.start()
                self._reset(self.client)
        except CallFailed as exc:
            self.close()
            raise EnvironmentFault(
                f"MCP server '{self.name}': its reset tool failed: {exc}", ENV_MCP_PROTOCOL
            ) from None
        return self.client.tools

    def _reset(self, client: McpClient) -> None:
        """Call the server's ``reset`` tool, when it names one (:class:`CallFailed`)."""
        if self.server.reset is not None:
            client.call(self.server.reset, {})

    def snapshot(self) -> JsonObject:
        if self.fault is not None:
            raise self.fault
        return {}

    def close(self) -> None:
        client, self.client = self.client, None
        if client is None:
            return
        if self.pool is not None and self.fault is None and not self.spoiled:
            self.pool.give_back(client)
        else:  # off the caller's thread: the trial's event loop
            client.close_soon()

    def tool_names(self) -> frozenset[str]:
        return frozenset(str(t["name"]) for t in self.tools)

    def invoke(self, name: str, arguments: Mapping[str, Any]) -> Any:
        args = dict(arguments)
        if self.client is None:
            ex = self.tape.play("tools/call", {"name": name, "arguments": args})
            if ex is None:
                self._go_live(name)
            else:
                self.played.append((name, args))
                return self._answer(ex.result, ex.error)
        assert self.client is not None
        self.played.append((name, args))
        before, self.spoiled = self.spoiled, True  # until the call ends
        try:
            result = self.client.call(name, args)
        except CallFailed as exc:
            self.spoiled = before or exc.error.get("code") == TIMED_OUT
            return self._answer(None, exc.error)
        self.spoiled = before
        return self._answer(result, None)

    def _go_live(self, name: str) -> None:
        """A call the cassette does not hold: refused on a replay-only trial; else the
        server is started and the calls played so far are run on it again."""
        cassette = self.tape.cassette
        if cassette is None or cassette.record == "none":
            message = f"MCP server '{self.name}': a call of '{name}' is not in the cassette"
            self.fault = EnvironmentFault(message, ENV_MCP_UNRECORDED)
            raise ToolError(message)
        self.tape.forget()
        self._start()
        assert self.client is not None
        for done, args in self.played:
            with contextlib.suppress(CallFailed):  # as when recorded: the model was told
                self.client.call(done, args)
        self.played = []

    def _answer(self, result: Any, error: dict[str, Any] | None) -> Any:
        """A recorded or live answer as the tool's value; an error raises
        :class:`ToolError` (the model is told)."""
        if error is not None:
            if error.get("code") == EXITED and self.fault is None:
                message = f"MCP server '{self.name}' exited during the trial"
                self.fault = EnvironmentFault(message, ENV_MCP_DIED)
            raise ToolError(str(error.get("message", "the call failed")))
        if not isinstance(result, dict):
            raise ToolError("the server's result is not a JSON-RPC result object")
        text = _content_text(result)
        if result.get("isError"):
            raise ToolError(text or "the tool failed")
        if "structuredContent" in result and not text:
            return result["structuredContent"]
        return text

    def error_text(self, code: str, message: str, exc: BaseException | None = None) -> str:
        if isinstance(exc, ToolError):
            message = str(exc)
        return json.dumps({"error": message}, ensure_ascii=False)


def _content_text(result: Mapping[str, Any]) -> str:
    """The text items of a ``tools/call`` result's content, joined (other items, images
    and resources, as their JSON)."""
    parts = []
    for item in result.get("content") or []:
        if isinstance(item, dict) and item.get("type") == "text":
            parts.append(str(item.get("text", "")))
        else:
            parts.append(json.dumps(item, ensure_ascii=False))
    return "\n".join(parts)
