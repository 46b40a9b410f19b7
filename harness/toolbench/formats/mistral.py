"""``mistral``: Mistral's ``[TOOL_CALLS]`` calls, tools in ``[AVAILABLE_TOOLS]``, results in
``[TOOL_RESULTS]``.

Two generations of the syntax are read (vLLM's ``mistral`` parser and llama.cpp accept both):

* v3 (Mistral 7B v0.3, Nemo): ``[TOOL_CALLS] [{"name": ..., "arguments": {...}}, ...]``,
  one JSON value after the token;
* v11+ (Small 3.2, Devstral, Magistral, Ministral 3): ``[TOOL_CALLS]name[ARGS]{...}``,
  optionally ``[CALL_ID]id`` before ``[ARGS]``, also ``name{...}`` and a bare ``name`` for a
  tool without arguments; several calls repeat the token.

The prompt describes the tools and the v11 syntax, as Mistral Small 3.2's template does, and
results go back as ``[TOOL_RESULTS]id[TOOL_CONTENT]result[/TOOL_RESULTS]``. A call whose
name is missing (``[TOOL_CALLS]{...}`` with only arguments) is read as the reference does
(an attempt) and reported ``call.missing_name``. ``[THINK]...[/THINK]`` is reasoning.

Two slips around a call are read past rather than shown: ``[/TOOL_CALLS]`` after the calls
(the closing token Ollama's Mistral template and other servers write; Mistral's own
tokenizer has none) ends the call list and is never visible text; a ``}`` or ``]`` right
after a call's JSON that closes nothing (``{"city": "Paris"}}``) belongs to the call, which
is then ``repaired``, and the calls after it are still read.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from toolbench import codes
from toolbench.formats.base import NamePattern, ParseResult, ToolCall
from toolbench.formats.call_objects import CallCollector
from toolbench.formats.dialect import (
    DialectCollector,
    DialectFormat,
    drop_block,
    skip_space,
    tools_json,
)
from toolbench.formats.jsonscan import Decoded, scan_objects
from toolbench.formats.stream_syntax import StreamSyntax, to_end, tokens
from toolbench.formats.text import Cutter, split_think, tidy
from toolbench.tools import ToolDef

CALLS = "[TOOL_CALLS]"
CALLS_END = "[/TOOL_CALLS]"
ARGS = "[ARGS]"
CALL_ID = "[CALL_ID]"
RESULTS = "[TOOL_RESULTS]"
CONTENT = "[TOOL_CONTENT]"
RESULTS_END = "[/TOOL_RESULTS]"
THINK = "[THINK]"
THINK_END = "[/THINK]"
_SPECIALS = (
    CALLS, CALLS_END, ARGS, CALL_ID, RESULTS, CONTENT, RESULTS_END, THINK, THINK_END,
    "[AVAILABLE_TOOLS]", "[/AVAILABLE_TOOLS]", "[INST]", "[/INST]",
)  # fmt: skip
_NAME = re.compile(r"[^\W\d][\w.\-/:]*+")
"""A tool name: a letter or ``_``, then word characters, dots, hyphens, slashes and colons
(MCP and OpenAPI names such as ``github.create_issue``, ``fs/read_file``)."""
_OVERCLOSED = re.compile(r"\s*+[}\]]++")
"""Closing brackets right after a call's JSON value, which closed nothing."""
_ID = re.compile(r"[A-Za-z0-9_\-]*+")
_DECODER = json.JSONDecoder()


def call_text(name: str, arguments: dict[str, Any]) -> str:
    return f"{CALLS}{name}{ARGS}{json.dumps(arguments, ensure_ascii=False)}"


def result_text(name: str, result: str) -> str:
    return f"{RESULTS}{name}{CONTENT}{result}{RESULTS_END}"


