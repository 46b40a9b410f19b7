"""Two turns through the shared call, plain and streamed, against a fake of each
provider's wire protocol: turn 1 returns a tool call (with the model's reasoning,
thinking blocks or thought signatures where the provider has them), turn 2 sends the
tool's result back. The turn-2 request the server received is asserted field by field:
the echoed assistant message carries exactly what the model returned, in the
provider's own wire shape, whether turn 1 was read whole or delta by delta.

Each provider's shapes name their source (the API reference, and LiteLLM's own tests of
the same transformation, BerriAI/litellm ``tests/test_litellm/llms/...``).
"""

from __future__ import annotations

import asyncio
import json
import struct
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.providers.servers.base import FakeServer, Request, Response
from toolbench.cassettes import RecordOption
from toolbench.cassettes.boundary import ReplayMode
from toolbench.cassettes.route import router
from toolbench.cassettes.use import use_cassette
from toolbench.eventstream import Frame
from toolbench.formats.base import RenderedRequest
from toolbench.formats.format_registry import get_format
from toolbench.providers.call import call
from toolbench.providers.litellm_api import LiteLLMAPI
from toolbench.providers.model_api import Completion, CompletionRequest, ProviderSettings
from toolbench.results import Attempt

TOOLS = [{"type": "function", "function": {
    "name": "get_weather", "description": "The weather in a city.",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}},
                   "required": ["city"]},
}}]  # fmt: skip
ARGS = {"city": "Lisbon"}
RESULT = '{"temp_c": 18}'
ANSWER = "It is 18 C in Lisbon."
USER = {"role": "user", "content": "What is the weather in Lisbon?"}

Body = dict[str, Any]


def sse(events: list[Any], done: bool = False, named: bool = False) -> bytes:
    """Server-sent events: ``data: <json>`` each (``event: <type>`` first when
    ``named``: Anthropic's and Cohere's streams), then ``data: [DONE]`` if asked."""
    out = []
    for e in events:
        head = f"event: {e['type']}\n" if named else ""
        out.append(f"{head}data: {json.dumps(e)}\n\n")
    if done:
        out.append("data: [DONE]\n\n")
    return "".join(out).encode()


def ndjson(events: list[Any]) -> bytes:
    return "".join(json.dumps(e) + "\n" for e in events).encode()


def _es_header(name: str, value: str) -> bytes:
    n, v = name.encode(), value.encode()
    return bytes([len(n)]) + n + bytes([7]) + struct.pack(">H", len(v)) + v


def eventstream(events: list[tuple[str, Any]]) -> bytes:
    """AWS eventstream frames (``:event-type`` each), as Bedrock's ConverseStream sends."""
    out = b""
    for kind, body in events:
        raw = _es_header(":event-type", kind) + _es_header(":content-type", "application/json")
        raw += _es_header(":message-type", "event")
        out += Frame({}, raw, b"").encode(json.dumps(body).encode())
    return out


@dataclass(frozen=True)
class Wire:
    """One provider's fake: its turn-1 and turn-2 replies, plain and streamed, and what
    its turn-2 request must hold."""

    id: str
    model: str
    source: str
    plain: tuple[Body, Body]
    streamed: tuple[bytes, bytes]
    content_type: str
    check: Callable[[Body], None]
    """Asserts the turn-2 request body (the echoed assistant message and tool result)."""
    env: tuple[tuple[str, str], ...] = ()


# ---------------------------------------------------------------- OpenAI chat and kin


