"""What an incremental reader needs to know about a format's markup, declared as data.

A format declares its :class:`StreamSyntax` (the class attribute ``stream``): which
markers open a call, what ends one, and which bare tokens a careful application hides.
The reader in :mod:`toolbench.formats.marker_reader` runs any syntax; keeping the syntax as
data (not code per format) is what lets the display policy, the hold-back and the leak
measure be the same for every format, plugins included.

Patterns are written for the ``regex`` module (``partial=True`` matching is how the reader
knows that a tail of text could still become a marker). An opener must be *definitive*:
once it matches completely, no longer text changes that it is a call (end it on a fixed
token, not on an optional or repeated one). Patterns must not define named groups.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import regex

CloseKind = Literal["marker", "balanced", "end", "none"]


@dataclass(frozen=True)
class Region:
    """One kind of markup region: an opener, and how the region ends.

    ``close`` says how it ends: ``marker`` at the first match of ``close_pattern``
    (which belongs to the region; a zero-width lookahead ends it before the match),
    ``balanced`` where the brackets counted from the opener's first ``{`` or ``[`` close
    again (bare JSON, a pythonic call list), ``end`` at the end of the reply, ``none``
    right after the opener (a bare token that is hidden and nothing more).

    ``call`` says whether the region is a tool call (events, timings, leak spans) or only
    markup a careful application hides (a chat template's end-of-turn token, a header).
    ``call_when``: a markup region whose text matches it turns out to be a call header
    (harmony's ``to=functions.x``); the call then runs until ``call_close``.
    """

    open: str
    close: CloseKind = "marker"
    close_pattern: str = ""
    call: bool = True
    call_when: str = ""
    call_close: str = ""
    close_text: str = ""
    """The closer as plain text when ``close_pattern`` is a literal (set by :func:`tag`):
    the reader then finds it with string search, the hot path of markup-dense calls."""


@dataclass(frozen=True)
class StreamSyntax:
    """A format's regions, in priority order, and the longest tail held back for them.

    ``max_hold`` bounds the hold-back: text that has been a possible opener for longer than
    this is shown (an opener that only matches after ``max_hold`` characters, such as
    ``{`` followed by a page of spaces, is then missed, and the leak measure says so).
    """

    regions: tuple[Region, ...] = ()
    max_hold: int = 64

    def __add__(self, other: StreamSyntax) -> StreamSyntax:
        """Both syntaxes (for ``primary|fallback``): this one's regions win a tie."""
        seen = set(self.regions)
        extra = tuple(r for r in other.regions if r not in seen)
        return StreamSyntax((*self.regions, *extra), max(self.max_hold, other.max_hold))


def literal(token: str) -> str:
    """A pattern matching ``token`` literally (the ``regex`` module's escaping)."""
    return str(regex.escape(token))


def tokens(*toks: str) -> Region:
    """A markup region for bare tokens that are hidden and nothing more."""
    return Region(open="|".join(literal(t) for t in toks), close="none", call=False)


def tag(open_tok: str, close_tok: str) -> Region:
    """A call between two literal tags (``<tool_call>`` ... ``</tool_call>``)."""
    return Region(
        open=literal(open_tok),
        close="marker",
        close_pattern=literal(close_tok),
        close_text=close_tok,
    )


def to_end(*toks: str) -> Region:
    """A call opened by one of ``toks`` that runs to the end of the reply."""
    return Region(open="|".join(literal(t) for t in toks), close="end")


def literal_tokens(patterns: Sequence[re.Pattern[str]]) -> tuple[str, ...]:
    """The texts of those ``patterns`` that are plain tokens (written with ``re.escape``):
    a format's literal markers, which a careful application hides wherever they occur."""
    out: list[str] = []
    for p in patterns:
        text = re.sub(r"\\(.)", r"\1", p.pattern, flags=re.S)
        if text and re.escape(text) == p.pattern:
            out.append(text)
    return tuple(out)


EMPTY = StreamSyntax()
