"""``xml``: Hermes/Qwen-style tags, the layout many open models were trained on.

Tools are listed as JSON inside ``<tools>...</tools>`` in the system prompt; calls come
back as ``<tool_call>{"name": ..., "arguments": {...}}</tool_call>`` (several allowed) and
results go back in a user message as ``<tool_response>...</tool_response>`` blocks. The
parser follows the reference parsers (vLLM ``hermes``, llama.cpp): a reply cut off after
complete JSON but before ``</tool_call>`` still counts (a stop sequence may have eaten the
tag); JSON cut off mid-way is ``call.truncated`` and yields no call.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from toolbench import codes
from toolbench.formats.base import ParseResult
from toolbench.formats.calls import CallCollector
from toolbench.formats.jsonscan import decode, loads_strict, scan_objects
from toolbench.formats.prompted import PromptedFormat
from toolbench.formats.registry import register_format
from toolbench.formats.text import Cutter, split_think, strip_markers, tidy
from toolbench.tools import ToolDef

OPEN = "<tool_call>"
CLOSE = "</tool_call>"
RESP_OPEN = "<tool_response>"
RESP_CLOSE = "</tool_response>"
_TAGS = (OPEN, CLOSE, RESP_OPEN, RESP_CLOSE, "<tools>", "</tools>")
_NAME_KEYS = ("name", "tool", "function")


def call_text(name: str, arguments: dict[str, Any]) -> str:
    body = json.dumps({"name": name, "arguments": arguments}, ensure_ascii=False)
    return f"{OPEN}\n{body}\n{CLOSE}"


def result_text(name: str, result: str) -> str:
    del name
    return f"{RESP_OPEN}\n{result}\n{RESP_CLOSE}"


@register_format
class Xml(PromptedFormat):
    name = "xml"
    description = "Hermes/Qwen style: <tools> JSON in the system prompt, <tool_call> JSON tags."
    markers = tuple(re.compile(re.escape(t)) for t in (OPEN, CLOSE, RESP_OPEN, "<tools>"))
    stop_sequences = (RESP_OPEN,)
    call_text = staticmethod(call_text)
    result_text = staticmethod(result_text)

    def instructions(self, tools: Sequence[ToolDef]) -> str:
        listing = "\n".join(json.dumps(t.openai(), ensure_ascii=False) for t in tools)
        return (
            "# Tools\n\n"
            "You may call one or more functions to assist with the user query.\n\n"
            "You are provided with function signatures within <tools></tools> XML tags:\n"
            f"<tools>\n{listing}\n</tools>\n\n"
            "For each function call, return a json object with function name and arguments "
            "within <tool_call></tool_call> XML tags:\n"
            f'{OPEN}\n{{"name": <function-name>, "arguments": <args-json-object>}}\n{CLOSE}\n\n'
            "After your calls, stop: the results come back inside "
            "<tool_response></tool_response> tags. When no function is needed, or once you "
            "have the results, answer in plain text."
        )

    def _parse(self, text: str, tools: Sequence[ToolDef] | None) -> ParseResult:
        split = split_think(text)
        body = split.text
        col = CallCollector()
        cuts = Cutter(body)
        while (i := body.find(OPEN, cuts.pos)) >= 0:
            start = i + len(OPEN)
            j = body.find(CLOSE, start)
            closed = j >= 0
            end = j if closed else len(body)
            self._read_call(body, start, end, closed, col)
            cuts.cut(i, end + len(CLOSE) if closed else len(body))
        raw = cuts.finish()
        if cuts.last_end is not None:
            col.check_text_after(body[cuts.last_end :])
        if cuts.first_start is not None and RESP_OPEN in body[cuts.first_start :]:
            col.signal(codes.STOP_HALLUCINATED_RESULT)
        col.check_tools(tools)
        return col.result(
            content=self._clean(raw), raw_content=tidy(raw), reasoning=split.reasoning
        )

    def _read_call(self, body: str, start: int, end: int, closed: bool, col: CallCollector) -> None:
        inner = body[start:end].strip()
        if inner.startswith("```"):  # a fence inside the tags
            inner = inner.strip("`").removeprefix("json").strip()
        if not inner:
            if closed:
                col.fail(codes.CALL_BAD_SHAPE, "empty <tool_call> block")
            else:
                col.fail(codes.CALL_TRUNCATED, "the reply ended inside <tool_call>")
            return
        strict = loads_strict(inner)
        if strict.ok:
            col.add_decoded(strict, name_keys=_NAME_KEYS, where="<tool_call>")
            return
        scan = scan_objects(inner)
        if scan.spans and scan.unclosed is None:
            for span in scan.spans:
                col.add_json(
                    inner[span.start : span.end], name_keys=_NAME_KEYS, where="<tool_call>"
                )
            return
        if not closed and (scan.unclosed is not None or not scan.spans):
            col.fail(codes.CALL_TRUNCATED, "the reply ended inside <tool_call>")
            return
        col.add_decoded(decode(inner), name_keys=_NAME_KEYS, where="<tool_call>")

    def _clean(self, text: str) -> str:
        return strip_markers(_drop_blocks(text), _TAGS)


def _drop_blocks(text: str) -> str:
    """Cut ``<tool_call>``/``<tool_response>`` blocks (unclosed ones to the end)."""
    for open_tag, close_tag in ((OPEN, CLOSE), (RESP_OPEN, RESP_CLOSE)):
        if open_tag not in text:
            continue
        cuts = Cutter(text)
        while (i := text.find(open_tag, cuts.pos)) >= 0:
            j = text.find(close_tag, i + len(open_tag))
            cuts.cut(i, len(text) if j < 0 else j + len(close_tag))
        text = cuts.finish()
    return text
