"""OpenAI chat completions (``POST {base}/chat/completions``) and the OpenAI-compatible
providers that differ from it in documented ways.

Shapes: OpenAI API reference, "Create chat completion" and "The chat completion object"
(https://platform.openai.com/docs/api-reference/chat/create); the reply object as in
LiteLLM's own tests (BerriAI/litellm
tests/test_litellm/llms/openai/chat/test_openai_gpt_transformation.py, and per provider
tests/test_litellm/llms/{mistral/test_mistral_chat_transformation.py,
deepseek/chat/test_deepseek_chat_transformation.py,
moonshot/test_moonshot_chat_transformation.py,
openrouter/chat/test_openrouter_chat_transformation.py}): ``id``, ``object:
chat.completion``, ``choices[0].message.tool_calls[].function.arguments`` as a JSON
string, ``finish_reason: tool_calls``. Per-provider differences, each from the provider's docs:

- ``keyless``: vLLM, llama.cpp's server and LM Studio serve this API without any key
  (vLLM "OpenAI-Compatible Server", llama.cpp tools/server/README.md, LM Studio "OpenAI
  Compatibility API"): no ``Authorization`` check at all.
- ``mistral``: https://docs.mistral.ai/api/ (``POST /v1/chat/completions``): messages are
  validated strictly, an unknown field on a message is a 422 (``extra_forbidden``, the
  shape reported in the public issue on another project that issue 9 cites); tool-call
  ids are 9 characters of ``[a-zA-Z0-9]``; the seed is ``random_seed``.
- ``deepseek``: https://api-docs.deepseek.com/api/create-chat-completion: base URL without
  ``/v1``; usage carries ``prompt_cache_hit_tokens``/``prompt_cache_miss_tokens``;
  ``deepseek-reasoner`` replies carry ``reasoning_content`` beside ``content``, and an
  assistant message with ``tool_calls`` echoed without its ``reasoning_content`` is a 400
  ("The reasoning_content in the thinking mode must be passed back to the API",
  https://api-docs.deepseek.com/guides/thinking_mode#tool-calls).
- ``moonshot``: https://platform.moonshot.ai/docs/api/chat: ``temperature`` in [0, 1]
  (more is a 400), and only 1 for the reasoning models (kimi-k2.5, kimi-k2-thinking);
  tool-call ids of the form ``get_weather:0``.
- ``openrouter``: https://openrouter.ai/docs/api-reference/overview: ``POST
  /api/v1/chat/completions``; the reply names the upstream ``provider`` and carries
  ``native_finish_reason``; ids start ``gen-``.

Streamed (``stream: true``), every variant: the same reply as server-sent
``chat.completion.chunk`` events (API reference, "The chat completion chunk object", and
"Streaming" in the chat guide): a role delta, the reasoning (DeepSeek), the content in
pieces, each call's id, type and name then its arguments, the finish reason, a usage
chunk with empty ``choices`` when ``stream_options.include_usage`` asks for it, then
``data: [DONE]``.
"""

from __future__ import annotations

import json
from typing import Any

from tests.providers.servers.base import FakeServer, Request, Response, error
from tests.providers.servers.brain import Answer, Call, Turn, as_text, cut_at_stop, decide, style_in

VARIANTS = ("openai", "keyless", "mistral", "deepseek", "moonshot", "openrouter")

MOONSHOT_FIXED = ("kimi-k2.5", "kimi-k2.6", "kimi-k2-thinking")
"""Moonshot's reasoning models take no temperature but 1 (LiteLLM 1.106's moonshot
transformation drops it for them, on the same grounds)."""
MISTRAL_TOP = {
    "model", "messages", "temperature", "top_p", "max_tokens", "stream", "stop",
    "random_seed", "response_format", "tools", "tool_choice", "presence_penalty",
    "frequency_penalty", "n", "prediction", "parallel_tool_calls", "safe_prompt",
    "prompt_mode",
}  # fmt: skip
MISTRAL_MESSAGE = {
    "system": {"role", "content"},
    "user": {"role", "content"},
    "assistant": {"role", "content", "tool_calls", "prefix"},
    "tool": {"role", "content", "tool_call_id", "name"},
}
MISTRAL_TOOL_CALL = {"id", "type", "function", "index"}


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # content parts
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return ""


def turns_of(messages: list[dict[str, Any]]) -> list[Turn]:
    return [(str(m.get("role")), _text(m.get("content"))) for m in messages]


def _mistral_check(body: dict[str, Any]) -> Response | None:
    extra = sorted(set(body) - MISTRAL_TOP)
    if extra:
        return _unprocessable(["body", extra[0]])
    for i, m in enumerate(body.get("messages", [])):
        allowed = MISTRAL_MESSAGE.get(str(m.get("role")), set())
        bad = sorted(set(m) - allowed)
        if bad:
            return _unprocessable(["body", "messages", i, str(m.get("role")), bad[0]])
        for j, tc in enumerate(m.get("tool_calls") or []):
            bad = sorted(set(tc) - MISTRAL_TOOL_CALL)
            if bad:
                return _unprocessable(["body", "messages", i, "tool_calls", j, bad[0]])
    return None


def _unprocessable(loc: list[Any]) -> Response:
    # FastAPI/pydantic's 422 shape, as Mistral's API returns it.
    return Response(422, {"object": "error", "message": {"detail": [{
        "type": "extra_forbidden", "loc": loc, "msg": "Extra inputs are not permitted",
    }]}, "type": "invalid_request_error", "param": None, "code": None})  # fmt: skip


