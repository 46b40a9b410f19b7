"""``claude-xml``: the prompt-based ``<function_calls><invoke name=...>`` style Claude was
trained on (Anthropic's published legacy tool-use prompt), also spoken by models tuned
on it.

Tools are described as ``<tool_description>`` XML inside ``<tools>``; a call is::

    <function_calls>
    <invoke name="get_weather">
    <parameter name="city">Paris</parameter>
    </invoke>
    </function_calls>

and results go back as ``<function_results><result><tool_name>...</tool_name><stdout>...
</stdout></result></function_results>``. Parameter values are bare text typed by the
tool's JSON Schema (see :mod:`toolbench.formats.invoke`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from toolbench import codes
from toolbench.formats.base import NamePattern, ParseResult
from toolbench.formats.describe import type_name
from toolbench.formats.dialect import DialectCollector, DialectFormat, drop_block
from toolbench.formats.invoke import InvokeSyntax, read_blocks
from toolbench.formats.stream_syntax import Region, StreamSyntax, literal, tag, to_end, tokens
from toolbench.formats.text import Cutter, split_think, tidy
from toolbench.tools import ToolDef

SYNTAX = InvokeSyntax("", ("function_calls",))
OPEN = "<function_calls>"
RESULTS = "<function_results>"
RESULTS_END = "</function_results>"
_SPECIALS = (*SYNTAX.tags(), RESULTS, RESULTS_END)


def call_text(name: str, arguments: dict[str, Any]) -> str:
    params = "".join(
        f'<parameter name="{k}">{v if isinstance(v, str) else json.dumps(v, ensure_ascii=False)}'
        "</parameter>\n"
        for k, v in arguments.items()
    )
    return f'{OPEN}\n<invoke name="{name}">\n{params}</invoke>\n</function_calls>'


def result_text(name: str, result: str) -> str:
    return (
        f"{RESULTS}\n<result>\n<tool_name>{name}</tool_name>\n<stdout>\n{result}\n</stdout>\n"
        f"</result>\n{RESULTS_END}"
    )


def describe_tools_xml(tools: Sequence[ToolDef]) -> str:
    """Tools as ``<tool_description>`` blocks, the layout of the legacy prompt."""
    out = ["<tools>"]
    for t in tools:
        out.append(f"<tool_description>\n<tool_name>{t.name}</tool_name>")
        out.append(f"<description>\n{t.description}\n</description>\n<parameters>")
        props = t.parameters.get("properties")
        req = t.parameters.get("required") or []
        for pname, spec in props.items() if isinstance(props, dict) else ():
            spec = spec if isinstance(spec, dict) else {}
            desc = str(spec.get("description", "")).strip()
            extra = []
            if "enum" in spec:
                extra.append("one of: " + ", ".join(json.dumps(v) for v in spec["enum"]))
            if "default" in spec:
                extra.append("default: " + json.dumps(spec["default"]))
            extra.append("required" if pname in req else "optional")
            text = "; ".join(x for x in (desc, *extra) if x)
            out.append(
                f"<parameter>\n<name>{pname}</name>\n<type>{type_name(spec)}</type>\n"
                f"<description>{text}</description>\n</parameter>"
            )
        out.append("</parameters>\n</tool_description>")
    out.append("</tools>")
    return "\n".join(out)


class ClaudeXml(DialectFormat):
    name = "claude-xml"
    test_cases = "test_claude_xml"
    name_patterns = (
        NamePattern(130, "claude", "Claude was trained on <function_calls><invoke> prompts"),
    )
    template_tokens = (("<function_calls>", "<invoke"),)
    template_rank = 60
    leak_rank = 8
    stream = StreamSyntax(
        (
            tag(OPEN, "</function_calls>"),
            Region(open=literal('<invoke name="'), close_pattern=literal("</invoke>")),
            to_end(RESULTS),
            tokens(*_SPECIALS),
        )
    )
    description = (
        'Claude-style prompt tools: <function_calls><invoke name="..."><parameter name="...">.'
    )
    markers = (
        *(re.compile(re.escape(t)) for t in (OPEN, "</function_calls>", RESULTS, "</invoke>")),
        re.compile(r'<invoke name="'),
    )
    literal_markers = _SPECIALS
    call_openers = (OPEN, '<invoke name="')
    pattern_markers = SYNTAX.open_patterns()
    stop_sequences = (RESULTS,)
    call_text = staticmethod(call_text)
    result_text = staticmethod(result_text)

    def instructions(self, tools: Sequence[ToolDef]) -> str:
        return (
            "In this environment you have access to a set of tools you can use to answer the "
            "user's question.\n\nYou may call them like this:\n"
            f'{OPEN}\n<invoke name="$TOOL_NAME">\n'
            '<parameter name="$PARAMETER_NAME">$PARAMETER_VALUE</parameter>\n...\n'
            "</invoke>\n</function_calls>\n\n"
            "Here are the tools available:\n"
            f"{describe_tools_xml(tools)}\n\n"
            "String values are written as they are, without quotes; numbers, booleans, lists "
            "and objects as JSON. After your calls, stop: the results come back inside "
            "<function_results></function_results>. When no tool is needed, or once you have "
            "the results, answer in plain text."
        )

    def _parse(self, text: str, tools: Sequence[ToolDef] | None) -> ParseResult:
        split = split_think(text, opened_in_prompt=False)
        body = split.text
        col = DialectCollector()
        cuts = Cutter(body)
        if OPEN in body:
            read_blocks(body, SYNTAX, tools, col, cuts)
        raw = cuts.finish()
        if cuts.last_end is not None:
            col.check_text_after(body[cuts.last_end :])
            if RESULTS in body[cuts.first_start or 0 :]:
                col.signal(codes.STOP_HALLUCINATED_RESULT)
        col.check_tools(tools)
        raw = tidy(drop_block(raw, RESULTS, RESULTS_END))
        return col.result(content=self._clean(raw), raw_content=raw, reasoning=split.reasoning)
