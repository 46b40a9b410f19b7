"""``llama3-json``: Llama 3.1 / 3.3 JSON tool calls, results in the ``ipython`` role.

The Llama 3.1 chat template (custom tools, ``tools_in_user_message=false`` variant) lists
each tool as indented OpenAI JSON and asks for ``{"name": function name, "parameters":
dictionary of argument name and its value}``; Meta's prompt-format page also documents
``<function=name>{"arg": ...}</function>`` for custom tools, read here too (a missing
``</function>`` after whole JSON reads as repaired). The model may prefix the call with
``<|python_tag|>`` and may write several calls separated by ``;`` (vLLM's
``llama3_json`` parser accepts both). An object counts as a call only with a ``"name"``
and a ``"parameters"`` (or ``"arguments"``) key, so ordinary JSON in an answer stays
text. Results go back as one ``ipython`` message per call, as the template renders them.
"""

from __future__ import annotations

import bisect
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from toolbench import codes
from toolbench.formats.base import Message, NamePattern, ParseResult, ToolCall
from toolbench.formats.dialect import MAX_CALLS, DialectCollector, DialectFormat, NextFinder
from toolbench.formats.jsonscan import TOKEN_BUDGET, Scan, loads_strict, scan_objects
from toolbench.formats.stream_syntax import Region, StreamSyntax, literal, tokens
from toolbench.formats.text import Cutter, split_think, tidy
from toolbench.tools import ToolDef

PYTHON_TAG = "<|python_tag|>"
FUNC = "<function="
FUNC_END = "</function>"
_NAME_KEYS = ("name",)
_ARG_KEYS = ("parameters", "arguments")
_NAMED = re.compile(r'"name"\s*+:')
_ARGS = re.compile(r'"(?:parameters|arguments)"\s*+:')
_SPECIALS = (PYTHON_TAG, "<|eom_id|>", "<|eot_id|>", "<|start_header_id|>", "<|end_header_id|>")
_HALLUCINATED = ("<|start_header_id|>ipython", "ipython<|end_header_id|>")
# The head of a call: "parameters" right after the name. A tool definition echoed into the
# text ({"name": ..., "description": ..., "parameters": ...}) is not a call.
_CALL_HEAD = re.compile(r'\{\s*+"name"\s*+:\s*+"[^"\n]{0,200}+"\s*+,\s*+"parameters"\s*+:')


def call_text(name: str, arguments: dict[str, Any]) -> str:
    return json.dumps({"name": name, "parameters": arguments}, ensure_ascii=False)


def result_text(name: str, result: str) -> str:
    del name
    return result


class Llama3Json(DialectFormat):
    name = "llama3-json"
    test_cases = "test_llama3_json"
    name_patterns = (
        NamePattern(110, "llama", "Llama 3.1 / 3.3 write JSON calls and read results as ipython"),
    )
    template_tokens = (("<|python_tag|>",),)
    template_rank = 100
    conformance_family = "llama3_json"
    leak_rank = 2
    stream = StreamSyntax(
        (
            Region(open=literal(PYTHON_TAG), close_pattern=r"<\|eom_id\|>|<\|eot_id\|>"),
            Region(open=r'\{\s{0,16}"name"\s{0,16}:', close="balanced"),
            Region(open=r"<function=[^<>\n]{1,256}>\s{0,16}\{", close_pattern=literal(FUNC_END)),
            tokens(*_SPECIALS),
        )
    )
    description = (
        'Llama 3.1/3.3: {"name": ..., "parameters": {...}} JSON (optional <|python_tag|>), '
        "results in the ipython role."
    )
    markers = (re.compile(re.escape(PYTHON_TAG)), _CALL_HEAD)
    literal_markers = _SPECIALS
    call_openers = (PYTHON_TAG, FUNC)
    pattern_markers = (_CALL_HEAD,)
    call_text = staticmethod(call_text)
    result_text = staticmethod(result_text)

    def instructions(self, tools: Sequence[ToolDef]) -> str:
        listing = "".join(
            json.dumps(t.openai(), ensure_ascii=False, indent=4) + "\n\n" for t in tools
        )
        return (
            "Environment: ipython\n\n"
            "You have access to the following functions. To call a function, please respond "
            "with JSON for a function call."
            'Respond in the format {"name": function name, "parameters": dictionary of '
            "argument name and its value}."
            "Do not use variables.\n\n"
            f"{listing}"
            "Function results come back in the ipython role. When no function is needed, "
            "or once you have the results, answer in plain text."
        )

    def shot_result_text(self, name: str, result: str) -> str:
        return f"ipython: {result}"

    def result_messages(self, results: Sequence[tuple[ToolCall, str]]) -> list[Message]:
        return [{"role": "ipython", "content": res} for _, res in results]

    def _parse(self, text: str, tools: Sequence[ToolDef] | None) -> ParseResult:
        split = split_think(text, opened_in_prompt=False)
        body = split.text
        col = DialectCollector()
        # No "name" key, no call: skip the object scan (and its cost on hostile text).
        scan = scan_objects(body) if '"name"' in body else Scan()
        cuts = Cutter(body)
        tagged = _function_tags(body) if FUNC in body else []
        found: list[tuple[int, int, _Tagged | None]] = [(t.start, t.end, t) for t in tagged]
        starts = [t.start for t in tagged]
        for span in scan.spans:
            if len(found) >= MAX_CALLS + len(tagged):
                break  # no more calls are read: leave the rest undecoded
            k = bisect.bisect_right(starts, span.start) - 1
            if k >= 0 and span.start < tagged[k].end:
                continue  # the JSON inside a <function=...> tag
            if _is_call(body[span.start : span.end]):
                found.append((span.start, span.end, None))
        for start, end_, tag in sorted(found, key=lambda f: f[0]):
            if col.full():
                break
            if start < cuts.pos:
                continue
            if tag is None:
                chunk = body[start:end_]
                col.add_decoded(col.decode(chunk), name_keys=_NAME_KEYS, where="call")
            else:
                _add_tagged(tag, col)
            cuts.cut(start, end_)
        end = len(body)
        # Open where the scan's budget ran out is not known to be truncated (said below).
        broken = scan.unclosed if scan.stopped is None else None
        if broken is not None and broken >= cuts.pos and _NAMED.search(body, broken):
            col.fail(codes.CALL_TRUNCATED, "the reply ended inside a tool call")
            cuts.cut(broken, end)
        if (unread := scan.unread) is not None and _NAMED.search(body, unread):
            col.fail(codes.CALL_BAD_SHAPE, f"a call after {TOKEN_BUDGET} JSON brackets; not read")
        if not col.attempted and PYTHON_TAG in body:
            col.fail(codes.CALL_BAD_SHAPE, "<|python_tag|> without a JSON call after it")
        cuts.finish()
        # What separates the calls (``;``, a repeated <|python_tag|>) is not text anyone wrote.
        raw = "".join(
            seg if i == len(cuts.kept) - 1 else _drop_separators(seg)
            for i, seg in enumerate(cuts.kept)
        )
        if cuts.last_end is not None:
            col.check_text_after(body[cuts.last_end :].replace(";", ""))
            if any(h in body[cuts.first_start or 0 :] for h in _HALLUCINATED):
                col.signal(codes.STOP_HALLUCINATED_RESULT)
        col.check_tools(tools)
        raw = tidy(_drop_separators(raw) if col.calls else raw)
        return col.result(content=self._clean(raw), raw_content=raw, reasoning=split.reasoning)


