"""``reason-then-call``: free reasoning first, then the calls in one delimited block.

Asking a model to think and to write strict syntax in the same breath costs it on both
(see docs/formats.md): this format separates them. The model reasons in plain text, as
long as it likes, then writes its calls as a JSON list in one block, and stops::

    The user wants Paris; get_weather takes a city.
    <calls>
    [{"tool": "get_weather", "arguments": {"city": "Paris"}}]
    </calls>

When no tool is needed (or once it has the results) it reasons, then writes its answer
after a line starting ``Answer:``.

**Parse rules.** The text before the first block is the reasoning (``reasoning``, with any
``<think>`` block): neither content nor leakage, whatever it holds, since a scratchpad
may mention any syntax. Each ``<calls>`` block holds a JSON list of ``{"tool": NAME,
"arguments": {...}}`` objects (a single object, ``"name"`` for ``"tool"``, and a
```json fence inside the block are read too); ``<calls>[]</calls>`` is a decision not
to call. The request's stop sequence is ``</calls>``: providers cut it from the reply,
so a block the reply's end closes is read as closed when its JSON ends as a list or an
object does (``]`` or ``}``), and is ``call.truncated`` when it does not. JSON that only
decodes after repair is ``json.repaired``. A reply without a block is an answer: the text
after its last ``Answer:`` label (the label line's start), or the whole reply when there
is none.
Text after a block that called is ``stop.text_after_call``; a ``<call_result`` after a
block is an invented result (``stop.hallucinated_result``), left out of the content with
all that follows it.

**Markers** (leakage, sanitizing, the stream's hidden tokens): ``<calls>``,
``</calls>`` and the result tags ``<call_result`` / ``</call_result>``; results go back
as ``<call_result tool="NAME">RESULT</call_result>``, one per call, in one user message.
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
from toolbench.formats.jsonscan import decode, loads_strict
from toolbench.formats.prompted import PromptedFormat
from toolbench.formats.stream_syntax import Region, StreamSyntax, literal
from toolbench.formats.text import drop_think_tags, remove_all, split_think, tidy
from toolbench.tools import ToolDef

OPEN = "<calls>"
CLOSE = "</calls>"
RESULT_OPEN = "<call_result"
RESULT_CLOSE = "</call_result>"
_TOKENS = (OPEN, CLOSE, RESULT_OPEN, RESULT_CLOSE)
_ANSWER = re.compile(r"(?m)^[ \t]{0,16}\**Answer\**[ \t]{0,8}:\**[ \t]{0,8}")
_FENCE_OPEN = re.compile(r"```[A-Za-z0-9_-]{0,16}")
_NAME_KEYS = ("tool", "name")


def call_text(name: str, arguments: dict[str, Any]) -> str:
    """A call as the prompt asks for it (the examples' reasoning line, then the block)."""
    call = json.dumps([{"tool": name, "arguments": arguments}], ensure_ascii=False)
    return f"I should use {name}.\n{OPEN}\n{call}\n{CLOSE}"


def result_text(name: str, result: str) -> str:
    return f'{RESULT_OPEN} tool="{name}">\n{result}\n{RESULT_CLOSE}'


def answer_text(answer: str) -> str:
    return f"I have what I need.\nAnswer: {answer}"


def _unfence(text: str) -> str:
    """A block's JSON without the ```json fence a model may wrap it in."""
    m = _FENCE_OPEN.match(text)
    if m is None:
        return text
    inner = text[m.end() :]
    return (inner[:-3] if inner.endswith("```") else inner).strip()


def _answer(text: str) -> tuple[str | None, str]:
    """``(reasoning, answer)`` of a reply without calls: split at the last ``Answer:``."""
    last: re.Match[str] | None = None
    for m in _ANSWER.finditer(text):
        last = m
    if last is None:
        return None, text
    return text[: last.start()].strip() or None, text[last.end() :]


class ReasonThenCall(PromptedFormat):
    name = "reason-then-call"
    test_cases = "test_reason_then_call"
    description = (
        "Reason in free text, then the calls as a JSON list in one <calls>...</calls> block;"
        ' "Answer:" before a final answer.'
    )
    stream = StreamSyntax(
        (
            Region(
                open=literal(OPEN), close="marker", close_pattern=literal(CLOSE), close_text=CLOSE
            ),
        )
    )
    markers = tuple(re.compile(re.escape(t)) for t in _TOKENS)
    stop_sequences = (CLOSE,)
    call_text = staticmethod(call_text)
    result_text = staticmethod(result_text)
    answer_text = staticmethod(answer_text)

    def instructions(self, tools: Sequence[ToolDef]) -> str:
        return (
            "You can call tools. Available tools:\n\n"
            f"{describe_tools(tools)}\n\n"
            "First think it through in plain text: what the user needs, which tool gives "
            "it, and the value of every argument. Then, to call tools, write them in one "
            "block, exactly like this, and stop:\n"
            f"{OPEN}\n"
            '[{"tool": "<tool name>", "arguments": {<argument name>: <value>, ...}}]\n'
            f"{CLOSE}\n"
            "The block holds a JSON list with one object per call. Each result comes back "
            f'as {RESULT_OPEN} tool="<tool name>">...{RESULT_CLOSE}. When no tool is '
            "needed, or once you have the results, think it through, then write your "
            'answer for the user on a line starting "Answer:".'
        )

    def _parse(self, text: str, tools: Sequence[ToolDef] | None) -> ParseResult:
        split = split_think(text)
        body = split.text
        col = CallCollector()
        first = body.find(OPEN)
        if first < 0:
            thought, answer = _answer(body)
            reasoning = "\n".join(r for r in (split.reasoning, thought) if r) or None
            raw = tidy(answer)
            return col.result(content=self._clean(raw), raw_content=raw, reasoning=reasoning)
        pos, blocks = first, 0
        while pos >= 0 and blocks < MAX_CALLS:
            pos = self._read_block(body, pos, col)
            blocks += 1
            pos = body.find(OPEN, pos) if pos < len(body) else -1
        end = len(body) if pos < 0 else pos
        last_close = body.rfind(CLOSE, first, end)
        after = body[last_close + len(CLOSE) : end] if last_close >= 0 else ""
        invented = after.find(RESULT_OPEN)
        if col.attempted:
            col.check_text_after(after)
        if RESULT_OPEN in body[first:]:
            col.signal(codes.STOP_HALLUCINATED_RESULT)
        if invented >= 0:  # an invented result, and what follows it, is nobody's answer
            after = after[:invented]
        col.check_tools(tools)
        thought = body[:first].strip()
        reasoning = "\n".join(r for r in (split.reasoning, thought) if r) or None
        raw = tidy(_answer(after)[1])
        return col.result(content=self._clean(raw), raw_content=raw, reasoning=reasoning)

    @staticmethod
    def _read_block(body: str, start: int, col: CallCollector) -> int:
        """Add the calls of the block opening at ``start``; where the block ends."""
        inner_at = start + len(OPEN)
        nxt = body.find(OPEN, inner_at)
        close = body.find(CLOSE, inner_at, len(body) if nxt < 0 else nxt)  # this block's
        closed = close >= 0
        inner_end = close if closed else (nxt if nxt >= 0 else len(body))
        inner = _unfence(body[inner_at:inner_end].strip())
        end = close + len(CLOSE) if closed else inner_end
        if not inner:
            col.fail(codes.CALL_BAD_SHAPE, "an empty <calls> block")
            return end
        strict = loads_strict(inner)
        if strict.ok and strict.value == []:
            return end  # <calls>[]</calls>: no call, by decision
        complete = nxt < 0 and inner.endswith(("]", "}"))  # the stop sequence cut </calls>
        if not closed and not strict.ok and not complete:
            if nxt < 0:
                col.fail(codes.CALL_TRUNCATED, "the reply ended inside a <calls> block")
            else:
                col.fail(codes.CALL_TRUNCATED, "a <calls> block never closed")
            return end
        col.add_decoded(strict if strict.ok else decode(inner), name_keys=_NAME_KEYS, where="calls")
        return end

    def _clean(self, text: str) -> str:
        return remove_all(tidy(text), _TOKENS).strip()

    def sanitize(self, text: str) -> str:
        """What a user of this format is shown: the answer, without the reasoning before
        it and without the call blocks (what :meth:`parse` gives as ``content``)."""
        return self._clean(self.parse(drop_think_tags(text)).content)
