"""The OpenAI chat reader: ``chat.completion.chunk`` deltas, or a whole reply, into one reply.

A plain reply is a stream of one event (a chat completion whose choice carries the whole
``message``), read here as the deltas of a stream are. A stream needs putting together:
OpenAI-style servers send each tool call in pieces (``index``, then ``id`` and
``function.name`` once, then ``arguments`` in fragments), a reasoning model its
``reasoning_content`` before its answer; LiteLLM's translation of other providers adds
``thinking_blocks`` (Anthropic: thinking text in pieces, then its ``signature``; a
``redacted_thinking`` block whole) and a tool call's ``provider_specific_fields``
(Gemini's ``thought_signature``, also in the call id after ``__thought__``). The reply is
an ordinary assistant message holding all of it, so what the model returned goes back
unaltered, scored as a plain one; what went wrong on the way is a typed ``stream.*``
issue: a call without id or name, an index gap (after the first call's index, which may
not be 0), arguments never valid JSON, text between the pieces of one call, no
``finish_reason``. Every delta carries the offset (ms) of the last raw chunk read before
it, so the timings come from the same clock live and on replay. Linear in the number of
deltas; never raises on what a server sends.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from itertools import chain, compress, repeat
from operator import is_, is_not, itemgetter
from typing import Any

from toolbench import codes
from toolbench.results import TimedText

TimedDelta = TimedText
"""A text delta and its offset (a named tuple: a replayed stream makes about 200 a trial,
and a frozen dataclass costs several times as much to make); the very value a streamed
turn's record keeps (:class:`toolbench.results.TimedText`), so that no delta is copied."""
_new = tuple.__new__
"""Makes a :data:`TimedDelta` without the named tuple's Python-level ``__new__``."""
_FIRST, _SECOND = itemgetter(0), itemgetter(1)


@dataclass
class _Call:
    index: int
    id: str | None = None
    name: str = ""
    args: list[str] = field(default_factory=list)
    last_ms: float = 0.0
    extras: dict[str, Any] = field(default_factory=dict)
    """The call's ``provider_specific_fields`` (Gemini's ``thought_signature``)."""


@dataclass
class Assembled:
    """A streamed reply put back together, with what the stream did on the way."""

    text: str
    tool_calls: list[dict[str, Any]]
    finish_reason: str | None
    issues: list[tuple[str, str]]
    """``(code, message)`` of each broken delta sequence (``stream.*``)."""
    deltas: list[TimedDelta]
    """The text deltas in order, each with its offset."""
    first_token_ms: float | None
    first_call_ms: float | None
    call_complete_ms: float | None
    last_ms: float | None
    usage: dict[str, int] = field(default_factory=dict)
    reasoning: str = ""
    thinking_blocks: list[dict[str, Any]] = field(default_factory=list)
    """Anthropic's thinking blocks as LiteLLM exposes them, each with its signature."""
    provider_fields: dict[str, Any] = field(default_factory=dict)
    """The results of tools the provider ran itself, as LiteLLM streams them in a delta's
    ``provider_specific_fields`` (:data:`RESULT_FIELDS`): the message keeps them, so its
    echo rebuilds the provider's blocks (:mod:`toolbench.providers.server_tools`)."""
    whole: dict[str, Any] | None = None
    """A whole reply's message as the model sent it (its ``None`` values left out): a
    plain reply is a stream of one event whose choice carries the ``message`` itself, not
    a ``delta``; None for a stream of deltas, whose message is built from them."""

    def message(self) -> dict[str, Any]:
        if self.whole is not None:
            return dict(self.whole)
        msg: dict[str, Any] = {"role": "assistant", "content": self.text or None}
        if self.reasoning:
            msg["reasoning_content"] = self.reasoning
        if self.thinking_blocks:
            msg["thinking_blocks"] = [dict(b) for b in self.thinking_blocks]
        if self.tool_calls:
            msg["tool_calls"] = self.tool_calls
        if self.provider_fields:
            msg["provider_specific_fields"] = dict(self.provider_fields)
        return msg