class Mistral(DialectFormat):
    name = "mistral"
    test_cases = "test_mistral"
    name_patterns = (
        NamePattern(
            120,
            "mistral|mixtral|ministral|magistral|devstral|codestral|pixtral|nemo",
            "Mistral models write [TOOL_CALLS]",
        ),
    )
    template_tokens = (("[TOOL_CALLS]",),)
    template_rank = 50
    conformance_family = "mistral"
    leak_rank = 1
    stream = StreamSyntax((to_end(CALLS), tokens(*_SPECIALS)))
    description = (
        "Mistral: [AVAILABLE_TOOLS] in the prompt, [TOOL_CALLS]name[ARGS]{...} (v11) "
        "or [TOOL_CALLS] [...] (v3), results in [TOOL_RESULTS]."
    )
    markers = tuple(re.compile(re.escape(t)) for t in (CALLS, ARGS, CALL_ID, RESULTS, CONTENT))
    literal_markers = _SPECIALS
    call_openers = (CALLS,)
    stop_sequences = (RESULTS,)
    call_text = staticmethod(call_text)
    result_text = staticmethod(result_text)

    def instructions(self, tools: Sequence[ToolDef]) -> str:
        return (
            f"[AVAILABLE_TOOLS]{tools_json(tools)}[/AVAILABLE_TOOLS]\n\n"
            "To call a tool, write [TOOL_CALLS] followed by the tool name, then [ARGS] "
            "followed by the arguments as a JSON object, for example:\n"
            '[TOOL_CALLS]tool_name[ARGS]{"argument": "value"}\n'
            "Repeat [TOOL_CALLS] for each further call. After your calls, stop: each result "
            "comes back as [TOOL_RESULTS]name[TOOL_CONTENT]result[/TOOL_RESULTS]. When no "
            "tool is needed, or once you have the results, answer in plain text."
        )

    def result_block(self, call: ToolCall, result: str, index: int) -> str:
        return result_text(call.id or call.name, result)

    def _parse(self, text: str, tools: Sequence[ToolDef] | None) -> ParseResult:
        split = _split_reasoning(text)
        body = split[0]
        col = DialectCollector()
        cuts = Cutter(body)
        i = body.find(CALLS)
        if i >= 0:
            end = _read_calls(body, i, col)
            cuts.cut(i, end)
            if col.calls:
                col.check_text_after(body[end:])
            if RESULTS in body[i:]:
                col.signal(codes.STOP_HALLUCINATED_RESULT)
        raw = tidy(drop_block(cuts.finish(), RESULTS, RESULTS_END))
        col.check_tools(tools)
        return col.result(content=self._clean(raw), raw_content=raw, reasoning=split[1])


def _split_reasoning(text: str) -> tuple[str, str | None]:
    """Take out ``[THINK]...[/THINK]`` (Magistral, Ministral Reasoning) and think blocks.

    Mistral's rule for an unpaired tag: ``[/THINK]`` without a ``[THINK]`` before it ends
    a block whose opening token the reply does not show (a server that drops special
    tokens, or a prompt that opened it), so what precedes it is reasoning; an unclosed
    ``[THINK]`` runs to the end of the reply. No Mistral template opens a ``<think>``
    block, so a stray ``</think>`` is only a marker and the text before it stays visible.
    """
    thoughts: list[str] = []
    i = text.find(THINK)
    j = text.find(THINK_END)
    if j >= 0 and (i < 0 or j < i):  # closed but never opened
        thoughts.append(text[:j])
        text = text[j + len(THINK_END) :]
        i = text.find(THINK)
    if i >= 0:
        j = text.find(THINK_END, i)
        if j < 0:
            thoughts.append(text[i + len(THINK) :])
            text = text[:i]
        else:
            thoughts.append(text[i + len(THINK) : j])
            text = text[:i] + text[j + len(THINK_END) :]
    split = split_think(text, opened_in_prompt=False)
    if split.reasoning:
        thoughts.append(split.reasoning)
    reasoning = "\n".join(t.strip() for t in thoughts if t.strip())
    return split.text, (reasoning if thoughts or split.reasoning is not None else None)


