"""``pythonic``: Llama 3.2 / Llama 4 style call lists, ``[get_weather(city="Paris"), f()]``.

How one call list's text is read (with ``ast``, never evaluated; tool names as the tool
list offered them, dotted, slashed or hyphenated; the lenient readings) is
:mod:`toolbench.formats.pycalls`; where a reply's calls are is
:mod:`toolbench.formats.pythonic_regions`. This module reads them, and decides by where
they are whether the reading is ``strict``. The rules, one each
(docs/dialects.md keeps the table):

* **Wrappers** the reference parsers accept mark a call wherever they are: Llama 4's
  ``<|python_start|>...<|python_end|>`` and Olmo 3's ``<function_calls>...
  </function_calls>`` (one call per line). Calls inside one without their list are
  ``repaired``.
* **A bare list** is strict only alone in the reply (whitespace and this format's
  special tokens around it allowed, an end-of-turn token among them): that is the syntax
  the template asks for ("you SHOULD NOT include any other text"). A list after a
  sentence, inside a code fence or followed by text is read, ``repaired`` with
  ``call.lenient``: the list carries no marker of its own, so finding it inside prose is
  a lenient search. Text after the list stays visible and is signalled
  (``stop.text_after_call``), as in every format.
* **Several lists** in one reply are all read (``repaired``) and all cut from the visible
  text, so no fragment of one is shown. At most ``MAX_CALLS`` lists are read.
* **A list inside a subscript** (``d[f(x)]``, a ``[`` right after a word or a closing
  bracket) is code, not a call list.
* **Calls without their list** (``get_weather(city="Paris")``) are read, ``repaired``,
  where nothing else can be meant: every callee is a tool the request offered and the
  calls fill their own line or an inline code span (``print(x)``, ``x = f(a=1)`` and a
  mention inside a sentence stay text); or the whole reply (inside a code fence or not)
  is calls, the first with a keyword argument or none, whatever their names (an
  unoffered name is then ``call.unknown_tool``, never a silent no-call). Without a tool
  list only the second applies. A failed reading of calls without their list counts as
  an attempt when the first call opens with a keyword argument (``f(a=``) or the calls
  are the whole reply; else it is text (``get_weather(city)`` in a sentence's line).
* **A hypothetical call in prose that declines** ("I will not call anything, but it would
  be ``[f(a=1)]``") is read like any list after text: toolbench does not read intent
  from prose, and an application that extracts call lists (as SGLang's parser does)
  would run it. The trial therefore counts a call (``repaired``).
* **Quotes that do not pair up**: a list that closes only when quotes are ignored was not
  cut off; it is ``call.bad_shape``, never ``call.truncated``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from pydantic import ConfigDict

from toolbench import codes
from toolbench.formats.base import NamePattern, ParseResult, ToolCall
from toolbench.formats.dialect import MAX_CALLS, DialectCollector, DialectFormat
from toolbench.formats.prompt_axes import AxisOptions, DocFormat, PromptParts
from toolbench.formats.pycalls import (
    MAX_CHARS,
    MAX_DEPTH,
    NAME,
    Refused,
    match_bracket,
    python_literal,
    read_list,
)
from toolbench.formats.pythonic_regions import (
    OLMO_CLOSE,
    OLMO_OPEN,
    PY_END,
    PY_START,
    Region,
    back,
    find_regions,
    skip,
)
from toolbench.formats.stream_syntax import Region as StreamRegion
from toolbench.formats.stream_syntax import StreamSyntax, literal, tag, tokens
from toolbench.formats.text import Cutter, split_think, tidy
from toolbench.tools import ToolDef

__all__ = ["MAX_CHARS", "MAX_DEPTH", "Pythonic", "Refused", "call_text", "python_literal"]

_STREAM_NAME = r"[^\W\d](?:[\w\-.:/]|\\_){0,63}"
_STREAM_LIST = r"(?<![\w)\]])\[(?:\s{0,8}\[){0,3}\s{0,8}['\"]?" + _STREAM_NAME + r"\s{0,8}\("
_LEAK = re.compile(
    r"\[(?<![^\s>`]\[)(?:\s*+\[){0,3}+\s*+['\"]?" + NAME + r"\(\s*+[^\W\d][\w\-]*+\s*+="
)
# A call list where a user would see it: at the start of a line or after a space, a tag or
# a backtick (code such as ``d[f(x)]`` is not one), opening with a keyword argument:
# ``[f(a=``. An empty ``[f()]`` is too common in ordinary code to count as this syntax.
_SPECIALS = (
    PY_START,
    PY_END,
    "<|python_tag|>",
    OLMO_OPEN,
    OLMO_CLOSE,
    "<|eom|>",
    "<|eot|>",
    "<|eom_id|>",
    "<|eot_id|>",
)
"""Llama 4's and Olmo 3's tags, and the end-of-turn tokens of Llama 3.2 and 4."""

AFTER_TEXT = "a call list after other text, read where it stands"
AFTER_LIST = "text after the call list (the reply is to be the list alone)"
IN_CODE = "a call list inside a code fence or inline code"
SEVERAL = "several call lists in one reply, all read"
BARE = "calls written without the surrounding list"


def call_text(name: str, arguments: dict[str, Any]) -> str:
    args = ", ".join(f"{k}={_py_literal(v)}" for k, v in arguments.items())
    return f"[{name}({args})]"


def _py_literal(value: Any) -> str:
    if value is None or isinstance(value, bool):
        return repr(value)
    if isinstance(value, (int, float, str)):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, list):
        return "[" + ", ".join(_py_literal(v) for v in value) + "]"
    if isinstance(value, dict):
        return (
            "{"
            + ", ".join(f"{json.dumps(str(k))}: {_py_literal(v)}" for k, v in value.items())
            + "}"
        )
    return json.dumps(str(value))


def result_text(name: str, result: str) -> str:
    del name
    return result


class PythonicOptions(AxisOptions):
    """``shots`` and the prompt axes; the tools are documented as JSON unless ``doc`` says."""

    model_config = ConfigDict(extra="forbid")

    doc: DocFormat = "json"


_DOC_LABELS = {"text": "plain text", "json": "JSON", "python": "Python", "xml": "XML"}


class Pythonic(DialectFormat):
    name = "pythonic"
    Options = PythonicOptions
    options: PythonicOptions
    test_cases = "test_pythonic"
    name_patterns = (
        NamePattern(30, "toolace", "ToolACE was trained on pythonic call lists"),
        NamePattern(
            100,
            "llama (?:4|3\\.2|3 2)|olmo 3",
            "Llama 3.2/4 and Olmo 3 were trained on pythonic call lists",
        ),
    )
    template_tokens = (("<|python_start|>",),)
    template_rank = 90
    conformance_family = "pythonic"
    leak_rank = 3
    stream = StreamSyntax(
        (
            tag(PY_START, PY_END),
            tag(OLMO_OPEN, OLMO_CLOSE),
            StreamRegion(open=literal("<|python_tag|>"), close_pattern=r"<\|eom\|>|<\|eot\|>"),
            StreamRegion(open=_STREAM_LIST, close="balanced"),
            tokens(*_SPECIALS),
        )
    )
    description = "Llama 3.2/4 style: [func(a=1), g(b='x')], read with ast, never evaluated."
    markers = (re.compile(re.escape(PY_START)), re.compile(re.escape(PY_END)), _LEAK)
    literal_markers = _SPECIALS
    call_openers = (PY_START, OLMO_OPEN)
    pattern_markers = (_LEAK,)
    call_text = staticmethod(call_text)
    result_text = staticmethod(result_text)

    call_shape = (
        "[func_name1(params_name1=params_value1, params_name2=params_value2...), "
        "func_name2(params)]"
    )
    results_note = (
        "Function results come back in the ipython role. When no function is needed, or "
        "once you have the results, answer in plain text."
    )

    def own_parts(self, tools: Sequence[ToolDef]) -> PromptParts:
        """BFCL's classic wording (the Llama 3.2 template took it), its tools in JSON."""
        return PromptParts(
            persona="You are an expert in composing functions.",
            task="You are given a question and a set of possible functions. Based on the "
            "question, you will need to make one or more function/tool calls to achieve the "
            "purpose. If none of the functions can be used, point it out. If the given "
            "question lacks the parameters required by the function, also point it out.",
            call_format="You should only return the function call in tools call sections.\n\n"
            "If you decide to invoke any of the function(s), you MUST put it in the format of "
            f"{self.shape()}\nYou SHOULD NOT include any other text in the response.",
            behaviour=self.results_note,
            tools=f"Here is a list of functions in {_DOC_LABELS[self.options.doc]} format that "
            f"you can invoke.\n\n{self.listing(tools)}",
        )

    def instructions(self, tools: Sequence[ToolDef]) -> str:
        p = self.own_parts(tools)
        return f"{p.persona} {p.task} {p.call_format}\n\n{p.tools}\n\n{p.behaviour}"

    def shot_result_text(self, name: str, result: str) -> str:
        return f"ipython: {result}"

    def result_messages(self, results: Sequence[tuple[ToolCall, str]]) -> list[dict[str, Any]]:
        return [{"role": "ipython", "content": res} for _, res in results]

    def _parse(self, text: str, tools: Sequence[ToolDef] | None) -> ParseResult:
        split = split_think(text, opened_in_prompt=False)
        body = split.text
        col = DialectCollector()
        cuts = Cutter(body)
        offered = None if tools is None else frozenset(t.name for t in tools)
        noted: set[str] = set()
        regions, past = find_regions(body, offered)
        lead = _lead(body)
        last: tuple[Region, int] | None = None  # the last region read, and its first call
        for region in regions:
            why = _position(body, region, lead, bool(col.attempted))
            since = len(col.calls)
            if not _read_region(body, region, col, why, noted):
                continue  # calls written as strings, or without a list, that are not calls
            start, end = _with_backticks(body, region.cut_start, region.cut_end, cuts.pos)
            cuts.cut(start, end)
            last = (region, since)
        if past is not None:  # the rest is neither read nor shown (no fragments of calls)
            col.fail(codes.CALL_BAD_SHAPE, f"more than {MAX_CALLS} call lists; the rest not read")
        raw = cuts.finish(past)
        if cuts.last_end is not None:
            tail = body[cuts.last_end : past]
            col.check_text_after(tail)
            if last is not None and last[0].kind == "list" and _is_text(tail):
                _lenient(col, last[1], AFTER_LIST, noted)
        col.check_tools(tools)
        raw = tidy(raw)
        return col.result(content=self._clean(raw), raw_content=raw, reasoning=split.reasoning)


