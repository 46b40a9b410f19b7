"""The httpx router: each request goes to the cassette of the trial that made it.

A process-wide patch of httpx would send two concurrent asyncio trials' requests to one
cassette. Instead, one router patch stays installed for a run and sends each request to
the cassette of the trial that made it (a context variable, which asyncio copies into
each task); a request made outside any trial goes out as it is.
"""

from __future__ import annotations

import contextvars
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Protocol

import httpx

real_async = httpx.AsyncHTTPTransport.handle_async_request
"""httpx's own async send, never routed (a trial's live exchange goes through it)."""
real_sync = httpx.HTTPTransport.handle_request
"""httpx's own blocking send, likewise."""


class Route(Protocol):
    """What answers a trial's HTTP: its cassette (:class:`~.trial.TrialCassette`)."""

    async def handle(
        self, transport: httpx.AsyncHTTPTransport, request: httpx.Request
    ) -> httpx.Response: ...

    def handle_sync(
        self, transport: httpx.HTTPTransport, request: httpx.Request
    ) -> httpx.Response: ...


_current: contextvars.ContextVar[Route | None] = contextvars.ContextVar(
    "toolbench_cassette", default=None
)
_installed = 0


def set_route(route: Route) -> contextvars.Token[Route | None]:
    """Send this task's HTTP to ``route`` (while the router is installed)."""
    return _current.set(route)


def reset_route(token: contextvars.Token[Route | None]) -> None:
    _current.reset(token)


async def _routed_async(self: httpx.AsyncHTTPTransport, request: httpx.Request) -> httpx.Response:
    route = _current.get()
    if route is None:
        return await real_async(self, request)
    return await route.handle(self, request)


def _routed_sync(self: httpx.HTTPTransport, request: httpx.Request) -> httpx.Response:
    route = _current.get()
    if route is None:
        return real_sync(self, request)
    return route.handle_sync(self, request)


@contextmanager
def router() -> Iterator[None]:
    """Install the per-trial routing patch for the duration of a run (re-entrant)."""
    global _installed
    if _installed == 0:
        httpx.AsyncHTTPTransport.handle_async_request = _routed_async  # type: ignore[method-assign]
        httpx.HTTPTransport.handle_request = _routed_sync  # type: ignore[method-assign]
    _installed += 1
    try:
        yield
    finally:
        _installed -= 1
        if _installed == 0:
            httpx.AsyncHTTPTransport.handle_async_request = real_async  # type: ignore[method-assign]
            httpx.HTTPTransport.handle_request = real_sync  # type: ignore[method-assign]
