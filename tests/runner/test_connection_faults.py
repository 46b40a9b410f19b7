"""A connection that fails is ``infra.connection``, plain or streamed, with no HTTP status
made up for it (LiteLLM's OpenAI handler re-raises the SDK's connection error as a 500).
"""

from __future__ import annotations

import contextlib
import socket
import struct
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.runner.conftest import run_fake, trials_by_id
from toolbench import codes
from toolbench.providers.fake import FakeServer

pytestmark = pytest.mark.usefixtures("openai_key")


@pytest.fixture
def resetting() -> Iterator[str]:
    """A server that accepts each connection and resets it at once (RST, SO_LINGER 0)."""
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(16)
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = srv.accept()
            except OSError:
                return
            conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            with contextlib.suppress(OSError):
                conn.recv(65536)
            conn.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{srv.getsockname()[1]}/v1"
    stop.set()
    srv.close()


@pytest.fixture
def refused() -> str:
    """An address where nothing listens (the port was bound, then released)."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return f"http://127.0.0.1:{port}/v1"


@pytest.mark.parametrize("fmt", ["prompt-json", "prompt-json:stream"])
@pytest.mark.parametrize("where", ["resetting", "refused"])
def test_a_failed_connection_is_infra_connection_without_a_status(
    tmp_path: Path, scenario_file: Path, request: pytest.FixtureRequest, fmt: str, where: str
) -> None:
    base = request.getfixturevalue(where)
    with FakeServer() as unused:  # run_fake's signature; every request goes to ``base``
        rc = run_fake(unused, tmp_path, scenario_file, formats=fmt, api_base=base)
    assert rc == 3  # every trial an infra error
    for trial in trials_by_id(tmp_path / "run").values():
        assert (trial.status, trial.error_code) == ("infra_error", codes.INFRA_CONNECTION), (
            trial.infra_error
        )
        assert len(trial.attempts) == 5  # retried like any transient fault
        assert {a.http_status for a in trial.attempts} == {None}