def chat(message: Body, finish: str) -> Body:
    return {"id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "m",
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": {"prompt_tokens": 20, "completion_tokens": 9, "total_tokens": 29}}  # fmt: skip


def chunk(delta: Body, finish: str | None = None) -> Body:
    return {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "m",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}  # fmt: skip


def openai_wire(
    id: str, model: str, source: str, call_id: str, reasoning: str | None = None,
    env: tuple[tuple[str, str], ...] = (),
) -> Wire:  # fmt: skip
    """OpenAI chat completions: https://platform.openai.com/docs/api-reference/chat (the
    streamed tool call: ``index``, then ``id`` and ``function.name`` once, then
    ``arguments`` in fragments); LiteLLM tests/test_litellm/llms/openai/."""
    args = json.dumps(ARGS)
    call_msg: Body = {"role": "assistant", "content": None, "tool_calls": [
        {"id": call_id, "type": "function", "function": {"name": "get_weather", "arguments": args}}
    ]}  # fmt: skip
    if reasoning is not None:
        call_msg["reasoning_content"] = reasoning
    first = [chunk({"role": "assistant", "content": None})]
    if reasoning is not None:
        first += [chunk({"reasoning_content": reasoning[:8]}),
                  chunk({"reasoning_content": reasoning[8:]})]  # fmt: skip
    first += [
        chunk({"tool_calls": [{"index": 0, "id": call_id, "type": "function",
                               "function": {"name": "get_weather", "arguments": ""}}]}),
        chunk({"tool_calls": [{"index": 0, "function": {"arguments": args[:7]}}]}),
        chunk({"tool_calls": [{"index": 0, "function": {"arguments": args[7:]}}]}),
        chunk({}, "tool_calls"),
    ]  # fmt: skip
    usage = {
        **chunk({}),
        "choices": [],
        "usage": {"prompt_tokens": 20, "completion_tokens": 9, "total_tokens": 29},
    }
    second = [chunk({"role": "assistant", "content": ANSWER[:6]}), chunk({"content": ANSWER[6:]}),
              chunk({}, "stop")]  # fmt: skip

    def check(body: Body) -> None:
        assert body["messages"][0] == USER
        echoed = body["messages"][1]
        assert echoed["role"] == "assistant"
        assert echoed.get("content") is None  # null, as the model sent it; never ""
        assert echoed["tool_calls"] == call_msg["tool_calls"]
        assert echoed.get("reasoning_content") == reasoning  # DeepSeek refuses a turn without
        assert "provider_specific_fields" not in echoed  # Mistral refuses unknown fields
        assert body["messages"][2] == {"role": "tool", "tool_call_id": call_id, "content": RESULT}
        assert body["tools"][0]["function"]["name"] == "get_weather"

    return Wire(
        id, model, source, (chat(call_msg, "tool_calls"), chat(
            {"role": "assistant", "content": ANSWER}, "stop")),
        (sse([*first, usage], done=True), sse(second, done=True)), "text/event-stream",
        check, env,
    )  # fmt: skip


# ---------------------------------------------------------------- Anthropic messages

THINKING = "The user wants Lisbon's weather; call the tool."
SIGNATURE = "EqQBCkYIARgCKkD-fake-signature=="


def anthropic_wire() -> Wire:
    """Anthropic Messages with extended thinking: https://docs.anthropic.com/en/api/messages,
    https://docs.anthropic.com/en/docs/build-with-claude/extended-thinking ("thinking
    blocks ... must be passed back ... unmodified", with their ``signature``; streamed as
    ``thinking_delta`` then ``signature_delta``; a tool's input as ``input_json_delta``
    ``partial_json``); LiteLLM tests/test_litellm/llms/anthropic/chat/."""
    tool_use = {"type": "tool_use", "id": "toolu_01A", "name": "get_weather", "input": ARGS}
    plain1 = {"id": "msg_1", "type": "message", "role": "assistant", "model": "claude",
              "content": [{"type": "thinking", "thinking": THINKING, "signature": SIGNATURE},
                          tool_use],
              "stop_reason": "tool_use", "stop_sequence": None,
              "usage": {"input_tokens": 20, "output_tokens": 9}}  # fmt: skip
    plain2 = {**plain1, "content": [{"type": "text", "text": ANSWER}], "stop_reason": "end_turn"}
    args = json.dumps(ARGS)
    msg_start = {
        "type": "message_start",
        "message": {
            **plain1,
            "content": [],
            "stop_reason": None,
            "usage": {"input_tokens": 20, "output_tokens": 1},
        },
    }
    stream1 = sse([
        msg_start,
        {"type": "content_block_start", "index": 0,
         "content_block": {"type": "thinking", "thinking": "", "signature": ""}},
        {"type": "content_block_delta", "index": 0,
         "delta": {"type": "thinking_delta", "thinking": THINKING[:20]}},
        {"type": "content_block_delta", "index": 0,
         "delta": {"type": "thinking_delta", "thinking": THINKING[20:]}},
        {"type": "content_block_delta", "index": 0,
         "delta": {"type": "signature_delta", "signature": SIGNATURE}},
        {"type": "content_block_stop", "index": 0},
        {"type": "content_block_start", "index": 1,
         "content_block": {"type": "tool_use", "id": "toolu_01A", "name": "get_weather",
                           "input": {}}},
        {"type": "content_block_delta", "index": 1,
         "delta": {"type": "input_json_delta", "partial_json": args[:6]}},
        {"type": "content_block_delta", "index": 1,
         "delta": {"type": "input_json_delta", "partial_json": args[6:]}},
        {"type": "content_block_stop", "index": 1},
        {"type": "message_delta", "delta": {"stop_reason": "tool_use", "stop_sequence": None},
         "usage": {"output_tokens": 9}},
        {"type": "message_stop"},
    ], named=True)  # fmt: skip
    stream2 = sse([
        msg_start,
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        {"type": "content_block_delta", "index": 0,
         "delta": {"type": "text_delta", "text": ANSWER}},
        {"type": "content_block_stop", "index": 0},
        {"type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_sequence": None},
         "usage": {"output_tokens": 7}},
        {"type": "message_stop"},
    ], named=True)  # fmt: skip

    def check(body: Body) -> None:
        assert body["messages"][0]["role"] == "user"
        echoed = body["messages"][1]
        assert echoed["role"] == "assistant"
        # The thinking block first, with its signature, then the call; no text block the
        # model never wrote.
        assert echoed["content"] == [
            {"type": "thinking", "thinking": THINKING, "signature": SIGNATURE}, tool_use,
        ]  # fmt: skip
        result = body["messages"][2]
        assert result["role"] == "user"
        (block,) = result["content"]
        assert block["type"] == "tool_result" and block["tool_use_id"] == "toolu_01A"
        assert "seed" not in body

    return Wire(
        "anthropic", "anthropic/claude-3-7-sonnet-20250219",
        "docs.anthropic.com extended-thinking; litellm tests/test_litellm/llms/anthropic",
        (plain1, plain2), (stream1, stream2), "text/event-stream", check,
        (("ANTHROPIC_API_KEY", "sk-ant-dummy"),),
    )  # fmt: skip


