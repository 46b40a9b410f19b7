"""Reading ``<function_calls><invoke name=...><parameter name=...>`` blocks.

Claude's prompt-based tool use and DeepSeek V3.2 / V4's DSML share this XML shape; DSML
only prefixes every tag with ``｜DSML｜`` and V4 names the block ``tool_calls``. A
``string="true|false"`` attribute (DSML) says whether a value is raw text or JSON; without
it the value is typed by the tool's JSON Schema. Every closing tag is found through a
:class:`~toolbench.formats.dialect.NextFinder`, so unclosed tags cost linear time.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from toolbench import codes
from toolbench.formats.base import ToolCall
from toolbench.formats.dialect import DialectCollector, NextFinder
from toolbench.formats.jsonscan import loads_strict
from toolbench.formats.schema_values import convert_value, param_schema
from toolbench.formats.text import Cutter
from toolbench.tools import ToolDef

MAX_PARAMS = 256
"""Parameters read per invoke (bounds the work on a reply of a million parameter tags)."""


@dataclass(frozen=True)
class InvokeSyntax:
    """The tag spelling of one dialect."""

    prefix: str
    blocks: tuple[str, ...]
    bare_invokes: bool = False
    """Read ``invoke`` elements written without their enclosing block (DeepSeek V4 often
    opens a call with the ``invoke`` alone) as calls, marked ``repaired``."""

    def tags(self) -> tuple[str, ...]:
        """Every literal tag of the syntax (for sanitizing)."""
        p = self.prefix
        out = [f"</{p}invoke>", f"</{p}parameter>"]
        for b in self.blocks:
            out += [f"<{p}{b}>", f"</{p}{b}>"]
        return tuple(out)

    def open_patterns(self) -> tuple[re.Pattern[str], ...]:
        p = re.escape(self.prefix)
        return (
            re.compile(rf"<{p}invoke\b[^<>\n]*+>?"),
            re.compile(rf"<{p}parameter\b[^<>\n]*+>?"),
        )


class _Reader:
    def __init__(self, body: str, syntax: InvokeSyntax) -> None:
        p = re.escape(syntax.prefix)
        names = "|".join(re.escape(b) for b in syntax.blocks)
        self.body = body
        self.syntax = syntax
        self.block = re.compile(rf"<{p}({names})>")
        self.invoke = re.compile(rf'<{p}invoke\s++name="([^"\n]*+)"\s*+>')
        self.param = re.compile(
            rf'<{p}parameter\s++name="([^"\n]*+)"(?:\s++string="([^"\n]*+)")?\s*+>'
        )
        self.invoke_end = NextFinder(body, f"</{syntax.prefix}invoke>")
        self.param_end = NextFinder(body, f"</{syntax.prefix}parameter>")
        self.block_ends = {b: NextFinder(body, f"</{syntax.prefix}{b}>") for b in syntax.blocks}


def read_blocks(
    body: str,
    syntax: InvokeSyntax,
    tools: Sequence[ToolDef] | None,
    col: DialectCollector,
    cuts: Cutter,
) -> None:
    """Read every call block of ``body`` into ``col`` and cut the blocks out of ``cuts``."""
    r = _Reader(body, syntax)
    pos = 0
    while not col.full() and (m := r.block.search(body, pos)) is not None:
        col.attempted = True
        end_tag = f"</{syntax.prefix}{m.group(1)}>"
        close = r.block_ends[m.group(1)].at(m.end())
        inner_end = close if close >= 0 else len(body)
        before = len(col.calls)
        _read_invokes(r, m.end(), inner_end, tools, col)
        if close < 0 and len(col.calls) == before:
            col.issue(codes.CALL_TRUNCATED, f"the reply ended inside <{syntax.prefix}{m.group(1)}>")
        elif len(col.calls) == before and not col.errors:
            col.issue(codes.CALL_BAD_SHAPE, f"<{syntax.prefix}{m.group(1)}> holds no invoke")
        end = close + len(end_tag) if close >= 0 else len(body)
        cuts.cut(max(m.start(), cuts.pos), end)
        pos = end
    if syntax.bare_invokes and pos == 0 and not col.full():
        _read_bare(r, tools, col, cuts)


def _read_bare(
    r: _Reader, tools: Sequence[ToolDef] | None, col: DialectCollector, cuts: Cutter
) -> None:
    """Invokes outside any block: read from the first to the end of the last one."""
    first = r.invoke.search(r.body)
    if first is None:
        return
    col.attempted = True
    since = len(col.calls)
    end = _read_invokes(r, first.start(), len(r.body), tools, col)
    cuts.cut(max(first.start(), cuts.pos), end)
    if len(col.calls) > since:
        for call in col.calls[since:]:
            call.repaired = True
        block = f"<{r.syntax.prefix}{r.syntax.blocks[-1]}>"
        col.issue(codes.CALL_LENIENT, f"invoke without its {block} block, read leniently")


def _read_invokes(
    r: _Reader, start: int, stop: int, tools: Sequence[ToolDef] | None, col: DialectCollector
) -> int:
    """Read the invokes in ``[start, stop)``; return where the last one read ends."""
    pos = start
    last = start
    while not col.full() and (m := r.invoke.search(r.body, pos, stop)) is not None:
        name = m.group(1).strip()
        close = r.invoke_end.at(m.end(), stop)
        nxt = r.invoke.search(r.body, m.end(), stop)
        closed = close >= 0 and (nxt is None or close < nxt.start())
        end = close if closed else (nxt.start() if nxt else stop)
        args, repaired = _read_params(r, m.end(), end, name, tools)
        if not closed:
            repaired = True
        if not name:
            col.issue(codes.CALL_MISSING_NAME, "an invoke has no tool name")
        elif not closed and end == len(r.body) and not args:
            col.issue(codes.CALL_TRUNCATED, f"the reply ended inside invoke '{name}'")
        else:
            if repaired:
                col.issue(codes.JSON_REPAIRED, f"invoke '{name}': unclosed tags, read leniently")
            col.calls.append(ToolCall(name=name, arguments=args, repaired=repaired))
        pos = end
        last = close + len(f"</{r.syntax.prefix}invoke>") if closed else end
    return last


def _read_params(
    r: _Reader, start: int, stop: int, tool: str, tools: Sequence[ToolDef] | None
) -> tuple[dict[str, Any], bool]:
    args: dict[str, Any] = {}
    repaired = False
    pos = start
    seen = 0
    while seen < MAX_PARAMS and (m := r.param.search(r.body, pos, stop)) is not None:
        seen += 1
        close = r.param_end.at(m.end(), stop)
        nxt = r.param.search(r.body, m.end(), stop)
        if close < 0 or (nxt is not None and nxt.start() < close):
            repaired = True
            end = nxt.start() if nxt else stop
            pos = end
        else:
            end = close
            pos = close + len(f"</{r.syntax.prefix}parameter>")
        args[m.group(1)] = _value(r.body[m.end() : end], m.group(2), tool, m.group(1), tools)
    return args, repaired


def _value(
    raw: str, string: str | None, tool: str, param: str, tools: Sequence[ToolDef] | None
) -> Any:
    if string is None:  # a newline on each side of a value is layout (Claude style)
        raw = raw.removeprefix("\n").removesuffix("\n")
    if string == "true":
        return raw
    if string == "false":
        got = loads_strict(raw.strip())
        if got.ok:
            return got.value
    return convert_value(raw, param_schema(tools, tool, param))