RESULT_FIELDS = ("web_search_results", "tool_results")
"""A delta's ``provider_specific_fields`` that LiteLLM fills with the results of Anthropic's
server tools (each time the whole list so far)."""


def _get(obj: Any, key: str) -> Any:
    if isinstance(obj, dict):
        return obj.get(key)
    return getattr(obj, key, None)


def _items(value: Any) -> list[Any] | tuple[Any, ...]:
    """A list field of a delta (``tool_calls``, ``thinking_blocks``): anything else a
    server sends there holds nothing to assemble (a number there once raised)."""
    return value if isinstance(value, list | tuple) else ()


def _dump(obj: Any) -> dict[str, Any]:
    """A message (a dict, or LiteLLM's object of it) without its ``None`` values."""
    if isinstance(obj, dict):
        return {k: v for k, v in obj.items() if v is not None}
    dumped = obj.model_dump(exclude_none=True) if hasattr(obj, "model_dump") else None
    return dumped if isinstance(dumped, dict) else {}


class Assembler:
    """Feed the chunks LiteLLM yields (or their dict form) with their offsets; then close.

    A plain reply is fed the same way, as the one event of its stream: a chat completion
    whose choice carries the whole ``message`` (:meth:`_whole`)."""

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.reasoning: list[str] = []
        """``reasoning_content`` deltas (DeepSeek's reasoner, LiteLLM's translation of
        thinking): part of what the model said, echoed back with its calls."""
        self.blocks: list[dict[str, Any]] = []
        """Thinking blocks: a thinking fragment extends the last block until that block
        has its signature; a redacted block comes whole."""
        self.deltas: list[TimedDelta] = []
        self.calls: dict[int, _Call] = {}
        self.finish: str | None = None
        self.issues: list[tuple[str, str]] = []
        self.first_token: float | None = None
        self.first_call: float | None = None
        self.last: float | None = None
        self.usage: dict[str, int] = {}
        self.provider_fields: dict[str, Any] = {}
        self._text_since_call = False
        self._gap = self._interleaved = False
        self.whole: dict[str, Any] | None = None

    def _issue(self, code: str, message: str) -> None:
        self.issues.append((code, message))

    def feed_events(self, events: list[tuple[Any, float | None]]) -> Assembler:
        """Every decoded event of a stream, in order (the chunks LiteLLM did not touch)."""
        feed = self.feed
        for data, offset in events:
            if isinstance(data, dict) and isinstance(data.get("choices"), list):
                feed(data, offset)
        return self

    def feed_stored(self, events: list[tuple[float, Any]]) -> Assembler:
        """The decoded events a cassette keeps (``[offset_ms, data]``; a content-only
        chunk as ``[offset_ms, text]``), read as :meth:`feed_events` reads the chunks.

        Most of a stream's events are text deltas: each run of them between two other
        events is taken whole, its texts and deltas made by C-level calls (a Python step
        an event was a noticeable share of a replayed streamed trial); what ends a run is read by
        :meth:`feed`. A run whose offsets are not all floats takes the step by step way,
        so a delta's offset is always the float it is written as."""
        n = len(events)
        datas = list(map(_SECOND, events))
        # Where the events that are not text stand (found in C: a handful a stream).
        others = compress(range(n), map(is_not, map(type, datas), repeat(str)))
        start = 0
        for stop in chain(others, (n,)):
            if stop > start:
                self._text_run(events[start:stop], datas[start:stop])
            if stop < n:
                data = datas[stop]
                if isinstance(data, dict) and isinstance(data.get("choices"), list):
                    self.feed(data, events[stop][0])
            start = stop + 1
        return self

    def _text_run(self, run: list[tuple[float, Any]], texts: list[str]) -> None:
        """Consecutive content-only events (no call can start or end among them)."""
        if not all(map(is_, map(type, map(_FIRST, run)), repeat(float))):
            for offset, text in run:
                self._text(text, float(offset))
                self.last = float(offset)
            return
        self.parts.extend(texts)
        self.deltas.extend(map(_new, repeat(TimedDelta), run))
        if self.first_token is None:
            self.first_token = run[0][0]
        if self.calls:
            self._text_since_call = True
        self.last = run[-1][0]

    def feed(self, chunk: Any, offset_ms: float | None) -> None:
        """One chunk (a decoded event, or LiteLLM's object of it): ``choices[0].delta``
        (content, tool_calls), ``finish_reason``, usage; or ``choices[0].message``, a
        whole reply. A dict's keys are looked up directly (about 200 events a replayed
        trial), an object's attributes through :func:`_get`."""
        offset = 0.0 if offset_ms is None else float(offset_ms)
        self.last = offset
        cget = chunk.get if type(chunk) is dict else lambda key: _get(chunk, key)
        usage = cget("usage")
        if usage is not None:
            for key in ("prompt_tokens", "completion_tokens"):
                value = _get(usage, key)
                if isinstance(value, int):
                    self.usage[key] = value
        choices = cget("choices")
        if not isinstance(choices, list) or not choices:
            return
        choice = choices[0]
        get = choice.get if type(choice) is dict else lambda key: _get(choice, key)
        message = get("message")
        if message is not None:
            self._whole(message, get("finish_reason"))
            return
        finish = get("finish_reason")
        if isinstance(finish, str) and finish:
            self.finish = finish
        delta = get("delta")
        if delta is None:
            return
        dget = delta.get if type(delta) is dict else lambda key: _get(delta, key)
        thought = dget("reasoning_content")
        if isinstance(thought, str) and thought:
            self.reasoning.append(thought)
        blocks = dget("thinking_blocks")
        if blocks:
            for block in _items(blocks):
                self._thinking(block)
        text = dget("content")
        if isinstance(text, str) and text:
            self._text(text, offset)
        calls = dget("tool_calls")
        if calls:
            for tc in _items(calls):
                self._tool_delta(tc, offset)
        extras = dget("provider_specific_fields")
        if extras:
            self._results(extras)

    def _whole(self, message: Any, finish: Any) -> None:
        """A whole reply (the one event of a plain reply): its message kept as the model
        sent it (``content: null`` stays null: the echo must be exact)."""
        raw = _dump(message)
        if "content" not in raw:
            raw["content"] = None
        self.whole = raw
        self.finish = finish if isinstance(finish, str) else None
        content = raw["content"]
        if isinstance(content, str) and content:
            self.parts.append(content)

    def _results(self, extras: Any) -> None:
        """The provider-run tools' results a delta carries (the whole list so far)."""
        for key in RESULT_FIELDS:
            value = _get(extras, key)
            if isinstance(value, list) and value:
                self.provider_fields[key] = [dict(v) if isinstance(v, dict) else v
                                             for v in value]  # fmt: skip

    def _text(self, text: str, offset: float) -> None:
        self.parts.append(text)
        self.deltas.append(TimedDelta(offset, text))
        if self.first_token is None:
            self.first_token = offset
        if self.calls:
            self._text_since_call = True

    def _thinking(self, block: Any) -> None:
        kind = _get(block, "type")
        if kind == "redacted_thinking":
            data = _get(block, "data")
            self.blocks.append({"type": kind, "data": data if isinstance(data, str) else ""})
            return
        if kind != "thinking":
            return
        text, signature = _get(block, "thinking"), _get(block, "signature")
        last = self.blocks[-1] if self.blocks else None
        if last is None or last["type"] != "thinking" or last.get("signature"):
            last = {"type": "thinking", "thinking": ""}
            self.blocks.append(last)
        if isinstance(text, str):
            last["thinking"] += text
        if isinstance(signature, str) and signature:
            last["signature"] = signature

    def _tool_delta(self, tc: Any, offset: float) -> None:
        if tc is None or isinstance(tc, str | int | float | bool | list):
            return  # not a tool-call delta: nothing to assemble
        index = _get(tc, "index")
        if not isinstance(index, int) or index < 0:
            index = max(self.calls, default=-1) + (0 if _get(tc, "id") is None else 1)
            index = max(index, 0)
        known = index in self.calls
        # The first call's index is where numbering starts: Anthropic's OpenAI-compatible
        # endpoint numbers its first streamed call 1 (after the text block 0).
        if self.calls and not known and index > max(self.calls) + 1 and not self._gap:
            self._gap = True
            expected = max(self.calls, default=-1) + 1
            self._issue(
                codes.STREAM_INDEX_GAP, f"tool-call delta index {index} after {expected - 1}"
            )
        if known and self._text_since_call and not self._interleaved:
            self._interleaved = True
            self._issue(codes.STREAM_CONTENT_IN_CALL, f"text content inside tool call {index}")
        call = self.calls.setdefault(index, _Call(index))
        if self.first_call is None:
            self.first_call = offset
        if self.first_token is None:
            self.first_token = offset
        cid = _get(tc, "id")
        if isinstance(cid, str) and cid and call.id is None:
            call.id = cid
        fn = _get(tc, "function")
        name = _get(fn, "name") if fn is not None else None
        if isinstance(name, str) and name and not call.name:
            call.name = name
        args = _get(fn, "arguments") if fn is not None else None
        if isinstance(args, str) and args:
            call.args.append(args)
        extras = _get(tc, "provider_specific_fields")
        if isinstance(extras, dict):
            call.extras.update(extras)
        call.last_ms = offset
        self._text_since_call = False

    def close(self) -> Assembled:
        if self.whole is None:
            calls = self._calls()
            if self.finish is None:
                self._issue(codes.STREAM_NO_FINISH, "the stream ended without a finish_reason")
        else:  # a whole reply: its calls as sent (no delta sequence, timings or issues)
            calls = [_dump(tc) for tc in _items(self.whole.get("tool_calls")) if tc is not None]
        first = self.calls[min(self.calls)] if self.calls else None
        return Assembled(
            text="".join(self.parts), tool_calls=calls, finish_reason=self.finish,
            issues=list(self.issues), deltas=list(self.deltas), first_token_ms=self.first_token,
            first_call_ms=self.first_call, call_complete_ms=first.last_ms if first else None,
            last_ms=self.last, usage=dict(self.usage), reasoning="".join(self.reasoning),
            thinking_blocks=[dict(b) for b in self.blocks],
            provider_fields=dict(self.provider_fields), whole=self.whole,
        )  # fmt: skip

    def _calls(self) -> list[dict[str, Any]]:
        """The streamed calls put together, each broken delta sequence an issue."""
        calls: list[dict[str, Any]] = []
        for index in sorted(self.calls):
            c = self.calls[index]
            if not c.name:
                self._issue(codes.STREAM_CALL_NO_NAME, f"tool call {index} never got a name")
                continue
            if c.id is None:
                self._issue(
                    codes.STREAM_CALL_NO_ID, f"tool call {index} ({c.name}) never got an id"
                )
            args = "".join(c.args)
            try:
                json.loads(args or "{}")
            except ValueError:
                self._issue(
                    codes.STREAM_ARGS_INVALID,
                    f"tool call {index} ({c.name}): arguments are not JSON ({args[:60]!r})",
                )
            call: dict[str, Any] = {
                "id": c.id or f"call_stream_{index}", "type": "function",
                "function": {"name": c.name, "arguments": args},
            }  # fmt: skip
            if c.extras:
                call["provider_specific_fields"] = dict(c.extras)
            calls.append(call)
        return calls
