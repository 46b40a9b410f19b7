"""What the model-family dialect formats share (``llama3-json``, ``mistral``, ``qwen3-coder``...).

Each dialect is a prompted format: the tools are described in the system prompt the way the
family's own chat template describes them, the call is read from the reply text, and the
results go back written the way that template writes them. Three things differ from the
generic prompt formats and live here:

* results may need a role of their own (Llama 3's ``ipython``) or the call's id, so
  :meth:`DialectFormat.result_messages` builds the messages from the calls themselves;
* XML-style dialects carry argument values as bare text, which is typed with the tool's
  JSON Schema (:func:`toolbench.formats.schema_values.convert_value`), as the reference
  parsers (vLLM, llama.cpp) do;
* helpers for the literal special-token scans every dialect parser is built from.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from toolbench import codes
from toolbench.formats.base import Message, ModelReply, ParseIssue, ParseResult, ToolCall
from toolbench.formats.call_objects import CallCollector
from toolbench.formats.jsonscan import Decoded, decode, loads_strict
from toolbench.formats.prompted import PromptedFormat
from toolbench.formats.shots import render_shots
from toolbench.formats.text import MARKER_ROUNDS, drop_think_tags, remove_all, tidy
from toolbench.tools import ToolDef


class DialectFormat(PromptedFormat):
    """A prompted format that speaks one model family's own tool-call syntax."""

    literal_markers: ClassVar[tuple[str, ...]] = ()
    """This dialect's special tokens and tags, removed from visible text by :meth:`_clean`."""
    pattern_markers: ClassVar[tuple[re.Pattern[str], ...]] = ()
    """Non-literal markers (removed by regex, a bounded number of rounds)."""
    call_openers: ClassVar[tuple[str, ...]] = ()
    """Tokens that open a call: a reply ending inside one was cut off mid-token."""

    def shot_result_text(self, name: str, result: str) -> str:
        """A result as the few-shot examples show it (the result text unless overridden)."""
        return self.result_text(name, result)

    def system_section(self, tools: Sequence[ToolDef]) -> str:
        shots = render_shots(
            self.options.shots, self.shot_call_text, self.shot_result_text, self.answer_text
        )
        return self.prompt(tools) + ("\n\n" + shots if shots else "")

    def result_block(self, call: ToolCall, result: str, index: int) -> str:
        """One result as text inside the results message (override to use the call's id)."""
        del index
        return self.result_text(call.name, result)

    def result_messages(self, results: Sequence[tuple[ToolCall, str]]) -> list[Message]:
        """The messages that carry this turn's results (one user message by default)."""
        blocks = (self.result_block(call, res, i) for i, (call, res) in enumerate(results))
        return [{"role": "user", "content": self.result_separator.join(blocks)}]

    def continue_conversation(
        self,
        messages: Sequence[Message],
        reply: ModelReply,
        results: Sequence[tuple[ToolCall, str]],
    ) -> list[Message]:
        out = [*messages, {"role": "assistant", "content": reply.text}]
        if results:
            out.extend(self.result_messages(results))
        return out

    def _clean(self, text: str) -> str:
        return strip_dialect_markers(text, self.literal_markers, self.pattern_markers)

    def sanitize(self, text: str) -> str:
        """What a user would see: the calls cut out as the parser reads them, then markers."""
        return self._clean(drop_think_tags(self.parse(text).raw_content))

    def parse(self, text: str, tools: Sequence[ToolDef] | None = None) -> ParseResult:
        """Parse, then treat a reply that ends inside a call-opening token as truncated."""
        result = super().parse(text, tools)
        partial = partial_token_at_end(text, self.call_openers)
        if not partial:
            return result
        return cut_mid_token(result, partial)


