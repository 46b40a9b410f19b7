"""``nl-tools``: the model says in plain words which tool to use, and with what.

Natural-language tool selection asks no syntax of the model at all: one English sentence
per call, read back by a parser that knows the offered tools. The argument for it (see
docs/formats.md) is that a small model's tool choice and arguments can be sound while its
JSON is not; this format measures that choice without the JSON.

**The sentence**, one per line (several lines: several calls)::

    Use get_weather with city set to "Paris" and days set to 3.
    Use get_time.

Text values in double quotes; numbers, ``true``/``false`` and JSON lists or objects as
they are. When no tool is needed the model writes ``No tool.`` and answers in plain
words (the line is dropped from what the user sees). Results go back as one user message,
one ``The tool NAME returned: RESULT`` paragraph per call.

**What the parser forgives**, since small models write it: any case (``USE``,
``Get_Weather`` for an offered ``get_weather``), a bullet or number before the sentence,
``the``/quotes/backticks around names, ``=``/``:``/``equal to``/``set as`` for ``set
to``, ``,`` or ``and`` between arguments, curly or single quotes, trailing prose after
the sentence (signalled ``stop.text_after_call``, as for every format), and bare values
(``city set to Paris``), typed by the tool's schema as the XML dialects type theirs
(:func:`~toolbench.formats.schema_values.convert_value`: ``3`` for an integer, ``TRUE``
for a boolean, ``"3"`` quoted for an integer still 3). A sentence in mid-line (``I will
use get_weather with city set to "Paris".``) is a call only when it names an offered
tool; it is read leniently (``call.lenient``, status ``repaired``). ``Use NAME.`` without
arguments is a call when NAME is an offered tool (without the tool list, when it looks
like an identifier: ``_``, ``.``, ``-`` or a digit in it), so "Use caution." stays prose.

Every pattern is anchored or bounded and the text is read left to right once: linear.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from toolbench import codes
from toolbench.formats.base import ParseResult
from toolbench.formats.call_objects import CallCollector
from toolbench.formats.describe import describe_tools
from toolbench.formats.dialect import MAX_CALLS
from toolbench.formats.prompted import PromptedFormat
from toolbench.formats.schema_values import convert_value, param_schema
from toolbench.formats.stream_syntax import Region, StreamSyntax
from toolbench.formats.text import Cutter, split_think, tidy
from toolbench.tools import ToolDef

RESULT_LEAD = "The tool "
MAX_ARGS = 128
"""Arguments read from one sentence: a hostile run of a million stays a bounded cost."""
_NAME = r"[A-Za-z_](?:[\w./-]{0,62}\w)?"
_SP = r"[ \t]{1,8}"
_HEAD = re.compile(
    r"(?i)(^[ \t]{0,16}(?:(?:[-*\u2022]|\d{1,3}[.)])[ \t]{1,8})?)?\buse"
    + _SP
    + r"(?:the"
    + _SP
    + r")?[`'\"*\u201c]{0,2}("
    + _NAME
    + r")[`'\"*\u201d]{0,2}(?:"
    + _SP
    + r"(?:tool|function))?",
    re.M,
)
"""``use NAME``: group 1 is set when the sentence begins its line (bullet allowed)."""
_WITH = re.compile(r"(?i)[ \t]{1,8}with\b[ \t]{0,8}")
_NO_ARGS = re.compile(
    r"(?i)(?:no|without)[ \t]{1,8}(?:arguments|args|parameters|inputs)\b|nothing\b"
)
_ARG = re.compile(
    r"(?i)(?:the[ \t]{1,8})?(?:(?:argument|parameter)[ \t]{1,8})?[`'\"*]{0,2}("
    + _NAME
    + r")[`'\"*]{0,2}[ \t]{0,8}(?:set[ \t]{1,8}(?:to|as)|equal[ \t]{1,8}to|equals|=|:)[ \t]{0,8}"
)
_ARG_AHEAD = (
    r"(?i:(?:the[ \t]{1,8})?[`'\"*]{0,2}" + _NAME + r"[`'\"*]{0,2}[ \t]{0,8}(?:set[ \t]|=|:|equal))"
)
_SEP = re.compile(r"(?i)[ \t]{0,8}(?:,[ \t]{0,8}(?:and[ \t]{1,8})?|[ \t]and[ \t]{1,8}|;[ \t]{0,8})")
_BARE_END = re.compile(
    r"(?:[ \t]{0,8},[ \t]{0,8}(?:and[ \t]{1,8})?|[ \t]{1,8}and[ \t]{1,8}|[ \t]{0,8};[ \t]{0,8})"
    r"(?=" + _ARG_AHEAD + r")|[.!?]{1,4}(?=\s|$)|\n|$"
)
"""Where a bare value ends: before the next argument, at a sentence's end, at the line's."""
_DOUBLE = re.compile(r'"((?:[^"\\\n]|\\.)*+)"')
_QUOTES = {"'": "'", "\u201c": "\u201d", "\u2018": "\u2019", "`": "`"}
_END = re.compile(r"[ \t]{0,8}(?:\(\))?[ \t]{0,8}[.!]{0,4}")
_BLANK_RUN = re.compile(r"\n(?:[ \t]*+\n){2,}")
_NO_TOOL = re.compile(r"(?im)^[ \t]{0,16}no tools?(?: needed| is needed)?\.[ \t]*+\n?")

CALL_LINE = re.compile(
    r"(?im)^[ \t]*+use[ \t]++[^\s]{1,68}(?:[ \t]++(?:tool|function))?[ \t]++with[ \t]"
    r"[^\n]{0,240}?\bset[ \t]++to\b"
)
"""A call sentence at a line's start (the leakage marker: the shape the prompt asks for)."""
RESULT_LINE = re.compile(r"(?m)^[ \t]*+The tool " + _NAME + " returned:")
"""A result paragraph as this format feeds it back (a model writing one invents it)."""


