"""``xml``: Hermes/Qwen-style tags, the layout many open models were trained on.

Tools are listed as JSON inside ``<tools>...</tools>`` in the system prompt; calls come
back as ``<tool_call>{"name": ..., "arguments": {...}}</tool_call>`` (several allowed) and
results go back in a user message as ``<tool_response>...</tool_response>`` blocks. The
parser follows the reference parsers (vLLM ``hermes``, llama.cpp): a reply cut off after
complete JSON but before ``</tool_call>`` still counts (a stop sequence may have eaten the
tag); JSON cut off mid-way is ``call.truncated`` and yields no call.

A call's payload ends where its JSON ends (:mod:`toolbench.formats.tagged`): a
``</tool_call>`` inside a JSON string does not end it, and whatever follows an unclosed
call (prose, chat tokens, an invented ``<tool_response>``) is text after the call,
exactly as if the tag had been there. Readings that need leniency (several objects or
prose inside one block, a doubled or missing tag, a JSON list, a call whose opening tag
is missing before its ``</tool_call>``, a ``</tool_call>`` that closes no block) are
``repaired`` with code ``call.lenient``, and a reply in which one block failed to decode
is not strict. An unclosed ``<tool_call>``
followed by prose is ``call.stray_tag`` (the prose stays visible), not a truncated call.
At most :data:`~toolbench.formats.dialect.MAX_CALLS` call blocks are read per reply, as
in the dialects; from the next block on the reply is not read (nor shown as content).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from toolbench import codes
from toolbench.formats.base import NamePattern, ParseResult
from toolbench.formats.call_objects import CallCollector
from toolbench.formats.dialect import MAX_CALLS
from toolbench.formats.jsonscan import Decoded, Span, decode, loads_strict, scan_objects
from toolbench.formats.prompted import PromptedFormat
from toolbench.formats.stream_syntax import StreamSyntax, tag, to_end
from toolbench.formats.tagged import Block, BlockFinder, drop_blocks
from toolbench.formats.text import Cutter, split_think, strip_markers, tidy
from toolbench.tools import ToolDef

OPEN = "<tool_call>"
CLOSE = "</tool_call>"
RESP_OPEN = "<tool_response>"
RESP_CLOSE = "</tool_response>"
_TAGS = (OPEN, CLOSE, RESP_OPEN, RESP_CLOSE, "<tools>", "</tools>")
_NAME_KEYS = ("name", "tool", "function")
_SPACE = re.compile(r"\s++")
MAX_ORPHANS = 128
"""Stray ``</tool_call>`` tags looked at per reply for a call without its opening tag."""
ORPHAN_WINDOW = 65_536
"""Longest call read without its opening tag (the scan looks no further back)."""
_ORPHAN_END = re.compile(r"\}\s*+(?:```\s*+)?</tool_call>")


def call_text(name: str, arguments: dict[str, Any]) -> str:
    body = json.dumps({"name": name, "arguments": arguments}, ensure_ascii=False)
    return f"{OPEN}\n{body}\n{CLOSE}"


def result_text(name: str, result: str) -> str:
    del name
    return f"{RESP_OPEN}\n{result}\n{RESP_CLOSE}"


class Xml(PromptedFormat):
    name = "xml"
    test_cases = "test_xml"
    name_patterns = (
        NamePattern(40, "hermes", "Hermes writes <tool_call> JSON"),
        NamePattern(
            80, "qwen|qwq|granite 4(?:\\.\\d+)?|smollm", "Hermes/Qwen <tool_call> JSON family"
        ),
    )
    template_tokens = (("<tool_call>",),)
    template_rank = 80
    conformance_family = "hermes"
    description = "Hermes/Qwen style: <tools> JSON in the system prompt, <tool_call> JSON tags."
    markers = tuple(re.compile(re.escape(t)) for t in (OPEN, CLOSE, RESP_OPEN, "<tools>"))
    stop_sequences = (RESP_OPEN,)
    stream = StreamSyntax((tag(OPEN, CLOSE), to_end(RESP_OPEN)))
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
        blocks = BlockFinder(body, OPEN, CLOSE)
        orphans = _Orphans(body, col)
        read = 0
        while (block := blocks.next(cuts.pos)) is not None:
            if read >= MAX_CALLS:
                col.issue(codes.CALL_BAD_SHAPE, f"more than {MAX_CALLS} call blocks; not read")
                cuts.cut(block.start, len(body))  # unread call blocks are not content
                break
            read += 1
            orphans.read(cuts, block.start)
            cuts.cut(block.start, self._read_call(body, block, col))
        orphans.read(cuts, len(body))
        raw = cuts.finish()
        if col.calls and CLOSE in raw:
            _stray_close(col)
        if cuts.last_end is not None:
            col.check_text_after(body[cuts.last_end :])
            if RESP_OPEN in raw[len(cuts.kept[0]) :]:  # outside the calls, after the first
                col.signal(codes.STOP_HALLUCINATED_RESULT)
        col.check_tools(tools)
        return col.result(
            content=self._clean(raw), raw_content=tidy(raw), reasoning=split.reasoning
        )

    def _read_call(self, body: str, block: Block, col: CallCollector) -> int:
        """Add the call(s) of one block; return where its cut ends."""
        where = "<tool_call>"
        if block.exact:
            got = _decode(body[block.inner : block.inner_end])
            listed = got.ok and not got.repaired and isinstance(got.value, list)
            why = None if block.lenient or listed else _not_hermes(body, block, got.value)
            self._add(col, got, block.lenient or listed or why is not None, why)
            return block.end
        if not block.closed:  # without slicing the rest of the reply
            k = _SPACE.match(body, block.inner, block.inner_end)
            first = k.end() if k else block.inner
            last = first < block.inner_end and body.find(OPEN, first) < 0
            if last and body[first] not in "{[`":
                col.fail(codes.CALL_STRAY_TAG, "a <tool_call> tag followed by prose, not a call")
                return block.start + len(OPEN)  # the prose after the tag stays visible
        inner = body[block.inner : block.inner_end].strip()
        if inner.startswith("```"):  # a fence inside the tags
            inner = inner.strip("`").removeprefix("json").strip()
        if not inner:
            if block.closed:
                col.fail(codes.CALL_BAD_SHAPE, "empty <tool_call> block")
            else:
                col.fail(codes.CALL_TRUNCATED, "the reply ended inside <tool_call>")
            return block.end
        strict = loads_strict(inner)
        if strict.ok:
            listed = isinstance(strict.value, list)
            why = None if block.lenient or listed else _not_hermes(body, block, strict.value)
            self._add(col, strict, block.lenient or listed or why is not None, why)
            return block.end
        scan = scan_objects(body, block.inner, block.inner_end)
        if scan.spans and scan.unclosed is None:
            before = len(col.calls)
            for span in scan.spans:
                col.add_json(
                    body[span.start : span.end], name_keys=_NAME_KEYS, where=where, lenient=True
                )
            if len(col.calls) > before:
                col.issue(codes.CALL_LENIENT, f"{where}: {_why_lenient(scan.spans)}")
            return block.end if block.closed else scan.spans[-1].end
        if not block.closed and (scan.unclosed is not None or not scan.spans):
            col.fail(codes.CALL_TRUNCATED, "the reply ended inside <tool_call>")
            return block.end
        col.add_decoded(_repair(inner, strict), name_keys=_NAME_KEYS, where=where)
        return block.end

    @staticmethod
    def _add(col: CallCollector, got: Decoded, lenient: bool, why: str | None = None) -> None:
        before = len(col.calls)
        col.add_decoded(got, name_keys=_NAME_KEYS, where="<tool_call>", lenient=lenient)
        pending = {id(call) for call, _ in col.flat}  # settled (and said) by check_tools
        if lenient and any(id(c) not in pending for c in col.calls[before:]):
            why = why or "text, a list or a missing tag around the call's JSON"
            col.issue(codes.CALL_LENIENT, f"<tool_call>: {why}")

    def _clean(self, text: str) -> str:
        return strip_markers(_drop_blocks(text), _TAGS)


class _Orphans:
    """Calls written without their opening tag: ``{...}</tool_call>`` outside any block.

        Hermes models sometimes drop the ``<tool_call>`` of a second call
        (``<tool_call>{A}</tool_call>\n{B}\n</tool_call>``). A JSON object that ends right
        before a ``</tool_call>`` no block opened, and has a call's shape (a name and
        ``arguments``/``parameters``), is read as a call, ``repaired`` with ``call.lenient``;
        anything else before a stray closing tag stays text. Only a ``}`` right before the tag
        makes a candidate, each stretch of text is scanned once (``floor``) and at most
    :data:`ORPHAN_WINDOW` characters back, and at most
        :data:`MAX_ORPHANS` candidates are looked at, so hostile text costs linear time.
    """

    def __init__(self, body: str, col: CallCollector) -> None:
        self.body = body
        self.col = col
        self.floor = 0
        self.left = MAX_ORPHANS

    def read(self, cuts: Cutter, stop: int) -> None:
        body = self.body
        start = max(cuts.pos, self.floor)
        if self.left <= 0 or body.find(CLOSE, start, stop) < 0:
            return
        for m in _ORPHAN_END.finditer(body, start, stop):
            if self.left <= 0:
                return
            self.left -= 1
            lo = max(cuts.pos, self.floor, m.start() - ORPHAN_WINDOW)
            self.floor = m.end()
            if not any(body.find(f'"{k}"', lo, m.start()) >= 0 for k in _NAME_KEYS):
                continue  # no name key: no call can end here, skip the scan
            scan = scan_objects(body, lo, m.start() + 1)
            span = scan.spans[-1] if scan.spans else None
            if span is None or span.end != m.start() + 1:
                continue
            got = loads_strict(body[span.start : span.end])
            value = got.value if got.ok else None
            if not (isinstance(value, dict) and _call_shaped(value)):
                continue
            before = len(self.col.calls)
            self.col.add_decoded(got, name_keys=_NAME_KEYS, where="</tool_call>", lenient=True)
            if len(self.col.calls) > before:
                self.col.issue(codes.CALL_LENIENT, "a call without its opening <tool_call>")
                cuts.cut(span.start, m.end())


def _stray_close(col: CallCollector) -> None:
    """A ``</tool_call>`` that closes no block (between complete blocks, doubled, or in
    the prose around them) is not Hermes' syntax: a strict reader finds a tag left over.
    The calls are read as before, but the reply is ``repaired`` with ``call.lenient``;
    the tag is never visible text (after the last call it still shows the model writing
    on: ``stop.text_after_call``)."""
    for call in col.calls:
        call.repaired = True
    col.issue(codes.CALL_LENIENT, "a </tool_call> that closes no <tool_call> block")


_END_OF_TURN = re.compile(r"\s*+(?:<\|im_end\|>|<\|endoftext\|>|<\|eot_id\|>)?+\s*+")


def _not_hermes(body: str, block: Block, value: Any) -> str | None:
    """Why a block read whole is not Hermes' own syntax, or None when it is.

    ``strict`` means what a strict Hermes reader reads the same way: exactly one object
    with a string ``name`` and an object ``arguments``, no fence around it, and a closing
    tag, or nothing after it but the end of the turn (a stop sequence ate the tag). Other
    keys, arguments as a string or null, a name alone, a fence or text after an unclosed
    block are read as before, but ``repaired`` with ``call.lenient`` saying which.
    """
    if not block.closed and not _END_OF_TURN.fullmatch(body, block.end):
        return "no </tool_call> and text after the call"
    lead, trail = body[block.start : block.inner], body[block.inner_end : block.end]
    if "`" in lead or "`" in trail or body.startswith("```", _skip(body, block.inner)):
        return "a code fence inside the tags"
    if not isinstance(value, dict) or not isinstance(value.get("name"), str):
        return None  # not a call at all: add_decoded says what it is
    if "arguments" not in value:
        return "no 'arguments' object"
    if not isinstance(value["arguments"], dict):
        return "arguments that are not a JSON object"
    if len(value) != 2:
        return "keys besides 'name' and 'arguments'"
    return None


def _skip(body: str, pos: int) -> int:
    m = _SPACE.match(body, pos)
    return m.end() if m else pos


def _call_shaped(value: dict[str, Any]) -> bool:
    return any(isinstance(value.get(k), str) for k in _NAME_KEYS) and any(
        k in value for k in ("arguments", "parameters")
    )


def _decode(text: str) -> Decoded:
    """Strict JSON, then repair (see :func:`_repair`)."""
    return _repair(text, loads_strict(text))


def _repair(text: str, strict: Decoded) -> Decoded:
    """``strict`` if it decoded, else the repair of ``text``; repair is skipped when no
    tool-name key is in the text, since no call could come of it (it is the costly step
    on hostile input)."""
    if strict.ok or not any(k in text for k in _NAME_KEYS):
        return strict
    return decode(text)


def _why_lenient(spans: Sequence[Span]) -> str:
    if len(spans) > 1:
        return f"{len(spans)} JSON objects in one block"
    return "text besides the call's JSON inside the block"


def _drop_blocks(text: str) -> str:
    """Cut ``<tool_call>`` blocks (located as the parser does) and ``<tool_response>``
    blocks (unclosed ones to the end)."""
    text = drop_blocks(text, OPEN, CLOSE)
    if RESP_OPEN in text:
        cuts = Cutter(text)
        while (i := text.find(RESP_OPEN, cuts.pos)) >= 0:
            j = text.find(RESP_CLOSE, i + len(RESP_OPEN))
            cuts.cut(i, len(text) if j < 0 else j + len(RESP_CLOSE))
        text = cuts.finish()
    return text
