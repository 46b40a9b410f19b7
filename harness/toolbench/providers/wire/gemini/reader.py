"""The Gemini stream reader for calls whose arguments arrive in parts (``partialArgs``).

``streamGenerateContent?alt=sse`` sends ``GenerateContentResponse`` events
(https://ai.google.dev/api/generate-content): ``candidates[0].content.parts`` hold
``text`` (``thought: true`` for the model's reasoning) and ``functionCall`` parts, the
last event ``finishReason``, ``usageMetadata`` the tokens. With
``toolConfig.functionCallingConfig.streamFunctionCallArguments`` (Vertex AI; googleapis
js-genai ``FunctionCall.partialArgs`` / ``willContinue``, ``PartialArg``) one call comes in
several parts: the first with its ``name`` (and ``thoughtSignature``) and
``willContinue: true``, then parts with ``partialArgs`` only, the last without
``willContinue`` or as an empty ``{"functionCall": {}}`` part (a call without arguments is
its name, then that empty part; a tool without parameters may also be called by its name
alone, ``args`` being optional). LiteLLM 1.106 reads ``functionCall.name`` and ``.args`` of
every part and fails on these, so such a stream is read here from the events as the
bytes carried them, into the chat chunks the chat reader (:mod:`..chat.reader`) assembles: the
call's id and thought signature in LiteLLM's shape (the id it would derive,
``__thought__<signature>`` after it; ``provider_specific_fields.thought_signature``), so
the assembled call equals the non-streamed one and goes back the same way. A stream whose
parts cannot be put together (:mod:`.partial_args`), or that ends inside a call, is a
typed fault at :meth:`close`.
"""

from __future__ import annotations

import json
from typing import Any

from toolbench import codes
from toolbench.providers.model_api import Fault
from toolbench.providers.reply import THOUGHT_SEPARATOR, derived_id
from toolbench.providers.wire.chat.reader import Assembled, Assembler
from toolbench.providers.wire.gemini.partial_args import PartialArgs, PartialArgsError

FINISH = {"STOP": "stop", "MAX_TOKENS": "length", "SAFETY": "content_filter",
          "RECITATION": "content_filter", "BLOCKLIST": "content_filter",
          "PROHIBITED_CONTENT": "content_filter", "SPII": "content_filter"}  # fmt: skip
"""Gemini's finish reasons as LiteLLM maps them (any other: ``stop``)."""


def _parts(event: Any) -> list[Any]:
    if not isinstance(event, dict):
        return []
    candidates = event.get("candidates")
    first = candidates[0] if isinstance(candidates, list) and candidates else None
    content = first.get("content") if isinstance(first, dict) else None
    parts = content.get("parts") if isinstance(content, dict) else None
    return parts if isinstance(parts, list) else []


def partial(event: Any) -> bool:
    """Whether this event carries a ``functionCall`` part LiteLLM 1.106 cannot read: one
    in parts (``partialArgs`` or ``willContinue``), or one without ``name`` or ``args``
    (it reads both keys of every part and fails): the empty ``{"functionCall": {}}``
    part that ends a call streamed in parts, a call of a tool without parameters sent by
    its name alone (``args`` is optional in ``FunctionCall``)."""
    for part in _parts(event):
        fc = part.get("functionCall") if isinstance(part, dict) else None
        if isinstance(fc, dict) and (
            "partialArgs" in fc or "willContinue" in fc or "name" not in fc or "args" not in fc
        ):
            return True
    return False


def speaks(events: list[tuple[Any, float | None]]) -> bool:
    """Whether these are Gemini events with a call LiteLLM cannot read (:func:`partial`;
    linear in the events)."""
    return any(partial(data) for data, _ in events)


class _Call:
    def __init__(self, index: int, name: str, signature: str | None, cid: str | None) -> None:
        self.index, self.name, self.signature, self.id = index, name, signature, cid
        self.args = PartialArgs()


