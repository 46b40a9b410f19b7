"""The providers the round-trip tests drive, and the formats every one must carry."""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from pathlib import Path

from tests.providers.servers.base import FakeServer

HERE = Path(__file__).parent
SCENARIOS = HERE / "data"
"""Two multi-turn scenarios, Lisbon and Oslo (one file each)."""
LISBON = SCENARIOS / "lisbon.yaml"
FORMATS = ("native", "prompt-json", "react", "xml", "mistral", "claude-xml")
"""Native, the three text formats, and two dialect formats."""
DUMMY_KEY = "sk-rt-dummy-7f3a9c2e41b86d05"
"""The key every keyed fake is called with: no byte toolbench writes may hold it."""
KEY_ENVS = (
    "OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "MISTRAL_API_KEY",
    "DEEPSEEK_API_KEY", "MOONSHOT_API_KEY", "OPENROUTER_API_KEY",
)  # fmt: skip


@dataclass(frozen=True)
class Case:
    id: str
    model: str
    module: str
    variant: str
    keyed: bool = True

    def server(self, port: int = 0) -> FakeServer:
        mod = importlib.import_module(f"tests.providers.servers.{self.module}")
        srv: FakeServer = mod.server(self.variant, port)
        return srv


CASES = (
    Case("openai", "openai/gpt-4o-mini", "openai_chat", "openai"),
    Case("anthropic", "anthropic/claude-3-5-haiku-latest", "anthropic", "anthropic"),
    Case("gemini", "gemini/gemini-2.0-flash", "gemini", "gemini"),
    Case("gemini-3", "gemini/gemini-3-pro-preview", "gemini", "gemini"),
    Case("ollama", "ollama_chat/llama3", "ollama", "ollama", keyed=False),
    Case("llama-cpp", "openai/llama-cpp", "openai_chat", "keyless", keyed=False),
    Case("vllm", "hosted_vllm/qwen3", "openai_chat", "keyless", keyed=False),
    Case("lm-studio", "lm_studio/qwen3", "openai_chat", "keyless", keyed=False),
    Case("mistral", "mistral/mistral-small-latest", "openai_chat", "mistral"),
    Case("deepseek", "deepseek/deepseek-chat", "openai_chat", "deepseek"),
    Case("deepseek-reasoner", "deepseek/deepseek-reasoner", "openai_chat", "deepseek"),
    Case("moonshot", "moonshot/kimi-k2-0711-preview", "openai_chat", "moonshot"),
    Case("moonshot-k2.5", "moonshot/kimi-k2.5", "openai_chat", "moonshot"),
    Case("openrouter", "openrouter/openai/gpt-4o-mini", "openai_chat", "openrouter"),
)
