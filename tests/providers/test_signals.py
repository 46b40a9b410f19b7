"""A provider's failure signals inside a 2xx stream (:mod:`toolbench.providers.wire.signals`),
a provider's finish signal (:mod:`toolbench.providers.finish`) and the tools a provider
ran itself (:mod:`toolbench.providers.server_tools`), each rule on its own."""

from __future__ import annotations

import json
from typing import Any

import pytest

from toolbench import codes
from toolbench.formats.base import ModelReply
from toolbench.formats.format_registry import get_format
from toolbench.providers import finish, server_tools
from toolbench.providers.model_api import Fault
from toolbench.providers.wire import signals
from toolbench.providers.wire.gemini import reader as gemini

START = {"type": "message_start", "message": {"id": "m", "content": []}}
STOP = {"type": "message_stop"}
GEM_END = {"candidates": [{"content": {"parts": [{"text": "x"}]}, "finishReason": "STOP"}]}

SIGNALS: list[tuple[str, list[Any], str, str | None, str | None]] = [
    # case, events, path, framing, the code (None: no signal)
    ("anthropic whole", [START, STOP], "/v1/messages", "sse", None),
    ("anthropic without message_stop", [START], "/v1/messages", "sse",
     codes.INFRA_STREAM_TRUNCATED),
    ("anthropic overloaded", [START, {"type": "error", "error": {"type": "overloaded_error"}}],
     "/v1/messages", "sse", codes.INFRA_SERVER_ERROR),
    ("anthropic rate limit", [{"type": "error", "error": {"type": "rate_limit_error"}}],
     "/v1/messages", "sse", codes.INFRA_RATE_LIMITED),
    ("anthropic invalid request", [{"type": "error", "error": {"type": "invalid_request_error"}}],
     "/v1/messages", "sse", codes.INFRA_CLIENT_ERROR),
    ("an error of no known type", [{"type": "error", "error": {"type": "mystery"}}],
     "/v1/messages", "sse", codes.INFRA_BAD_REPLY),
    ("anthropic unknown block", [START, {"type": "content_block_start", "index": 0,
                                         "content_block": {"type": "hologram"}}, STOP],
     "/v1/messages", "sse", codes.INFRA_BAD_REPLY),
    ("anthropic server tool result", [START, {"type": "content_block_start", "index": 0,
                                              "content_block": {"type": "x_tool_result"}}, STOP],
     "/v1/messages", "sse", None),
    ("a gateway's error chunk", [{"choices": [{"delta": {"content": "a"}}]},
                                 {"error": {"message": "upstream", "code": 502}}],
     "/v1/chat/completions", "sse", codes.INFRA_SERVER_ERROR),
    ("gemini's error object", [{"error": {"code": 429, "status": "RESOURCE_EXHAUSTED"}}],
     "/v1beta/models/g:streamGenerateContent", "sse", codes.INFRA_RATE_LIMITED),
    ("ollama's error line", [{"error": "model not found"}], "/api/chat", "ndjson",
     codes.INFRA_BAD_REPLY),
    ("gemini ended", [GEM_END], "/m:streamGenerateContent", "sse", None),
    ("gemini without finishReason", [{"candidates": [{"content": {"parts": [{"text": "x"}]}}]}],
     "/m:streamGenerateContent", "sse", codes.INFRA_STREAM_TRUNCATED),
    ("bedrock ended", [{"role": "assistant"}, {"stopReason": "end_turn"}],
     "/model/m/converse-stream", "eventstream", None),
    ("bedrock without messageStop", [{"role": "assistant"}, {"contentBlockIndex": 0}],
     "/model/m/converse-stream", "eventstream", codes.INFRA_STREAM_TRUNCATED),
    ("cohere without message-end", [{"type": "message-start"}, {"type": "content-delta"}],
     "/v2/chat", "sse", codes.INFRA_STREAM_TRUNCATED),
    ("cohere ended", [{"type": "message-start"}, {"type": "message-end"}], "/v2/chat", "ndjson",
     None),
    ("ollama without done", [{"model": "m", "done": False, "message": {"content": "a"}}],
     "/api/chat", "ndjson", codes.INFRA_STREAM_TRUNCATED),
    ("openai without finish_reason: an issue, not a fault",
     [{"choices": [{"delta": {"content": "a"}}]}], "/v1/chat/completions", "sse", None),
    ("the responses API: its own reader", [{"type": "response.created"}], "/v1/responses",
     "sse", None),
]  # fmt: skip


@pytest.mark.parametrize(("events", "path", "framing", "code"), [c[1:] for c in SIGNALS],
                         ids=[c[0] for c in SIGNALS])  # fmt: skip
def test_a_failure_signal_is_typed(
    events: list[Any], path: str, framing: str, code: str | None
) -> None:
    got = signals.fault([(e, float(i)) for i, e in enumerate(events)], path, framing)
    assert (got.code if got is not None else None) == code


def test_signals_are_linear_in_the_events() -> None:
    """A long stream of hostile events is judged in one pass (never raises)."""
    events: list[tuple[Any, float | None]] = [(START, 0.0)]
    events += [({"type": "content_block_delta", "delta": None}, 1.0)] * 200_000
    events += [(7, 2.0), (None, 3.0), ([1, 2], 4.0)]
    assert signals.fault(events, "/v1/messages", "sse") is not None


