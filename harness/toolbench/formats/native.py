"""``native``: the provider's own tool-calling API.

Tools go in the request's ``tools`` parameter (OpenAI shape) with ``tool_choice="auto"``
(local OpenAI-compatible servers ignore tools without it), and calls come back as
structured ``tool_calls``. The assistant message is echoed back exactly as the provider
returned it, so provider-only fields (such as Gemini's thought signatures) survive the
round trip. What this format measures on top of the provider is leakage: a server whose
chat template fails to extract calls leaves raw template markers in the content.

Options (``native:strict,tool_choice=required,parallel=false``) are the knobs a team
ships with: ``strict`` sends strict function schemas (:mod:`.strict`: every property
required, optional ones nullable, ``additionalProperties: false``; the changes recorded
on the trial, a null optional argument read back as left out); ``tool_choice`` is
``auto``, ``required``, ``none`` or a tool's name (the call is forced: on an
irrelevance scenario a forced call is a wrong call, and the cell's spec says it was
forced); ``parallel=false`` sends ``parallel_tool_calls: false`` (LiteLLM maps it to
Anthropic's ``disable_parallel_tool_use``). ``tool_choice`` and ``parallel`` go as
request parameters (:attr:`RenderedRequest.params`): a provider that does not take one
has it dropped and recorded, and the cell is marked "not applied". ``api=responses``
sends the conversation to OpenAI's Responses API instead of chat completions (flat
function tools, ``function_call`` items with their ``call_id``, the model's own output
items echoed verbatim, ``function_call_output`` results: the shaping is the provider
layer's, :mod:`toolbench.providers.wire.responses.request`); a provider without it is refused
before any call.

Such a reply is not an abstention: content that holds a call opener (``<tool_call>``,
``[TOOL_CALLS]``, ... see :data:`CALL_OPENERS`) is an attempted call that failed to
decode (``call.in_content``), and its markers are a raw leak. The visible ``content``
drops whole ``<tool_call>`` blocks (tags and JSON), not only the tags, so no raw call
JSON is left looking like an answer.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from functools import lru_cache
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from toolbench import codes
from toolbench.formats.base import (
    Format,
    Message,
    ModelReply,
    ParseResult,
    RenderedRequest,
    Requirements,
    ToolCall,
)
from toolbench.formats.call_objects import CallCollector, failed_result
from toolbench.formats.dialect import DialectFormat
from toolbench.formats.format_registry import format_class, format_names
from toolbench.formats.jsonscan import loads_strict
from toolbench.formats.stream_syntax import StreamSyntax, tag, to_end, tokens
from toolbench.formats.strict import drop_optional_nulls, strict_schema, why_not_strict
from toolbench.formats.tagged import drop_blocks
from toolbench.formats.text import drop_think_tags, split_think, strip_markers, tidy
from toolbench.formats.tool_names import name_map, name_problem
from toolbench.tools import ToolDef

DEFAULT_SYSTEM = "You are a helpful assistant. Use the provided tools when they help."

# Raw chat-template markers that mean a provider leaked its tool-call syntax into content.
LEAK_MARKERS = (
    "<tool_call>",
    "</tool_call>",
    "<|python_tag|>",
    "[TOOL_CALLS]",
    "<function=",
    "</function>",
    "<|tool_call_start|>",
    "<|tool_call_end|>",
    "<|tool_calls_section_begin|>",
    "<｜tool▁calls▁begin｜>",
    "<｜tool▁call▁begin｜>",
    "<start_function_call>",
    "<|tool_call|>",
    "<functioncall>",
)
CALL_OPENERS = tuple(m for m in LEAK_MARKERS if not m.startswith("</") and "_end|" not in m)
"""Markers that open a call: in the content they mean the server did not parse one."""


def dialects() -> tuple[DialectFormat, ...]:
    """The dialect formats whose own call syntax (``call_openers``, ``pattern_markers``:
    ``[TOOL_CALLS]``, ``<|python_tag|>``, a pythonic ``[f(a=1)]`` list, ...) in a native
    reply's content is a call the server failed to parse: every registered dialect that
    declares a ``leak_rank``, tried in that order (a plugin's dialect too)."""
    return _dialects(tuple(format_class(n) for n in format_names()))


@lru_cache(maxsize=8)
def _dialects(classes: tuple[type[Format], ...]) -> tuple[DialectFormat, ...]:
    ranked = sorted(
        (c.leak_rank, c.name, c)
        for c in classes
        if c.leak_rank is not None and issubclass(c, DialectFormat)
    )
    return tuple(cls() for _, _, cls in ranked)


def dialect_in(text: str) -> tuple[DialectFormat, str] | None:
    """The first dialect whose call syntax occurs in ``text``, and what matched."""
    for fmt in dialects():
        for tok in fmt.call_openers:
            if tok in text:
                return fmt, tok
        for pat in fmt.pattern_markers:
            m = pat.search(text)
            if m:
                return fmt, m.group(0)
    return None


CHOICE_WORDS = ("auto", "required", "none")
"""``tool_choice`` values that are not a tool's name."""


class NativeOptions(BaseModel):
    """``native``'s knobs: the API, strict schemas, ``tool_choice`` and parallel calls."""

    model_config = ConfigDict(extra="forbid")

    api: Literal["chat", "responses"] = "chat"
    """``chat``: chat completions; ``responses``: OpenAI's Responses API."""
    strict: bool = False
    tool_choice: str | None = Field(default=None, pattern=r"^[A-Za-z0-9_.-]{1,64}$")
    """``auto``, ``required``, ``none`` or the name of a tool (forced)."""
    parallel: bool | None = None
    """False: ``parallel_tool_calls: false``; None: the provider's default."""


class Native(Format):
    name = "native"
    test_cases = "test_native"
    Options = NativeOptions
    stream = StreamSyntax(
        (
            tag("<tool_call>", "</tool_call>"),
            tag("<function=", "</function>"),
            to_end(*(m for m in CALL_OPENERS if m not in ("<tool_call>", "<function="))),
            tokens(*LEAK_MARKERS),
        )
    )
    description = "The provider's own tool calling (tools= parameter, structured tool_calls)."
    native = True
    requirements = Requirements(native_tools=True)
    markers = tuple(re.compile(re.escape(m)) for m in LEAK_MARKERS)

    @property
    def knobs(self) -> NativeOptions:
        assert isinstance(self.options, NativeOptions)
        return self.options

    @property
    def spec(self) -> str:
        """As written on the command line:
        ``native:api=responses,parallel=false,strict,tool_choice=X``."""
        o = self.knobs
        parts = [] if o.api == "chat" else [f"api={o.api}"]
        parts += [] if o.parallel is None else [f"parallel={str(o.parallel).lower()}"]
        parts += ["strict"] if o.strict else []
        parts += [] if o.tool_choice is None else [f"tool_choice={o.tool_choice}"]
        return self.name + (":" + ",".join(parts) if parts else "")

    def refuses(self, tools: Sequence[ToolDef]) -> str | None:
        problem = name_problem(tools)
        if problem is not None:
            return problem
        choice = self.knobs.tool_choice
        if choice is not None and choice not in CHOICE_WORDS:
            names = [t.name for t in tools]
            if choice not in names:
                return f"offers no tool '{choice}' (it offers: {', '.join(names) or 'none'})"
        if self.knobs.strict:
            for t in tools:
                why = why_not_strict(t.parameters)
                if why is not None:
                    return f"tool '{t.name}' cannot be made strict: {why}"
        return None

    def notes(self, tools: Sequence[ToolDef]) -> list[str]:
        out = name_map(tools).notes()
        if not self.knobs.strict:
            return out
        for t in tools:
            changes = strict_schema(t.parameters)[1]
            if changes:
                out.append(f"native:strict: tool '{t.name}': {'; '.join(changes)}")
        return out

    def render(self, tools: Sequence[ToolDef], messages: Sequence[Message]) -> RenderedRequest:
        out = [dict(m) for m in messages]
        if not out or out[0].get("role") != "system":
            out.insert(0, {"role": "system", "content": DEFAULT_SYSTEM})
        params: dict[str, Any] = {}
        o = self.knobs
        names = name_map(tools)
        if tools and o.tool_choice is not None:
            forced = {"type": "function", "function": {"name": names.to_provider(o.tool_choice)}}
            params["tool_choice"] = o.tool_choice if o.tool_choice in CHOICE_WORDS else forced
        if tools and o.parallel is not None:
            params["parallel_tool_calls"] = o.parallel
        return RenderedRequest(
            messages=out,
            tools=[self._tool(t, names.to_provider(t.name)) for t in tools] or None,
            tool_choice="auto" if tools else None,
            params=params,
            api=o.api,
        )

    def _tool(self, tool: ToolDef, sent_as: str) -> dict[str, Any]:
        entry = tool.openai()
        entry["function"]["name"] = sent_as
        if self.knobs.strict and why_not_strict(tool.parameters) is None:
            fn = entry["function"]
            entry["function"] = {**fn, "parameters": strict_schema(tool.parameters)[0],
                                 "strict": True}  # fmt: skip
        return entry

    def parse_reply(self, reply: ModelReply, tools: Sequence[ToolDef] | None = None) -> ParseResult:
        try:
            return self._parse_reply(reply, tools)
        except Exception as exc:  # a parser bug must not abort a run
            return failed_result(reply.text, exc)

    def _parse_reply(self, reply: ModelReply, tools: Sequence[ToolDef] | None) -> ParseResult:
        col = CallCollector()
        names = name_map(tools or ())
        for i, tc in enumerate(reply.tool_calls):
            where = f"tool_calls[{i}]"
            fn = tc.get("function") if isinstance(tc, dict) else None
            if not isinstance(fn, dict):
                col.fail(codes.CALL_BAD_SHAPE, f"{where}: no 'function' object")
                continue
            call_id = tc.get("id")
            call = {k: fn.get(k) for k in ("name", "arguments") if k in fn}
            name = call.get("name")
            if isinstance(name, str):
                call["name"] = names.from_provider(name.strip())
            col.add_object(
                call,
                name_keys=("name",),
                where=where,
                call_id=call_id if isinstance(call_id, str) and call_id else None,
            )
        col.check_tools(tools)
        if reply.finish_reason in codes.FAILED_CALL_FINISHES and not reply.tool_calls:
            # The provider saw the model try to call and fail (Gemini's
            # MALFORMED_FUNCTION_CALL, marked by the provider layer): a failed attempt,
            # never an abstention.
            col.fail(codes.CALL_MALFORMED, f"the provider reports a failed call attempt "
                     f"({reply.finish_reason})")  # fmt: skip
        split = split_think(reply.text or "")
        raw = tidy(split.text)
        opener = next((m for m in CALL_OPENERS if m in raw), None)
        dialect = dialect_in(raw) if opener != "<tool_call>" else None
        if opener is None and dialect is not None:
            opener = dialect[1][:40]
        if opener is not None:
            col.fail(
                codes.CALL_IN_CONTENT,
                f"content holds {opener!r} call syntax as text: the server returned no "
                "structured call for it",
            )
        reasoning = split.reasoning
        extra = reply.raw_message.get("reasoning_content") if reply.raw_message else None
        if isinstance(extra, str) and extra.strip():
            reasoning = extra.strip() if reasoning is None else f"{extra.strip()}\n{reasoning}"
        content = self._clean(dialect[0].sanitize(raw) if dialect is not None else raw)
        result = col.result(content=content, raw_content=raw, reasoning=reasoning)
        if self.knobs.strict and tools:
            self._left_out(result, tools)
        return result

    @staticmethod
    def _left_out(result: ParseResult, tools: Sequence[ToolDef]) -> None:
        """Strict mode sends an optional argument the model leaves out as ``null``: read
        it as left out (noted on the call), as the tool's own schema says."""
        schemas = {t.name: t.parameters for t in tools}
        for call in result.calls:
            if call.name not in schemas:
                continue
            kept = drop_optional_nulls(call.arguments, schemas[call.name])
            if kept != call.arguments:
                call.arguments = kept
                call.notes.append(codes.ARGS_STRICT_NULL)

    def parse(self, text: str, tools: Sequence[ToolDef] | None = None) -> ParseResult:
        """Parse a JSON assistant message, a JSON list of tool calls, or plain text."""
        got = loads_strict(text.strip()) if text.strip()[:1] in ("{", "[") else None
        if got is not None and got.ok:
            value = got.value
            if isinstance(value, list) and all(isinstance(v, dict) for v in value):
                return self.parse_reply(ModelReply(tool_calls=value), tools)
            if isinstance(value, dict) and ("tool_calls" in value or "role" in value):
                return self.parse_reply(_reply_from_message(value), tools)
        return self.parse_reply(ModelReply(text=text), tools)

    def _clean(self, text: str) -> str:
        return strip_markers(drop_blocks(text, "<tool_call>", "</tool_call>"), LEAK_MARKERS)

    def sanitize(self, text: str) -> str:
        return self._clean(drop_think_tags(text))

    def continue_conversation(
        self,
        messages: Sequence[Message],
        reply: ModelReply,
        results: Sequence[tuple[ToolCall, str]],
    ) -> list[Message]:
        assistant = reply.raw_message if reply.raw_message else _message_from_reply(reply)
        ids = [tc.get("id") for tc in assistant.get("tool_calls") or [] if isinstance(tc, dict)]
        out = [*messages, assistant]
        for i, (call, result) in enumerate(results):
            call_id = call.id or (ids[i] if i < len(ids) and ids[i] else f"call_{i}")
            out.append({"role": "tool", "tool_call_id": call_id, "content": result})
        return out


def _reply_from_message(msg: dict[str, Any]) -> ModelReply:
    calls = msg.get("tool_calls") or []
    content = msg.get("content")
    return ModelReply(
        text=content if isinstance(content, str) else "",
        tool_calls=[c for c in calls if isinstance(c, dict)] if isinstance(calls, list) else [],
        raw_message=msg,
    )


def _message_from_reply(reply: ModelReply) -> dict[str, Any]:
    """Build the assistant message when the provider gave none (ids filled in)."""
    msg: dict[str, Any] = {"role": "assistant", "content": reply.text or None}
    if reply.tool_calls:
        calls = []
        for i, tc in enumerate(reply.tool_calls):
            tc = dict(tc)
            tc.setdefault("id", f"call_{i}")
            tc.setdefault("type", "function")
            fn = tc.get("function")
            if isinstance(fn, dict) and not isinstance(fn.get("arguments"), str):
                tc["function"] = {**fn, "arguments": json.dumps(fn.get("arguments") or {})}
            calls.append(tc)
        msg["tool_calls"] = calls
    return msg
