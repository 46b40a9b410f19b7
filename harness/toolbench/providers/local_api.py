"""The embedded local models kind: GGUF models served by llama.cpp's ``llama-server``
(:mod:`.local_server`), called through LiteLLM's OpenAI route.

The server is started on first use (one per model, serving every format) and stopped when
the run ends; a replay needs none: its requests go to the recorded placeholder address.
Local models share this machine's cores, so the runner gives them one request at a time
(:attr:`LocalAPI.width`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

# The cassette layer records the server's address as this placeholder; a replay sends
# its requests there, never to a real port.
from toolbench.cassettes import LOCAL_BASE
from toolbench.errors import UnknownNameError
from toolbench.formats.base import Format
from toolbench.providers.lazy_litellm import litellm
from toolbench.providers.litellm_api import send, warm
from toolbench.providers.litellm_faults import classify
from toolbench.providers.local_models import LOCAL_MODELS
from toolbench.providers.local_server import LocalServerPool, check_ready
from toolbench.providers.model_api import Capabilities, Endpoint, Fault, ProviderSettings

LOCAL_KEY = "toolbench-local"
LOCAL_MAX_TOKENS = 256
LOCAL_TIMEOUT_S = 60.0
"""A 256-token reply takes seconds on a CPU; a minute means the generation hung (seen with
grammar-constrained function calling on Gemma 3 270M with llama-cpp-python)."""
LOCAL_PARAMS = frozenset({
    "temperature", "seed", "stop", "max_tokens", "tools", "tool_choice", "parallel_tool_calls",
    "response_format",
})  # fmt: skip
"""What llama-server's OpenAI chat endpoint takes of what toolbench sends."""


class LocalAPI:
    """The embedded models (``local/smollm2-135m``, ``local/gemma3-270m``)."""

    name = "local"
    prefixes: tuple[str, ...] = ("local/",)
    width: int | None = 1
    """Requests at once across every local model: each server uses every core."""

    def __init__(self, settings: ProviderSettings) -> None:
        self.settings = settings
        self.pool = LocalServerPool(Path(settings.log_dir))

    def preflight(self, model: str, record: str) -> None:
        if model not in LOCAL_MODELS:
            raise UnknownNameError("local model", model, LOCAL_MODELS)

    def ready(self, models: list[str]) -> None:
        check_ready(models)  # the server binary runs and each model's file is whole

    def run_params(self) -> dict[str, Any]:
        return {"local_max_tokens": self.settings.max_tokens or LOCAL_MAX_TOKENS}

    async def endpoint(self, model: str, fmt: Format, live: bool) -> Endpoint:
        alias = LOCAL_MODELS[model].alias
        base = await self.pool.base_url(model) if live else LOCAL_BASE
        if live:
            warm()  # once: LiteLLM's first-call imports are not the server's time
        pool = self.pool
        return Endpoint(
            f"openai/{alias}", base, LOCAL_KEY,
            {"max_tokens": self.settings.max_tokens or LOCAL_MAX_TOKENS},
            timeout_s=self.settings.timeout_s or LOCAL_TIMEOUT_S,
            on_timeout=(lambda: pool.discard(model)) if live else None,
            null_content_as_empty=True,
        )  # fmt: skip

    async def send(self, endpoint: Endpoint, request: dict[str, Any]) -> Any:
        # llama-server speaks OpenAI chat: LiteLLM's OpenAI route sends it.
        return await send(endpoint, request)

    def cost(self, response: Any) -> float | None:
        return None  # the embedded models run here: they have no price

    def capabilities(self, model: str) -> Capabilities:
        # Native calls: llama-server --jinja renders tools through the chat template.
        return Capabilities(params=LOCAL_PARAMS, function_calling=True, own_server=True)

    def classify(self, error: BaseException, request: dict[str, Any] | None = None) -> Fault:
        return classify(error, litellm(), None, request)

    def close(self) -> None:
        self.pool.stop_all()
