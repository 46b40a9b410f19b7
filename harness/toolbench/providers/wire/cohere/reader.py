"""The Cohere v2 chat stream reader: Cohere's typed events into chat deltas.

Cohere's v2 stream (https://docs.cohere.com/v2/docs/streaming, ``POST /v2/chat`` with
``stream: true``) is server-sent events of ``{"type": ...}`` objects: ``message-start``,
``content-delta`` (``delta.message.content.text``), ``tool-plan-delta``
(``delta.message.tool_plan``), ``tool-call-start`` (``index``, ``delta.message.tool_calls``
with the call's ``id`` and ``function.name``), ``tool-call-delta`` (the arguments in
fragments), ``tool-call-end``, ``message-end`` (``delta.finish_reason`` and
``delta.usage.tokens``). LiteLLM 1.106 reads the calls from ``delta.tool_calls`` and the
end from an ``event`` field, neither of which Cohere sends: streamed calls, the finish
reason and the usage would be lost. So toolbench reads these events itself, each
translated into the chat chunk the chat reader (:mod:`..chat.reader`) assembles.
"""

from __future__ import annotations

from typing import Any

from toolbench.providers.wire.chat.reader import Assembler

EVENT_TYPES = frozenset({
    "message-start", "content-start", "content-delta", "content-end", "tool-plan-delta",
    "tool-call-start", "tool-call-delta", "tool-call-end", "citation-start", "citation-end",
    "message-end",
})  # fmt: skip
FINISH = {"COMPLETE": "stop", "STOP_SEQUENCE": "stop", "MAX_TOKENS": "length",
          "TOOL_CALL": "tool_calls", "ERROR": "error"}  # fmt: skip


def speaks(events: list[tuple[Any, float | None]]) -> bool:
    """Whether these events are Cohere v2's (the first one's ``type`` is one of them)."""
    first = events[0][0] if events else None
    return isinstance(first, dict) and first.get("type") in EVENT_TYPES


def _message(event: dict[str, Any]) -> dict[str, Any]:
    delta = event.get("delta")
    msg = delta.get("message") if isinstance(delta, dict) else None
    return msg if isinstance(msg, dict) else {}


def chunk(event: Any) -> dict[str, Any] | None:
    """The chat chunk one Cohere event means (None: nothing to assemble)."""
    if not isinstance(event, dict):
        return None
    kind = event.get("type")
    msg = _message(event)
    delta: dict[str, Any] = {}
    finish: str | None = None
    usage: dict[str, Any] | None = None
    if kind == "content-delta":
        content = msg.get("content")
        text = content.get("text") if isinstance(content, dict) else content
        if isinstance(text, str):
            delta["content"] = text
    elif kind == "tool-plan-delta":
        plan = msg.get("tool_plan")
        if isinstance(plan, str):
            delta["reasoning_content"] = plan  # the model's own words before its calls
    elif kind in ("tool-call-start", "tool-call-delta"):
        call = msg.get("tool_calls")
        if isinstance(call, list):
            call = call[0] if call else None
        if isinstance(call, dict):
            index = event.get("index")
            delta["tool_calls"] = [{**call, "index": index if isinstance(index, int) else 0}]
    elif kind == "message-end":
        end = event.get("delta")
        end = end if isinstance(end, dict) else {}
        reason = end.get("finish_reason")
        finish = FINISH.get(reason, reason.lower()) if isinstance(reason, str) else None
        counts = end.get("usage")
        tokens = counts.get("tokens") if isinstance(counts, dict) else None
        if isinstance(tokens, dict):
            usage = {"prompt_tokens": tokens.get("input_tokens"),
                     "completion_tokens": tokens.get("output_tokens")}  # fmt: skip
    else:
        return None
    out: dict[str, Any] = {"choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
    if usage is not None:
        out["usage"] = usage
    return out


def assemble(events: list[tuple[Any, float | None]]) -> Assembler:
    """Every event fed, translated, to a chat :class:`Assembler` (linear, never raises)."""
    asm = Assembler()
    for data, offset in events:
        translated = chunk(data)
        if translated is not None:
            asm.feed(translated, offset)
    return asm