def anthropic_server_tools_wire() -> Wire:
    """Anthropic with a server tool the API ran itself before the client call: a
    ``server_tool_use`` block (web search) and its ``web_search_tool_result``, then a
    ``tool_use`` (https://docs.anthropic.com/en/docs/agents-and-tools/tool-use/web-search-tool,
    streaming included). The server tool is shown on the message and echoed back as both
    blocks; only the client call is the model's call (one tool result goes back)."""
    server = {"type": "server_tool_use", "id": "srvtoolu_01W", "name": "web_search",
              "input": {"query": "Lisbon weather"}}  # fmt: skip
    result = {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_01W", "content": [
        {"type": "web_search_result", "title": "Lisbon", "url": "https://w.example/lisbon",
         "encrypted_content": "Eqgf", "page_age": None}]}  # fmt: skip
    tool_use = {"type": "tool_use", "id": "toolu_01A", "name": "get_weather", "input": ARGS}
    base = anthropic_wire()
    plain1 = {**base.plain[0], "content": [server, result, tool_use]}
    start = {"type": "message_start", "message": {**plain1, "content": [], "stop_reason": None,
                                                  "usage": {"input_tokens": 20,
                                                            "output_tokens": 1}}}  # fmt: skip
    stream1 = sse([
        start,
        {"type": "content_block_start", "index": 0,
         "content_block": {**server, "input": {}}},
        {"type": "content_block_delta", "index": 0, "delta": {
            "type": "input_json_delta", "partial_json": json.dumps(server["input"])}},
        {"type": "content_block_stop", "index": 0},
        {"type": "content_block_start", "index": 1, "content_block": result},
        {"type": "content_block_stop", "index": 1},
        {"type": "content_block_start", "index": 2, "content_block": {**tool_use, "input": {}}},
        {"type": "content_block_delta", "index": 2,
         "delta": {"type": "input_json_delta", "partial_json": json.dumps(ARGS)}},
        {"type": "content_block_stop", "index": 2},
        {"type": "message_delta", "delta": {"stop_reason": "tool_use", "stop_sequence": None},
         "usage": {"output_tokens": 9}},
        {"type": "message_stop"},
    ], named=True)  # fmt: skip

    def check(body: Body) -> None:
        echoed = body["messages"][1]
        assert echoed["role"] == "assistant"
        kinds = [b["type"] for b in echoed["content"]]
        assert kinds == ["server_tool_use", "web_search_tool_result", "tool_use"], kinds
        assert echoed["content"][0]["id"] == "srvtoolu_01W"
        assert echoed["content"][1]["tool_use_id"] == "srvtoolu_01W"
        (block,) = body["messages"][2]["content"]  # one result: the client call's
        assert block["type"] == "tool_result" and block["tool_use_id"] == "toolu_01A"

    return Wire(
        "anthropic-server-tools", base.model,
        "docs.anthropic.com web-search-tool (server_tool_use, web_search_tool_result)",
        (plain1, base.plain[1]), (stream1, base.streamed[1]), base.content_type, check,
        base.env,
    )  # fmt: skip