def _read_calls(body: str, i: int, col: DialectCollector) -> int:
    """Read the calls from the first ``[TOOL_CALLS]`` on; return where they end."""
    pos = i
    while True:
        pos += len(CALLS)
        pos = skip_space(body, pos)
        doubled = body.startswith(CALLS, pos)
        while body.startswith(CALLS, pos):  # a doubled token: read on, but not strictly
            pos = skip_space(body, pos + len(CALLS))
        if col.full():
            return pos
        before = len(col.calls)
        pos, more = _read_one(body, pos, col)
        if doubled:
            col.lenient(before, f"doubled {CALLS}, read leniently")
        read = len(col.calls) > before and body[pos - 1] in "}]"
        extra = _OVERCLOSED.match(body, pos) if read else None
        if extra is not None:  # {"city": "x"}} : the JSON closed one bracket too many
            pos = extra.end()
            col.lenient(before, "a closing bracket after the call's JSON closes nothing")
        nxt = skip_space(body, pos)
        if body.startswith(CALLS_END, nxt):  # the list's closing token, where it is written
            pos = nxt + len(CALLS_END)
            nxt = skip_space(body, pos)
        if not more or not body.startswith(CALLS, nxt):
            return pos
        pos = nxt


def _read_one(body: str, pos: int, col: DialectCollector) -> tuple[int, bool]:
    """One call unit after ``[TOOL_CALLS]``; returns its end and whether more may follow."""
    if body.startswith(ARGS, pos):
        return _read_args(body, pos + len(ARGS), "", None, col), True
    if body.startswith("[", pos):
        return _read_v3(body, pos, col), False
    if body.startswith("{", pos):
        got, end = _decode_at(body, pos, col)
        value = got.value if got.ok else None
        if isinstance(value, dict) and "name" in value:
            if got.repaired and not _name_quoted(value, body[pos:end]):
                col.fail(codes.CALL_MISSING_NAME, f"{CALLS}: the name is a bare word, not a string")
                return end, True
            col.add_decoded(got, name_keys=("name",), where=CALLS)
            return end, True
        return _read_args(body, pos, "", None, col), True
    m = _NAME.match(body, pos)
    if m is not None:
        name, p = m.group(), m.end()
        call_id = None
        if body.startswith(CALL_ID, p):
            idm = _ID.match(body, p + len(CALL_ID))
            call_id = idm.group() if idm else None
            p = idm.end() if idm else p + len(CALL_ID)
        if body.startswith(ARGS, p):
            return _read_args(body, p + len(ARGS), name, call_id, col), True
        if body.startswith("{", p):
            return _read_args(body, p, name, call_id, col), True
        rest = skip_space(body, p)
        tail = body[p : p + len(CALL_ID)]  # never the whole rest: that is quadratic
        cut_short = 0 < len(body) - p < len(CALL_ID)
        if cut_short and (ARGS.startswith(tail) or CALL_ID.startswith(tail)):
            col.fail(codes.CALL_TRUNCATED, f"the reply ended inside the call to '{name}'")
            return len(body), False
        if rest == len(body) or body.startswith(CALLS, rest):  # a tool without arguments
            col.calls.append(ToolCall(name=name, arguments={}, id=call_id))
            col.attempted = True
            return p, True
    return _read_v3(body, pos, col), False


def _read_v3(body: str, pos: int, col: DialectCollector) -> int:
    """v3: the first JSON value after the token (prose before it is skipped, as vLLM does)."""
    starts = [j for j in (body.find("[", pos), body.find("{", pos)) if j >= 0]
    nxt = body.find(CALLS, pos)
    limit = len(body) if nxt < 0 else nxt
    if not starts or min(starts) >= limit:
        col.fail(codes.CALL_BAD_SHAPE, "[TOOL_CALLS] not followed by a call")
        return pos
    start = min(starts)
    got, end = _decode_at(body, start, col)
    if not got.ok:
        col.fail(codes.JSON_DECODE_FAILED, "[TOOL_CALLS]: invalid JSON")
        return pos
    items = got.value if isinstance(got.value, list) else [got.value]
    probe = CallCollector()
    bare = 0
    for item in items:
        if got.repaired and isinstance(item, dict) and not _name_quoted(item, body[start:end]):
            bare += 1  # repair turned a bare word into a string: that is no name
        elif isinstance(item, dict):
            probe.add_object(item, name_keys=("name",), where=CALLS, repaired=got.repaired)
    nameless = any(isinstance(x, dict) and not x.get("name") and _has_args(x) for x in items)
    if bare:
        col.fail(codes.CALL_MISSING_NAME, f"{CALLS}: {bare} name(s) written as a bare word")
    if not probe.calls and not nameless:
        if not bare:
            col.fail(codes.CALL_BAD_SHAPE, "[TOOL_CALLS] is followed by JSON that holds no call")
        return end if bare else pos
    if got.repaired:
        col.issue(codes.JSON_REPAIRED, "[TOOL_CALLS]: invalid JSON, decoded only after repair")
    col.calls.extend(probe.calls)
    col.errors.extend(e for e in probe.errors if e.code != codes.CALL_MISSING_NAME)
    col.flat.extend(probe.flat)
    col.attempted = True
    if nameless:
        col.issue(codes.CALL_MISSING_NAME, f"{CALLS}: a call has no tool name")
    return end


