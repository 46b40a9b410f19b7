"""``qwen3-coder``: Qwen3-Coder's XML calls, ``<function=name><parameter=p>value</parameter>``.

The prompt lists the tools in the template's own ``<tools><function><name>...`` XML and
copies its instructions. Parameter values are bare text: one newline after the opening tag
and one before the closing tag belong to the layout, and the value is typed by the tool's
JSON Schema (:func:`toolbench.formats.schema_values.convert_value`), as vLLM's ``qwen3_coder`` and
llama.cpp's parsers do: ``True`` in any case for a boolean, ``NULL`` in any case as null
for any parameter (a string one included, as vLLM, SGLang and Ollama read it), ``007``
for an integer, and the text itself for a parameter the request gave no schema for. The
``<tool_call>`` wrapper may be missing (llama.cpp accepts a bare ``<function=...>``, and so
does this parser). Results go back in ``<tool_response>`` blocks, as the template renders
``tool`` messages.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from toolbench import codes
from toolbench.formats.base import NamePattern, ParseResult, ToolCall
from toolbench.formats.dialect import (
    DialectCollector,
    DialectFormat,
    NextFinder,
    drop_block,
)
from toolbench.formats.schema_values import convert_value, param_schema
from toolbench.formats.stream_syntax import StreamSyntax, tag, to_end, tokens
from toolbench.formats.text import Cutter, split_think, tidy
from toolbench.tools import ToolDef

OPEN = "<tool_call>"
CLOSE = "</tool_call>"
FUNC = "<function="
FUNC_END = "</function>"
PARAM = "<parameter="
PARAM_END = "</parameter>"
RESP = "<tool_response>"
RESP_END = "</tool_response>"
_SPECIALS = (OPEN, CLOSE, FUNC_END, PARAM_END, RESP, RESP_END, "<tools>", "</tools>", "<|im_end|>")
MAX_PARAMS = 256
"""Parameters read per function (bounds the work on a reply of a million parameter tags)."""
MAX_NAME = 256
"""Longest tool or parameter name looked at (bounds the search for a tag's '>')."""
_TAG_OPEN = re.compile(r"<(?:function|parameter)=[^<>\n]*+>?")


def call_text(name: str, arguments: dict[str, Any]) -> str:
    params = "".join(
        f"<parameter={k}>\n{_value_text(v)}\n</parameter>\n" for k, v in arguments.items()
    )
    return f"{OPEN}\n<function={name}>\n{params}</function>\n{CLOSE}"


def _value_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)


def result_text(name: str, result: str) -> str:
    del name
    return f"{RESP}\n{result}\n{RESP_END}"


def describe_tools_xml(tools: Sequence[ToolDef]) -> str:
    """The tools the way the Qwen3-Coder template lists them."""
    out = ["<tools>"]
    for t in tools:
        out.append(f"<function>\n<name>{t.name}</name>")
        if t.description:
            out.append(f"<description>{t.description.strip()}</description>")
        out.append("<parameters>")
        props = t.parameters.get("properties")
        for pname, fields in props.items() if isinstance(props, dict) else ():
            fields = fields if isinstance(fields, dict) else {}
            out.append(f"<parameter>\n<name>{pname}</name>")
            if "type" in fields:
                out.append(f"<type>{fields['type']}</type>")
            if "description" in fields:
                out.append(f"<description>{str(fields['description']).strip()}</description>")
            out.extend(_extra(fields, ("name", "type", "description")))
            out.append("</parameter>")
        out.extend(_extra(t.parameters, ("type", "properties")))
        out.append("</parameters>\n</function>")
    out.append("</tools>")
    return "\n".join(out)


def _extra(d: dict[str, Any], handled: tuple[str, ...]) -> list[str]:
    lines = []
    for key, val in d.items():
        if key in handled:
            continue
        shown = json.dumps(val, ensure_ascii=False) if isinstance(val, (dict, list)) else str(val)
        lines.append(f"<{key}>{shown}</{key}>")
    return lines