_TURN_END = re.compile(r"\s*+(?:<\|eom_id\|>|<\|eot_id\|>)")
_FUNC_HEAD = re.compile(r"<function=([^<>\n]{0,256}+)>(?=\s*+(?:\{|</function>|$))")
"""A ``<function=name>`` tag (name up to 256 characters) followed by a JSON object."""


@dataclass(frozen=True, slots=True)
class _Tagged:
    """One ``<function=name>{json}</function>`` call (Llama 3.1's documented second form)."""

    start: int
    end: int
    name: str
    args: str
    closed: bool
    at_end: bool
    """The call runs to the end of the reply (unclosed): cut off, unless its JSON is whole."""


def _function_tags(body: str) -> list[_Tagged]:
    """Every ``<function=name>...</function>`` in ``body``, in one pass.

    Meta's Llama 3.1 prompt format documents this form for custom tools (the arguments
    as a JSON object between the tags); a missing ``</function>`` ends the call at the
    next ``<function=`` or at the end of the reply. A name tag not followed by a JSON
    object (``use <function=x> tags``) is prose.
    """
    out: list[_Tagged] = []
    ends = NextFinder(body, FUNC_END)
    pos = 0
    while len(out) < MAX_CALLS and (m := _FUNC_HEAD.search(body, pos)) is not None:
        gt = m.end()
        nxt = body.find(FUNC, gt)
        close = ends.at(gt, nxt if nxt >= 0 else None)
        stop = close if close >= 0 else (nxt if nxt >= 0 else len(body))
        end = close + len(FUNC_END) if close >= 0 else stop
        if turn := _TURN_END.match(body, end):  # the end-of-turn token closes the call
            end = turn.end()
        name = m.group(1).strip()
        out.append(_Tagged(m.start(), end, name, body[gt:stop], close >= 0, stop == len(body)))
        pos = max(end, gt)
    return out


def _add_tagged(tag: _Tagged, col: DialectCollector) -> None:
    """Add a tagged call; a missing ``</function>`` after complete JSON reads as repaired."""
    args = tag.args.strip()
    for token in _SPECIALS:
        args = args.removesuffix(token).rstrip()
    if not tag.name:
        col.fail(codes.CALL_MISSING_NAME, "<function=> has no tool name")
        return
    if not args and not tag.closed:
        col.fail(codes.CALL_TRUNCATED, f"the reply ended right after <function={tag.name}>")
        return
    since = len(col.calls)
    col.attempted = True
    col.add_json_call(tag.name, args or "{}", cut_at_end=not tag.closed and tag.at_end)
    if not tag.closed:
        col.lenient(since, f"<function={tag.name}> without </function>, read leniently")


def _is_call(chunk: str) -> bool:
    """A call object: ``"name"`` plus ``"parameters"``/``"arguments"`` at the top level."""
    if not _NAMED.search(chunk) or not _ARGS.search(chunk):
        return False
    got = loads_strict(chunk)
    if not got.ok:
        return True  # broken JSON with the call's keys: an attempt (repair decides)
    value = got.value
    return isinstance(value, dict) and "name" in value and any(k in value for k in _ARG_KEYS)


def _drop_separators(text: str) -> str:
    """``;`` and ``<|python_tag|>`` left around cut-out calls are not text anyone wrote."""
    stripped = text.replace(PYTHON_TAG, "").strip()
    if not stripped.strip(";").strip():
        return ""
    return text