# ---------------------------------------------------------------- Gemini

THOUGHT_SIG = "Q2lZQmVmYWtlLXRob3VnaHQtc2lnbmF0dXJl"


def gemini_wire() -> Wire:
    """Gemini generateContent / streamGenerateContent (``alt=sse``):
    https://ai.google.dev/api/generate-content, thought signatures
    https://ai.google.dev/gemini-api/docs/thought-signatures (a ``functionCall`` part's
    ``thoughtSignature`` must come back on that part); LiteLLM
    tests/test_litellm/llms/vertex_ai/gemini/test_thought_signature_in_tool_call_id.py."""
    part = {"functionCall": {"name": "get_weather", "args": ARGS}, "thoughtSignature": THOUGHT_SIG}
    usage = {"promptTokenCount": 20, "candidatesTokenCount": 9, "totalTokenCount": 29}
    plain1 = {"candidates": [{"content": {"role": "model", "parts": [part]},
                              "finishReason": "STOP", "index": 0}],
              "usageMetadata": usage, "modelVersion": "gemini-2.5-flash"}  # fmt: skip
    text2 = {"candidates": [{"content": {"role": "model", "parts": [{"text": ANSWER}]},
                             "finishReason": "STOP", "index": 0}],
             "usageMetadata": usage, "modelVersion": "gemini-2.5-flash"}  # fmt: skip

    def check(body: Body) -> None:
        contents = body["contents"]
        assert contents[0]["role"] == "user"
        echoed = contents[1]
        assert echoed["role"] == "model"
        (call_part,) = echoed["parts"]
        fc = call_part.get("function_call") or call_part.get("functionCall")
        assert fc == {"name": "get_weather", "args": ARGS}
        sig = call_part.get("thought_signature") or call_part.get("thoughtSignature")
        assert sig == THOUGHT_SIG  # Gemini 3 refuses the turn without it
        response = contents[2]["parts"][0]
        fr = response.get("function_response") or response.get("functionResponse")
        assert fr["name"] == "get_weather"

    return Wire(
        "gemini", "gemini/gemini-2.5-flash",
        "ai.google.dev thought-signatures; litellm test_thought_signature_in_tool_call_id.py",
        (plain1, text2), (sse([plain1]), sse([text2])), "text/event-stream", check,
        (("GEMINI_API_KEY", "AIza-dummy"),),
    )  # fmt: skip


def gemini_partial_args_wire() -> Wire:
    """Gemini with the call's arguments streamed in parts (asked by
    ``toolConfig.functionCallingConfig.streamFunctionCallArguments``): the first part
    names the call (with its ``thoughtSignature``) and says ``willContinue``, the next
    carry ``partialArgs`` (``jsonPath``, ``stringValue``, ``willContinue`` while the same
    path's string goes on), the last ends without ``willContinue``. Shapes: googleapis
    js-genai ``FunctionCall`` (``partialArgs``, ``willContinue``) and ``PartialArg``
    (https://googleapis.github.io/js-genai/release_docs/interfaces/types.PartialArg.html),
    Vertex AI ``FunctionCallingConfig.stream_function_call_arguments``. The plain turn and
    turn 2 are :func:`gemini_wire`'s: the echoed call must be the same."""
    whole = gemini_wire()
    parts: list[Body] = [
        {"functionCall": {"name": "get_weather", "willContinue": True},
         "thoughtSignature": THOUGHT_SIG},
        {"functionCall": {"partialArgs": [{"jsonPath": "$.city", "stringValue": "Li",
                                           "willContinue": True}], "willContinue": True}},
        {"functionCall": {"partialArgs": [{"jsonPath": "$.city", "stringValue": "sb",
                                           "willContinue": True}], "willContinue": True}},
        {"functionCall": {"partialArgs": [{"jsonPath": "$.city", "stringValue": "on"}]}},
    ]  # fmt: skip
    events: list[Body] = [
        {"candidates": [{"content": {"role": "model", "parts": [p]}, "index": 0}],
         "modelVersion": "gemini-3-pro-preview"} for p in parts
    ]  # fmt: skip
    events[-1]["candidates"][0]["finishReason"] = "STOP"
    events[-1]["usageMetadata"] = {
        "promptTokenCount": 20, "candidatesTokenCount": 9, "totalTokenCount": 29}  # fmt: skip
    return Wire(
        "gemini-partial-args", "gemini/gemini-2.5-flash",
        "js-genai PartialArg / FunctionCall.partialArgs; Vertex AI streamFunctionCallArguments",
        whole.plain, (sse(events), whole.streamed[1]), whole.content_type, whole.check,
        whole.env,
    )  # fmt: skip


