"""Provider calls through LiteLLM against the fake server: timeouts and the hang hook."""

from __future__ import annotations

import asyncio

import pytest

from tests.support.fake_openai import FakeOpenAI
from toolbench.errors import InfraError
from toolbench.formats.base import RenderedRequest
from toolbench.runner.provider import Endpoint, complete

REQ = RenderedRequest(messages=[{"role": "user", "content": "hi"}])


def test_a_hung_local_generation_fails_at_once_and_replaces_the_server() -> None:
    calls: list[int] = []
    with FakeOpenAI(delay_s=2.0) as fake:
        ep = Endpoint("openai/x", fake.base_url, "k-not-secret", timeout_s=0.3,
                      on_timeout=lambda: calls.append(1))  # fmt: skip
        with pytest.raises(InfraError, match=r"^timed out after 0s"):
            asyncio.run(complete(ep, REQ, seed=1))
        assert calls == [1]
        assert len(fake.received) == 1  # not retried against the hung server


def test_a_reply_is_read_with_usage() -> None:
    with FakeOpenAI() as fake:
        fake.enqueue("Hello there.")
        done = asyncio.run(complete(Endpoint("openai/x", fake.base_url, "k-not-secret"), REQ, 3))
    assert done.reply.text == "Hello there."
    assert done.reply.finish_reason == "stop"
    assert (done.prompt_tokens, done.completion_tokens) == (10, 5)
    assert done.request["seed"] == 3
