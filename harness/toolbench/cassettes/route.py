"""The httpx router: each request goes to the cassette of the trial that made it.

vcrpy's own ``use_cassette`` patches httpx process-wide, so two concurrent asyncio trials
would write into one cassette. Instead, one router patch stays installed for a run and
sends each request to the cassette of the trial that made it (a context variable, which
asyncio copies into each task). Recording, matching and serialisation are vcrpy's.
"""

from __future__ import annotations

import contextvars
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager

import httpx

from toolbench.cassettes.cassette import TrialCassette

_current: contextvars.ContextVar[TrialCassette | None] = contextvars.ContextVar(
    "toolbench_cassette", default=None
)
real_async = httpx.AsyncHTTPTransport.handle_async_request
"""httpx's own async send, never routed (a streamed trial's live exchange goes through it)."""
_real_sync = httpx.HTTPTransport.handle_request
_installed = 0


def set_trial_cassette(tc: TrialCassette) -> contextvars.Token[TrialCassette | None]:
    """Send this task's HTTP to ``tc`` (while the router is installed)."""
    return _current.set(tc)


def reset_trial_cassette(token: contextvars.Token[TrialCassette | None]) -> None:
    _current.reset(token)


StreamRoute = Callable[[httpx.AsyncHTTPTransport, httpx.Request], Awaitable[httpx.Response]]
_stream_route: contextvars.ContextVar[StreamRoute | None] = contextvars.ContextVar(
    "toolbench_stream_route", default=None
)


def set_stream_route(route: StreamRoute) -> contextvars.Token[StreamRoute | None]:
    """Send this task's async requests to ``route`` (a streamed trial's SSE cassette,
    :mod:`toolbench.cassettes.stream_cassette`, which records chunk timings vcrpy cannot keep)."""
    return _stream_route.set(route)


def reset_stream_route(token: contextvars.Token[StreamRoute | None]) -> None:
    _stream_route.reset(token)


async def _routed_async(self: httpx.AsyncHTTPTransport, request: httpx.Request) -> httpx.Response:
    route = _stream_route.get()
    if route is not None:
        return await route(self, request)
    tc = _current.get()
    if tc is None:
        return await real_async(self, request)
    from vcr.errors import CannotOverwriteExistingCassetteException
    from vcr.stubs import httpx_stubs  # here: a replay at the boundary never imports vcrpy

    cassette = tc.vcr()
    before = tc.begin(request)
    t0 = time.perf_counter()
    try:
        response: httpx.Response = await httpx_stubs._vcr_handle_async_request(
            cassette, real_async, self, request, httpx
        )
    except CannotOverwriteExistingCassetteException:
        raise tc.gap(request) from None
    except BaseException:
        tc.last_provider_s = time.perf_counter() - t0  # a timeout, a refused connection
        raise
    # vcrpy has buffered the body already (to record it): reading it here costs nothing.
    content = await response.aread()
    tc.last_provider_s = time.perf_counter() - t0  # request written to last byte
    tc.finish(response.status_code, content, before)
    return response


def _routed_sync(self: httpx.HTTPTransport, request: httpx.Request) -> httpx.Response:
    tc = _current.get()
    if tc is None:
        return _real_sync(self, request)
    from vcr.errors import CannotOverwriteExistingCassetteException
    from vcr.stubs import httpx_stubs

    cassette = tc.vcr()
    before = tc.begin(request)
    t0 = time.perf_counter()
    try:
        response: httpx.Response = httpx_stubs._vcr_handle_request(
            cassette, _real_sync, self, request, httpx
        )
    except CannotOverwriteExistingCassetteException:
        raise tc.gap(request) from None
    content = response.read()
    tc.last_provider_s = time.perf_counter() - t0
    tc.finish(response.status_code, content, before)
    return response


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
            httpx.HTTPTransport.handle_request = _real_sync  # type: ignore[method-assign]
