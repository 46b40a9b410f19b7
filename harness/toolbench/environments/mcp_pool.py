"""Pooled MCP servers: started once per run, put back before each trial.

A server configured with ``pool = true`` (:mod:`.mcp_config`) is one whose state can be
put back: its ``reset`` tool, or none needed (``stateless``). Its trials then take a
started server from its pool instead of starting one each (:class:`~.mcp_env.McpEnvironment`
records a ``tools/list`` and calls the reset on it, in the trial's cassette); a trial
holds it alone, so a run keeps at most as many servers of a pool as it has trials of it
in flight. A server comes back to the pool only when its trial left it answering: one
that exited, or whose call did not end in time, is stopped, and the next trial gets a
fresh one. A server found dead when taken (its reset or its listing fails) is stopped
and replaced, the trial none the worse.

:func:`close_pools` stops every pooled server; the run calls it when its trials end (on
a Ray worker, when its batch of trials ends) and when the run ends, however it ends, and
a server a trial still holds then is stopped when that trial gives it back (or, at the
latest, when the process exits: :data:`.mcp_client.LIVE`). A replayed trial
takes nothing from a pool: no process is started.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from toolbench.environments.mcp_client import CallFailed, Keep, McpClient
from toolbench.environments.mcp_config import McpServer


def _nothing(_exchange: object) -> None:
    """Where an idle server's exchanges go: no trial owns them."""


class Pool:
    """The started servers of one configured server."""

    def __init__(self, name: str, server: McpServer) -> None:
        self.name, self.server = name, server
        self._idle: list[McpClient] = []
        self._started: list[McpClient] = []
        self._closed = False
        self._lock = threading.Lock()

    def adopt(self, client: McpClient) -> None:
        """Take a server started elsewhere (the run's listing of its tools) as idle."""
        with self._lock:
            self._started.append(client)
        self.give_back(client)

    def take(self, keep: Keep, reset: Callable[[McpClient], None]) -> McpClient:
        """A server for one trial, its exchanges kept by ``keep`` from now on: an idle one
        listed again and put back by ``reset``, else one started (its ``initialize`` and
        ``tools/list`` kept, then ``reset``). :class:`EnvironmentFault` when none starts;
        what ``reset`` raises on a fresh server."""
        while True:
            with self._lock:
                client = self._idle.pop() if self._idle else None
            if client is None:
                break
            if not client.alive:
                client.close_soon()
                continue
            client.keep = keep
            try:
                client.list_tools()
                reset(client)
            except CallFailed:  # it died idle, or cannot be put back: replace it
                client.keep = _nothing
                client.close_soon()
                continue
            return client
        client = McpClient(self.name, self.server, keep)
        with self._lock:
            self._started.append(client)
        try:
            client.start()
            reset(client)
        except BaseException:
            with self._lock:
                self._started.remove(client)
            client.close_soon()
            raise
        return client

    def give_back(self, client: McpClient) -> None:
        """The trial is done with ``client``, which it left answering."""
        client.keep = _nothing
        with self._lock:
            if not self._closed and client.alive:
                self._idle.append(client)
                return
        client.close_soon()

    def close(self) -> None:
        """Stop every server this pool started (in parallel: each takes a while)."""
        with self._lock:
            self._closed = True
            clients, self._idle, self._started = self._started, [], []
        stopping = [threading.Thread(target=c.close, name=f"mcp-close-{self.name}")
                    for c in clients]  # fmt: skip
        for thread in stopping:
            thread.start()
        for thread in stopping:
            thread.join()


POOLS: dict[tuple[str, str], Pool] = {}
"""The pools of this process, by server name and configuration."""
_POOLS_LOCK = threading.Lock()


def pool_for(name: str, server: McpServer) -> Pool:
    """The pool of ``server`` (made when first asked)."""
    key = (name, server.model_dump_json())
    with _POOLS_LOCK:
        pool = POOLS.get(key)
        if pool is None:
            pool = POOLS[key] = Pool(name, server)
        return pool


def close_pools() -> None:
    """Stop every pooled server of this process (the run has ended)."""
    with _POOLS_LOCK:
        pools = list(POOLS.values())
        POOLS.clear()
    for pool in pools:
        pool.close()
