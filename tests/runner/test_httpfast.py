"""The cached raw-socket lookup of :mod:`toolbench.runner.httpfast` answers httpcore's
idle-connection check exactly as httpcore does, and looks the socket up once."""

from __future__ import annotations

import socket
from typing import Any

import anyio
import pytest
from httpcore._backends.anyio import AnyIOStream
from httpcore._utils import is_socket_readable

from toolbench.runner.httpfast import fast_pool_checks


class _Stream:
    """An anyio byte stream's attribute lookup, counted."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock, self.lookups = sock, 0

    def extra(self, attr: Any, default: Any = None) -> Any:
        self.lookups += 1
        return self.sock if attr is anyio.abc.SocketAttribute.raw_socket else default


@pytest.mark.parametrize("state", ["idle", "data waiting", "peer closed", "socket closed"])
def test_readability_is_httpcore_s_and_the_socket_is_looked_up_once(state: str) -> None:
    ours, peer = socket.socketpair()
    try:
        if state == "data waiting":
            peer.sendall(b"x")
        elif state == "peer closed":
            peer.close()
        elif state == "socket closed":
            ours.close()
        expected = is_socket_readable(ours)
        stream = _Stream(ours)
        wrapped = AnyIOStream(stream)  # type: ignore[arg-type]
        with fast_pool_checks():
            answers = [wrapped.get_extra_info("is_readable") for _ in range(3)]
            assert wrapped.get_extra_info("socket") is ours  # other lookups: httpcore's own
        assert answers == [expected] * 3
        assert stream.lookups == 2  # one for is_readable (cached), one for "socket"
        assert AnyIOStream.get_extra_info.__module__ == "httpcore._backends.anyio"
    finally:
        ours.close()
        peer.close()


def test_readability_follows_the_socket_after_the_first_lookup() -> None:
    ours, peer = socket.socketpair()
    try:
        wrapped = AnyIOStream(_Stream(ours))  # type: ignore[arg-type]
        with fast_pool_checks():
            assert wrapped.get_extra_info("is_readable") is False
            peer.sendall(b"x")  # the server hung up or sent something: seen at once
            assert wrapped.get_extra_info("is_readable") is True
    finally:
        ours.close()
        peer.close()
