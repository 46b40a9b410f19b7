"""``deepseek``: DeepSeek V3 / V3.1 / R1 ``<｜tool▁calls▁begin｜>`` blocks (and V3.2 / V4 DSML).

The call block is ``<｜tool▁calls▁begin｜>`` then, per call,
``<｜tool▁call▁begin｜>name<｜tool▁sep｜>{json}<｜tool▁call▁end｜>`` (V3.1), or the older
V3 / R1 form ``<｜tool▁call▁begin｜>function<｜tool▁sep｜>name`` followed by a fenced
```json block and ``<｜tool▁call▁end｜>``,
closed by ``<｜tool▁calls▁end｜>``. V3.2 and V4 switched to a DSML ``<｜DSML｜function_calls>``
/ ``<｜DSML｜tool_calls>`` block of ``invoke``/``parameter`` tags; both are read, and a V4
``invoke`` written without its block is read too, marked ``repaired``. A name that runs
straight into its arguments (``get_weather```json``, ``get_weather{...}``) is split there
and marked ``repaired`` (``call.lenient``); other text where the name belongs is
``call.bad_shape``, never a call with that text as its name. The prompt
is the tool section of DeepSeek V3.1's model card; results go back as
``<｜tool▁output▁begin｜>result<｜tool▁output▁end｜>``, as the V3.1 template renders them.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from toolbench import codes
from toolbench.formats.base import NamePattern, ParseResult
from toolbench.formats.dialect import (
    DialectCollector,
    DialectFormat,
    NextFinder,
    drop_block,
    skip_space,
)
from toolbench.formats.invoke import InvokeSyntax, read_blocks
from toolbench.formats.stream_syntax import Region, StreamSyntax, tag, to_end, tokens
from toolbench.formats.text import Cutter, split_think, tidy
from toolbench.tools import ToolDef

CALLS_BEGIN = "<｜tool▁calls▁begin｜>"
CALLS_END = "<｜tool▁calls▁end｜>"
CALL_BEGIN = "<｜tool▁call▁begin｜>"
CALL_END = "<｜tool▁call▁end｜>"
SEP = "<｜tool▁sep｜>"
OUT_BEGIN = "<｜tool▁output▁begin｜>"
OUT_END = "<｜tool▁output▁end｜>"
DSML = InvokeSyntax("｜DSML｜", ("function_calls", "tool_calls"), bare_invokes=True)
_SPECIALS = (
    CALLS_BEGIN, CALLS_END, CALL_BEGIN, CALL_END, SEP, OUT_BEGIN, OUT_END,
    "<｜tool▁outputs▁begin｜>", "<｜tool▁outputs▁end｜>", "<｜end▁of▁sentence｜>",
    "<｜Assistant｜>", "<｜User｜>", *DSML.tags(),
)  # fmt: skip


def call_text(name: str, arguments: dict[str, Any]) -> str:
    args = json.dumps(arguments, ensure_ascii=False)
    return f"{CALLS_BEGIN}{CALL_BEGIN}{name}{SEP}{args}{CALL_END}{CALLS_END}"


def result_text(name: str, result: str) -> str:
    del name
    return f"{OUT_BEGIN}{result}{OUT_END}"


class DeepSeek(DialectFormat):
    name = "deepseek"
    test_cases = "test_deepseek"
    name_patterns = (
        NamePattern(50, "deepseek", "DeepSeek writes <｜tool▁calls▁begin｜> (or DSML) blocks"),
        NamePattern(
            50, "cogito", "Deep Cogito's template writes DeepSeek's <｜tool▁calls▁begin｜>"
        ),
    )
    template_tokens = (("tool▁calls▁begin",), ("｜DSML｜",))
    template_rank = 40
    conformance_family = "deepseek"
    leak_rank = 5
    stream = StreamSyntax(
        (
            tag(CALLS_BEGIN, CALLS_END),
            tag(CALL_BEGIN, CALL_END),
            Region(
                open="<｜DSML｜(?:function_calls|tool_calls)>",
                close_pattern="</｜DSML｜(?:function_calls|tool_calls)>",
            ),
            tag("<｜DSML｜invoke", "</｜DSML｜invoke>"),  # V4's invoke without its block
            to_end(OUT_BEGIN),
            tokens(*_SPECIALS),
        )
    )
    description = "DeepSeek V3/V3.1/R1: <｜tool▁calls▁begin｜> blocks (V3.2/V4 DSML also read)."
    markers = tuple(
        re.compile(re.escape(t)) for t in (CALLS_BEGIN, CALL_BEGIN, SEP, OUT_BEGIN, "｜DSML｜")
    )
    literal_markers = _SPECIALS
    call_openers = (CALLS_BEGIN, CALL_BEGIN, "<｜DSML｜function_calls>", "<｜DSML｜tool_calls>")
    pattern_markers = DSML.open_patterns()
    stop_sequences = (OUT_BEGIN,)
    result_separator = ""
    call_text = staticmethod(call_text)
    result_text = staticmethod(result_text)

    def instructions(self, tools: Sequence[ToolDef]) -> str:
        listing = "\n\n".join(
            f"### {t.name}\nDescription: {t.description}\n\n"
            f"Parameters: {json.dumps(t.parameters, ensure_ascii=False)}"
            for t in tools
        )
        return (
            "## Tools\nYou have access to the following tools:\n\n"
            f"{listing}\n\n"
            "IMPORTANT: ALWAYS adhere to this exact format for tool use:\n"
            f"{CALLS_BEGIN}{CALL_BEGIN}tool_call_name{SEP}tool_call_arguments{CALL_END}"
            "{{additional_tool_calls}}"
            f"{CALLS_END}\n\n"
            "Where:\n"
            "- `tool_call_name` must be an exact match to one of the available tools\n"
            "- `tool_call_arguments` must be valid JSON that strictly follows the tool's "
            "Parameters Schema\n"
            "- For multiple tool calls, chain them directly without separators or spaces\n\n"
            f"Results come back as {OUT_BEGIN}result{OUT_END}. When no tool is needed, or "
            "once you have the results, answer in plain text."
        )

    def _parse(self, text: str, tools: Sequence[ToolDef] | None) -> ParseResult:
        split = split_think(text)
        body = split.text
        col = DialectCollector()
        cuts = Cutter(body)
        if CALL_BEGIN in body:
            _read_v3(body, col, cuts)
        if cuts.last_end is None and "｜DSML｜" in body:
            read_blocks(body, DSML, tools, col, cuts)
        raw = cuts.finish()
        if cuts.last_end is not None:
            col.check_text_after(body[cuts.last_end :])
            if OUT_BEGIN in body[cuts.first_start or 0 :]:
                col.signal(codes.STOP_HALLUCINATED_RESULT)
        col.check_tools(tools)
        raw = tidy(drop_block(raw, OUT_BEGIN, OUT_END))
        return col.result(content=self._clean(raw), raw_content=raw, reasoning=split.reasoning)


def _read_v3(body: str, col: DialectCollector, cuts: Cutter) -> None:
    """Read every ``<｜tool▁call▁begin｜>`` call; cut from the section start to its end."""
    call_end = NextFinder(body, CALL_END)
    sep_find = NextFinder(body, SEP)
    pos = 0
    while (b := body.find(CALL_BEGIN, pos)) >= 0 and not col.full():
        col.attempted = True
        start = b
        sec = body.rfind(CALLS_BEGIN, cuts.pos, b)
        if sec >= 0 and not body[sec + len(CALLS_BEGIN) : b].strip():
            start = sec
        nxt = body.find(CALL_BEGIN, b + len(CALL_BEGIN))
        stop = nxt if nxt >= 0 else len(body)
        e = call_end.at(b, stop)
        inner_end = e if e >= 0 else _section_end(body, b, stop)
        sep = sep_find.at(b, inner_end)
        if sep < 0:
            col.issue(
                codes.CALL_TRUNCATED if e < 0 else codes.CALL_BAD_SHAPE,
                "a call without <｜tool▁sep｜>",
            )
        else:
            _read_call(
                body[b + len(CALL_BEGIN) : sep], body[sep + len(SEP) : inner_end], e < 0, col
            )
        end = e + len(CALL_END) if e >= 0 else inner_end
        k = end
        while k < len(body) and body[k].isspace():
            k += 1
        if body.startswith(CALLS_END, k):
            end = k + len(CALLS_END)
        cuts.cut(max(start, cuts.pos), end)
        pos = max(end, b + len(CALL_BEGIN))


def _section_end(body: str, b: int, stop: int) -> int:
    j = body.find(CALLS_END, b, stop)
    return j if j >= 0 else stop


_NAME = re.compile(r"[\w.:/-]++")
"""A tool name: word characters, dots, colons, slashes, hyphens (MCP and namespaced names)."""
V3_TYPE = "function"
"""The type word before the separator in the V3 / R1 form; the templates write no other."""
FENCE = "```"
_V3_SHAPE = re.compile(r"[\w.:/-]++\s*+```")
"""What follows the separator in the V3 form: a name, then its fence."""


def _read_call(head: str, rest: str, unclosed: bool, col: DialectCollector) -> None:
    """One call: ``head`` before the separator, ``rest`` after it.

    A head of ``function`` is the V3 / R1 form (the name follows the separator); any other
    head is the V3.1 form's name. A V3 body (a name, then its fence) after any head but
    ``function`` (``not_function``, nothing) is ``call.bad_shape``, as llama.cpp and Ollama
    refuse it: the type word's place never gives the name.
    """
    head = head.strip()
    body = rest.lstrip()
    doubled = body.startswith(SEP)
    if doubled:  # a doubled separator: read on, but not strictly (one slice: linear)
        at = 0
        while body.startswith(SEP, at):
            at = skip_space(body, at + len(SEP))
        body = body[at:]
    since = len(col.calls)
    _read_form(head, body, unclosed, col)
    if doubled:
        col.lenient(since, f"doubled {SEP}, read leniently")


def _read_form(head: str, body: str, unclosed: bool, col: DialectCollector) -> None:
    """The call in the form its head and body show (see :func:`_read_call`)."""
    if head == V3_TYPE:
        _read_v3_body(body, unclosed, col)
        return
    if _V3_SHAPE.match(body):
        col.issue(codes.CALL_BAD_SHAPE, f"type {head[:40]!r} where DeepSeek writes '{V3_TYPE}'")
        return
    name, glued = _split_name(head)
    if name is None:
        col.fail(codes.CALL_BAD_SHAPE, f"{head[:60]!r} is not a tool name")
        return
    since = len(col.calls)
    why = ""
    if glued is not None:  # the arguments ran into the name: read them leniently
        why = "the arguments run into the name"
        args_text = _unfence(body or glued)
    elif body.startswith(FENCE):
        why = "a ```json fence around V3.1 arguments"
        args_text = _unfence(body)
    else:
        args_text = body
    _add_call(name, args_text.strip(), unclosed, col)
    if why and len(col.calls) > since:
        col.calls[-1].repaired = True
        col.issue(codes.CALL_LENIENT, f"'{name}': {why}")


def _read_v3_body(body: str, unclosed: bool, col: DialectCollector) -> None:
    """``name`` then a ```json fence holding the arguments (V3 / R1).

    The fence is the syntax here: the reference parsers (vLLM, SGLang, llama.cpp, Ollama)
    find the arguments by it, and refuse a body without it, so a name followed by bare
    JSON or by nothing is ``call.bad_shape``. A fence that runs into the name
    (``get_weather```json``) is split there and ``repaired``. A fence left open is
    ``call.bad_shape`` before the call's end token, and truncation when the reply ends
    inside it (complete JSON there is read: a stop sequence ate the rest).
    """
    m = _NAME.match(body)
    if m is None:
        col.issue(codes.CALL_MISSING_NAME, f"no tool name after '{V3_TYPE}'")
        return
    name = m.group()
    after = body[m.end() :]
    fenced = after.lstrip()
    if not fenced.startswith(FENCE):
        if not fenced and unclosed:
            col.issue(codes.CALL_TRUNCATED, f"the reply ended inside the call to '{name}'")
        elif fenced[:1] in ("{", ""):
            col.issue(codes.CALL_BAD_SHAPE, f"'{name}': arguments without their ```json fence")
        else:
            col.issue(codes.CALL_BAD_SHAPE, f"{body.strip()[:60]!r} is not a tool name")
        return
    inner = fenced[len(FENCE) :].removeprefix("json").rstrip()
    if inner.endswith(FENCE):
        inner = inner[: -len(FENCE)]
    elif not unclosed:
        col.issue(codes.CALL_BAD_SHAPE, f"'{name}': the ```json fence is not closed")
        return
    since = len(col.calls)
    _add_call(name, inner.strip(), unclosed, col)
    if after[:1] == "`" and len(col.calls) > since:  # no space between name and fence
        col.calls[-1].repaired = True
        col.issue(codes.CALL_LENIENT, f"'{name}': the fence runs into the name")


def _split_name(text: str) -> tuple[str | None, str | None]:
    """``(name, arguments glued to it)``: ``get_weather`` gives ``("get_weather", None)``;
    ``get_weather```json {..}`` or ``get_weather{..}`` split where the name ends and a fence
    or JSON object begins; anything else after a name is not a name (None)."""
    if not text:
        return "", None
    m = _NAME.match(text)
    if m is None:
        return None, None
    tail = text[m.end() :]
    if not tail:
        return m.group(), None
    if tail.lstrip().startswith((FENCE, "{")):
        return m.group(), tail
    return None, None


def _add_call(name: str, args_text: str, unclosed: bool, col: DialectCollector) -> None:
    """The call's arguments are strict JSON: DeepSeek's reference parsers decode them with
    a strict decoder and drop the call otherwise, so JSON that needs repair (unquoted keys,
    a trailing comma) is ``json.decode_failed``, not a repaired call."""
    if not name:
        col.issue(codes.CALL_MISSING_NAME, "a call has no tool name")
        return
    if not args_text:
        if unclosed:
            col.issue(codes.CALL_TRUNCATED, f"the reply ended inside the call to '{name}'")
            return
        col.add_object({"name": name, "arguments": {}}, name_keys=("name",), where="call")
        return
    col.add_json_call(name, args_text, cut_at_end=unclosed, repair=False)


def _unfence(text: str) -> str:
    """The JSON inside a ```json fence (string operations: a lazy regex is quadratic here)."""
    text = text.strip()
    if text.startswith(FENCE):
        text = text[3:].removeprefix("json")
    if text.endswith(FENCE):
        text = text[:-3]
    return text.strip()
