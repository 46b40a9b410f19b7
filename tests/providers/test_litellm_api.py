"""Provider calls through LiteLLM against the fake server: timeouts and the hang hook."""

from __future__ import annotations

import asyncio

import pytest

from tests.support.fake_openai import FakeOpenAI
from toolbench.cassettes import recordable, reply_fault
from toolbench.errors import InfraError
from toolbench.formats.base import RenderedRequest
from toolbench.providers.call import call
from toolbench.providers.litellm_api import LiteLLMAPI
from toolbench.providers.litellm_faults import retry_after
from toolbench.providers.model_api import Completion, CompletionRequest, Endpoint, ProviderSettings

REQ = RenderedRequest(messages=[{"role": "user", "content": "hi"}])


async def complete(ep: Endpoint, req: RenderedRequest, seed: int) -> Completion:
    """One plain request through the shared call and the LiteLLM kind."""
    return await call(LiteLLMAPI(ProviderSettings()), CompletionRequest(ep, req, seed))


def test_a_hung_local_generation_fails_at_once_and_replaces_the_server() -> None:
    # One call first: LiteLLM's import and its first request's set-up take a second or
    # more, which inside the 0.3 s deadline timed the request out before it reached the
    # server (this test failed when it ran first, and passed only after another test had
    # called LiteLLM).
    with FakeOpenAI() as warm:
        asyncio.run(complete(Endpoint("openai/x", warm.base_url, "k-not-secret"), REQ, seed=1))
    calls: list[int] = []
    with FakeOpenAI(delay_s=2.0) as fake:
        ep = Endpoint("openai/x", fake.base_url, "k-not-secret", timeout_s=0.3,
                      on_timeout=lambda: calls.append(1))  # fmt: skip
        with pytest.raises(InfraError, match=r"^timed out after 0.3s"):
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


class _Exc(Exception):
    def __init__(self, headers: dict[str, str]) -> None:
        super().__init__("x")
        import httpx

        self.litellm_response_headers = httpx.Headers(headers)


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        ({"retry-after": "7"}, 7.0),
        ({"retry-after": "0.5"}, 0.5),
        ({"retry-after-ms": "1500", "retry-after": "9"}, 1.5),
        ({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}, 0.0),  # a date in the past
        ({"retry-after": "soon"}, None),
        ({}, None),
    ],
)
def test_retry_after_is_read_from_litellms_real_headers(
    headers: dict[str, str], expected: float | None
) -> None:
    """LiteLLM's exception ``response`` is a placeholder without the server's headers."""
    assert retry_after(_Exc(headers)) == expected


def test_retry_after_as_a_future_http_date() -> None:
    from datetime import UTC, datetime, timedelta
    from email.utils import format_datetime

    when = format_datetime(datetime.now(UTC) + timedelta(seconds=30), usegmt=True)
    value = retry_after(_Exc({"retry-after": when}))
    assert value is not None and 25 < value <= 30


@pytest.mark.parametrize(
    ("status", "body", "path", "fault"),
    [
        (200, b'{"choices": [{"message": {"content": "hi"}}]}', "/v1/chat/completions", None),
        (200, b'{"choices": []}', "/v1/chat/completions", "chat completion without choices"),
        (200, b"{}", "/v1/chat/completions", "chat completion without choices"),
        (200, b'{"choices": [{"text": "x"}]}', "/v1/chat/completions",
         "chat completion whose first choice has no message"),
        (200, b"", "/v1/chat/completions", "empty body"),
        (200, b"<html>oops</html>", "/v1/chat/completions",
         "body is not JSON ('<html>oops</html>'...)"),
        (200, b"[1]", "/v1/messages", "body is not a JSON object"),
        (200, b'{"content": [], "id": "msg"}', "/v1/messages", None),  # another provider's shape
        (200, b'{"choices": []}', "/v1/anything", "chat completion without choices"),
        (503, b"{}", "/v1/chat/completions", "HTTP 503"),
    ],
)  # fmt: skip
def test_reply_fault(status: int, body: bytes, path: str, fault: str | None) -> None:
    assert reply_fault(status, body, path) == fault


@pytest.mark.parametrize(
    ("status", "body", "kept"),
    [
        (200, b'{"choices": [{"message": {"content": "hi"}}]}', True),
        (200, b'{"choices": []}', False),
        (200, b"<html></html>", False),
        (400, b'{"error": {"message": "stop is not supported"}}', True),  # provisional
        (404, b'{"error": {}}', True),  # provisional: forgotten unless acted on
        (408, b"", False),
        (429, b"{}", False),
        (500, b"{}", False),
        (302, b"", False),
    ],
)
def test_what_is_recorded(status: int, body: bytes, kept: bool) -> None:
    response = {"status": {"code": status}, "headers": {}, "body": {"string": body}}
    assert recordable(response, "/v1/chat/completions") is kept