# ---------------------------------------------------------------- Ollama


def ollama_wire() -> Wire:
    """Ollama ``/api/chat``: https://github.com/ollama/ollama/blob/main/docs/api.md (tool
    calls as ``message.tool_calls[].function {name, arguments: object}``, no ids; a
    stream of NDJSON objects, the last ``done: true`` with the counts); LiteLLM
    tests/test_litellm/llms/ollama/."""
    call_msg = {
        "role": "assistant",
        "content": "",
        "tool_calls": [{"function": {"name": "get_weather", "arguments": ARGS}}],
    }
    done = {"done": True, "done_reason": "stop", "prompt_eval_count": 20, "eval_count": 9}
    plain1 = {"model": "llama3", "created_at": "2025-01-01T00:00:00Z", "message": call_msg, **done}
    plain2 = {**plain1, "message": {"role": "assistant", "content": ANSWER}}
    stream1 = ndjson([{"model": "llama3", "created_at": "t", "message": call_msg, "done": False},
                      {"model": "llama3", "created_at": "t",
                       "message": {"role": "assistant", "content": ""}, **done}])  # fmt: skip
    stream2 = ndjson([{"model": "llama3", "created_at": "t",
                       "message": {"role": "assistant", "content": ANSWER}, "done": False},
                      {"model": "llama3", "created_at": "t",
                       "message": {"role": "assistant", "content": ""}, **done}])  # fmt: skip

    def check(body: Body) -> None:
        echoed = body["messages"][1]
        assert echoed["role"] == "assistant"
        (tc,) = echoed["tool_calls"]
        assert tc["function"]["name"] == "get_weather"
        args = tc["function"]["arguments"]
        assert (json.loads(args) if isinstance(args, str) else args) == ARGS
        assert body["messages"][2]["role"] == "tool"
        assert body["messages"][2]["content"] == RESULT

    return Wire(
        "ollama",
        "ollama_chat/llama3",
        "ollama docs/api.md; litellm llms/ollama",
        (plain1, plain2),
        (stream1, stream2),
        "application/x-ndjson",
        check,
    )


# ---------------------------------------------------------------- Bedrock Converse


def bedrock_wire() -> Wire:
    """Bedrock Converse / ConverseStream:
    https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_Converse.html and
    API_runtime_ConverseStream.html (``toolUse {toolUseId, name, input}``; streamed as
    eventstream frames ``messageStart``, ``contentBlockStart`` with ``start.toolUse``,
    ``contentBlockDelta`` with ``delta.toolUse.input`` fragments, ``messageStop``,
    ``metadata``); LiteLLM tests/test_litellm/llms/bedrock/chat/."""
    tool_use = {"toolUseId": "tooluse_1", "name": "get_weather", "input": ARGS}
    usage = {"inputTokens": 20, "outputTokens": 9, "totalTokens": 29}
    plain1 = {
        "output": {"message": {"role": "assistant", "content": [{"toolUse": tool_use}]}},
        "stopReason": "tool_use",
        "usage": usage,
        "metrics": {"latencyMs": 10},
    }
    plain2 = {
        "output": {"message": {"role": "assistant", "content": [{"text": ANSWER}]}},
        "stopReason": "end_turn",
        "usage": usage,
        "metrics": {"latencyMs": 10},
    }
    args = json.dumps(ARGS)
    stream1 = eventstream([
        ("messageStart", {"role": "assistant"}),
        ("contentBlockStart", {"contentBlockIndex": 0, "start": {
            "toolUse": {"toolUseId": "tooluse_1", "name": "get_weather"}}}),
        ("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"toolUse": {"input": args[:5]}}}),
        ("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"toolUse": {"input": args[5:]}}}),
        ("contentBlockStop", {"contentBlockIndex": 0}),
        ("messageStop", {"stopReason": "tool_use"}),
        ("metadata", {"usage": usage, "metrics": {"latencyMs": 10}}),
    ])  # fmt: skip
    stream2 = eventstream([
        ("messageStart", {"role": "assistant"}),
        ("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": ANSWER}}),
        ("contentBlockStop", {"contentBlockIndex": 0}),
        ("messageStop", {"stopReason": "end_turn"}),
        ("metadata", {"usage": usage, "metrics": {"latencyMs": 10}}),
    ])  # fmt: skip

    def check(body: Body) -> None:
        echoed = body["messages"][1]
        assert echoed["role"] == "assistant"
        assert echoed["content"] == [{"toolUse": tool_use}]  # no empty text block
        (result,) = body["messages"][2]["content"]
        assert result["toolResult"]["toolUseId"] == "tooluse_1"

    return Wire(
        "bedrock", "bedrock/converse/anthropic.claude-3-haiku-20240307-v1:0",
        "AWS Bedrock Converse/ConverseStream API reference; litellm llms/bedrock/chat",
        (plain1, plain2), (stream1, stream2), "application/vnd.amazon.eventstream", check,
        (("AWS_ACCESS_KEY_ID", "AKIAFAKEFAKEFAKE0000"),
         ("AWS_SECRET_ACCESS_KEY", "not-a-secret-at-all-just-a-test-value"),
         ("AWS_REGION_NAME", "us-east-1")),
    )  # fmt: skip