class Qwen3Coder(DialectFormat):
    name = "qwen3-coder"
    test_cases = "test_qwen3_coder"
    name_patterns = (
        NamePattern(60, "qwen 3 coder|qwen 3\\.5|qwen 3 next", "Qwen3-Coder/3.5 write XML calls"),
        NamePattern(
            70,
            "nemotron (?:(?:nano|super|ultra) )?3|step 3\\.5",
            "its template reuses Qwen3-Coder's <function=...> XML calls",
        ),
    )
    template_tokens = (("<function=", "<parameter="),)
    template_rank = 20
    conformance_family = "qwen3_xml"
    leak_rank = 4
    stream = StreamSyntax((tag(OPEN, CLOSE), tag(FUNC, FUNC_END), to_end(RESP), tokens(*_SPECIALS)))
    description = (
        "Qwen3-Coder: <tool_call><function=name><parameter=p>value</parameter>, typed by schema."
    )
    markers = (
        re.compile(re.escape(OPEN)),
        re.compile(re.escape(CLOSE)),
        re.compile(r"<function=[^<>\n]*+>"),
        re.compile(r"<parameter=[^<>\n]*+>"),
        re.compile(re.escape(RESP)),
    )
    literal_markers = _SPECIALS
    call_openers = (OPEN, FUNC)
    pattern_markers = (_TAG_OPEN,)
    stop_sequences = (RESP,)
    call_text = staticmethod(call_text)
    result_text = staticmethod(result_text)

    def instructions(self, tools: Sequence[ToolDef]) -> str:
        return (
            "# Tools\n\nYou have access to the following tools:\n\n"
            f"{describe_tools_xml(tools)}\n\n"
            "If you choose to call a tool ONLY reply in the following format with NO suffix:\n\n"
            "<tool_call>\n<function=example_function_name>\n<parameter=example_parameter_1>\n"
            "value_1\n</parameter>\n<parameter=example_parameter_2>\nvalue_2\n</parameter>\n"
            "</function>\n</tool_call>\n\n<IMPORTANT>\nReminder:\n"
            "- Function calls MUST follow the specified format: the tool calling block MUST "
            "begin with an opening <tool_call> tag and end with a closing </tool_call> tag.\n"
            "- Required parameters MUST be specified\n"
            "- You may provide optional reasoning for your function call in natural language "
            "BEFORE the function call, but NOT after\n"
            "- If there is no function call available, answer the question like normal with "
            "your current knowledge and do not tell the user about function calls\n"
            "</IMPORTANT>"
        )

    def _parse(self, text: str, tools: Sequence[ToolDef] | None) -> ParseResult:
        split = split_think(text)
        body = split.text
        col = DialectCollector()
        cuts = Cutter(body)
        find = _Finders(body)
        pos = 0
        while (f := body.find(FUNC, pos)) >= 0 and not col.full():
            start = _wrapper_start(body, f, cuts.pos)
            end = _read_function(body, f, tools, col, find)
            end = _wrapper_end(body, end)
            cuts.cut(start, end)
            pos = end
        if not col.attempted and OPEN in body:
            j = body.find(OPEN)
            col.fail(codes.CALL_BAD_SHAPE, "<tool_call> without a <function=...> inside")
            k = body.find(CLOSE, j)
            cuts.cut(max(j, cuts.pos), len(body) if k < 0 else k + len(CLOSE))
        raw = cuts.finish()
        if cuts.last_end is not None:
            col.check_text_after(body[cuts.last_end :])
            if RESP in body[cuts.first_start or 0 :]:
                col.signal(codes.STOP_HALLUCINATED_RESULT)
        col.check_tools(tools)
        raw = tidy(drop_block(raw, RESP, RESP_END))
        return col.result(content=self._clean(raw), raw_content=raw, reasoning=split.reasoning)


def _wrapper_start(body: str, f: int, floor: int) -> int:
    """Include a ``<tool_call>`` that opens right before the function (whitespace between)."""
    j = body.rfind(OPEN, floor, f)
    if j >= 0 and not body[j + len(OPEN) : f].strip():
        return j
    return f


def _wrapper_end(body: str, end: int) -> int:
    k = end
    while k < len(body) and body[k].isspace():
        k += 1
    return k + len(CLOSE) if body.startswith(CLOSE, k) else end


class _Finders:
    """Cached closing-tag lookups (see :class:`NextFinder`)."""

    def __init__(self, body: str) -> None:
        self.func_end = NextFinder(body, FUNC_END)
        self.param_end = NextFinder(body, PARAM_END)


def _read_function(
    body: str, f: int, tools: Sequence[ToolDef] | None, col: DialectCollector, find: _Finders
) -> int:
    """Read one ``<function=...>`` element; return where it ends."""
    col.attempted = True
    name_start = f + len(FUNC)
    window = min(len(body), name_start + MAX_NAME)
    gt = body.find(">", name_start, window)
    nl = body.find("\n", name_start, window)
    if gt < 0 or (0 <= nl < gt):
        if window == len(body) and nl < 0:
            col.issue(codes.CALL_TRUNCATED, "the reply ended inside <function=...>")
            return len(body)
        col.issue(codes.CALL_BAD_SHAPE, "<function=...> tag is not closed by '>'")
        return name_start
    name = body[name_start:gt].strip()
    fend = find.func_end.at(gt)
    nxt = body.find(FUNC, gt)
    closed = fend >= 0 and (nxt < 0 or fend < nxt)
    stop = fend if closed else (nxt if nxt >= 0 else len(body))
    if not closed:
        wrap = body.find(CLOSE, gt, stop)
        stop = wrap if wrap >= 0 else stop
    args, repaired = _read_params(body, gt + 1, stop, name, tools, find)
    if not name:
        col.issue(codes.CALL_MISSING_NAME, "<function=> has no tool name")
    elif not closed and stop == len(body) and not args:
        col.issue(codes.CALL_TRUNCATED, f"the reply ended inside <function={name}>")
    else:
        if not closed:
            repaired = True
        if repaired:
            col.issue(codes.JSON_REPAIRED, f"<function={name}>: unclosed tags, read leniently")
        col.calls.append(ToolCall(name=name, arguments=args, repaired=repaired))
    return stop + len(FUNC_END) if closed else stop


def _read_params(
    body: str, pos: int, stop: int, tool: str, tools: Sequence[ToolDef] | None, find: _Finders
) -> tuple[dict[str, Any], bool]:
    args: dict[str, Any] = {}
    repaired = False
    seen = 0
    while seen < MAX_PARAMS and (p := body.find(PARAM, pos, stop)) >= 0:
        seen += 1
        gt = body.find(">", p, min(stop, p + len(PARAM) + MAX_NAME))
        if gt < 0:
            repaired = True
            break
        pname = body[p + len(PARAM) : gt].strip()
        vend = find.param_end.at(gt, stop)
        nxt = body.find(PARAM, gt, stop)
        if vend < 0 or (0 <= nxt < vend):
            repaired = True
            vend = nxt if nxt >= 0 else stop
            pos = vend
        else:
            pos = vend + len(PARAM_END)
        value = body[gt + 1 : vend]
        value = value.removeprefix("\n")
        value = value.removesuffix("\n")
        schema = param_schema(tools, tool, pname)
        args[pname] = convert_value(value, schema, untyped_json=False, null_any_type=True)
    return args, repaired