def _call_id(variant: str, i: int, city: str) -> str:
    if variant == "mistral":
        return f"c{city[:4].lower():a<4}{i:04d}"[:9]
    if variant == "moonshot":
        return f"get_weather:{i}"
    return f"call_{city.lower()}_{i}"


def handler(variant: str) -> Any:
    def handle(req: Request) -> Response:
        if req.method == "GET":
            return Response(200, {"object": "list", "data": [{"id": "fake", "object": "model"}]})
        if not req.path.rstrip("/").endswith("/chat/completions"):
            return error(404, f"no route {req.path}")
        if variant != "keyless" and not req.headers.get("authorization", "").startswith("Bearer "):
            return error(401, "missing API key", "authentication_error")
        body = req.body
        if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
            return error(400, "messages is required")
        if variant == "mistral":
            refused = _mistral_check(body)
            if refused is not None:
                return refused
        if variant == "deepseek" and "reasoner" in str(body.get("model")):
            for i, m in enumerate(body["messages"]):
                if (
                    m.get("role") == "assistant"
                    and m.get("tool_calls")
                    and ("reasoning_content" not in m)
                ):
                    return error(400, "The reasoning_content in the thinking mode must be "
                                 f"passed back to the API. (message index {i})")  # fmt: skip
        if variant == "moonshot" and "temperature" in body:
            temperature = float(body["temperature"])
            if str(body.get("model")).startswith(MOONSHOT_FIXED) and temperature != 1:
                return error(400, "invalid temperature: only 1 is allowed for this model")
            if temperature > 1:
                return error(400, "invalid temperature: only accepted values in [0, 1]")
        turns = turns_of(body["messages"])
        style = style_in(turns)
        native = bool(body.get("tools")) and style is None
        action = decide(turns)
        msg: dict[str, Any] = {"role": "assistant", "content": None}
        finish = "stop"
        if native and isinstance(action, Call):
            city = action.arguments.get("city", "")
            msg["tool_calls"] = [{
                "id": _call_id(variant, 0, city), "type": "function",
                "function": {"name": action.name, "arguments": json.dumps(action.arguments)},
            }]  # fmt: skip
            finish = "tool_calls"
        else:
            if isinstance(action, Call) and style is None:
                action = Answer("I cannot call tools here.")
            text, _hit = cut_at_stop(as_text(action, style or "prompt-json"), body.get("stop"))
            msg["content"] = text
        if variant == "deepseek" and "reasoner" in str(body.get("model")):
            msg["reasoning_content"] = "The user wants the weather; I follow the tools."
        usage: dict[str, Any] = {"prompt_tokens": 20, "completion_tokens": 8, "total_tokens": 28}
        if variant == "deepseek":
            usage.update(prompt_cache_hit_tokens=0, prompt_cache_miss_tokens=20)
        choice: dict[str, Any] = {"index": 0, "message": msg, "finish_reason": finish,
                                  "logprobs": None}  # fmt: skip
        reply: dict[str, Any] = {
            "id": "gen-fake" if variant == "openrouter" else "chatcmpl-fake",
            "object": "chat.completion", "created": 1700000000,
            "model": body.get("model", "fake"), "choices": [choice], "usage": usage,
        }  # fmt: skip
        if variant == "openrouter":
            reply["provider"] = "FakeUpstream"
            choice["native_finish_reason"] = finish
        if body.get("stream"):
            return Response(200, streamed(reply, body), {"content-type": "text/event-stream"})
        return Response(200, reply)

    return handle


PIECE = 8
"""Characters of content a streamed chunk carries."""


def streamed(reply: dict[str, Any], body: dict[str, Any]) -> bytes:
    """``reply`` as the server-sent chunks of a streamed chat completion."""
    head = {k: reply[k] for k in ("id", "created", "model")}
    choice = reply["choices"][0]
    msg = choice["message"]
    deltas: list[dict[str, Any]] = [{"role": "assistant", "content": ""}]
    if msg.get("reasoning_content"):
        deltas.append({"reasoning_content": msg["reasoning_content"]})
    text = msg.get("content") or ""
    deltas += [{"content": text[i : i + PIECE]} for i in range(0, len(text), PIECE)]
    for i, tc in enumerate(msg.get("tool_calls") or []):
        fn = tc["function"]
        deltas.append(
            {
                "tool_calls": [
                    {
                        "index": i,
                        "id": tc["id"],
                        "type": "function",
                        "function": {"name": fn["name"], "arguments": ""},
                    }
                ]
            }
        )
        deltas.append({"tool_calls": [{"index": i, "function": {"arguments": fn["arguments"]}}]})
    chunks = [{"choices": [{"index": 0, "delta": d, "finish_reason": None}]} for d in deltas]
    chunks.append(
        {"choices": [{"index": 0, "delta": {}, "finish_reason": choice["finish_reason"]}]}
    )
    if (body.get("stream_options") or {}).get("include_usage"):
        chunks.append({"choices": [], "usage": reply["usage"]})
    events = [
        json.dumps({**head, "object": "chat.completion.chunk", **c}) for c in chunks
    ]  # fmt: skip
    return "".join(f"data: {e}\n\n" for e in [*events, "[DONE]"]).encode()


PREFIX = {"openrouter": "/api/v1", "deepseek": "", "mistral": "/v1"}


def server(variant: str, port: int = 0) -> FakeServer:
    return FakeServer(handler(variant), port, PREFIX.get(variant, "/v1"))
