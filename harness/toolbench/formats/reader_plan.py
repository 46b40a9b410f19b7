"""What every marker reader of one stream syntax shares, worked out once.

A reader is made per reply and most replies are short, so its set-up is part of the cost
per reply: the compiled openers and closers of a :class:`StreamSyntax`, their first
characters (what lets a chunk skip the pattern engine) and the tails a search found to be
still the beginning of an opener are kept here, bounded, and shared by every reader.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import NamedTuple

import regex

from toolbench.formats.scanning import (
    Firsts,
    after_newline_firsts,
    context_width,
    first_chars,
    line_start_firsts,
    openers,
)
from toolbench.formats.stream_syntax import Region, StreamSyntax

CTX = 8
"""Characters kept before the scanned window, so ``^`` and lookbehinds see their context."""

HOLDS_MAX = 4096
Holds = dict[tuple[str, str], None]
_HOLDS: dict[int, tuple[object, Holds, int]] = {}


def holds_of(pattern: regex.Pattern[str] | None) -> tuple[Holds, int]:
    """The (context, held tail) pairs an opener's search found to be still the beginning
    of an opener, shared by every reader of that opener (bounded: cleared when full), and
    how much of the context the pairs keep (:func:`~toolbench.formats.scanning.context_width`:
    none when the opener never looks behind, one character when only ``^`` does).

    A search's outcome depends only on the searched text, so a pair seen once needs no
    search again: a tail that almost forms an opener, again and again, is held at the
    cost of a dictionary look-up per chunk."""
    got = _HOLDS.get(id(pattern))
    if got is not None and got[0] is pattern:
        return got[1], got[2]
    if len(_HOLDS) >= 256:
        _HOLDS.clear()
    made: Holds = {}
    width = context_width(pattern.pattern, CTX) if pattern is not None else CTX
    _HOLDS[id(pattern)] = (pattern, made, width)
    return made, width


class Plan(NamedTuple):
    """What every reader of one syntax shares, worked out once (a reader is made per
    reply, and most replies are short: its set-up is part of the cost per reply)."""

    open: regex.Pattern[str] | None
    open_first: Firsts | None
    armed_first: Firsts | None
    """What a chunk must hold to need a search after one that ended on a possible start
    (a line start, for an opener anchored with ``^``); None: every such chunk is searched."""
    holds: Holds
    width: int
    groups: dict[str, int]


_PLANS: dict[int, tuple[StreamSyntax, Plan]] = {}


def plan_of(syntax: StreamSyntax) -> Plan:
    got = _PLANS.get(id(syntax))
    if got is not None and got[0] is syntax:
        return got[1]
    pattern, first = openers(syntax)
    holds, width = holds_of(pattern)
    groups = {f"r{i}": i for i in range(len(syntax.regions))}
    armed = first if width == 0 else None
    if pattern is not None and width == 1:
        armed = line_start_firsts(pattern.pattern)
        first = after_newline_firsts(pattern.pattern) or first
    made = Plan(pattern, first, armed, holds, width, groups)
    if len(_PLANS) >= 256:
        _PLANS.clear()
    _PLANS[id(syntax)] = (syntax, made)
    return made


_CLASS_ONLY = re.compile(r"(?:\[(?:\\.|[^\]\\])*\](?:\|\[(?:\\.|[^\]\\])*\])*|\(\?!\))")


@lru_cache(maxsize=256)
def class_only(pattern: str) -> bool:
    """Whether a fast path's pattern is character classes alone (``[...]|[...]``, or the
    never-matching ``(?!)``): then a chunk holds a match exactly when the joined text
    holds one within it, whatever chunk comes before or after."""
    return _CLASS_ONLY.fullmatch(pattern) is not None


@lru_cache(maxsize=256)
def closer(pattern: str) -> tuple[int, Firsts | None, Firsts | None]:
    """A closing pattern's context width, its first characters, and what a chunk must hold
    to need a search after a line start (see ``MarkerReader._armed_fast``)."""
    width = context_width(pattern, CTX)
    first = first_chars(pattern)
    armed = first if width == 0 else line_start_firsts(pattern) if width == 1 else None
    if width == 1:
        first = after_newline_firsts(pattern) or first
    return width, first, armed


@lru_cache(maxsize=64)
def header_call(close_pattern: str) -> Region:
    """The call region a markup header turns into (made once, not per header)."""
    if not close_pattern:
        return Region(open="", close="end")
    return Region(open="", close="marker", close_pattern=close_pattern)
