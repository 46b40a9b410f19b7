"""``harmony``: gpt-oss's harmony messages, calls as ``<|channel|>commentary to=functions.name``.

A reply is a run of messages, each a header, ``<|message|>`` and a body ended by
``<|end|>``, ``<|call|>``, ``<|return|>`` or the next ``<|start|>``. The header names the
channel (``analysis`` is reasoning, ``final`` and a plain ``commentary`` are visible text)
and, for a tool call, the recipient ``to=functions.<name>`` (before or after the channel,
as llama.cpp accepts); the body of a call is its JSON arguments. ``functions.NAME`` names
the tool ``NAME`` whole (``functions.math.gcd`` is ``math.gcd``); a recipient outside the
``functions`` namespace is resolved against the offered tools (``api.users.create`` reads
an offered ``api.users.create`` or ``users.create``, ``repaired``), and one that names no
offered tool (the built-in ``container.exec``, ``python``) is an attempt reported
``call.unknown_tool``. The prompt renders the tools as the
template's TypeScript ``namespace functions``; a result goes back as the template renders a
``tool`` message, ``<|start|>functions.name to=assistant<|channel|>commentary<|message|>``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from toolbench import codes
from toolbench.formats.base import NamePattern, ParseResult
from toolbench.formats.dialect import DialectCollector, DialectFormat, NextFinder
from toolbench.formats.stream_syntax import Region, StreamSyntax, literal, tokens
from toolbench.formats.text import split_think, tidy
from toolbench.tools import ToolDef

START = "<|start|>"
CHANNEL = "<|channel|>"
MESSAGE = "<|message|>"
CONSTRAIN = "<|constrain|>"
END = "<|end|>"
CALL = "<|call|>"
RETURN = "<|return|>"
_TERMINATORS = (END, CALL, RETURN, START)
_SPECIALS = (START, CHANNEL, MESSAGE, CONSTRAIN, END, CALL, RETURN)
_RECIPIENT = re.compile(r"to=([^\s<]++)")
_CHANNEL = re.compile(r"<\|channel\|>\s*+([A-Za-z_]++)")
_TO_FUNCTIONS = re.compile(r"to=functions\.[^\s<]*+")
MAX_MESSAGES = 256
"""Messages read from one reply; the rest is kept as text (bounds hostile input)."""
_MAX_HEADER = 512
"""A header longer than this is not a header (bounds the per-message work)."""


def call_text(name: str, arguments: dict[str, Any]) -> str:
    args = json.dumps(arguments, ensure_ascii=False)
    return f"{CHANNEL}commentary to=functions.{name} {CONSTRAIN}json{MESSAGE}{args}{CALL}"


def result_text(name: str, result: str) -> str:
    body = json.dumps(result, ensure_ascii=False)
    return f"{START}functions.{name} to=assistant{CHANNEL}commentary{MESSAGE}{body}{END}"


def _ts_type(schema: Any, depth: int = 0) -> str:
    """A TypeScript type for a schema, as the gpt-oss template writes it (simplified)."""
    if not isinstance(schema, dict) or depth > 4:
        return "any"
    t = schema.get("type")
    if isinstance(t, list):
        return " | ".join(str(x) for x in t) or "any"
    enum = schema.get("enum")
    if t == "string" and isinstance(enum, list) and enum:
        return " | ".join(json.dumps(v, ensure_ascii=False) for v in enum)
    if t in ("number", "integer"):
        return "number"
    if t in ("string", "boolean"):
        return str(t)
    if t == "array":
        inner = _ts_type(schema.get("items"), depth + 1)
        return f"{inner}[]" if len(inner) <= 50 else "any[]"
    if t == "object":
        props = schema.get("properties")
        if not isinstance(props, dict) or not props:
            return "object"
        req = schema.get("required") or []
        fields = ", ".join(
            f"{k}{'' if k in req else '?'}: {_ts_type(v, depth + 1)}" for k, v in props.items()
        )
        return "{\n" + fields + "}"
    return "any"


def describe_namespace(tools: Sequence[ToolDef]) -> str:
    """The tools as the gpt-oss template's ``namespace functions`` block."""
    out = ["## functions\n\nnamespace functions {\n\n"]
    for t in tools:
        out.append(f"// {t.description}\n")
        props = t.parameters.get("properties")
        if not isinstance(props, dict) or not props:
            out.append(f"type {t.name} = () => any;\n\n")
            continue
        req = t.parameters.get("required") or []
        out.append(f"type {t.name} = (_: {{\n")
        for pname, spec in props.items():
            spec = spec if isinstance(spec, dict) else {}
            if spec.get("description"):
                out.append(f"// {spec['description']}\n")
            line = f"{pname}{'' if pname in req else '?'}: {_ts_type(spec)}"
            if "default" in spec:  # the template writes an enum's default unquoted
                shown = spec["default"] if "enum" in spec else json.dumps(spec["default"])
                line += f", // default: {shown}"
            out.append(line + ",\n")
        out.append("}) => any;\n\n")
    out.append("} // namespace functions")
    return "".join(out)