# ---------------------------------------------------------------- Cohere v2


def cohere_wire() -> Wire:
    """Cohere v2 chat: https://docs.cohere.com/v2/reference/chat (``message.tool_plan``,
    ``message.tool_calls[]`` OpenAI-shaped, ``finish_reason: TOOL_CALL``,
    ``usage.tokens``) and its stream https://docs.cohere.com/v2/docs/streaming (typed
    events: ``tool-plan-delta``, ``tool-call-start``/``-delta``/``-end``, ``message-end``),
    one JSON object a line as LiteLLM's Cohere v2 iterator reads them;
    LiteLLM tests/test_litellm/llms/cohere/chat/test_cohere_v2_transformation.py."""
    plan = "I will look up the weather in Lisbon."
    call = {
        "id": "get_weather_4k2j",
        "type": "function",
        "function": {"name": "get_weather", "arguments": json.dumps(ARGS)},
    }
    usage = {
        "billed_units": {"input_tokens": 20, "output_tokens": 9},
        "tokens": {"input_tokens": 20, "output_tokens": 9},
    }
    plain1 = {
        "id": "c1",
        "finish_reason": "TOOL_CALL",
        "usage": usage,
        "message": {"role": "assistant", "tool_plan": plan, "tool_calls": [call]},
    }
    plain2 = {
        "id": "c2",
        "finish_reason": "COMPLETE",
        "usage": usage,
        "message": {"role": "assistant", "content": [{"type": "text", "text": ANSWER}]},
    }
    args = json.dumps(ARGS)
    start = {
        "type": "message-start",
        "id": "c1",
        "delta": {
            "message": {
                "role": "assistant",
                "content": [],
                "tool_plan": "",
                "tool_calls": [],
                "citations": [],
            }
        },
    }
    stream1 = ndjson([
        start,
        {"type": "tool-plan-delta", "delta": {"message": {"tool_plan": plan[:10]}}},
        {"type": "tool-plan-delta", "delta": {"message": {"tool_plan": plan[10:]}}},
        {"type": "tool-call-start", "index": 0, "delta": {"message": {"tool_calls": {
            **call, "function": {"name": "get_weather", "arguments": ""}}}}},
        {"type": "tool-call-delta", "index": 0,
         "delta": {"message": {"tool_calls": {"function": {"arguments": args[:4]}}}}},
        {"type": "tool-call-delta", "index": 0,
         "delta": {"message": {"tool_calls": {"function": {"arguments": args[4:]}}}}},
        {"type": "tool-call-end", "index": 0},
        {"type": "message-end", "delta": {"finish_reason": "TOOL_CALL", "usage": usage}},
    ])  # fmt: skip
    stream2 = ndjson([
        start,
        {"type": "content-start", "index": 0,
         "delta": {"message": {"content": {"type": "text", "text": ""}}}},
        {"type": "content-delta", "index": 0,
         "delta": {"message": {"content": {"text": ANSWER}}}},
        {"type": "content-end", "index": 0},
        {"type": "message-end", "delta": {"finish_reason": "COMPLETE", "usage": usage}},
    ])  # fmt: skip

    def check(body: Body) -> None:
        echoed = body["messages"][1]
        assert echoed["role"] == "assistant"
        assert echoed["tool_calls"] == [call]
        assert body["messages"][2]["role"] == "tool"
        assert body["messages"][2]["tool_call_id"] == call["id"]

    return Wire(
        "cohere", "cohere_chat/command-r-plus",
        "docs.cohere.com v2 chat and streaming; litellm llms/cohere/chat v2",
        (plain1, plain2), (stream1, stream2), "application/x-ndjson", check,
        (("COHERE_API_KEY", "dummy"),),
    )  # fmt: skip