def strip_dialect_markers(
    text: str, literals: tuple[str, ...], patterns: tuple[re.Pattern[str], ...] = ()
) -> str:
    """Tidy, then remove literal and pattern markers until none is left (bounded rounds)."""
    text = tidy(text)
    for _ in range(MARKER_ROUNDS):
        before = text
        text = remove_all(text, literals)
        for pat in patterns:
            text = pat.sub("", text)
        if text == before:
            break
    return text.strip()


def drop_block(text: str, open_tag: str, close_tag: str) -> str:
    """Cut the first ``open_tag ... close_tag`` block (unclosed: to the end) out of ``text``.

    A hallucinated result block is not text the user should read.
    """
    i = text.find(open_tag)
    if i < 0:
        return text
    j = text.find(close_tag, i)
    return text[:i] + ("" if j < 0 else text[j + len(close_tag) :])


def tools_json(tools: Sequence[ToolDef], *, indent: int | None = None, openai: bool = True) -> str:
    """The tools as JSON (OpenAI ``{"type": "function", ...}`` entries by default)."""
    items = [t.openai() if openai else _flat(t) for t in tools]
    return json.dumps(items, ensure_ascii=False, indent=indent)


def _flat(tool: ToolDef) -> dict[str, Any]:
    return {"name": tool.name, "description": tool.description, "parameters": tool.parameters}


def skip_space(text: str, pos: int) -> int:
    """The first non-whitespace position at or after ``pos``."""
    n = len(text)
    while pos < n and text[pos].isspace():
        pos += 1
    return pos


def close_think_before(text: str, tokens: Sequence[str]) -> str:
    """Close an unclosed ``<think>`` where the first tool token after it begins.

    Some templates (Kimi K2 Thinking) let the model go straight from thinking into its
    calls; the think block then ends where the calls start, not at the end of the reply.
    """
    i = text.find("<think>")
    if i < 0 or text.find("</think>", i) >= 0:
        return text
    ends = [j for tok in tokens if (j := text.find(tok, i)) >= 0]
    if not ends:
        return text
    k = min(ends)
    return text[:k] + "</think>" + text[k:]


class NextFinder:
    """``text.find(needle, pos)`` for non-decreasing ``pos``, each character scanned once.

    A parser that looks for a closing tag from every opening tag is quadratic when the
    closing tag never comes (a 1 MB run of openers); caching the last answer keeps it linear.
    """

    __slots__ = ("_last", "needle", "text")

    def __init__(self, text: str, needle: str) -> None:
        self.text = text
        self.needle = needle
        self._last = -2  # position of the cached answer (-1: none left); -2: not computed

    def at(self, pos: int, stop: int | None = None) -> int:
        """The first occurrence at or after ``pos`` and before ``stop`` (-1 when none)."""
        if self._last == -2 or (self._last >= 0 and self._last < pos):
            self._last = self.text.find(self.needle, pos)
        found = self._last
        if found < 0 or (stop is not None and found + len(self.needle) > stop):
            return -1
        return found


MAX_CALLS = 128
"""Calls (and failed call attempts) read from one reply; the rest is left unread, so a
reply of a million tiny calls costs a bounded amount of work."""
MAX_REPAIRS = 16
"""JSON repairs tried per reply: the repair library is slow, strict decoding is not."""


class RepairBudget:
    """:func:`~toolbench.formats.jsonscan.decode` with at most :data:`MAX_REPAIRS` repairs."""

    __slots__ = ("left",)

    def __init__(self) -> None:
        self.left = MAX_REPAIRS

    def decode(self, text: str) -> Decoded:
        strict = loads_strict(text)
        return strict if strict.ok else self.repair(text)

    def repair(self, text: str) -> Decoded:
        """The repair path alone, for text already known not to be strict JSON."""
        if self.left <= 0:
            return Decoded()
        self.left -= 1
        return decode(text)


