"""``classify`` decides by LiteLLM's exception classes, the tool parameter a 4xx body
names and LiteLLM's capability tables; the server's own words refusing the tools count
only for a model the tables do not list as calling functions."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from toolbench import codes
from toolbench.providers.lazy_litellm import litellm
from toolbench.providers.litellm_faults import classify

TOOLS = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]
WITH_TOOLS = {"model": "openai/gpt-4o-mini", "messages": [], "tools": TOOLS}
UNKNOWN_WITH_TOOLS = {"model": "openai/some-local-model", "messages": [], "tools": TOOLS}
MISLEADING = "stop is not supported; this model does not support tools; invalid json"
"""Words the old text matching acted on: none of them may decide anything now."""


def _bad_request(param: str | None = None, message: str = MISLEADING) -> Any:
    lm = litellm()
    body = {"message": message, "type": "invalid_request_error", "param": param}
    return lm.BadRequestError(message, model="m", llm_provider="openai", body=body)


OLLAMA = "registry.ollama.ai/library/gemma:2b does not support tools"
VLLM = '"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set'


def _in_text(status: int, body: dict[str, Any]) -> Any:
    """A 4xx as LiteLLM's own provider handlers raise it: no ``body``, the server's JSON
    inside the message."""
    lm = litellm()
    text = f"MistralException - {json.dumps(body)}"
    return lm.BadRequestError(text, model="m", llm_provider="mistral")


def _lm(name: str, **kw: Any) -> Callable[[], Any]:
    def make() -> Any:
        return getattr(litellm(), name)(message=MISLEADING, llm_provider="openai", model="m", **kw)

    return make


RESPONSE = httpx.Response(403, request=httpx.Request("POST", "http://x"))

CASES: list[tuple[str, Callable[[], Any], dict[str, Any] | None, str, str]] = [
    ("rate limit", _lm("RateLimitError"), None, codes.INFRA_RATE_LIMITED, "retry"),
    ("timeout", _lm("Timeout"), None, codes.INFRA_TIMEOUT, "retry"),
    ("connection", _lm("APIConnectionError"), None, codes.INFRA_CONNECTION, "retry"),
    ("unavailable", _lm("ServiceUnavailableError"), None, codes.INFRA_SERVER_ERROR, "retry"),
    ("server", _lm("InternalServerError"), None, codes.INFRA_SERVER_ERROR, "retry"),
    ("auth", _lm("AuthenticationError"), None, codes.INFRA_CLIENT_ERROR, "infra"),
    ("denied", _lm("PermissionDeniedError", response=RESPONSE), None,
     codes.INFRA_CLIENT_ERROR, "infra"),
    ("not found", _lm("NotFoundError"), None, codes.INFRA_CLIENT_ERROR, "infra"),
    ("context", _lm("ContextWindowExceededError"), WITH_TOOLS,
     codes.PROVIDER_CONTEXT_WINDOW, "model"),
    ("litellm refuses a param", _lm("UnsupportedParamsError"), None, codes.UNSUPPORTED,
     "unsupported"),
    ("400 naming tools", lambda: _bad_request("tools", "nope"), None, codes.UNSUPPORTED,
     "unsupported"),
    ("400 naming tool_choice", lambda: _bad_request("tool_choice", "nope"), None,
     codes.UNSUPPORTED, "unsupported"),
    # The text says "does not support tools", but the model calls functions by
    # LiteLLM's table and the body names no parameter: a plain client error.
    ("400 text only", lambda: _bad_request(None), WITH_TOOLS, codes.INFRA_CLIENT_ERROR, "infra"),
    ("400 without tools", lambda: _bad_request(None), {"model": "openai/x"},
     codes.INFRA_CLIENT_ERROR, "infra"),
    # With tools, to a model LiteLLM does not list as calling functions: unsupported only
    # when the body refuses the tools themselves (issue 34); any other 400 is the
    # provider's client error.
    ("400 tools unknown model", lambda: _bad_request(None, "bad"), UNKNOWN_WITH_TOOLS,
     codes.INFRA_CLIENT_ERROR, "infra"),
    ("400 unknown model says no tools", lambda: _bad_request(None, OLLAMA), UNKNOWN_WITH_TOOLS,
     codes.UNSUPPORTED, "unsupported"),
    ("400 unknown model, vLLM's auto tool choice", lambda: _bad_request(None, VLLM),
     UNKNOWN_WITH_TOOLS, codes.UNSUPPORTED, "unsupported"),
    ("422 through body.tools", lambda: _in_text(422, {"detail": [
        {"loc": ["body", "tools", 0, "function"], "msg": "Extra inputs", "type": "extra"}]}),
     WITH_TOOLS, codes.UNSUPPORTED, "unsupported"),
    ("422 through body.messages", lambda: _in_text(422, {"detail": [
        {"loc": ["body", "messages", 1], "msg": "tools not supported", "type": "x"}]}),
     UNKNOWN_WITH_TOOLS, codes.INFRA_CLIENT_ERROR, "infra"),
    ("400 param in a body in the text", lambda: _in_text(400, {"error": {
        "message": "nope", "param": "tool_choice"}}), WITH_TOOLS, codes.UNSUPPORTED,
     "unsupported"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("exc", "request_", "code", "kind"),
    [c[1:] for c in CASES],
    ids=[c[0] for c in CASES],
)
def test_classify_by_class(
    exc: Callable[[], Any], request_: dict[str, Any] | None, code: str, kind: str
) -> None:
    fault = classify(exc(), litellm(), None, request_)
    assert (fault.code, fault.kind) == (code, kind)
    assert fault.retryable is (kind == "retry")


def test_a_plain_exception_mentioning_json_is_not_a_bad_reply() -> None:
    """Before, any LiteLLM APIError whose text said "json" was an ``infra.bad_reply``."""
    lm = litellm()
    exc = lm.APIError(status_code=None, message="could not parse json", llm_provider="openai",
                      model="m")  # fmt: skip
    assert classify(exc, lm, None).code != codes.INFRA_BAD_REPLY
