"""``prompt-xml``: BFCL's two XML return formats, ``verbose_xml`` and ``concise_xml``.

BFCL v4's format-sensitivity grid varies the return format among Python calls, JSON and
two XML shapes. toolbench's ``pythonic`` and ``prompt-json`` cover the first two; this
format is the XML pair, one format whose ``form`` axis picks the shape, so a grid over
them (``prompt-xml:form=verbose|concise``) is one base whose cells run on the same trials
and the report can name ``form`` as the axis that moves a model most. It takes the
other axes too (``doc``, ``markup``, ``style``, ``tag``); its defaults are BFCL's
classic wording with the tools documented as XML, so ``prompt-xml`` alone sends BFCL's
prompt for ``ret_fmt=verbose_xml&tool_call_tag=False&func_doc_fmt=xml&prompt_fmt=
plaintext&style=classic`` (plus how results come back, as every toolbench prompt says).

The call shapes and the sentence on parameter types are BFCL's ``OUTPUT_FORMAT_MAPPING``
and ``PARAM_TYPE_MAPPING`` (bfcl-eval 2026.3.23), word for word; how a reply is read is
:mod:`toolbench.formats.bfcl_xml_reader`. Results go back as ``prompt-json``'s do (one
user message, a ``Tool Result (<name>):`` block per call), so a cell of this format and
one of ``prompt-json`` differ in the call syntax alone.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from pydantic import ConfigDict

from toolbench import codes
from toolbench.formats.base import ParseResult
from toolbench.formats.bfcl_xml_reader import (
    BLOCK_CLOSE,
    BLOCK_OPEN,
    Reader,
    escape,
    type_name,
    value_text,
)
from toolbench.formats.call_objects import CallCollector
from toolbench.formats.prompt_axes import (
    AxisOptions,
    DocFormat,
    PromptParts,
    Style,
    XmlForm,
    untag,
    wrap,
)
from toolbench.formats.prompt_json import RESULT_PREFIX, result_text
from toolbench.formats.prompted import PromptedFormat
from toolbench.formats.schema_values import convert_value, param_schema
from toolbench.formats.stream_syntax import Region, StreamSyntax, tag
from toolbench.formats.text import MARKER_ROUNDS, Cutter, drop_think_tags, split_think, tidy
from toolbench.tools import ToolDef

SHAPES: dict[str, str] = {
    "verbose": '<functions><function name="func_name1"><params><param name="param1" '
    'value="value1" type="type1"/><param name="param2" value="value2" type="type2"/>...'
    '</params></function><function name="func_name2"><params><param name="param3" '
    'value="value3" type="type3"/></params></function></functions>',
    "concise": '<functions><function name="func_name1"><param name="param1" type="type1">'
    'value1</param><param name="param2" type="type2">value2</param>...</function>'
    '<function name="func_name2"><param name="param3" type="type3">value</param>'
    "</function></functions>",
}
"""BFCL's ``OUTPUT_FORMAT_MAPPING["verbose_xml"]`` and ``["concise_xml"]``."""
PARAM_TYPES = (
    "The type fields of the parameters in your function calls must be one of: string, "
    "integer, float, boolean, array, dict, or tuple."
)
"""BFCL's ``PARAM_TYPE_MAPPING`` for both XML forms."""

_FUNCTION = re.compile(r"<function\s++name\s*+=")
_PARAM = re.compile(r"<param\s++name\s*+=")
_RESULT_HEADER = re.compile(r"Tool Result \([^()\n]*+\):?[ \t]*+")
_LITERALS = (BLOCK_OPEN, BLOCK_CLOSE, "</function>", "<params>", "</params>", "</param>")
_BLANK_RUN = re.compile(r"\n(?:[ \t]*+\n){2,}")


def call_text(name: str, arguments: dict[str, Any], form: XmlForm = "verbose") -> str:
    """One call as the ``form`` asks for it, in its own ``<functions>`` block."""
    params = []
    for key, value in arguments.items():
        attrs = f'name="{escape(key, attribute=True)}"'
        typ = f'type="{type_name(value)}"'
        text = value_text(value)
        if form == "verbose":
            params.append(f'<param {attrs} value="{escape(text, attribute=True)}" {typ}/>')
        else:
            params.append(f"<param {attrs} {typ}>{escape(text, attribute=False)}</param>")
    body = "".join(params)
    if form == "verbose":
        body = f"<params>{body}</params>"
    head = f'<function name="{escape(name, attribute=True)}">'
    return f"{BLOCK_OPEN}{head}{body}</function>{BLOCK_CLOSE}"


def _raw(tool: str, param: str, raw: str) -> str:
    """A value left as written (sanitizing reads where calls are, not their values)."""
    del tool, param
    return raw