class Harmony(DialectFormat):
    name = "harmony"
    test_cases = "test_harmony"
    name_patterns = (NamePattern(10, "gpt oss", "gpt-oss speaks the harmony channel format"),)
    template_tokens = (("<|channel|>", "<|message|>"),)
    template_rank = 10
    conformance_family = "gpt_oss"
    leak_rank = 7
    stream = StreamSyntax(
        (
            Region(
                open=r"<\|start\|>|<\|channel\|>",
                close_pattern=literal(MESSAGE),
                call=False,
                call_when=r"to=functions\.",
                call_close=r"<\|call\|>|<\|end\|>|<\|return\|>",
            ),
            tokens(*_SPECIALS),
        ),
        max_hold=96,
    )
    description = (
        "gpt-oss harmony: <|channel|>commentary to=functions.name <|message|>{json}<|call|>."
    )
    markers = (*(re.compile(re.escape(t)) for t in (CHANNEL, MESSAGE, CALL, START)), _TO_FUNCTIONS)
    literal_markers = _SPECIALS
    call_openers = (CHANNEL, START, MESSAGE)
    pattern_markers = (_TO_FUNCTIONS,)
    result_separator = ""
    call_text = staticmethod(call_text)
    result_text = staticmethod(result_text)

    def instructions(self, tools: Sequence[ToolDef]) -> str:
        return (
            "# Valid channels: analysis, commentary, final. Channel must be included for every "
            "message.\nCalls to these tools must go to the commentary channel: 'functions'.\n\n"
            f"# Tools\n\n{describe_namespace(tools)}\n\n"
            "To call a tool, write a message on the commentary channel addressed to it, for "
            "example:\n"
            f'{CHANNEL}commentary to=functions.tool_name {CONSTRAIN}json{MESSAGE}{{"argument": '
            f'"value"}}{CALL}\n'
            "and stop. Each result comes back as a message from functions.<tool name>. Give "
            f"your answer on the final channel: {CHANNEL}final{MESSAGE}your answer"
        )

    def _parse(self, text: str, tools: Sequence[ToolDef] | None) -> ParseResult:
        col = DialectCollector()
        if MESSAGE not in text:
            split = split_think(text, opened_in_prompt=False)
            body = _cut_open_header(split.text, col)
            raw = tidy(body)
            col.check_tools(tools)
            return col.result(content=self._clean(raw), raw_content=raw, reasoning=split.reasoning)
        visible: list[str] = []
        thoughts: list[str] = []
        after_call: list[str] = []
        pos = 0
        finders = [NextFinder(text, tok) for tok in _TERMINATORS]
        first = text.find(MESSAGE)
        heads = [j for tok in (START, CHANNEL, "to=") if (j := text.find(tok, 0, first)) >= 0]
        if heads and text[: min(heads)].strip():  # prose before the first header
            visible.append(text[: min(heads)])
        count = 0
        while (m := text.find(MESSAGE, pos)) >= 0:
            count += 1
            if count > MAX_MESSAGES or col.full():
                visible.append(text[pos:])
                break
            header = text[max(pos, m - _MAX_HEADER) : m]
            body_start = m + len(MESSAGE)
            body_end, term = _body_end(finders, body_start)
            body = text[body_start:body_end]
            recipient = _last(_RECIPIENT, header)
            channel = _last(_CHANNEL, header) or ""
            if START + "functions." in header:  # a message *from* a tool: made up
                col.signal(codes.STOP_HALLUCINATED_RESULT)
            elif recipient and recipient != "assistant":
                _read_call(recipient, body, tools, col)
            elif channel == "analysis":
                thoughts.append(body)
            elif col.calls or col.attempted:
                after_call.append(body)
                visible.append(body)
            else:
                visible.append(body)
            pos = body_end + (len(term) if term and term != START else 0)
        else:
            visible.append(_cut_open_header(text[pos:], col))
        raw = tidy("".join(visible))
        if after_call and "".join(after_call).strip():
            col.signal(codes.STOP_TEXT_AFTER_CALL)
        col.check_tools(tools)
        reasoning = "\n".join(t.strip() for t in thoughts if t.strip()) if thoughts else None
        return col.result(content=self._clean(raw), raw_content=raw, reasoning=reasoning)


