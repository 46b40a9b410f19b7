"""Ollama's chat API (``POST {base}/api/chat``), which LiteLLM's ``ollama_chat/`` speaks.

Shapes: Ollama docs/api.md, "Generate a chat completion" and its "Chat request (with
tools)" example (https://github.com/ollama/ollama/blob/main/docs/api.md#generate-a-chat-completion):
``{"model", "messages", "tools", "stream": false, "options": {"temperature", "seed",
"stop"}}``; a reply ``{"model", "created_at", "message": {"role": "assistant",
"content", "tool_calls": [{"function": {"name", "arguments": {...}}}]}, "done_reason",
"done": true, "prompt_eval_count", "eval_count"}`` with ``arguments`` an object, not a
JSON string, and no call id; tool results come back as ``role: tool`` messages. No key:
a local Ollama takes none. A streamed request (``stream`` absent or true: Ollama's
default) is refused here, since the fake only answers whole replies. LiteLLM's own test of
the mapping: BerriAI/litellm tests/test_litellm/llms/ollama/test_ollama_chat_transformation.py.
"""

from __future__ import annotations

from typing import Any

from tests.providers.servers.base import FakeServer, Request, Response, error
from tests.providers.servers.brain import Answer, Call, as_text, cut_at_stop, decide, style_in
from tests.providers.servers.openai_chat import turns_of


def handle(req: Request) -> Response:
    if req.path.rstrip("/") != "/api/chat":
        return Response(404, b"404 page not found", {"content-type": "text/plain"})
    body = req.body
    if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
        return error(400, "invalid request")
    if body.get("stream", True):
        return error(400, "this fake serves stream=false only")
    turns = turns_of(body["messages"])
    style = style_in(turns)
    action = decide(turns)
    msg: dict[str, Any] = {"role": "assistant", "content": ""}
    if body.get("tools") and style is None and isinstance(action, Call):
        msg["tool_calls"] = [{"function": {"name": action.name, "arguments": action.arguments}}]
    else:
        if isinstance(action, Call) and style is None:
            action = Answer("I cannot call tools here.")
        stop = (body.get("options") or {}).get("stop")
        msg["content"], _hit = cut_at_stop(as_text(action, style or "prompt-json"), stop)
    return Response(200, {
        "model": body.get("model"), "created_at": "2026-01-01T00:00:00.000000Z",
        "message": msg, "done_reason": "stop", "done": True, "total_duration": 1000000,
        "load_duration": 1000, "prompt_eval_count": 20, "prompt_eval_duration": 1000,
        "eval_count": 8, "eval_duration": 1000,
    })  # fmt: skip


def server(variant: str = "ollama", port: int = 0) -> FakeServer:
    return FakeServer(handle, port, "")