WIRES = [
    openai_wire(
        "openai",
        "openai/gpt-4o-mini",
        "platform.openai.com chat API; litellm llms/openai",
        "call_abc123",
        env=(("OPENAI_API_KEY", "sk-dummy"),),
    ),
    openai_wire(
        "mistral",
        "mistral/mistral-small-latest",
        "docs.mistral.ai function calling (9-character call ids); litellm llms/mistral",
        "D681PevKs",
        env=(("MISTRAL_API_KEY", "dummy"),),
    ),
    openai_wire(
        "deepseek-reasoner",
        "deepseek/deepseek-reasoner",
        "api-docs.deepseek.com reasoning_model (reasoning_content goes back with the "
        "calls); litellm llms/deepseek",
        "call_00_ds",
        reasoning="Lisbon: call it.",
        env=(("DEEPSEEK_API_KEY", "dummy"),),
    ),
    openai_wire(
        "openrouter",
        "openrouter/openai/gpt-4o-mini",
        "openrouter.ai/docs/api-reference (OpenAI chat shape); litellm llms/openrouter",
        "call_or_1",
        env=(("OPENROUTER_API_KEY", "dummy"),),
    ),
    anthropic_wire(),
    anthropic_server_tools_wire(),
    gemini_wire(),
    gemini_partial_args_wire(),
    ollama_wire(),
    bedrock_wire(),
    cohere_wire(),
]


class Scripted:
    """A fake answering turn 1 then turn 2 (by how many requests it received)."""

    def __init__(self, wire: Wire, streamed: bool) -> None:
        self.wire, self.streamed = wire, streamed
        self.server = FakeServer(self.answer)

    def answer(self, req: Request) -> Response:
        n = min(len(self.server.received), 2) - 1
        if self.streamed:
            return Response(200, self.wire.streamed[n], {"content-type": self.wire.content_type})
        return Response(200, self.wire.plain[n])


def _call_args(reply: Any) -> Body:
    """The reply's one client call (a tool the provider ran itself is no call of the
    model's: it stays on the message only)."""
    (tc,) = reply.tool_calls
    return {"id": tc["id"], "args": json.loads(tc["function"]["arguments"])}


async def _two_turns(
    wire: Wire, base: str, streamed: bool, tmp: Path, attempts: list[Attempt] | None = None,
    record: RecordOption = "all", live: bool = True, replay: ReplayMode = "boundary",
) -> list[Completion]:  # fmt: skip
    api = LiteLLMAPI(ProviderSettings(api_base=base))
    endpoint = await api.endpoint(wire.model, get_format("native"), live=live)
    attempts = [] if attempts is None else attempts
    messages: list[Body] = [USER]
    done: list[Completion] = []
    # The cassette layer sees every byte of a streamed turn (its framing, its events and
    # their offsets), as in a run.
    with router(), use_cassette(tmp / "trial.sse.json", record, True, replay) as tc:
        for turn in (0, 1):
            rendered = RenderedRequest(messages=list(messages), tools=TOOLS)
            req = CompletionRequest(endpoint, rendered, 7, tc if streamed else None,
                                    attempts, turn)  # fmt: skip
            got = await call(api, req, stream=streamed)
            done.append(got)
            if turn == 0:
                call_id = _call_args(got.reply)["id"]
                messages += [
                    got.reply.raw_message,
                    {"role": "tool", "tool_call_id": call_id, "content": RESULT},
                ]
    return done


@pytest.fixture(autouse=True)
def _quiet_env(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "MISTRAL_API_KEY",
                 "DEEPSEEK_API_KEY", "OPENROUTER_API_KEY"):  # fmt: skip
        monkeypatch.delenv(name, raising=False)
    # Each test runs its own event loop, and LiteLLM's Gemini stream is sent by its one
    # module-level client: a connection pooled under an earlier test's loop fails to close
    # ("Event loop is closed") when the pool drops it. A run has one loop; a test its own.
    import litellm
    from litellm.llms.custom_httpx.http_handler import AsyncHTTPHandler

    monkeypatch.setattr(litellm, "module_level_aclient", AsyncHTTPHandler())
    yield


