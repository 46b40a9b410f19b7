"""A cheaper idle-connection check for httpcore's connection pool, during a run.

httpcore asks every idle pooled connection whether its server hung up each time it
assigns a request (``has_expired`` -> ``get_extra_info("is_readable")``), and anyio
answers the raw-socket lookup by building a dict of every socket attribute, calling
``getpeername`` each time: at ``--concurrency 16`` about 40 such lookups per live
trial, 1.3 ms of the event loop's CPU (httpcore 1.0.9, anyio 4.16, measured with
cProfile on ``benchmarks/bench_concurrency.py``). A stream's raw socket never changes,
so it is looked up once per stream here; the readability test itself (a zero-timeout
``poll``) is httpcore's own, run every time as before.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

_installed = 0
_real: Callable[[Any, str], Any] | None = None


def _stream_class() -> Any:
    try:
        from httpcore._backends.anyio import AnyIOStream
    except ImportError:  # another httpcore: nothing to speed up
        return None
    return AnyIOStream


def _get_extra_info(self: Any, info: str) -> Any:
    if info != "is_readable":
        assert _real is not None
        return _real(self, info)
    import anyio
    from httpcore._utils import is_socket_readable

    try:
        sock = self._toolbench_raw_socket
    except AttributeError:
        sock = self._stream.extra(anyio.abc.SocketAttribute.raw_socket, None)
        self._toolbench_raw_socket = sock
    return is_socket_readable(sock)


@contextmanager
def fast_pool_checks() -> Iterator[None]:
    """Install the cached raw-socket lookup for the duration of a run (re-entrant)."""
    global _installed, _real
    cls = _stream_class()
    if cls is None or not callable(getattr(cls, "get_extra_info", None)):
        yield
        return
    if _installed == 0:
        _real = cls.get_extra_info
        cls.get_extra_info = _get_extra_info
    _installed += 1
    try:
        yield
    finally:
        _installed -= 1
        if _installed == 0:
            cls.get_extra_info = _real
