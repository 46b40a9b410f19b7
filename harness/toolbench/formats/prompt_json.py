"""``prompt-json``: tools described in the system prompt, calls as bare JSON objects.

The model writes ``{"tool": "<name>", "arguments": {...}}`` anywhere in its reply
(prose around it, several calls, ```json fences all allowed). Results go back as one user
message holding a ``Tool Result (<name>):\\n<result>`` block per call, after the
assistant's raw reply text. Any model can do this; nothing provider-specific is needed.

``prompt-json:constrained`` asks the server to constrain the reply to the schema of one
call (``{"tool": NAME, "arguments": <that tool's parameters>}``) or of a final answer
(``{"answer": "..."}``) with ``response_format`` (a JSON schema: OpenAI, vLLM and
llama-server, which turns it into a grammar). It shows what constraint buys a small
model, measured like every other format: the reply is parsed as any prompt-json reply,
and an answer object's text is the visible answer. A server that does not take
``response_format`` has it dropped and recorded (the cell says "not applied"). The schema
is sent with ``strict: false``: its root is a union, which OpenAI's strict mode does not
take.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from pydantic import ConfigDict, model_validator

from toolbench import codes
from toolbench.formats.base import (
    Message,
    NamePattern,
    ParseResult,
    RenderedRequest,
)
from toolbench.formats.call_objects import ARG_KEYS, CallCollector
from toolbench.formats.dialect import MAX_CALLS
from toolbench.formats.jsonscan import (
    TOKEN_BUDGET,
    Span,
    decode,
    loads_strict,
    scan_objects,
)
from toolbench.formats.prompt_axes import AxisOptions, PromptParts, untag
from toolbench.formats.prompted import PromptedFormat
from toolbench.formats.stream_syntax import Region, StreamSyntax
from toolbench.formats.text import (
    MARKER_ROUNDS,
    Cutter,
    drop_think_tags,
    remove_all,
    split_think,
    tidy,
)
from toolbench.tools import ToolDef

RESULT_PREFIX = "Tool Result ("
_CALL_KEY = re.compile(r"[\"']tool[\"']\s*+:")
_CALL_START = re.compile(r'\{\s*+"tool"\s*+:')
_NAMED_CALL = re.compile(r"[\"']name[\"']\s*+:")
_RESULT_HEADER = re.compile(r"Tool Result \([^()\n]*+\):?")
_HALLUCINATED = (RESULT_PREFIX, "<tool_response>", "Observation:")


def call_text(name: str, arguments: dict[str, Any]) -> str:
    """A call exactly as this format expects the model to write it."""
    return json.dumps({"tool": name, "arguments": arguments}, ensure_ascii=False)


def result_text(name: str, result: str) -> str:
    return f"{RESULT_PREFIX}{name}):\n{result}"


ANSWER_KEY = "answer"


class PromptJsonOptions(AxisOptions):
    """``shots`` worked examples, the prompt axes, and ``constrained``: the reply held to
    a JSON schema (which leaves no room for a tool-call tag around the object)."""

    model_config = ConfigDict(extra="forbid")

    constrained: bool = False

    @model_validator(mode="after")
    def _one_object(self) -> PromptJsonOptions:
        if self.constrained and self.tag == "on":
            raise ValueError("constrained holds the reply to one JSON object: no tag=on")
        return self


def reply_schema(tools: Sequence[ToolDef]) -> dict[str, Any]:
    """The ``response_format`` of a constrained reply: one call of a tool, or an answer."""
    calls = [
        {"type": "object",
         "properties": {"tool": {"type": "string", "enum": [t.name]}, "arguments": t.parameters},
         "required": ["tool", "arguments"], "additionalProperties": False}
        for t in tools
    ]  # fmt: skip
    answer = {"type": "object", "properties": {ANSWER_KEY: {"type": "string"}},
              "required": [ANSWER_KEY], "additionalProperties": False}  # fmt: skip
    return {
        "type": "json_schema",
        "json_schema": {"name": "call_or_answer", "strict": False,
                        "schema": {"anyOf": [*calls, answer]}},
    }  # fmt: skip


class PromptJson(PromptedFormat):
    name = "prompt-json"
    test_cases = "test_prompt_json"
    name_patterns = (NamePattern(20, "xlam", "xLAM writes bare JSON call lists"),)
    conformance_family = "llama3_json"
    Options = PromptJsonOptions
    options: PromptJsonOptions
    stream = StreamSyntax(
        (Region(open=r"""\{\s{0,16}["'](?:tool|name)["']\s{0,16}:""", close="balanced"),)
    )
    description = 'Tools in the system prompt; calls as {"tool": ..., "arguments": {...}} JSON.'
    markers = (_CALL_START, re.compile(re.escape(RESULT_PREFIX)))
    result_separator = "\n\n"
    call_text = staticmethod(call_text)
    result_text = staticmethod(result_text)

    call_shape = '{"tool": "<tool name>", "arguments": {<argument name>: <value>, ...}}'
    results_note = (
        'After your calls, stop and wait: each result comes back in a message starting "Tool '
        'Result (<tool name>):". When no tool is needed, or once you have the results, answer '
        "in plain text without any JSON call."
    )

    @property
    def spec(self) -> str:
        """As written on the command line, options in name order, ``constrained`` bare:
        ``prompt-json:constrained,doc=python,shots=2``."""
        opts = self.options.model_dump(exclude_defaults=True)
        parts = [k if v is True else f"{k}={v}" for k, v in sorted(opts.items())]
        return self.name + (":" + ",".join(parts) if parts else "")

    def render(self, tools: Sequence[ToolDef], messages: Sequence[Message]) -> RenderedRequest:
        out = super().render(tools, messages)
        if self.options.constrained:
            out.params = {"response_format": reply_schema(tools)}
        return out

    def prompt(self, tools: Sequence[ToolDef]) -> str:
        text = super().prompt(tools)
        if self.options.constrained:
            return text.replace(
                "answer in plain text without any JSON call.",
                'reply with a JSON object in exactly this shape: {"answer": "<your answer>"}',
            )
        return text

    def own_parts(self, tools: Sequence[ToolDef]) -> PromptParts:
        return PromptParts(
            persona="",
            task="You can call tools.",
            call_format="To call a tool, reply with a JSON object in exactly this shape:\n"
            f"{self.shape()}\n"
            'Put every required argument in "arguments" as proper JSON values. You may make '
            "several calls in one reply, one JSON object each.",
            behaviour=self.results_note,
            tools=f"Available tools:\n\n{self.listing(tools)}",
        )

    def instructions(self, tools: Sequence[ToolDef]) -> str:
        p = self.own_parts(tools)
        return f"{p.task} {p.tools}\n\n{p.call_format} {p.behaviour}"

    def _parse(self, text: str, tools: Sequence[ToolDef] | None) -> ParseResult:
        answer = self._answer(text) if self.options.constrained else None
        if answer is not None:
            return ParseResult(content=answer, raw_content=tidy(text), status="no_call")
        split = split_think(text)
        body = split.text
        col = CallCollector()
        scan = scan_objects(body)
        call_spans, past = _call_spans(body, scan.spans)
        unclosed = scan.unclosed
        if past is not None:  # past MAX_CALLS: the rest is neither read nor content
            col.issue(codes.CALL_BAD_SHAPE, f"more than {MAX_CALLS} calls; not read")
            body = body[:past]
            unclosed = None if unclosed is None or unclosed >= past else unclosed
        elif (unread := scan.unread) is not None:  # the scan's budget ran out: the rest is text
            if _CALL_KEY.search(body, unread):
                col.fail(codes.CALL_BAD_SHAPE, f"a call after {TOKEN_BUDGET} brackets; not read")
            unclosed = None  # open where reading stopped, not known to be truncated
        broken = _broken_call(body, unclosed, [sp for sp, _ in call_spans])
        if broken is not None and broken[1] < len(body):  # a malformed call before a good one
            call_spans.append((Span(*broken), ("tool",)))
            call_spans.sort(key=lambda item: item[0].start)
        cuts = Cutter(body)
        for span, keys in call_spans:
            col.add_decoded(decode(body[span.start : span.end]), name_keys=keys, where="call")
        for start, stop in _cut_ranges(body, [span for span, _ in call_spans]):
            cuts.cut(start, stop)
        end = len(body)
        first_call = cuts.first_start
        if broken is not None and broken[1] == len(body):
            col.fail(codes.CALL_TRUNCATED, "the reply ended inside a tool call")
            end = max(broken[0], cuts.pos)
            first_call = end if first_call is None else first_call
        outside = cuts.finish(end)
        if cuts.last_end is not None:
            col.check_text_after(body[cuts.last_end : end])
        if first_call is not None and any(h in body[first_call:] for h in _HALLUCINATED):
            col.signal(codes.STOP_HALLUCINATED_RESULT)
        col.check_tools(tools)
        raw = tidy(outside)
        return col.result(content=self._clean(raw), raw_content=raw, reasoning=split.reasoning)

    @staticmethod
    def _answer(text: str) -> str | None:
        """The text of a constrained final answer (``{"answer": "..."}`` and nothing
        else), or None."""
        got = loads_strict(text.strip()) if text.strip().startswith("{") else None
        if got is None or not got.ok or not isinstance(got.value, dict):
            return None
        value = got.value.get(ANSWER_KEY)
        return value if set(got.value) == {ANSWER_KEY} and isinstance(value, str) else None

    def _clean(self, text: str) -> str:
        """Remove this format's markers from text that already has its calls cut out.

        Tidying comes first: removing an emptied fence afterwards could splice a marker.
        """
        text = tidy(text)
        if RESULT_PREFIX in text:
            text = _RESULT_HEADER.sub("", text)
            text = remove_all(text, (RESULT_PREFIX,))
        for _ in range(MARKER_ROUNDS):
            if not _CALL_START.search(text):
                break
            text = _CALL_START.sub("", text)
        return text.strip()

    def sanitize(self, text: str) -> str:
        text = drop_think_tags(untag(text)[0] if self.tagged else text)
        scan = scan_objects(text)
        cuts = [sp for sp in scan.spans if _CALL_KEY.search(text, sp.start, sp.end)]
        broken = _broken_call(text, scan.unclosed, cuts)
        if broken is not None:
            cuts = sorted([*cuts, Span(*broken)], key=lambda sp: sp.start)
        kept = Cutter(text)
        for start, stop in _cut_ranges(text, cuts):
            if start >= kept.pos:
                kept.cut(start, stop)
        return self._clean(kept.finish())


def _call_spans(
    body: str, spans: list[Span]
) -> tuple[list[tuple[Span, tuple[str, ...]]], int | None]:
    """The spans that are calls, with the key naming the tool; at most ``MAX_CALLS``.

    The second value is where the first call past the limit starts (None: all read), so
    a megabyte of calls costs 128 decodes, not 25,000.
    """
    out: list[tuple[Span, tuple[str, ...]]] = []
    for sp in spans:
        keys = _call_keys(body[sp.start : sp.end])
        if keys is None:
            continue
        if len(out) >= MAX_CALLS:
            return out, sp.start
        out.append((sp, keys))
    return out, None


_COMMA = re.compile(r"\s*+,\s*+")
_SPACE = re.compile(r"\s*+")


def _cut_ranges(body: str, spans: Sequence[Span]) -> list[tuple[int, int]]:
    """What to cut for these call spans: each span, or the whole JSON array when calls
    alone fill it (``[{"tool": ...}, {"tool": ...}]``), so none of its brackets and
    commas is left in the visible text as a fragment (``[, ]``)."""
    out: list[tuple[int, int]] = []
    i = 0
    while i < len(spans):
        j = i
        while j + 1 < len(spans) and _COMMA.fullmatch(body, spans[j].end, spans[j + 1].start):
            j += 1
        before = spans[i].start
        while before > 0 and body[before - 1].isspace():
            before -= 1
        m = _SPACE.match(body, spans[j].end)
        after = m.end() if m is not None else spans[j].end
        if before > 0 and body[before - 1] == "[" and body.startswith("]", after):
            out.append((before - 1, after + 1))
        else:
            out.extend((sp.start, sp.end) for sp in spans[i : j + 1])
        i = j + 1
    return out


def _broken_call(body: str, unclosed: int | None, calls: list[Span]) -> tuple[int, int] | None:
    """The region of an unbalanced call: from the open brace to the next call (or the end)."""
    if unclosed is None:
        return None
    end = next((sp.start for sp in calls if sp.start > unclosed), len(body))
    return (unclosed, end) if _CALL_KEY.search(body, unclosed, end) else None


def _call_keys(chunk: str) -> tuple[str, ...] | None:
    """Which key names the tool if ``chunk`` is (or tries to be) a call, else None.

    Valid JSON counts only with the call shape at the top level (``{"tool": ...}``, or
    ``{"name": ..., "arguments": ...}``), so ordinary JSON in an answer stays text. JSON
    that needs repair counts as an attempt when it mentions the ``"tool"`` key.
    """
    if "tool" not in chunk and "name" not in chunk:  # cheap filter before decoding
        return None
    strict = loads_strict(chunk)
    if strict.ok:
        items = strict.value if isinstance(strict.value, list) else [strict.value]
        if items and all(isinstance(v, dict) and "tool" in v for v in items):
            return ("tool",)
        if items and all(isinstance(v, dict) and "name" in v and _has_args(v) for v in items):
            return ("name",)
        return None
    if _CALL_KEY.search(chunk):
        return ("tool",)
    if _NAMED_CALL.search(chunk) and any(k in chunk for k in ARG_KEYS):
        return ("name",)
    return None


def _has_args(value: dict[str, Any]) -> bool:
    return any(k in value for k in ARG_KEYS)