@pytest.mark.parametrize("streamed", [False, True], ids=["plain", "streamed"])
@pytest.mark.parametrize("wire", WIRES, ids=[w.id for w in WIRES])
def test_two_turns_echo_exactly_what_the_model_returned(
    wire: Wire, streamed: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, value in wire.env:
        monkeypatch.setenv(name, value)
    fake = Scripted(wire, streamed)
    with fake.server as server:
        done = asyncio.run(_two_turns(wire, server.base_url, streamed, tmp_path))
    assert len(server.received) == 2, [r.path for r in server.received]
    first, second = done
    call_part = _call_args(first.reply)
    assert call_part["args"] == ARGS
    assert first.reply.finish_reason in ("tool_calls", "stop")
    assert second.reply.text == ANSWER
    assert (first.prompt_tokens, first.completion_tokens) == (20, 9)
    if streamed:
        assert first.stream is not None and second.stream is not None
        assert [d.text for d in second.stream.deltas] and not first.stream.issues
    wire.check(server.received[1].body)


def test_a_gemini_call_in_parts_is_the_call_read_whole_live_and_replayed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Gemini's streamed ``partialArgs`` (LiteLLM 1.106 fails on every such part) are put
    together by toolbench's Gemini reader into the very call the plain reply carries (id
    with its thought signature, arguments, ``provider_specific_fields``), recorded, and
    replayed offline from the cassette into the same call and the same turn-2 request."""
    monkeypatch.setenv("GEMINI_API_KEY", "AIza-dummy")
    wire = gemini_partial_args_wire()
    got: dict[str, list[Completion]] = {}
    sent: dict[str, Body] = {}
    for name, streamed in (("plain", False), ("streamed", True)):
        with Scripted(wire, streamed).server as server:
            got[name] = asyncio.run(_two_turns(wire, server.base_url, streamed, tmp_path / name))
        sent[name] = server.received[1].body
    # Offline: no server at that address answers; the cassette does.
    got["replayed"] = asyncio.run(
        _two_turns(wire, "http://127.0.0.1:9", True, tmp_path / "streamed", record="none")
    )
    plain_call = got["plain"][0].reply.raw_message["tool_calls"][0]
    for name in ("streamed", "replayed"):
        (call_,) = got[name][0].reply.raw_message["tool_calls"]
        assert {k: call_[k] for k in ("id", "function", "provider_specific_fields")} == {
            k: plain_call[k] for k in ("id", "function", "provider_specific_fields")}  # fmt: skip
        assert got[name][0].reply.finish_reason == "tool_calls"
        assert got[name][1].reply.text == ANSWER
        assert got[name][0].stream is not None and not got[name][0].stream.issues
    assert sent["streamed"]["contents"] == sent["plain"]["contents"]
    assert got["replayed"][0].stream is not None and got["streamed"][0].stream is not None
    assert got["replayed"][0].stream.first_call_ms == got["streamed"][0].stream.first_call_ms


def test_a_gemini_call_whose_parts_never_end_is_a_typed_fault_never_recorded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A call whose ``willContinue`` never ends (the stream stops inside it) is a typed
    fault of that attempt (``infra.stream_truncated``), asked again live and never
    recorded, never an ``ok`` trial whose call went missing or was cut short: here the
    server's second answer is whole, and only it is kept."""
    from toolbench import codes

    monkeypatch.setenv("GEMINI_API_KEY", "AIza-dummy")
    parts = [
        {"functionCall": {"name": "get_weather", "willContinue": True},
         "thoughtSignature": THOUGHT_SIG},
        {"functionCall": {"partialArgs": [{"jsonPath": "$.city", "stringValue": "Porto",
                                           "willContinue": True}], "willContinue": True}},
    ]  # fmt: skip
    events = [{"candidates": [{"content": {"role": "model", "parts": [p]}, "index": 0}]}
              for p in parts]  # fmt: skip
    events[-1]["candidates"][0]["finishReason"] = "STOP"
    whole = gemini_partial_args_wire()
    answers = [sse(events), *whole.streamed]
    kind = {"content-type": whole.content_type}
    server = FakeServer(lambda req: Response(200, answers[min(len(server.received), 3) - 1], kind))
    attempts: list[Attempt] = []
    with server:
        done = asyncio.run(_two_turns(whole, server.base_url, True, tmp_path, attempts))
    cut = codes.INFRA_STREAM_TRUNCATED
    assert [(a.turn, a.outcome, a.error_code) for a in attempts] == [
        (0, "retry", cut), (0, "ok", None), (1, "ok", None)]  # fmt: skip
    assert "willContinue never ended" in str(attempts[0].error)
    assert _call_args(done[0].reply)["args"] == ARGS
    whole.check(server.received[2].body)
    kept = (tmp_path / "trial.sse.json").read_text()
    assert "Lisbon" in kept and "Porto" not in kept