def _name_quoted(item: dict[str, Any], src: str) -> bool:
    """Whether the call's name was written as a string in ``src`` (before any repair).

    JSON repair turns ``{"name": invalid}`` into the string ``"invalid"``; a bare word is
    not a name the model gave, so a repaired call keeps its name only if it was quoted.
    """
    name = item.get("name")
    if not isinstance(name, str):
        return True  # no string name: the collector reports it as it does today
    inner = json.dumps(name, ensure_ascii=False)[1:-1]
    return f'"{inner}"' in src or f"'{name}'" in src


def _has_args(item: dict[str, Any]) -> bool:
    return "arguments" in item or "parameters" in item


def _read_args(body: str, pos: int, name: str, call_id: str | None, col: DialectCollector) -> int:
    """The JSON arguments of a v11 call starting at ``pos``."""
    col.attempted = True
    pos = skip_space(body, pos)
    if not body.startswith("{", pos):
        try:
            value, end = _DECODER.raw_decode(body, pos)
        except (ValueError, RecursionError):
            value, end = ..., pos
        if name and (value is None or value == "null"):
            # ``null`` or the string "null" for a tool without parameters: read as {},
            # as every format does, and noted on the call.
            col.calls.append(ToolCall(name=name, arguments={}, id=call_id, notes=[codes.ARGS_NULL]))
            return end
        col.issue(codes.ARGS_NOT_OBJECT, f"{CALLS}{name}: arguments are not a JSON object")
        return end
    if _unclosed_at_end(body, pos):
        col.issue(codes.CALL_TRUNCATED, f"the reply ended inside the arguments of '{name}'")
        return len(body)
    got, end = _decode_at(body, pos, col)
    if not got.ok:
        col.issue(
            codes.JSON_DECODE_FAILED, f"{CALLS}{name}: invalid JSON that repair could not fix"
        )
        return end
    if not isinstance(got.value, dict):
        col.issue(codes.ARGS_NOT_OBJECT, f"{CALLS}{name}: arguments are not a JSON object")
        return end
    if not name:
        col.issue(codes.CALL_MISSING_NAME, f"{CALLS}: the call has no tool name")
        return end
    if got.repaired:
        col.issue(codes.JSON_REPAIRED, f"{CALLS}{name}: invalid JSON, decoded only after repair")
    col.calls.append(ToolCall(name=name, arguments=got.value, id=call_id, repaired=got.repaired))
    return end


def _decode_at(body: str, pos: int, col: DialectCollector) -> tuple[Decoded, int]:
    """Decode the JSON value at ``pos``: strict first, then repair up to the next token."""
    try:
        value, end = _DECODER.raw_decode(body, pos)
        return Decoded(value, ok=True), end
    except (ValueError, RecursionError):
        pass
    nxt = body.find(CALLS, pos + 1)
    limit = len(body) if nxt < 0 else nxt
    if body.startswith("{", pos):
        scan = scan_objects(body, pos, limit)
        if scan.spans and scan.spans[0].start == pos:
            limit = scan.spans[0].end
    got = col.decode(body[pos:limit])
    if got.ok and not got.repaired:  # strict inside the span
        return got, limit
    if got.ok and isinstance(got.value, str):
        return Decoded(), limit
    return got, limit


def _unclosed_at_end(body: str, pos: int) -> bool:
    """Whether the object opened at ``pos`` is still open where the reply ends."""
    if body.find(CALLS, pos) >= 0:
        return False
    scan = scan_objects(body, pos)
    return scan.unclosed == pos and not any(sp.start == pos for sp in scan.spans)
