"""The batch wires by LiteLLM's provider name: a provider's batch API is a module of its
own (:mod:`.openai_batch`, :mod:`.anthropic_batch`) registered here by that name."""

from __future__ import annotations

from toolbench.runner.batch.anthropic_batch import AnthropicBatch
from toolbench.runner.batch.batch_api import MakeWire
from toolbench.runner.batch.openai_batch import OpenAIBatch

WIRES: dict[str, MakeWire] = {"openai": OpenAIBatch, "anthropic": AnthropicBatch}
MAX_REQUESTS: dict[str, int] = {"openai": 50_000, "anthropic": 100_000}
"""The most requests one batch takes (the providers' documented limits): a larger group
is sent as several batches."""