class PromptXmlOptions(AxisOptions):
    """``shots``, the prompt axes and ``form``; BFCL's classic wording and its XML tool
    documentation unless ``style`` and ``doc`` say otherwise."""

    model_config = ConfigDict(extra="forbid")

    doc: DocFormat = "xml"
    form: XmlForm = "verbose"
    style: Style = "classic"


class PromptXml(PromptedFormat):
    name = "prompt-xml"
    test_cases = "test_prompt_xml"
    Options = PromptXmlOptions
    options: PromptXmlOptions
    description = (
        "BFCL's XML return formats: function elements in one functions block, values in "
        "attributes (form=verbose) or as text (form=concise)."
    )
    stream = StreamSyntax(
        (
            tag(BLOCK_OPEN, BLOCK_CLOSE),
            Region(open=r"<function\s{1,8}name\s{0,8}=", close_pattern=r"</function>"),
        )
    )
    markers = (re.compile(re.escape(BLOCK_OPEN)), _FUNCTION, re.compile(re.escape(RESULT_PREFIX)))
    result_separator = "\n\n"
    call_text = staticmethod(call_text)
    result_text = staticmethod(result_text)

    call_shape = SHAPES["verbose"]
    param_types = PARAM_TYPES
    results_note = (
        'After your calls, stop and wait: each result comes back in a message starting "Tool '
        'Result (<tool name>):". When no tool is needed, or once you have the results, answer '
        "in plain text without any XML call."
    )

    def output_format(self) -> str:
        return SHAPES[self.options.form]

    def shot_call_text(self, name: str, arguments: dict[str, Any]) -> str:
        return wrap(call_text(name, arguments, self.options.form), self.tag)

    def own_parts(self, tools: Sequence[ToolDef]) -> PromptParts:
        return PromptParts(
            persona="",
            task="You can call tools.",
            call_format="To call tools, reply with one XML block in exactly this shape:\n"
            f"{self.shape()}\n{PARAM_TYPES} You may make several calls in one block, one "
            "<function> element each.",
            behaviour=self.results_note,
            tools=f"Available tools:\n\n{self.listing(tools)}",
        )

    def instructions(self, tools: Sequence[ToolDef]) -> str:
        p = self.own_parts(tools)
        return f"{p.task} {p.tools}\n\n{p.call_format} {p.behaviour}"

    def _parse(self, text: str, tools: Sequence[ToolDef] | None) -> ParseResult:
        split = split_think(text)
        body = split.text

        def schema(tool: str, param: str, raw: str) -> Any:
            return convert_value(raw, param_schema(tools, tool, param))

        col = CallCollector()
        cuts = Cutter(body)
        noted: set[str] = set()
        for block in Reader(body, self.options.form, schema).blocks():
            cuts.cut(block.start, block.end)
            for code, message in block.failures:
                col.fail(code, message)
            for call in block.calls:
                reasons = [*block.lenient, *call.lenient]
                for why in reasons:
                    if why not in noted:
                        noted.add(why)
                        col.issue(codes.CALL_LENIENT, why)
                col.add_object(
                    {"name": call.name, "arguments": call.arguments},
                    name_keys=("name",),
                    where="<function>",
                    repaired=bool(reasons),
                )
        outside = cuts.finish()
        if cuts.last_end is not None:
            tail = body[cuts.last_end :]
            col.check_text_after(tail)
            if RESULT_PREFIX in tail:
                col.signal(codes.STOP_HALLUCINATED_RESULT)
        col.check_tools(tools)
        raw = tidy(outside)
        return col.result(content=self._clean(raw), raw_content=raw, reasoning=split.reasoning)

    def sanitize(self, text: str) -> str:
        """The reply as a user sees it: the call blocks cut, then the markers removed."""
        text = drop_think_tags(untag(text)[0] if self.tagged else text)
        kept = Cutter(text)
        for block in Reader(text, self.options.form, _raw).blocks():
            kept.cut(block.start, block.end)
        return self._clean(kept.finish())

    def _clean(self, text: str) -> str:
        """Remove this format's markers from text whose calls are cut out; a hostile
        nesting that survives the removal rounds loses the lines it is on."""
        text = tidy(text)
        for _ in range(MARKER_ROUNDS):
            before = text
            text = _RESULT_HEADER.sub("", text)
            for literal in (*_LITERALS, RESULT_PREFIX):
                text = text.replace(literal, "")
            text = _PARAM.sub("", _FUNCTION.sub("", text))
            if text == before:
                break
        if any(p.search(text) for p in self.markers):
            kept = [ln for ln in text.split("\n") if not any(p.search(ln) for p in self.markers)]
            text = _BLANK_RUN.sub("\n\n", "\n".join(kept))
        return text.strip()
