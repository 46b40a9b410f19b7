"""A stream LiteLLM makes up is never a streamed trial (issue 34): for a model its
provider's config says it cannot stream (an Azure o-series deployment its table does not
know), LiteLLM sends a plain request and fakes a stream from the whole reply. The trial
is ``unsupported`` (as the Responses API path marks it), never timings of a stream that
was not one: refused before anything is sent, and caught after the fact where the
decision is made per request."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from tests.providers.servers.base import FakeServer, Response
from tests.providers.stream_fixtures import TOOLS, USER
from toolbench import codes
from toolbench.cassettes.route import router
from toolbench.cassettes.use import use_cassette
from toolbench.errors import UnsupportedError
from toolbench.formats.base import RenderedRequest
from toolbench.formats.format_registry import get_format
from toolbench.providers import litellm_api
from toolbench.providers.call import call
from toolbench.providers.litellm_api import LiteLLMAPI
from toolbench.providers.model_api import CompletionRequest, ProviderSettings

MODEL = "azure/o1-toolbench-deployment"
WHOLE = {"id": "c1", "object": "chat.completion", "created": 1, "model": "o1",
         "choices": [{"index": 0, "message": {"role": "assistant", "content": "Hi."},
                      "finish_reason": "stop"}],
         "usage": {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5}}  # fmt: skip


@pytest.fixture(autouse=True)
def _azure(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AZURE_API_KEY", "azure-dummy")
    monkeypatch.setenv("AZURE_API_VERSION", "2024-12-01-preview")


async def _streamed(server: FakeServer, cassette: Path) -> Any:
    api = LiteLLMAPI(ProviderSettings(api_base=server.base_url))
    endpoint = await api.endpoint(MODEL, get_format("native"), live=True)
    with router(), use_cassette(cassette, "all", streamed=True) as tc:
        req = CompletionRequest(endpoint, RenderedRequest(messages=[USER], tools=TOOLS), 7, tc,
                                [], 0)  # fmt: skip
        return await call(api, req, stream=True)


def test_a_stream_litellm_would_fake_is_refused_before_it_is_sent(tmp_path: Path) -> None:
    server = FakeServer(lambda req: Response(200, WHOLE))
    with server, pytest.raises(UnsupportedError) as raised:
        asyncio.run(_streamed(server, tmp_path / "trial.json"))
    assert raised.value.code == codes.UNSUPPORTED
    assert "LiteLLM does not stream this model" in str(raised.value)
    assert server.received == []


def test_a_stream_litellm_faked_is_caught_after_the_fact(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where the prediction has no say, the stream LiteLLM hands back tells: the plain
    request was sent without ``stream``, the trial is still ``unsupported`` and nothing
    is recorded."""
    monkeypatch.setattr(litellm_api, "_refuse_fake_chat_stream", lambda *a: None)
    server = FakeServer(lambda req: Response(200, WHOLE))
    with server, pytest.raises(UnsupportedError) as raised:
        asyncio.run(_streamed(server, tmp_path / "trial.json"))
    assert raised.value.code == codes.UNSUPPORTED
    assert "made the stream up" in str(raised.value)
    assert len(server.received) == 1 and not server.received[0].body.get("stream")
    assert not (tmp_path / "trial.json").exists()


def test_a_model_that_streams_is_not_refused() -> None:
    lm = litellm_api.litellm()
    litellm_api._refuse_fake_chat_stream(lm, "openai/gpt-4o-mini", None)
    litellm_api._refuse_fake_chat_stream(lm, "azure/o3-mini", None)  # o3 streams natively
    assert not litellm_api.faked_stream(object())