FINISH: list[tuple[str, str | None, str | None, list[Any], str | None, str | None]] = [
    # case, finish reason read, native reason, calls, the finish after, the code raised
    ("malformed call", "stop", "MALFORMED_FUNCTION_CALL", [], "malformed_function_call", None),
    ("unexpected tool call", "stop", "UNEXPECTED_TOOL_CALL", [], "unexpected_tool_call", None),
    ("a filter", "content_filter", "SAFETY", [], None, codes.PROVIDER_FILTERED),
    ("openai's filter", "content_filter", None, [], None, codes.PROVIDER_FILTERED),
    ("an answer", "stop", "STOP", [], "stop", None),
    ("calls and a malformed one: the calls stand", "tool_calls", "MALFORMED_FUNCTION_CALL",
     [{"id": "c", "function": {"name": "f", "arguments": "{}"}}], "tool_calls", None),
]  # fmt: skip


@pytest.mark.parametrize(("read", "native", "calls", "after", "code"),
                         [c[1:] for c in FINISH], ids=[c[0] for c in FINISH])  # fmt: skip
def test_a_finish_signal_is_settled(
    read: str | None, native: str | None, calls: list[Any], after: str | None, code: str | None
) -> None:
    reply = ModelReply(finish_reason=read, tool_calls=calls)
    if code is not None:
        with pytest.raises(Fault) as raised:
            finish.settle(reply, native)
        assert raised.value.code == code and not raised.value.retryable
        return
    finish.settle(reply, native)
    assert reply.finish_reason == after


def test_a_failed_call_attempt_is_a_call_failure_of_the_native_format() -> None:
    """Never an abstention: the reply tried to call (``attempted``) and failed."""
    parsed = get_format("native").parse_reply(ModelReply(finish_reason="malformed_function_call"))
    assert parsed.status == "failed" and parsed.attempted
    assert codes.CALL_MALFORMED in parsed.codes()
    plain = get_format("native").parse_reply(ModelReply(text="No.", finish_reason="stop"))
    assert plain.status == "no_call" and not plain.attempted


def test_the_native_reason_is_read_from_the_events_and_the_reply() -> None:
    events: list[tuple[Any, float | None]] = [
        ({"candidates": [{"content": {}}]}, 0.0),
        ({"candidates": [{"finishReason": "MALFORMED_FUNCTION_CALL"}]}, 1.0),
    ]
    assert finish.native_of_events(events) == "MALFORMED_FUNCTION_CALL"
    reply = {"choices": [{"provider_specific_fields": {"native_finish_reason": "SAFETY"}}]}
    assert finish.native_of_reply(reply) == "SAFETY"
    assert finish.native_of_reply({"choices": []}) is None


def test_a_tool_the_provider_ran_is_not_a_call_of_the_models() -> None:
    calls = [
        {"id": "srvtoolu_1", "function": {"name": "web_search", "arguments": "{}"}},
        {"id": "toolu_2", "function": {"name": "get_weather", "arguments": "{}"}},
        {"id": "call_3", "function": {"name": "code", "arguments": "{}"}},
    ]
    ran = {"tool_results": [{"tool_use_id": "call_3"}]}
    message = {"tool_calls": calls, "provider_specific_fields": ran}
    assert [c["id"] for c in server_tools.client_calls(calls, message)] == ["toolu_2"]
    assert server_tools.client_calls(calls[1:2], {"tool_calls": calls[1:2]}) == calls[1:2]


PARTS: list[tuple[str, list[dict[str, Any]], dict[str, Any]]] = [
    ("ended by an empty part", [
        {"functionCall": {"name": "f", "willContinue": True}},
        {"functionCall": {"partialArgs": [{"jsonPath": "$.a", "stringValue": "x"}],
                          "willContinue": True}},
        {"functionCall": {}},
    ], {"a": "x"}),
    ("a name, then an empty part", [
        {"functionCall": {"name": "f", "willContinue": True}}, {"functionCall": {}},
    ], {}),
    ("a name alone", [{"functionCall": {"name": "f"}}], {}),
    ("an empty part after the call ended", [
        {"functionCall": {"name": "f", "willContinue": True}},
        {"functionCall": {"partialArgs": [{"jsonPath": "$.a", "numberValue": 1}]}},
        {"functionCall": {}},
    ], {"a": 1}),
]  # fmt: skip


@pytest.mark.parametrize(("parts", "args"), [c[1:] for c in PARTS], ids=[c[0] for c in PARTS])
def test_a_gemini_call_litellm_cannot_read_is_not_lost(
    parts: list[dict[str, Any]], args: dict[str, Any]
) -> None:
    events: list[dict[str, Any]] = [{"candidates": [{"content": {"parts": [p]}}]} for p in parts]
    events[-1]["candidates"][0]["finishReason"] = "STOP"
    timed: list[tuple[Any, float | None]] = [(e, float(i)) for i, e in enumerate(events)]
    assert gemini.speaks(timed)
    done = gemini.assemble(timed).close()
    (call,) = done.tool_calls
    assert call["function"]["name"] == "f"
    assert json.loads(call["function"]["arguments"]) == args
