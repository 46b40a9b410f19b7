"""A port taken between choosing it and the server binding it: the server starts again on
another port. The binary is a stand-in script that behaves as llama-server does on a taken
port (it logs "couldn't bind HTTP server socket" and exits 1) and answers ``/health``."""

from __future__ import annotations

import asyncio
import socket
import sys
from pathlib import Path

import pytest

from toolbench.errors import ToolbenchError
from toolbench.providers import llama_server
from toolbench.providers.llama_server import LlamaServer

STAND_IN = """\
import http.server, socket, sys
port = int(sys.argv[sys.argv.index("--port") + 1])
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200); self.end_headers(); self.wfile.write(b"{}")
    def log_message(self, *a): pass
try:
    srv = http.server.HTTPServer(("127.0.0.1", port), H)
except OSError:
    print(f"error: couldn't bind HTTP server socket, hostname: 127.0.0.1, port: {port}")
    sys.exit(1)
srv.serve_forever()
"""


def _binary(tmp_path: Path) -> Path:
    script = tmp_path / "stand_in.py"
    script.write_text(STAND_IN)
    binary = tmp_path / "llama-server"
    binary.write_text(f'#!/bin/sh\nexec {sys.executable} {script} "$@"\n')
    binary.chmod(0o755)
    return binary


def test_a_taken_port_is_left_for_another(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        busy = taken.getsockname()[1]
        server = LlamaServer(tmp_path / "m.gguf", "m", tmp_path / "log", binary=_binary(tmp_path))
        server.port = busy
        try:
            asyncio.run(server.start())
            assert server.port != busy
            assert server.ready()
        finally:
            server.stop()


def test_ports_taken_every_time_fail_with_the_log(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        busy = taken.getsockname()[1]
        monkeypatch.setattr(llama_server, "free_port", lambda: busy)
        server = LlamaServer(tmp_path / "m.gguf", "m", tmp_path / "log", binary=_binary(tmp_path))
        wanted = f"exited with code 1; last log lines: .*port: {busy}"
        with pytest.raises(ToolbenchError, match=wanted):
            asyncio.run(server.start())