def call_text(name: str, arguments: dict[str, Any]) -> str:
    """A call exactly as the prompt asks for it."""
    if not arguments:
        return f"Use {name}."
    parts = [f"{k} set to {json.dumps(v, ensure_ascii=False)}" for k, v in arguments.items()]
    return f"Use {name} with {' and '.join(parts)}."


def result_text(name: str, result: str) -> str:
    return f"{RESULT_LEAD}{name} returned: {result}"


def answer_text(answer: str) -> str:
    """A final answer as the examples show it: the ``No tool.`` line, then the answer."""
    return f"No tool.\n{answer}"


def _offered(name: str, tools: Sequence[ToolDef] | None) -> tuple[str, bool] | None:
    """``(the offered tool's name, read leniently)`` for ``name``, or None: not offered."""
    if tools is None:
        return None
    names = [t.name for t in tools]
    if name in names:
        return name, False
    folded = [n for n in names if n.lower() == name.lower()]
    return (folded[0], True) if len(folded) == 1 else None


def _identifier(name: str) -> bool:
    return any(ch in name for ch in "_.-0123456789")


def _param_name(tool: str, arg: str, tools: Sequence[ToolDef] | None) -> str:
    """The tool's own spelling of ``arg`` when only the case differs."""
    props = next((t.parameters.get("properties") for t in tools or () if t.name == tool), None)
    if not isinstance(props, dict) or arg in props:
        return arg
    folded = [p for p in props if isinstance(p, str) and p.lower() == arg.lower()]
    return folded[0] if len(folded) == 1 else arg


class _Value:
    """One argument value read from ``text`` at ``pos``: its end and its typed value."""

    def __init__(self, text: str, pos: int, schema: dict[str, Any] | None) -> None:
        self.end = pos
        self.value: Any = None
        self.unclosed = False
        m = _DOUBLE.match(text, pos)
        if m is not None:
            inner = m.group(1)
            try:
                raw = json.loads(f'"{inner}"')
            except ValueError:
                raw = inner
            self.end, self.value = m.end(), self._typed(raw, schema, quoted=True)
            return
        close = _QUOTES.get(text[pos : pos + 1])
        if close is not None:
            stop = text.find(close, pos + 1, len(text))
            line = text.find("\n", pos + 1)
            if stop < 0 or (0 <= line < stop):
                self.unclosed = True
                stop = line if line >= 0 else len(text)
                self.end = stop
            else:
                self.end = stop + 1
            self.value = self._typed(text[pos + 1 : stop], schema, quoted=True)
            return
        if text.startswith('"', pos):  # an unclosed double quote
            line = text.find("\n", pos + 1)
            stop = line if line >= 0 else len(text)
            self.unclosed, self.end = True, stop
            self.value = self._typed(text[pos + 1 : stop], schema, quoted=True)
            return
        e = _BARE_END.search(text, pos)
        stop = e.start() if e is not None else len(text)
        self.end = stop
        self.value = self._typed(text[pos:stop].strip().strip("*`"), schema, quoted=False)

    @staticmethod
    def _typed(raw: str, schema: dict[str, Any] | None, *, quoted: bool) -> Any:
        if quoted and schema is None:
            return raw  # a quoted value of an unknown parameter: the text
        return convert_value(raw, schema)


