"""A live MCP server for one trial: started, asked, stopped, every exchange kept.

The ``mcp`` package's client is asynchronous; a trial's tools are called from its worker
thread (:mod:`.worker`), bounded in time. So each server gets a thread of its own running
an event loop that holds the transport and the
:class:`mcp.ClientSession` open, and the trial's calls are handed to that loop. The
thread starts with a context of its own: the trial's cassette routes the model's HTTP
(a context variable), and a tool server's traffic must never be taken for the model's.

Each exchange (``initialize``, ``tools/list``, ``tools/call``, its result or error) is
handed to ``keep`` as it ends; a server that does not answer in time or exits is an
exchange with an error toolbench wrote (:data:`TIMED_OUT`, :data:`EXITED`).
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import contextvars
import json
import os
import socket
import tempfile
import threading
import time
import weakref
from collections.abc import Callable, Coroutine
from contextlib import AsyncExitStack
from typing import IO, Any
from urllib.parse import urlsplit

from toolbench.cassettes.recording import ToolExchange
from toolbench.codes import ENV_MCP_START
from toolbench.environments.env_faults import EnvironmentFault
from toolbench.environments.mcp_config import McpServer

TIMED_OUT = -32001
"""The JSON-RPC error code toolbench records for a call the server did not answer in time."""
EXITED = -32000
"""The code for a call whose server exited (the ``mcp`` package's ``CONNECTION_CLOSED``)."""
STOP_WAIT_S = 5.0
"""Longest ``close`` waits for the server to stop before leaving it to the process end."""
STDERR_CHARS = 300
TOO_LARGE = -32002
"""The code toolbench records for a result over :data:`MAX_RESULT_CHARS` (not kept)."""
MAX_RESULT_CHARS = 1_000_000
"""Largest result kept (as JSON text): a larger one would be most of a cassette and no
model's context holds it; the model is told it was too large."""

Keep = Callable[[ToolExchange], None]

LIVE: weakref.WeakSet[McpClient] = weakref.WeakSet()
"""Every client started and not yet closed: stopped when the process ends, so that no
server outlives the run, whatever ended it."""


@atexit.register
def _close_all() -> None:
    for client in list(LIVE):
        client.close()


class CallFailed(Exception):
    """A call the server answered with a JSON-RPC error (or did not answer)."""

    def __init__(self, error: dict[str, Any]) -> None:
        super().__init__(str(error.get("message", "")))
        self.error = error


def free_port() -> int:
    """A port nothing listens on now (for a server started per trial on ``{port}``)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _json(value: Any) -> Any:
    """An ``mcp`` result model as the JSON-RPC data it was on the wire."""
    dump = getattr(value, "model_dump", None)
    return value if dump is None else dump(mode="json", by_alias=True, exclude_none=True)


def _error_of(exc: BaseException) -> dict[str, Any]:
    """The JSON-RPC error an exception of a call stands for."""
    data = getattr(exc, "error", None)
    if isinstance(data, dict):
        return data
    code = getattr(exc, "code", None)
    if isinstance(code, int):
        return {"code": code, "message": str(getattr(exc, "message", exc))}
    return {"code": EXITED, "message": f"the server stopped answering ({type(exc).__name__})"}


class McpClient:
    """One server, started by :meth:`start`, stopped by :meth:`close` (idempotent)."""

    def __init__(self, name: str, server: McpServer, keep: Keep) -> None:
        self.name, self.keep = name, keep
        self.server = server.bound(free_port()) if server.url and "{port}" in server.url else server
        self.tools: list[dict[str, Any]] = []
        self._loop: asyncio.AbstractEventLoop | None = None
        self._session: Any = None
        self._stop: asyncio.Event | None = None
        self._ready = threading.Event()
        self._ended = threading.Event()
        self._failure: BaseException | None = None
        self._errlog: IO[bytes] | None = None
        self._process: Any = None
        self._thread: threading.Thread | None = None

    @property
    def alive(self) -> bool:
        return self._ready.is_set() and not self._ended.is_set()

    def start(self) -> None:
        """Start the server and list its tools; :class:`EnvironmentFault`
        (``environment.mcp_start``) when it cannot."""
        # the server's stderr (why it did not start), closed by close()
        self._errlog = tempfile.TemporaryFile()  # noqa: SIM115
        ctx = contextvars.Context()  # empty: no cassette route in here
        LIVE.add(self)
        self._thread = threading.Thread(
            target=ctx.run, args=(asyncio.run, self._main()), name=f"mcp-{self.name}", daemon=True
        )
        self._thread.start()
        if not self._ready.wait(self.server.start_timeout_s) or not self.alive:
            why = self._why()
            self.close()
            raise EnvironmentFault(f"MCP server '{self.name}' did not start: {why}", ENV_MCP_START)

    def _why(self) -> str:
        if self._failure is None:
            reason = f"no answer within {self.server.start_timeout_s:g} s"
        else:
            exc = self._failure
            while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
                exc = exc.exceptions[0]
            reason = f"{type(exc).__name__}: {exc}"
        tail = self._stderr_tail()
        return f"{reason}; its stderr: {tail}" if tail else reason

    def _stderr_tail(self) -> str:
        if self._errlog is None:
            return ""
        with contextlib.suppress(OSError, ValueError):
            self._errlog.seek(0)
            lines = self._errlog.read().decode("utf-8", "replace").strip().splitlines()
            return lines[-1][-STDERR_CHARS:] if lines else ""
        return ""

    async def _main(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._stop = asyncio.Event()
        try:
            async with AsyncExitStack() as stack:
                read, write = await stack.enter_async_context(self._transport(stack))
                from mcp import ClientSession  # heavy: imported when a server is first used

                session = await stack.enter_async_context(ClientSession(read, write))
                init = await self._exchange("initialize", None, session.initialize())
                if init is None:
                    raise RuntimeError("initialize failed")
                listed = await self._exchange("tools/list", None, session.list_tools())
                if listed is None:
                    raise RuntimeError("tools/list failed")
                self.tools = list(listed.get("tools", []))
                self._session = session
                self._ready.set()
                await self._stop.wait()
        except BaseException as exc:  # the server's failure is the trial's fault, typed
            self._failure = exc
        finally:
            self._ended.set()
            self._ready.set()

    def _transport(self, stack: AsyncExitStack) -> Any:
        server = self.server
        if server.url is None:
            from mcp import StdioServerParameters
            from mcp.client.stdio import stdio_client

            assert server.command is not None
            params = StdioServerParameters(
                command=server.command[0], args=server.command[1:],
                env={**os.environ, **server.env}, cwd=server.cwd,
            )  # fmt: skip
            return stdio_client(params, errlog=self._errlog)  # type: ignore[arg-type]
        from mcp.client.streamable_http import streamable_http_client

        return _http(self, stack, streamable_http_client)

    async def _exchange(
        self,
        method: str,
        params: Any,
        pending: Coroutine[Any, Any, Any],
        timeout: float | None = None,
    ) -> Any:
        """Await one request, keep its exchange; its result as JSON data, or None when
        it failed (the exchange holds why)."""
        try:
            result = _json(await asyncio.wait_for(pending, timeout or self.server.start_timeout_s))
        except TimeoutError:
            error = {"code": TIMED_OUT, "message": f"no result within {timeout or 0:g} s"}
            self.keep(ToolExchange(server=self.name, method=method, params=params, error=error))
            raise CallFailed(error) from None
        except Exception as exc:
            error = _error_of(exc)
            self.keep(ToolExchange(server=self.name, method=method, params=params, error=error))
            raise CallFailed(error) from None
        size = len(json.dumps(result, ensure_ascii=False))
        if size > MAX_RESULT_CHARS:
            error = {"code": TOO_LARGE, "message": f"a result of {size} characters, over the "
                     f"{MAX_RESULT_CHARS} kept"}  # fmt: skip
            self.keep(ToolExchange(server=self.name, method=method, params=params, error=error))
            raise CallFailed(error)
        self.keep(ToolExchange(server=self.name, method=method, params=params, result=result))
        return result

    def call(self, name: str, arguments: dict[str, Any]) -> Any:
        """``tools/call``: its result as JSON data; :class:`CallFailed` with the error."""
        params = {"name": name, "arguments": arguments}
        return self._request("tools/call", params, lambda s: s.call_tool(name, arguments))

    def list_tools(self) -> list[dict[str, Any]]:
        """``tools/list`` again (a pooled server's next trial records its own listing);
        :class:`CallFailed` with the error."""
        listed = self._request("tools/list", None, lambda s: s.list_tools())
        self.tools = list(listed.get("tools", [])) if isinstance(listed, dict) else []
        return self.tools

    def _request(
        self, method: str, params: Any, ask: Callable[[Any], Coroutine[Any, Any, Any]]
    ) -> Any:
        """One request of ``ask(session)`` on the client's loop, bounded by the server's
        ``call_timeout_s``; its result as JSON data, or :class:`CallFailed`."""
        loop, session = self._loop, self._session
        if loop is None or session is None or not self.alive:
            raise self._failed(method, params, {"code": EXITED, "message": "the server has exited"})
        timeout = self.server.call_timeout_s
        pending = self._exchange(method, params, ask(session), timeout)
        future = asyncio.run_coroutine_threadsafe(pending, loop)
        try:
            return future.result(timeout + 1.0)
        except CallFailed:
            raise
        except Exception as exc:  # the loop ended under the call: the server is gone
            raise self._failed(method, params, _error_of(exc)) from None

    def _failed(self, method: str, params: Any, error: dict[str, Any]) -> CallFailed:
        """Keep a request that never reached the server's answer; its error."""
        self.keep(ToolExchange(server=self.name, method=method, params=params, error=error))
        return CallFailed(error)

    def close_soon(self) -> None:
        """:meth:`close` on a thread of its own: a stdio server takes a second or more to
        stop, and the caller (a trial ending on the run's event loop) must not wait. The
        thread is not a daemon: the process waits for it, so no server outlives the run."""
        threading.Thread(target=self.close, name=f"mcp-close-{self.name}").start()

    def close(self) -> None:
        """Stop the server (its transport ends the process) and the loop's thread."""
        loop, stop = self._loop, self._stop
        if loop is not None and stop is not None and not self._ended.is_set():
            with contextlib.suppress(RuntimeError):  # the loop already closed
                loop.call_soon_threadsafe(stop.set)
        if self._thread is not None and self._thread is not threading.current_thread():
            deadline = time.monotonic() + STOP_WAIT_S
            self._thread.join(max(0.0, deadline - time.monotonic()))
        if self._errlog is not None:
            with contextlib.suppress(OSError):
                self._errlog.close()
            self._errlog = None
        LIVE.discard(self)


def _http(client: McpClient, stack: AsyncExitStack, connect: Any) -> Any:
    """The streamable HTTP transport, after starting the server's command when toolbench
    starts it (and waiting until its port answers)."""
    server = client.server

    @contextlib.asynccontextmanager
    async def transport() -> Any:
        process = None
        if server.command is not None:
            process = await asyncio.create_subprocess_exec(
                *server.command, env={**os.environ, **server.env}, cwd=server.cwd,
                stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.DEVNULL,
                stderr=client._errlog,
            )  # fmt: skip
        try:
            if process is not None:
                await _until_listening(server.url or "", process, server.start_timeout_s)
            async with connect(server.url) as streams:
                yield streams[0], streams[1]
        finally:
            if process is not None and process.returncode is None:
                process.terminate()
                try:
                    await asyncio.wait_for(process.wait(), STOP_WAIT_S)
                except TimeoutError:
                    process.kill()

    return transport()


async def _until_listening(url: str, process: Any, bound_s: float) -> None:
    """Wait for the started server's port to accept a connection (or the process to end)."""
    parts = urlsplit(url)
    deadline = time.monotonic() + bound_s
    while time.monotonic() < deadline:
        if process.returncode is not None:
            raise RuntimeError(f"the server exited with status {process.returncode}")
        try:
            _, writer = await asyncio.open_connection(parts.hostname, parts.port or 80)
        except OSError:
            await asyncio.sleep(0.05)
            continue
        writer.close()
        return
    raise TimeoutError(f"nothing listened on {parts.hostname}:{parts.port}")