@dataclass
class DialectCollector(CallCollector):
    """A :class:`CallCollector` with the per-reply budgets of the dialect parsers."""

    budget: RepairBudget = field(default_factory=RepairBudget)

    def decode(self, text: str) -> Decoded:
        """Strict JSON, then repair while the reply's repair budget lasts."""
        return self.budget.decode(text)

    def add_json_call(
        self,
        name: str,
        args_text: str,
        *,
        cut_at_end: bool = False,
        call_id: str | None = None,
        repair: bool = True,
    ) -> None:
        """Add a call whose arguments are JSON text (the families that write ``name`` then
        a JSON object: DeepSeek, Kimi K2, harmony): strict, else repaired within the
        budget. ``cut_at_end``: the reply ended inside these arguments, so arguments that
        are not yet valid JSON are a truncated call, not a repairable one. ``repair=False``:
        the family's reference parsers refuse JSON that needs repair, so it is
        ``json.decode_failed`` and no call."""
        strict = loads_strict(args_text)
        if cut_at_end and not strict.ok:
            self.issue(codes.CALL_TRUNCATED, f"the reply ended inside the call to '{name}'")
            return
        if not repair and not strict.ok:
            self.issue(codes.JSON_DECODE_FAILED, f"arguments of '{name}': not valid JSON")
            return
        if not strict.ok and not args_text.rstrip().endswith("}"):
            # repair fixes slips inside an object the model closed; it never closes one
            # left open before the call's end token (that JSON was cut, not mistyped)
            self.issue(codes.JSON_DECODE_FAILED, f"arguments of '{name}': the object is not closed")
            return
        got = strict if strict.ok else self.budget.repair(args_text)
        if not got.ok:
            self.issue(codes.JSON_DECODE_FAILED, f"arguments of '{name}': invalid JSON")
            return
        if got.repaired:
            self.issue(codes.JSON_REPAIRED, f"arguments of '{name}' needed repair")
        self.add_object(
            {"name": name, "arguments": got.value},
            name_keys=("name",),
            where="call",
            repaired=got.repaired,
            call_id=call_id,
        )

    def lenient(self, since: int, message: str) -> None:
        """Calls read since index ``since`` needed a lenient reading: mark them repaired."""
        if len(self.calls) > since:
            for call in self.calls[since:]:
                call.repaired = True
            self.issue(codes.JSON_REPAIRED, message)

    def full(self) -> bool:
        """Whether the call budget is spent (said once as an issue; then stop reading)."""
        if len(self.calls) + len(self.errors) < MAX_CALLS:
            return False
        note = f"more than {MAX_CALLS} calls; the rest is not read"
        if not any(e.message == note for e in self.errors):
            self.issue(codes.CALL_BAD_SHAPE, note)
        return True


MIN_PARTIAL = 4
"""Shortest token prefix taken as a cut-off token (shorter ones are too common in prose)."""


def partial_token_at_end(text: str, tokens: Sequence[str]) -> str:
    """The proper prefix of one of ``tokens`` that ``text`` ends with ("" if none)."""
    for tok in tokens:
        for k in range(len(tok) - 1, MIN_PARTIAL - 1, -1):
            if text.endswith(tok[:k]):
                return tok[:k]
    return ""


def cut_mid_token(result: ParseResult, partial: str) -> ParseResult:
    """The result of a reply cut inside a call-opening token: an attempt, ``call.truncated``,
    and the partial token is not visible text."""

    def strip(text: str) -> str:
        return text.rstrip().removesuffix(partial).rstrip()

    errors = list(result.errors)
    if not any(e.code == codes.CALL_TRUNCATED for e in errors):
        errors.append(ParseIssue(code=codes.CALL_TRUNCATED, message="the reply ended mid-token"))
    status = result.status if result.calls else "failed"
    content = strip(result.content)
    final = result.final_answer if result.calls else (content or None)
    return result.model_copy(
        update={
            "errors": errors,
            "status": status,
            "attempted": True,
            "content": content,
            "raw_content": strip(result.raw_content),
            "final_answer": final,
        }
    )