def _lead(body: str) -> int:
    """Where the reply's first text other than whitespace and special tokens starts."""
    pos = skip(body, 0)
    while special := next((t for t in _SPECIALS if body.startswith(t, pos)), None):
        pos = skip(body, pos + len(special))
    return pos


def _position(body: str, region: Region, lead: int, later: bool) -> list[str]:
    """Why where these calls stand makes their reading lenient (empty: it does not)."""
    why = [BARE] if region.kind == "bare" else []
    if later and region.kind != "bare":  # calls without a list come one per line anyway
        why.append(SEVERAL)
    elif region.kind == "list" and region.start > lead:
        line = body.rfind("\n", 0, back(body, region.start)) + 1
        code = body.startswith("```", skip(body, line)) or body[back(body, region.start) - 1] == "`"
        why.append(IN_CODE if code else AFTER_TEXT)
    return why


def _with_backticks(body: str, start: int, end: int, floor: int) -> tuple[int, int]:
    """The cut widened over the backticks of an inline code span that holds only the
    calls (a fence is left to :func:`~toolbench.formats.text.tidy`, which drops it empty)."""
    if (
        start - 1 >= floor
        and end < len(body)
        and body[start - 1] == "`"
        and body[end] == "`"
        and not body.startswith("``", start - 2)
        and not body.startswith("``", end)
    ):
        return start - 1, end + 1
    return start, end


