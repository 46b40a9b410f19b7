"""``llama3-json``: Llama 3.1 / 3.3 JSON tool calls, results in the ``ipython`` role.

The Llama 3.1 chat template (custom tools, ``tools_in_user_message=false`` variant) lists
each tool as indented OpenAI JSON and asks for ``{"name": function name, "parameters":
dictionary of argument name and its value}``. The model may prefix the call with
``<|python_tag|>`` and may write several calls separated by ``;`` (vLLM's
``llama3_json`` parser accepts both). An object counts as a call only with a ``"name"``
and a ``"parameters"`` (or ``"arguments"``) key, so ordinary JSON in an answer stays
text. Results go back as one ``ipython`` message per call, as the template renders them.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from toolbench import codes
from toolbench.formats.base import Message, ParseResult, ToolCall
from toolbench.formats.dialect import DialectCollector, DialectFormat
from toolbench.formats.jsonscan import Scan, loads_strict, scan_objects
from toolbench.formats.streamsyntax import Region, StreamSyntax, literal, tokens
from toolbench.formats.text import Cutter, split_think, tidy
from toolbench.tools import ToolDef

PYTHON_TAG = "<|python_tag|>"
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
    stream = StreamSyntax(
        (
            Region(open=literal(PYTHON_TAG), close_pattern=r"<\|eom_id\|>|<\|eot_id\|>"),
            Region(open=r'\{\s{0,16}"name"\s{0,16}:', close="balanced"),
            tokens(*_SPECIALS),
        )
    )
    description = (
        'Llama 3.1/3.3: {"name": ..., "parameters": {...}} JSON (optional <|python_tag|>), '
        "results in the ipython role."
    )
    markers = (re.compile(re.escape(PYTHON_TAG)), _CALL_HEAD)
    literal_markers = _SPECIALS
    call_openers = (PYTHON_TAG,)
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
        split = split_think(text)
        body = split.text
        col = DialectCollector()
        # No "name" key, no call: skip the object scan (and its cost on hostile text).
        scan = scan_objects(body) if '"name"' in body else Scan()
        cuts = Cutter(body)
        for span in scan.spans:
            if col.full():
                break
            chunk = body[span.start : span.end]
            if not _is_call(chunk):
                continue
            col.add_decoded(col.decode(chunk), name_keys=_NAME_KEYS, where="call")
            cuts.cut(span.start, span.end)
        end = len(body)
        broken = scan.unclosed
        if broken is not None and broken >= cuts.pos and _NAMED.search(body, broken):
            col.fail(codes.CALL_TRUNCATED, "the reply ended inside a tool call")
            cuts.cut(broken, end)
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