class GeminiAssembler(Assembler):
    """A chat :class:`Assembler` fed Gemini events; a fault found on the way is raised by
    :meth:`close` (the first one; later events are not read into the calls)."""

    def __init__(self) -> None:
        super().__init__()
        self.fault: Fault | None = None
        self._open: _Call | None = None
        self._count = 0

    def _fail(self, code: str, message: str) -> None:
        if self.fault is None:
            self.fault = Fault(code, f"Gemini stream: {message}", True, 200)

    def event(self, data: Any, offset: float | None) -> None:
        """One ``GenerateContentResponse`` event (never raises)."""
        at = 0.0 if offset is None else float(offset)
        for part in _parts(data):
            if isinstance(part, dict):
                self._part(part, at)
        self._end_and_usage(data, at)

    def _part(self, part: dict[str, Any], at: float) -> None:
        text = part.get("text")
        if isinstance(text, str) and text:
            key = "reasoning_content" if part.get("thought") is True else "content"
            self.feed(_chunk({key: text}), at)
        fc = part.get("functionCall")
        if isinstance(fc, dict) and self.fault is None:
            try:
                self._call(fc, part.get("thoughtSignature"), at)
            except PartialArgsError as exc:
                self._fail(codes.INFRA_BAD_REPLY, str(exc))

    def _call(self, fc: dict[str, Any], signature: Any, at: float) -> None:
        name = fc.get("name")
        call = self._open
        if isinstance(name, str) and name:
            if call is not None:
                raise PartialArgsError(f"call {name!r} began before call {call.name!r} ended")
            sig = signature if isinstance(signature, str) and signature else None
            cid = fc.get("id")
            call = _Call(self._count, name, sig, cid if isinstance(cid, str) and cid else None)
            self._count += 1
            self.feed(_chunk({"tool_calls": [{"index": call.index,
                                              "function": {"name": name}}]}), at)  # fmt: skip
            args = fc.get("args")
            if isinstance(args, dict):  # a whole call (or its start with whole arguments)
                for key, value in args.items():
                    call.args.root[key] = value
        elif call is None:
            if not fc.get("partialArgs") and not fc.get("args"):
                return  # an empty part after a call that had ended: nothing to end
            raise PartialArgsError("partialArgs outside any call (no call named before)")
        elif isinstance(signature, str) and signature and call.signature is None:
            call.signature = signature
        pieces = fc.get("partialArgs")
        if pieces is not None:
            if not isinstance(pieces, list):
                raise PartialArgsError("partialArgs that is not a list")
            for piece in pieces:
                call.args.add(piece)
            self.feed(_chunk({"tool_calls": [{"index": call.index}]}), at)
        self._open = call if fc.get("willContinue") is True else None
        if self._open is None:
            self._done(call, at)

    def _done(self, call: _Call, at: float) -> None:
        unfinished = call.args.unfinished()
        if unfinished:
            raise PartialArgsError(
                f"call {call.name!r} ended with {unfinished[0][:80]!r} still continuing"
            )
        arguments = json.dumps(call.args.value(), ensure_ascii=False)
        head = call.id or derived_id(call.index, call.name, arguments)
        cid = head + (f"{THOUGHT_SEPARATOR}{call.signature}" if call.signature else "")
        tc: dict[str, Any] = {"index": call.index, "id": cid, "function": {"arguments": arguments}}
        if call.signature:
            tc["provider_specific_fields"] = {"thought_signature": call.signature}
        self.feed(_chunk({"tool_calls": [tc]}), at)

    def _end_and_usage(self, data: Any, at: float) -> None:
        if not isinstance(data, dict):
            return
        usage = data.get("usageMetadata")
        if isinstance(usage, dict):
            prompt, out = usage.get("promptTokenCount"), usage.get("candidatesTokenCount")
            thoughts = usage.get("thoughtsTokenCount")
            counts: dict[str, Any] = {}
            if isinstance(prompt, int):
                counts["prompt_tokens"] = prompt
            if isinstance(out, int):
                counts["completion_tokens"] = out + (thoughts if isinstance(thoughts, int) else 0)
            self.feed({"choices": [], "usage": counts}, at)
        candidates = data.get("candidates")
        first = candidates[0] if isinstance(candidates, list) and candidates else None
        reason = first.get("finishReason") if isinstance(first, dict) else None
        if isinstance(reason, str) and reason:
            finish = "tool_calls" if self.calls and reason == "STOP" else FINISH.get(reason, "stop")
            self.feed(_chunk({}, finish), at)

    def close(self) -> Assembled:
        if self.fault is None and self._open is not None:
            self._fail(
                codes.INFRA_STREAM_TRUNCATED,
                f"the stream ended inside call {self._open.name!r} (willContinue never ended)",
            )
        if self.fault is not None:
            raise self.fault
        return super().close()


def _chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    return {"choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}


def assemble(events: list[tuple[Any, float | None]]) -> GeminiAssembler:
    """Every event fed to a :class:`GeminiAssembler` (linear, never raises)."""
    asm = GeminiAssembler()
    for data, offset in events:
        asm.event(data, offset)
    return asm