def _body_end(finders: Sequence[NextFinder], start: int) -> tuple[int, str | None]:
    best = -1
    which: str | None = None
    for f in finders:
        j = f.at(start)
        if j >= 0 and (best < 0 or j < best):
            best, which = j, f.needle
    return (best, which) if best >= 0 else (len(finders[0].text), None)


def _last(pattern: re.Pattern[str], header: str) -> str | None:
    found = None
    for m in pattern.finditer(header):
        found = m.group(1)
    return found


def _read_call(
    recipient: str, body: str, tools: Sequence[ToolDef] | None, col: DialectCollector
) -> None:
    """One message addressed to a tool: its recipient names the tool, its body is the JSON
    arguments.

    ``functions.NAME`` is the namespace the template declares the tools in: the name is
    everything after it, dots included (``functions.math.gcd`` calls ``math.gcd``). Any
    other recipient is resolved against the tools the request offered: the offered tool
    it names whole (``api.users.create``), else the longest offered name it ends with
    after a namespace (``users.create``, ``create``); such a call is ``repaired`` with
    ``call.lenient`` (the template addresses tools as ``functions.``). A recipient that
    names no offered tool (gpt-oss's built-in ``browser.search``, ``python``,
    ``container.exec``, or any tool when the request listed none) is an attempt coded
    ``call.unknown_tool``.
    """
    col.attempted = True
    if recipient.startswith("functions."):
        name, why = recipient.removeprefix("functions."), ""
    else:
        found = _offered(recipient, tools)
        if found is None:
            col.issue(
                codes.CALL_UNKNOWN_TOOL, f"call to '{recipient}', a tool that was not offered"
            )
            return
        name, why = found, f"'{recipient}' addressed outside the functions namespace"
    since = len(col.calls)
    args_text = body.strip()
    if not args_text:
        col.add_object({"name": name, "arguments": {}}, name_keys=("name",), where="call")
    else:
        col.add_json_call(name, args_text)
    if why and len(col.calls) > since:
        col.calls[-1].repaired = True
        col.issue(codes.CALL_LENIENT, why)


def _offered(recipient: str, tools: Sequence[ToolDef] | None) -> str | None:
    """The offered tool a recipient outside ``functions`` names: itself, or its longest
    dotted suffix (a namespace dropped), or None."""
    names = {t.name for t in tools or ()}
    rest: str | None = recipient
    while rest:
        if rest in names:
            return rest
        _, dot, after = rest.partition(".")
        rest = after if dot else None
    return None


def _cut_open_header(rest: str, col: DialectCollector) -> str:
    """Text after the last message: a header that never reached ``<|message|>`` is not
    visible text, and if it addressed a function it is a truncated call."""
    starts = [j for tok in (START, CHANNEL) if (j := rest.find(tok)) >= 0]
    m = _TO_FUNCTIONS.search(rest)
    if m is not None:
        col.fail(codes.CALL_TRUNCATED, "the reply ended inside a call's header")
        starts.append(m.start())
    return rest[: min(starts)] if starts else rest
