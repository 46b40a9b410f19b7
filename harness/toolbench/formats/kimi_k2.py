"""``kimi-k2``: Kimi K2's ``<|tool_calls_section_begin|>`` sections of ``functions.name:0`` calls.

A call is ``<|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>{json}
<|tool_call_end|>`` inside ``<|tool_calls_section_begin|>...<|tool_calls_section_end|>``;
the id's ``functions.`` prefix and ``:index`` suffix frame the tool name (vLLM's
``kimi_k2`` parser and llama.cpp also accept a bare ``name:0``, and calls whose end tokens
were cut off). Kimi K3's ``<|open|>call tool="..."`` form is read as well. The prompt puts
the tools as JSON the way the template's ``tool_declare`` message does; results go back
as ``## Return of <call id>`` sections, as the template renders ``tool`` messages.
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
    close_think_before,
    drop_block,
    strip_dialect_markers,
    tools_json,
)
from toolbench.formats.schema_values import convert_value, param_schema
from toolbench.formats.stream_syntax import Region, StreamSyntax, literal, tag, tokens
from toolbench.formats.text import Cutter, split_think, tidy
from toolbench.tools import ToolDef

SECTION = "<|tool_calls_section_begin|>"
SECTION_END = "<|tool_calls_section_end|>"
CALL = "<|tool_call_begin|>"
ARGS = "<|tool_call_argument_begin|>"
CALL_END = "<|tool_call_end|>"
SECTION_ALIASES = (
    ("<|tool_call_section_begin|>", SECTION),
    ("<|tool_call_section_end|>", SECTION_END),
)
"""The singular spelling of the section tokens, which some Kimi K2 servers emit (Dynamo
lists it beside the plural): the same token, read as it."""
K3_THINK_END = "<|close|>think<|sep|>"
K3_CALL = re.compile(r'<\|open\|>call tool="([^"\n]*+)"[^<\n]*+<\|sep\|>')
K3_ARG = re.compile(r'<\|open\|>argument key="([^"\n]*+)"(?: type="([^"\n]*+)")?[^<\n]*+<\|sep\|>')
K3_ARG_END = "<|close|>argument<|sep|>"
K3_CALL_END = "<|close|>call<|sep|>"
_K3_TOKENS = (
    "<|open|>response<|sep|>", "<|close|>response<|sep|>", "<|open|>tools<|sep|>",
    "<|close|>tools<|sep|>", "<|close|>message<|sep|>", K3_CALL_END, K3_ARG_END, K3_THINK_END,
)  # fmt: skip
_SPECIALS = (
    SECTION, SECTION_END, CALL, ARGS, CALL_END, *(a for a, _ in SECTION_ALIASES),
    "<|im_end|>", "<|im_system|>", "<|im_middle|>", "<|im_user|>", "<|im_assistant|>",
    *_K3_TOKENS,
)  # fmt: skip


def call_text(name: str, arguments: dict[str, Any]) -> str:
    args = json.dumps(arguments, ensure_ascii=False)
    return f"{SECTION}{CALL}functions.{name}:0{ARGS}{args}{CALL_END}{SECTION_END}"


def result_text(name: str, result: str) -> str:
    return f"## Return of functions.{name}:0\n{result}"


class KimiK2(DialectFormat):
    name = "kimi-k2"
    test_cases = "test_kimi_k2"
    name_patterns = (
        NamePattern(90, "kimi|moonshot", "Kimi writes <|tool_calls_section_begin|> sections"),
    )
    template_tokens = (("tool_calls_section_begin",),)
    template_rank = 30
    conformance_family = "kimi"
    leak_rank = 6
    stream = StreamSyntax(
        (
            tag(SECTION, SECTION_END),
            tag(CALL, CALL_END),
            Region(open=literal("<|open|>call tool="), close_pattern=literal(K3_CALL_END)),
            tokens(*_SPECIALS),
        )
    )
    description = "Kimi K2: <|tool_calls_section_begin|> sections of functions.name:0 calls."
    markers = tuple(re.compile(re.escape(t)) for t in (SECTION, CALL, ARGS, CALL_END))
    literal_markers = _SPECIALS
    call_openers = (SECTION, CALL, '<|open|>call tool="')
    pattern_markers = (K3_CALL, K3_ARG)
    result_separator = "\n\n"
    call_text = staticmethod(call_text)
    result_text = staticmethod(result_text)

    def instructions(self, tools: Sequence[ToolDef]) -> str:
        return (
            f"# Tools (tool_declare)\n\n{tools_json(tools)}\n\n"
            "To call tools, write a section like this (one <|tool_call_begin|> ... "
            "<|tool_call_end|> per call, numbered from 0):\n"
            f"{SECTION}{CALL}functions.<tool name>:0{ARGS}"
            '{"argument": "value"}'
            f"{CALL_END}{SECTION_END}\n"
            "After your calls, stop: each result comes back as '## Return of <call id>' "
            "followed by the result. When no tool is needed, or once you have the results, "
            "answer in plain text."
        )

    def result_block(self, call: ToolCall, result: str, index: int) -> str:
        call_id = call.id or f"functions.{call.name}:{index}"
        return f"## Return of {call_id}\n{result}"

    def _parse(self, text: str, tools: Sequence[ToolDef] | None) -> ParseResult:
        for alias, token in SECTION_ALIASES:
            if alias in text:
                text = text.replace(alias, token)
        text = close_think_before(text, (SECTION, CALL))
        k3 = text.find(K3_THINK_END)
        k3_reasoning = None
        if k3 >= 0 and "<think>" not in text[:k3]:
            k3_reasoning, text = text[:k3].strip(), text[k3 + len(K3_THINK_END) :]
        split = split_think(text, opened_in_prompt=False)
        body = split.text
        col = DialectCollector()
        cuts = Cutter(body)
        if CALL in body:
            _read_k2(body, tools, col, cuts)
        if "<|open|>call" in body:
            _read_k3(body, tools, col, cuts)
        if not col.attempted and SECTION in body:
            col.fail(codes.CALL_BAD_SHAPE, "an empty tool-call section")
        elif not col.attempted and (ARGS in body or CALL_END in body):
            col.fail(codes.CALL_BAD_SHAPE, "call tokens without <|tool_call_begin|>")
        raw = cuts.finish()
        if cuts.last_end is not None:
            col.check_text_after(strip_dialect_markers(body[cuts.last_end :], _SPECIALS))
            if "## Return of" in body[cuts.first_start or 0 :]:
                col.signal(codes.STOP_HALLUCINATED_RESULT)
        col.check_tools(tools)
        raw = tidy(drop_block(raw, "## Return of", "\x00") if col.calls else raw)
        reasoning = split.reasoning if k3_reasoning is None else k3_reasoning
        return col.result(content=self._clean(raw), raw_content=raw, reasoning=reasoning)


def _read_k2(
    body: str, tools: Sequence[ToolDef] | None, col: DialectCollector, cuts: Cutter
) -> None:
    args_find = NextFinder(body, ARGS)
    end_find = NextFinder(body, CALL_END)
    pos = 0
    doubled = False
    while (b := body.find(CALL, pos)) >= 0 and not col.full():
        col.attempted = True
        nxt = body.find(CALL, b + len(CALL))
        start = b
        sec = body.rfind(SECTION, cuts.pos, b)
        if sec >= 0 and not body[sec + len(SECTION) : b].strip():
            start = sec
        if nxt >= 0 and not body[b + len(CALL) : nxt].strip():  # a doubled token
            doubled = True
            cuts.cut(max(start, cuts.pos), nxt)
            pos = nxt
            continue
        limit = body.find(SECTION_END, b, nxt if nxt >= 0 else len(body))
        if limit < 0:
            limit = nxt if nxt >= 0 else len(body)
        e = end_find.at(b, limit)
        inner_end = e if e >= 0 else limit
        a = args_find.at(b, inner_end)
        if a < 0:
            code = codes.CALL_BAD_SHAPE if e >= 0 else codes.CALL_TRUNCATED
            col.issue(code, "a call without <|tool_call_argument_begin|>")
        else:
            args_text = body[a + len(ARGS) : inner_end]
            before = len(col.calls)
            at_end = e < 0 and limit == len(body)
            _read_call(body[b + len(CALL) : a], args_text, at_end, tools, col)
            if doubled:
                col.lenient(before, f"doubled {CALL}, read leniently")
                doubled = False
        end = e + len(CALL_END) if e >= 0 else inner_end
        k = end
        while k < len(body) and body[k].isspace():
            k += 1
        if body.startswith(SECTION_END, k):
            end = k + len(SECTION_END)
        cuts.cut(max(start, cuts.pos), end)
        pos = max(end, b + len(CALL))


def _read_call(
    call_id: str,
    args_text: str,
    at_end: bool,
    tools: Sequence[ToolDef] | None,
    col: DialectCollector,
) -> None:
    """One call; ``at_end``: it has no end token and runs to the end of the reply.

    The call id is ``functions.NAME:INDEX`` (the ``functions.`` prefix optional): the tool
    name is everything between them, dots and colons included (``functions.math.gcd:0``
    is ``math.gcd``). An id that is only a counter (``functions.0``, ``3``, ``:0``) names
    no tool: ``call.missing_name``, never a call named ``0``, and no name is guessed from
    the arguments. An id without its ``:INDEX`` (``get_weather``, ``call_3``, a UUID,
    ``name:abc``) is not the template's syntax: it is read only when it is exactly a tool
    the request offered (``repaired``, ``call.lenient``), else ``call.bad_shape``.
    """
    written = call_id.strip()
    name, indexed = _split_id(written)
    if not any(ch.isalnum() for ch in name) or name.isdigit():
        col.issue(codes.CALL_MISSING_NAME, f"call id {written[:60]!r} names no tool")
        return
    offered = any(t.name == name for t in tools or ())
    if not indexed and not offered:
        col.issue(codes.CALL_BAD_SHAPE, f"call id {written[:60]!r} is not functions.name:index")
        return
    args_text = args_text.strip()
    if not args_text:
        col.issue(codes.CALL_TRUNCATED, f"the call to '{name}' has no arguments")
        return
    since = len(col.calls)
    col.add_json_call(name, args_text, cut_at_end=at_end, call_id=written)
    if not indexed and len(col.calls) > since:
        col.calls[-1].repaired = True
        col.issue(codes.CALL_LENIENT, f"call id {written[:60]!r} has no :index")


def _split_id(written: str) -> tuple[str, bool]:
    """``(name, whether a :INDEX counter ended the id)`` for a call id as written."""
    rest = written.removeprefix("functions.")
    name, colon, index = rest.rpartition(":")
    if colon and index.isascii() and index.isdigit():
        return name, True
    return rest, False


def _read_k3(
    body: str, tools: Sequence[ToolDef] | None, col: DialectCollector, cuts: Cutter
) -> None:
    """Kimi K3: ``<|open|>call tool="n"<|sep|>`` with typed ``argument`` elements."""
    end_find = NextFinder(body, K3_CALL_END)
    arg_end = NextFinder(body, K3_ARG_END)
    pos = cuts.pos
    while not col.full() and (m := K3_CALL.search(body, pos)) is not None:
        col.attempted = True
        nxt = K3_CALL.search(body, m.end())
        limit = nxt.start() if nxt else len(body)
        e = end_find.at(m.end(), limit)
        inner_end = e if e >= 0 else limit
        args: dict[str, Any] = {}
        apos = m.end()
        while (a := K3_ARG.search(body, apos, inner_end)) is not None:
            ae = arg_end.at(a.end(), inner_end)
            vend = ae if ae >= 0 else inner_end
            raw = body[a.end() : vend]
            kind = a.group(2)
            key = a.group(1)
            if kind == "string":
                args[key] = raw
            else:
                args[key] = convert_value(raw, param_schema(tools, m.group(1), key))
            apos = ae + len(K3_ARG_END) if ae >= 0 else inner_end
        name = m.group(1).strip()
        if name:
            col.calls.append(ToolCall(name=name, arguments=args, repaired=e < 0))
            if e < 0:
                col.issue(codes.JSON_REPAIRED, f"call '{name}' is not closed, read leniently")
        else:
            col.issue(codes.CALL_MISSING_NAME, "a K3 call names no tool")
        end = e + len(K3_CALL_END) if e >= 0 else inner_end
        cuts.cut(max(m.start(), cuts.pos), end)
        pos = end