class NlTools(PromptedFormat):
    name = "nl-tools"
    test_cases = "test_nl_tools"
    description = (
        'Natural-language tools: one plain sentence per call, "Use TOOL with ARG set to '
        'VALUE."; "No tool." otherwise.'
    )
    stream = StreamSyntax(
        (
            Region(
                open=r"^[ \t]{0,16}[Uu][Ss][Ee][ \t]{1,8}[^\s]{1,68}[ \t]{1,8}with[ \t]",
                close_pattern=r"(?=\n)",
            ),
            Region(open=r"^[ \t]{0,16}[Nn]o [Tt]ool\.", close="none", call=False),
        )
    )
    markers = (CALL_LINE, RESULT_LINE)
    result_separator = "\n\n"
    call_text = staticmethod(call_text)
    result_text = staticmethod(result_text)
    answer_text = staticmethod(answer_text)

    def instructions(self, tools: Sequence[ToolDef]) -> str:
        return (
            "You can use tools. Available tools:\n\n"
            f"{describe_tools(tools)}\n\n"
            "To use a tool, write one sentence on its own line, in exactly this shape:\n"
            "Use <tool name> with <argument> set to <value> and <argument> set to <value>.\n"
            'Write text values in double quotes ("Paris"); write numbers, true and false '
            "as they are. A tool without arguments: Use <tool name>.\n"
            "You may use several tools, one sentence per line. Then stop and wait: each "
            'result comes back in a paragraph starting "The tool <tool name> returned:". '
            'When no tool is needed, or once you have the results, write "No tool." on its '
            "own line and then answer in plain words."
        )

    def _parse(self, text: str, tools: Sequence[ToolDef] | None) -> ParseResult:
        split = split_think(text)
        body = split.text
        col = CallCollector()
        cuts = Cutter(body)
        pos = 0
        while len(col.calls) + len(col.errors) < MAX_CALLS:
            m = _HEAD.search(body, pos)
            if m is None:
                break
            end = self._read_call(body, m, tools, col)
            if end is None:
                pos = m.end()
                continue
            cuts.cut(m.start(), end)
            pos = end
        outside = cuts.finish()
        if cuts.last_end is not None:
            tail = body[cuts.last_end :]
            col.check_text_after(_NO_TOOL.sub("", tail))
            if RESULT_LINE.search(tail):
                col.signal(codes.STOP_HALLUCINATED_RESULT)
        col.check_tools(tools)
        raw = tidy(outside)
        return col.result(content=self._clean(raw), raw_content=raw, reasoning=split.reasoning)

    def _read_call(
        self, body: str, m: re.Match[str], tools: Sequence[ToolDef] | None, col: CallCollector
    ) -> int | None:
        """Add the call the sentence at ``m`` makes; where it ends (None: not a call)."""
        at_line_start = m.group(1) is not None
        written = m.group(2)
        offered = _offered(written, tools)
        if not at_line_start and offered is None:
            return None
        name = offered[0] if offered else written
        lenient = [] if offered is None or not offered[1] else ["tool name read ignoring case"]
        if not at_line_start:
            lenient.append("a call sentence inside a longer line")
        w = _WITH.match(body, m.end())
        if w is None:
            if offered is None and (tools is not None or not _identifier(written)):
                return None  # "Use caution." is prose
            end = _END.match(body, m.end())
            self._add(col, name, {}, lenient)
            return end.end() if end is not None else m.end()
        pos = w.end()
        none = _NO_ARGS.match(body, pos)
        if none is not None:
            self._add(col, name, {}, lenient)
            return self._sentence_end(body, none.end())
        args, pos, unclosed = self._read_args(body, pos, name, tools)
        if not args:
            if offered is None:
                return None  # "Use it with care." is prose
            col.fail(codes.ARGS_NOT_OBJECT, f"'{name}': no '<argument> set to <value>' read")
            line_end = body.find("\n", pos)
            return len(body) if line_end < 0 else line_end  # the sentence is the attempt
        if unclosed:
            lenient.append("a quoted value with no closing quote")
        self._add(col, name, args, lenient)
        return self._sentence_end(body, pos)

    @staticmethod
    def _read_args(
        body: str, pos: int, name: str, tools: Sequence[ToolDef] | None
    ) -> tuple[dict[str, Any], int, bool]:
        args: dict[str, Any] = {}
        unclosed = False
        for _ in range(MAX_ARGS):  # past it, the rest is text after the call
            a = _ARG.match(body, pos)
            if a is None:
                break
            arg = _param_name(name, a.group(1), tools)
            value = _Value(body, a.end(), param_schema(tools, name, arg))
            args[arg] = value.value
            unclosed = unclosed or value.unclosed
            pos = value.end
            sep = _SEP.match(body, pos)
            if sep is None or _ARG.match(body, sep.end()) is None:
                break
            pos = sep.end()
        return args, pos, unclosed

    @staticmethod
    def _sentence_end(body: str, pos: int) -> int:
        end = _END.match(body, pos)
        return end.end() if end is not None else pos

    @staticmethod
    def _add(col: CallCollector, name: str, args: dict[str, Any], lenient: list[str]) -> None:
        col.add_object(
            {"name": name, "arguments": args},
            name_keys=("name",),
            where="sentence",
            repaired=bool(lenient),
        )
        for why in lenient:
            col.issue(codes.CALL_LENIENT, f"'{name}': {why}")

    def _clean(self, text: str) -> str:
        """Drop ``No tool.``, then every line a marker is on, whole lines and last (after
        tidying, whose fence removal joins lines): no removal can splice a new marker."""
        text = tidy(_NO_TOOL.sub("", text))
        if not any(p.search(text) for p in self.markers):
            return text
        kept = [ln for ln in text.split("\n") if not any(p.search(ln) for p in self.markers)]
        return _BLANK_RUN.sub("\n\n", "\n".join(kept)).strip()
