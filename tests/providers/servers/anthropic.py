"""Anthropic Messages (``POST {base}/v1/messages``).

Shapes: Anthropic API reference, "Messages" (https://docs.anthropic.com/en/api/messages)
and "Tool use" (https://docs.anthropic.com/en/docs/build-with-claude/tool-use): the
``x-api-key`` and ``anthropic-version`` headers; a top-level ``system``; ``content`` as a
string or a list of blocks (``text``, ``tool_use`` with ``id``/``name``/``input``,
``tool_result`` with ``tool_use_id``/``content``); ``tools[]`` with ``input_schema``; a
reply ``{"type": "message", "role": "assistant", "content": [...], "stop_reason":
"end_turn" | "tool_use" | "stop_sequence", "stop_sequence", "usage": {"input_tokens",
"output_tokens"}}``, as LiteLLM's own tests mock it (BerriAI/litellm
tests/test_litellm/llms/anthropic/chat/test_anthropic_chat_transformation.py). What the
API refuses, it refuses here too (HTTP 400, ``invalid_request_error``): a top-level
field it does not define (``seed: Extra inputs are not permitted``), a ``tool_result``
whose ``tool_use_id`` answers no ``tool_use`` of the previous assistant turn, a first
message that is not the user's.
"""

from __future__ import annotations

from typing import Any

from tests.providers.servers.base import FakeServer, Request, Response
from tests.providers.servers.brain import Answer, Call, Turn, as_text, cut_at_stop, decide, style_in

TOP_LEVEL = {
    "model", "messages", "max_tokens", "system", "stop_sequences", "temperature", "top_p",
    "top_k", "tools", "tool_choice", "metadata", "stream", "thinking", "service_tier",
    "container", "mcp_servers", "context_management",
}  # fmt: skip
BLOCKS = {"text", "tool_use", "tool_result", "image", "document", "thinking",
          "redacted_thinking"}  # fmt: skip


def _error(message: str, status: int = 400, kind: str = "invalid_request_error") -> Response:
    return Response(status, {"type": "error", "error": {"type": kind, "message": message}})


def _block_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            b.get("text", "") if b.get("type") == "text" else _block_text(b.get("content"))
            for b in content
            if isinstance(b, dict)
        )
    return ""


def check(body: dict[str, Any]) -> Response | None:
    """The request Anthropic would refuse, or None."""
    extra = sorted(set(body) - TOP_LEVEL)
    if extra:
        return _error(f"{extra[0]}: Extra inputs are not permitted")
    if "max_tokens" not in body:
        return _error("max_tokens: Field required")
    messages = body.get("messages") or []
    if not messages or messages[0].get("role") != "user":
        return _error('messages: first message must use the "user" role')
    previous_ids: set[str] = set()
    for i, m in enumerate(messages):
        blocks = m.get("content") if isinstance(m.get("content"), list) else []
        for b in blocks:
            kind = b.get("type")
            if kind not in BLOCKS:
                return _error(f"messages.{i}.content: unknown block type '{kind}'")
            if kind == "tool_result" and b.get("tool_use_id") not in previous_ids:
                return _error(
                    f"messages.{i}.content: unexpected `tool_use_id` found in `tool_result` "
                    "blocks. Each `tool_result` block must have a corresponding `tool_use` "
                    "block in the previous message."
                )
        if m.get("role") == "assistant":
            previous_ids = {b.get("id") for b in blocks if b.get("type") == "tool_use"}
    return None


def turns_of(body: dict[str, Any]) -> list[Turn]:
    system = body.get("system")
    turns: list[Turn] = [("system", _block_text(system))] if system else []
    for m in body.get("messages", []):
        content = m.get("content")
        if isinstance(content, list) and any(
            isinstance(b, dict) and b.get("type") == "tool_result" for b in content
        ):
            turns.append(("tool", _block_text(content)))
        else:
            turns.append((str(m.get("role")), _block_text(content)))
    return turns


def handle(req: Request) -> Response:
    if not req.path.rstrip("/").endswith("/v1/messages"):
        return _error(f"no route {req.path}", 404, "not_found_error")
    if not req.headers.get("x-api-key"):
        return _error("x-api-key header is required", 401, "authentication_error")
    if not req.headers.get("anthropic-version"):
        return _error("anthropic-version: header is required")
    body = req.body
    if not isinstance(body, dict):
        return _error("body: not JSON")
    refused = check(body)
    if refused is not None:
        return refused
    turns = turns_of(body)
    style = style_in(turns)
    action = decide(turns)
    content: list[dict[str, Any]]
    stop_seq = None
    if body.get("tools") and style is None and isinstance(action, Call):
        city = action.arguments.get("city", "x")
        content = [
            {"type": "text", "text": f"I'll look up the weather in {city}."},
            {"type": "tool_use", "id": f"toolu_01{city.lower()}", "name": action.name,
             "input": action.arguments},
        ]  # fmt: skip
        stop_reason = "tool_use"
    else:
        if isinstance(action, Call) and style is None:
            action = Answer("I cannot call tools here.")
        text, stop_seq = cut_at_stop(as_text(action, style or "prompt-json"),
                                     body.get("stop_sequences"))  # fmt: skip
        content = [{"type": "text", "text": text}]
        stop_reason = "stop_sequence" if stop_seq else "end_turn"
    return Response(200, {
        "id": "msg_01fake", "type": "message", "role": "assistant",
        "model": body.get("model"), "content": content, "stop_reason": stop_reason,
        "stop_sequence": stop_seq, "usage": {"input_tokens": 20, "output_tokens": 8},
    })  # fmt: skip


def server(variant: str = "anthropic", port: int = 0) -> FakeServer:
    return FakeServer(handle, port, "")
