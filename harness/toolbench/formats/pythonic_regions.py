"""Where a pythonic reply's calls stand: the regions :mod:`toolbench.formats.pythonic` reads.

A region is a bare call list (``[f(a=1)]``, with the lists around it read as nesting),
the inside of Llama 4's ``<|python_start|>...<|python_end|>`` or Olmo 3's
``<function_calls>...</function_calls>`` (one call per line), or calls written without
their list where nothing else can be meant. The rules that decide which of these a reply
holds, and whether its reading is strict, are the pythonic module's docstring; this
module finds them, in order, none overlapping, scanning the reply about once.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from toolbench.formats.dialect import MAX_CALLS, NextFinder
from toolbench.formats.pycalls import NAME, blind_close, match_bracket

PY_START = "<|python_start|>"
PY_END = "<|python_end|>"
OLMO_OPEN = "<function_calls>"
OLMO_CLOSE = "</function_calls>"
_LIST_START = re.compile(r"\[(?=[\s'\"]|[^\W\d])(?<![\w)\]]\[)\s*+(['\"]?)" + NAME + r"\s*+\(")
# A call list: "[", an optional quote (calls written as strings), a tool name, "(". Not
# right after a word or a closing bracket (a subscript). The look-behind comes after the
# "[" and a look at the next character, so the search skips ahead to each "[" at C speed
# and a run of "[[[[" costs no look-behind.
NESTING = 3
"""Brackets around a call list read as a nested list (``[[f(x=1)]]``)."""
_BARE = re.compile(
    r"(?:^[ \t]*+(?="
    + NAME
    + r"[ \t]*+\((?:[^\n]*\)[ \t\r;`]*+$|[^\n]*+\Z))|(?<=`))("
    + NAME
    + r")[ \t]*+\(",
    re.M,
)
"""A call without its list where one may stand: at the start of a line that ends with
``)`` (or the reply's last line: it may be cut off), or in inline code. The line's end is
checked by the pattern, so lines of prose cost no Python work."""
_CALLEE = re.compile(NAME + r"[ \t]*+\(")
_NEXT_CALL = re.compile(r"[ \t]*+[,;][ \t]*+(" + NAME + r")[ \t]*+\(")
_CALL_HEAD = re.compile(NAME + r"[ \t]*+\(\s*+(?:[^\W\d][\w\-]*+\s*+=(?!=)|\))")
"""The start of a call with a keyword argument, or with none: ``f(a=`` or ``f()``."""


@dataclass(frozen=True, slots=True)
class Region:
    """Where calls are: the text to read and the span to cut from the visible text."""

    start: int
    end: int
    cut_start: int
    cut_end: int
    kind: str = "list"
    """``list`` (a bare call list), ``wrapper`` (inside Llama 4's or Olmo 3's tags),
    ``lines`` (Olmo 3: one call per line), ``bare`` (calls without their list)."""
    closed: bool = True
    strings: bool = False
    """Opens like a list of strings (``['f(x=1)'``): not a call unless it reads as calls."""
    quotes: bool = False
    """Closes only when quotes are ignored: a string's quotes do not pair up."""
    attempt: bool = True
    """Calls without their list: whether a failed reading is still a call attempt."""
    parts: tuple[tuple[int, int], ...] = ()
    """Calls without their list: the span of each call."""


class _Search:
    """A pattern's first match at or after a position that only grows: searched again
    only once the position passes the last match, so all the searches of a reply scan
    it about once (a search per region from its start would be quadratic)."""

    __slots__ = ("_done", "_match", "pattern", "text")

    def __init__(self, pattern: re.Pattern[str], text: str) -> None:
        self.pattern = pattern
        self.text = text
        self._match: re.Match[str] | None = None
        self._done = False

    def at(self, pos: int) -> re.Match[str] | None:
        m = self._match
        if not self._done or (m is not None and m.start() < pos):
            m = self._match = self.pattern.search(self.text, pos)
            self._done = True
        return m


def find_regions(body: str, offered: frozenset[str] | None) -> tuple[list[Region], int | None]:
    """Every place calls are written, in order, none overlapping; at most ``MAX_CALLS``,
    and where the first one past that limit starts (None: all found).

    An unclosed region runs to the end of the reply, so it is the last one."""
    out: list[Region] = []
    olmo, python = NextFinder(body, OLMO_OPEN), NextFinder(body, PY_START)
    lists, bare = _Search(_LIST_START, body), _Search(_BARE, body)
    pos = 0
    while len(out) < MAX_CALLS:
        found = [(at, kind) for at, kind in ((olmo.at(pos), 0), (python.at(pos), 1)) if at >= 0]
        m = lists.at(pos)
        if m is not None:
            found.append((m.start(), 2))
        first, kind = min(found, default=(len(body), -1))
        region = _bare_line(body, bare, pos, first, offered) if offered else None
        if region is None:
            if kind < 0:
                break
            region = _wrapped(body, first, kind == 0) if kind < 2 else _bracketed(body, first, m)
        out.append(region)
        if not region.closed:
            return out, None
        pos = max(region.cut_end, pos + 1)
    else:
        nxt = [at for at in (olmo.at(pos), python.at(pos)) if at >= 0]
        nxt += [m.start()] if (m := lists.at(pos)) is not None else []
        return out, min(nxt, default=None)
    if not out and (whole := _whole_bare(body)) is not None:
        out.append(whole)
    return out, None


def _wrapped(body: str, i: int, olmo: bool) -> Region:
    """The calls inside Olmo 3's or Llama 4's tags (unclosed: to the end of the reply)."""
    open_tag, close_tag = (OLMO_OPEN, OLMO_CLOSE) if olmo else (PY_START, PY_END)
    start = i + len(open_tag)
    j = body.find(close_tag, start)
    end = j if j >= 0 else len(body)
    cut_end = j + len(close_tag) if j >= 0 else len(body)
    if not olmo:
        return Region(start, end, i, cut_end, "wrapper")
    bracketed = body[start:end].lstrip().startswith("[")
    kind = "wrapper" if bracketed else "lines"
    return Region(start, end, i, cut_end, kind, closed=j >= 0 or bracketed)


def _bracketed(body: str, start: int, m: re.Match[str] | None) -> Region:
    """A call list from its ``[`` (or the ``[`` of lists around it) to the bracket that
    closes it."""
    strings = bool(m is not None and m.group(1))
    for _ in range(NESTING):
        outer = back(body, start) - 1
        if outer < 0 or body[outer] != "[":
            break
        start = outer
    close = match_bracket(body, start)
    if close is not None:
        return Region(start, close, start, close, strings=strings)
    blind = blind_close(body, start)
    if blind is not None:
        return Region(start, blind, start, blind, strings=strings, quotes=True)
    return Region(start, len(body), start, len(body), closed=False, strings=strings)


def _unescaped(name: str) -> str:
    return name.replace("\\_", "_")


def _bare_line(
    body: str, search: _Search, pos: int, limit: int, offered: frozenset[str]
) -> Region | None:
    """The first calls without their list before ``limit`` that fill their own line or
    an inline code span, every callee an offered tool (None: none).

    A candidate whose brackets were scanned and that is not one is passed over as a
    whole, so no text is scanned twice."""
    at = pos
    while (m := search.at(at)) is not None and m.start(1) < limit:
        at = m.end()
        if _unescaped(m.group(1)) not in offered:
            continue
        start = m.start(1)
        line_end = body.find("\n", start)
        line_end = len(body) if line_end < 0 else line_end
        tick = start > 0 and body[start - 1] == "`"
        parts: list[tuple[int, int]] = []
        call = start
        while len(parts) < MAX_CALLS:
            close = match_bracket(body, call, line_end)
            if close is None:
                break
            parts.append((call, close))
            nxt = _NEXT_CALL.match(body, close, line_end)
            if nxt is None or _unescaped(nxt.group(1)) not in offered:
                break
            call = nxt.start(1)
        attempt = _CALL_HEAD.match(body, start) is not None
        if not parts or len(parts) == MAX_CALLS:
            if line_end == len(body) and attempt and not parts:  # cut off mid-call
                return Region(start, line_end, start, line_end, "bare", closed=False)
            at = max(at, line_end)
            continue
        end = parts[-1][1]
        tail = body[end:line_end]
        if tail.strip(" \t\r;`") and not (tick and tail.startswith("`")):
            at = max(at, end)
            continue
        attempt = attempt or _alone(body, start, end)
        cut = end + len(tail) - len(tail.lstrip(" \t;")) if ";" in tail else end
        return Region(start, end, start, cut, "bare", attempt=attempt, parts=tuple(parts))
    return None


_FENCE_OPEN = re.compile(r"\s*+(?:```[\w+-]*+)?+\s*+")


def _alone(body: str, start: int, end: int) -> bool:
    """Whether the text from ``start`` to ``end`` is the whole reply but for whitespace
    and a code fence (or inline code) around it."""
    return (
        _FENCE_OPEN.fullmatch(body, 0, start) is not None or body[:start].strip(" \t\r\n`") == ""
    ) and body[end:].strip(" \t\r\n`;") == ""


def _whole_bare(body: str) -> Region | None:
    """Calls without their list that make up the whole reply (a code fence around them
    allowed), the first with a keyword argument or none; separated by commas, semicolons
    or line breaks. Their names need not be offered."""
    start, end = skip(body, 0), len(body.rstrip())
    fenced = False
    if body.startswith("```", start):
        line = body.find("\n", start)
        if line < 0:
            return None
        start = skip(body, line)
        if fenced := body.endswith("```", 0, end):
            end = len(body[: end - 3].rstrip())
    if start >= end or _CALL_HEAD.match(body, start) is None:
        return None
    parts: list[tuple[int, int]] = []
    call = start
    while len(parts) < MAX_CALLS:
        close = match_bracket(body, call, end)
        if close is None:
            if parts:
                return None
            if fenced:  # the fence closes after it: not cut off, malformed
                return Region(start, end, start, end, "bare")
            return Region(start, len(body), start, len(body), "bare", closed=False)
        parts.append((call, close))
        call = skip(body, close, _SPACE_OR_SEPARATOR)
        if call >= end:  # the separators after the last call are cut with it
            return Region(start, close, start, end, "bare", parts=tuple(parts))
        if _CALLEE.match(body, call) is None:
            return None
    return None


_SPACE = re.compile(r"\s*+")
_SPACE_OR_SEPARATOR = re.compile(r"[\s,;]*+")


def skip(text: str, pos: int, pattern: re.Pattern[str] = _SPACE) -> int:
    """The first position at or after ``pos`` that ``pattern`` (whitespace) does not cover."""
    m = pattern.match(text, pos)
    return m.end() if m is not None else pos


def back(text: str, pos: int) -> int:
    """The position just after the last non-whitespace character before ``pos`` (walked
    back one character at a time: callers look back over short runs only)."""
    while pos > 0 and text[pos - 1].isspace():
        pos -= 1
    return pos