def _read_region(
    body: str, region: Region, col: DialectCollector, why: list[str], noted: set[str]
) -> bool:
    """Add the calls of one region (or its failure); False when it is not a call at all
    (a list of strings that are not calls, calls without their list with no keyword)."""
    if region.end - region.start > MAX_CHARS:
        col.fail(codes.CALL_TOO_DEEP, f"call list longer than {MAX_CHARS} characters, not read")
        return True
    src = body[region.start : region.end].strip()
    counts = region.attempt and not region.strings
    if region.quotes:
        if not counts:
            return False
        col.fail(codes.CALL_BAD_SHAPE, "the quotes of a string in the call list do not pair up")
        return True
    if not src:
        col.fail(codes.CALL_TRUNCATED if not region.closed else codes.CALL_BAD_SHAPE, "no call")
        return True
    closing = False
    if region.kind == "lines":
        src = "[" + ",".join(line for line in src.splitlines() if line.strip()) + "]"
    elif region.parts:
        src = "[" + ", ".join(body[a:b] for a, b in region.parts) + "]"
    elif not region.closed and region.kind == "bare":
        col.fail(codes.CALL_TRUNCATED, "the reply ended inside a call")
        return True
    elif not region.closed or (src.startswith("[") and not src.endswith("]")):
        if not counts:
            return False
        if match_bracket(src, 0) is not None or not src.endswith(")"):
            col.fail(codes.CALL_TRUNCATED, "the reply ended inside the call list")
            return True
        src += "]"  # every call complete, only the closing bracket is missing
        closing = True
    elif not src.startswith("["):
        src = "[" + src + "]"
        why = [*why, BARE]
    try:
        reading = read_list(src)
    except Refused as exc:
        if counts:
            col.fail(exc.code, str(exc))
        return counts
    except Exception as exc:  # SyntaxError, RecursionError, MemoryError...: never raise
        if counts:
            col.fail(codes.CALL_BAD_SHAPE, f"not a Python call list ({type(exc).__name__})")
        return counts
    col.attempted = True
    if closing:
        col.issue(codes.JSON_REPAIRED, "call list without its closing ']', read after repair")
    reasons = [*why, *reading.lenient]
    for reason in reasons:
        _note(col, reason, noted)
    repaired = closing or bool(reasons)
    for name, args in reading.calls:
        col.calls.append(ToolCall(name=name, arguments=args, repaired=repaired))
    return True


def _note(col: DialectCollector, reason: str, noted: set[str]) -> None:
    """One ``call.lenient`` issue per reason and reply."""
    if reason not in noted:
        noted.add(reason)
        col.issue(codes.CALL_LENIENT, reason)


def _lenient(col: DialectCollector, since: int, reason: str, noted: set[str]) -> None:
    """The calls read from index ``since`` on were read leniently, for ``reason``."""
    if len(col.calls) > since:
        for call in col.calls[since:]:
            call.repaired = True
        _note(col, reason, noted)


def _is_text(tail: str) -> bool:
    """Whether what follows the calls is text, not only whitespace, fences and this
    format's special tokens (an end-of-turn token a server left in)."""
    for special in (*_SPECIALS, "```"):
        if special in tail:
            tail = tail.replace(special, "")
    return bool(tail.strip())
