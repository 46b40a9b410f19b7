"""The embedded-models kind: endpoints for replay and its settings."""

from __future__ import annotations

import asyncio

import pytest

from toolbench.cassettes import LOCAL_BASE
from toolbench.formats.format_registry import get_format
from toolbench.providers.litellm_api import REPLAY_KEY, LiteLLMAPI
from toolbench.providers.local_api import LOCAL_MAX_TOKENS, LOCAL_TIMEOUT_S, LocalAPI
from toolbench.providers.model_api import ProviderSettings


def test_a_replay_endpoint_needs_no_server_and_uses_the_recorded_address() -> None:
    api = LocalAPI(ProviderSettings())
    ep = asyncio.run(api.endpoint("local/smollm2-135m", get_format("native"), live=False))
    assert (ep.model, ep.api_base) == ("openai/smollm2-135m", LOCAL_BASE)
    assert ep.params == {"max_tokens": LOCAL_MAX_TOKENS}
    assert ep.timeout_s == LOCAL_TIMEOUT_S and ep.on_timeout is None
    assert api.pool._servers == {}  # nothing started


def test_the_runs_options_reach_the_local_endpoint() -> None:
    api = LocalAPI(ProviderSettings(max_tokens=64, timeout_s=5.0))
    ep = asyncio.run(api.endpoint("local/gemma3-270m", get_format("xml"), live=False))
    assert ep.params == {"max_tokens": 64} and ep.timeout_s == 5.0


def test_litellm_endpoints_send_a_placeholder_key_on_replay_and_none_to_keyless_servers(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    api = LiteLLMAPI(ProviderSettings(api_base="http://127.0.0.1:8000/v1"))
    fmt = get_format("xml")
    replay = asyncio.run(api.endpoint("openai/x", fmt, live=False))
    live = asyncio.run(api.endpoint("openai/x", fmt, live=True))
    assert replay.api_key == REPLAY_KEY
    assert live.api_key == "toolbench-no-key"
    assert live.api_base == "http://127.0.0.1:8000/v1"
