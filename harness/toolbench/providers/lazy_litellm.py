"""LiteLLM, imported once and only after the environment switches toolbench depends on.

A leaf: it imports nothing of toolbench, so every provider module that needs LiteLLM's
tables (capabilities, provider prefixes, the Responses API's refusal, the LiteLLM kind)
imports it at the top without an import loop between them.

LiteLLM is imported lazily (its import is slow: start-up and replays never need it) and
only after its switches are set: ``DISABLE_AIOHTTP_TRANSPORT`` (its aiohttp transport
would bypass the cassettes, which hook httpx) and :data:`OFFLINE_SWITCHES` (no fetch
from GitHub); once imported, no tokenizer is downloaded either: a trial contacts the
model's endpoint and nothing else.
"""

from __future__ import annotations

import os
from types import ModuleType

_litellm: ModuleType | None = None

OFFLINE_SWITCHES = (
    "LITELLM_LOCAL_MODEL_COST_MAP", "LITELLM_LOCAL_ANTHROPIC_BETA_HEADERS",
    "LITELLM_LOCAL_BLOG_POSTS",
)  # fmt: skip
"""LiteLLM's switches (defaulted to ``True`` before it is imported; a user's own value is
kept) that make it read its bundled copies instead of fetching them from GitHub: the
model cost map (at import), the Anthropic beta-header table (on an Anthropic call), the
blog feed. Nothing but the model's endpoint is contacted by a trial."""


def litellm() -> ModuleType:
    """Import LiteLLM once, with the switches toolbench depends on."""
    global _litellm
    if _litellm is None:
        # Forced, not defaulted: the aiohttp transport would bypass the cassettes.
        os.environ["DISABLE_AIOHTTP_TRANSPORT"] = "True"
        for switch in OFFLINE_SWITCHES:
            os.environ.setdefault(switch, "True")
        import litellm as _mod  # deferred for start-up: LiteLLM's import is slow

        _mod.suppress_debug_info = True
        _mod.telemetry = False
        # A trial reaches the model's endpoint and nothing else. LiteLLM counts the tokens
        # of a reply that came without usage with a HuggingFace tokenizer for some models
        # (Llama 2/3, Command R), downloaded from huggingface.co on first use: offline, a
        # trial spent its deadline in the hub client's retries. Its bundled tiktoken
        # encoding counts them instead (only an estimate LiteLLM makes; a provider's own
        # usage is read as sent).
        _mod.disable_hf_tokenizer_download = True
        # Examined for the live path's CPU (benchmarks/bench_concurrency.py) and not set:
        # turn_off_message_logging (adds a redaction pass), disable_streaming_logging,
        # disable_token_counter and the per-call "no-log" (they skip callbacks, and none
        # is registered); none skips the cost calculation or the logging payload.
        _litellm = _mod
    return _litellm
