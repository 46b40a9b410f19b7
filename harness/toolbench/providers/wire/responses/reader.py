"""The OpenAI Responses API reader: a whole ``response`` object, or its typed stream
events, into the reply shape the chat reader gives (content, reasoning, tool calls,
finish reason, usage).

What the model returned goes back on the next turn exactly as it came: the Responses
API refuses a ``function_call_output`` whose call it has not seen, and a reasoning model
needs its ``reasoning`` items (with ``encrypted_content`` when the request asked for it)
before its calls. So the assembled message keeps the response's ``output`` items as they
were sent, under :data:`OUTPUT_ITEMS`, and the request shaping
(:mod:`toolbench.providers.wire.responses.request`) echoes them verbatim. Each
``function_call`` item is also read as a chat tool call whose id is the item's
``call_id`` (what ``function_call_output`` names), so the formats and scorers read it like
any other call.

Shapes (OpenAI API reference, https://platform.openai.com/docs/api-reference/responses
and .../responses-streaming; LiteLLM 1.106.2 ``llms/openai/responses/transformation.py``,
which passes both through unchanged): a response has ``status`` (``completed``,
``incomplete`` with ``incomplete_details.reason``, ``failed`` with ``error``), ``output``
items (``message`` with ``output_text`` parts, ``function_call`` with ``call_id``,
``name``, ``arguments``, ``reasoning`` with ``summary`` and ``encrypted_content``) and
``usage`` (``input_tokens``, ``output_tokens``). A stream is ``response.created``, then per
item ``response.output_item.added`` / ``.done``, ``response.output_text.delta`` and
``response.function_call_arguments.delta`` in between, ending with ``response.completed``
(or ``response.incomplete``, ``response.failed``, or an ``error`` event).

Unreadable replies are typed faults, as the shared call classifies them: a response
without output items, a failed one, an ``error`` event (``infra.bad_reply``); a stream
that ends before its terminal event (``infra.stream_truncated``). Linear in the events;
never raises on what a server sends, except those typed faults.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from toolbench import codes
from toolbench.providers.model_api import Fault
from toolbench.providers.wire.chat.reader import Assembled, Assembler, TimedDelta

OUTPUT_ITEMS = "output_items"
"""The key of the assembled assistant message holding the response's ``output`` items
as sent (echoed verbatim on the next turn)."""
TERMINAL = ("response.completed", "response.incomplete", "response.failed")
"""The events that end a response stream (each carries the whole ``response``)."""
INCOMPLETE_FINISH = {"max_output_tokens": "length", "content_filter": "content_filter"}


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _text_of(item: dict[str, Any]) -> str:
    """The visible text of a ``message`` output item (its ``output_text`` parts)."""
    parts = item.get("content")
    if not isinstance(parts, list):
        return ""
    return "".join(
        str(p.get("text"))
        for p in parts
        if isinstance(p, dict) and p.get("type") == "output_text" and isinstance(p.get("text"), str)
    )


def _reasoning_of(item: dict[str, Any]) -> str:
    """The readable reasoning of a ``reasoning`` item (its summary texts, else content)."""
    texts = []
    for key in ("summary", "content"):
        parts = item.get(key)
        if isinstance(parts, list):
            texts += [
                str(p["text"])
                for p in parts
                if isinstance(p, dict) and isinstance(p.get("text"), str)
            ]
        if texts:
            break
    return "\n".join(texts)


def _call_of(item: dict[str, Any], index: int) -> dict[str, Any] | None:
    """A ``function_call`` item as a chat tool call (id: its ``call_id``); None when the
    item has no name (nothing to call)."""
    name = item.get("name")
    if not isinstance(name, str) or not name:
        return None
    call_id = item.get("call_id")
    args = item.get("arguments")
    return {
        "id": call_id if isinstance(call_id, str) and call_id else f"call_responses_{index}",
        "type": "function",
        "function": {"name": name, "arguments": args if isinstance(args, str) else ""},
    }


def _usage(response: dict[str, Any]) -> dict[str, int]:
    usage = _dict(response.get("usage"))
    out = {}
    for ours, theirs in (("prompt_tokens", "input_tokens"), ("completion_tokens", "output_tokens")):
        value = usage.get(theirs)
        if isinstance(value, int) and not isinstance(value, bool):
            out[ours] = value
    return out


def _finish(response: dict[str, Any], calls: bool) -> str:
    if response.get("status") == "incomplete":
        reason = _dict(response.get("incomplete_details")).get("reason")
        return INCOMPLETE_FINISH.get(str(reason), "length")
    return "tool_calls" if calls else "stop"


def _failed(response: dict[str, Any]) -> str | None:
    """Why a response is not a reply (None: it is one, however little it says)."""
    if response.get("status") == "failed" or response.get("error"):
        err = _dict(response.get("error"))
        what = err.get("message") or err.get("code") or "no error message"
        return f"a failed Responses API response ({str(what)[:300]})"
    output = response.get("output")
    if not isinstance(output, list) or not output:
        return "a Responses API response without output items"
    if not all(isinstance(i, dict) and isinstance(i.get("type"), str) for i in output):
        return "a Responses API response with an output item without a type"
    return None


def message(output: list[dict[str, Any]]) -> tuple[dict[str, Any], list[dict[str, Any]], str]:
    """The assistant message ``output`` means (content, reasoning, tool calls and the items
    themselves), its tool calls and its text."""
    text = "".join(_text_of(i) for i in output if i.get("type") == "message")
    reasoning = "\n".join(
        r for r in (_reasoning_of(i) for i in output if i.get("type") == "reasoning") if r
    )
    calls = [
        c
        for n, i in enumerate(output)
        if i.get("type") == "function_call"
        if (c := _call_of(i, n)) is not None
    ]
    msg: dict[str, Any] = {"role": "assistant", "content": text or None}
    if reasoning:
        msg["reasoning_content"] = reasoning
    if calls:
        msg["tool_calls"] = calls
    msg[OUTPUT_ITEMS] = [dict(i) for i in output]
    return msg, calls, text


def completion(response: Any) -> dict[str, Any]:
    """A whole Responses API ``response`` (its JSON, or LiteLLM's object of it) as a chat
    completion (read as the one event of its stream, :func:`toolbench.providers.reply.whole`); a
    response that is no reply raises ``infra.bad_reply`` (a :class:`Fault`)."""
    body = response if isinstance(response, dict) else _dump(response)
    why = _failed(body)
    if why is not None:
        raise Fault(codes.INFRA_BAD_REPLY, why, True)
    msg, calls, _ = message(body["output"])
    usage = _usage(body)
    choice = {"index": 0, "finish_reason": _finish(body, bool(calls)), "message": msg}
    out: dict[str, Any] = {"choices": [choice], "model": body.get("model")}
    if "completion_tokens" in usage:
        p, c = usage.get("prompt_tokens", 0), usage["completion_tokens"]
        out["usage"] = {"prompt_tokens": p, "completion_tokens": c, "total_tokens": p + c}
    return out


def _dump(obj: Any) -> dict[str, Any]:
    """LiteLLM's ``ResponsesAPIResponse`` as the JSON it was made from: the fields the body
    set (its response ``id`` rewritten by LiteLLM is not read)."""
    try:
        dumped = obj.model_dump(exclude_unset=True)
    except Exception:
        return {}
    return dumped if isinstance(dumped, dict) else {}


# ---------------------------------------------------------------- streams


def speaks(events: list[tuple[Any, float | None]]) -> bool:
    """Whether these events are the Responses API's (typed ``response.*`` events, or its
    ``error`` event, whose ``code`` and ``message`` are its own fields: Anthropic's
    ``error`` event nests them in an ``error`` object)."""
    first = events[0][0] if events else None
    kind = first.get("type") if isinstance(first, dict) else None
    if kind == "error":
        return "error" not in first  # type: ignore[operator]
    return isinstance(kind, str) and kind.startswith("response.")


@dataclass
class ResponsesAssembled(Assembled):
    """An assembled Responses API stream: the chat reader's shape, plus the response's
    output items as sent (what the next turn echoes)."""

    items: list[dict[str, Any]] = field(default_factory=list)

    def message(self) -> dict[str, Any]:
        msg = super().message()
        msg[OUTPUT_ITEMS] = [dict(i) for i in self.items]
        return msg


class StreamReader(Assembler):
    """Feed the Responses API's stream events (decoded JSON, with their offsets); then
    :meth:`close`. The deltas give the timings and the text deltas; the terminal event's
    ``response`` gives the reply and its items as the server holds them (the echo must be
    exact), so a streamed reply reads as the same reply whole."""

    def __init__(self) -> None:
        super().__init__()
        self.begun: set[int] = set()
        """The ``output_index`` of every item begun (``response.output_item.added``)."""
        self.response: dict[str, Any] | None = None
        self.call_complete: float | None = None
        self.fault: Fault | None = None
        """Why the stream is not a reply (an ``error`` or ``response.failed`` event, no
        terminal event): raised by :meth:`close`."""

    def feed(self, chunk: Any, offset_ms: float | None) -> None:
        if not isinstance(chunk, dict):
            return
        offset = 0.0 if offset_ms is None else float(offset_ms)
        self.last = offset
        kind = chunk.get("type")
        index = chunk.get("output_index")
        if kind == "response.output_item.added" and isinstance(index, int):
            item = _dict(chunk.get("item"))
            self.begun.add(index)
            if item.get("type") == "function_call":
                self.first_call = offset if self.first_call is None else self.first_call
                self.first_token = offset if self.first_token is None else self.first_token
        elif kind == "response.output_text.delta":
            text = chunk.get("delta")
            if isinstance(text, str) and text:
                self.parts.append(text)
                self._delta(text, offset)
        elif kind == "response.output_item.done":
            item = _dict(chunk.get("item"))
            if item.get("type") == "function_call" and self.call_complete is None:
                self.call_complete = offset
        elif kind in TERMINAL:
            self.response = _dict(chunk.get("response"))
            self.finish = kind
            if kind == "response.failed":
                self.fault = Fault(
                    codes.INFRA_BAD_REPLY,
                    _failed(self.response) or "a failed Responses API response",
                    True,
                )
        elif kind == "error":
            what = chunk.get("message") or chunk.get("code") or "no error message"
            self.fault = Fault(
                codes.INFRA_BAD_REPLY, f"an error event in the stream ({str(what)[:300]})", True
            )

    def _delta(self, text: str, offset: float) -> None:
        self.deltas.append(TimedDelta(offset, text))
        if self.first_token is None:
            self.first_token = offset

    def close(self) -> ResponsesAssembled:
        """The assembled reply; a typed :class:`Fault` when the stream is no reply."""
        if self.fault is not None:
            raise self.fault
        if self.response is None:
            raise Fault(
                codes.INFRA_STREAM_TRUNCATED,
                "the Responses API stream ended without response.completed "
                f"({len(self.begun)} output item(s) begun)",
                True,
            )
        why = _failed(self.response)
        if why is not None:
            raise Fault(codes.INFRA_BAD_REPLY, why, True)
        items = [i for i in self.response["output"] if isinstance(i, dict)]
        msg, calls, text = message(items)
        if text and not self.deltas:  # a server that sent the text only in the items
            self._delta(text, self.last or 0.0)
        for n, call in enumerate(calls):
            args = call["function"]["arguments"]
            if not _json(args):
                self._issue(
                    codes.STREAM_ARGS_INVALID,
                    f"tool call {n} ({call['function']['name']}):"
                    f" arguments are not JSON ({args[:60]!r})",
                )
        return ResponsesAssembled(
            text=text,  # the response's, as a whole reply reads it
            tool_calls=calls,
            finish_reason=_finish(self.response, bool(calls)),
            issues=list(self.issues),
            deltas=list(self.deltas),
            first_token_ms=self.first_token,
            first_call_ms=self.first_call,
            call_complete_ms=self.call_complete,
            last_ms=self.last,
            usage=_usage(self.response),
            reasoning=msg.get("reasoning_content", ""),
            items=items,
        )


def assemble(events: list[tuple[Any, float | None]]) -> StreamReader:
    """Every event fed to a :class:`StreamReader` (linear, never raises)."""
    reader = StreamReader()
    for data, offset in events:
        reader.feed(data, offset)
    return reader


def _json(args: str) -> bool:
    try:
        json.loads(args or "{}")
    except ValueError:
        return False
    return True
