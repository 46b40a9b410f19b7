"""The incremental reader's interface: the events a reader returns and the reader protocol.

A chat application streams a reply to its user as it arrives; a reader says, chunk by
chunk, what of it is visible text, where a call starts and ends, and what is hidden
markup. Every format's reader (:class:`~toolbench.formats.marker_reader.MarkerReader`)
returns these events; :mod:`toolbench.formats.observe` reads them as a user would see
them. This module imports no format, so a format's base class and the reader can both
depend on it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal, NamedTuple, Protocol

from toolbench.formats.exchange import ParseResult, ToolCall
from toolbench.tools import ToolDef

EventKind = Literal["text", "call_started", "call_complete", "markup", "final"]


class Event(NamedTuple):
    """One thing a reader recognised.

    ``text``: the visible text (``text``), the opener (``call_started``), the whole raw call
    block (``call_complete``), the hidden markup (``markup``), the final answer or content
    (``final``). ``start``/``end``: where that text lies in the reply (character offsets).
    ``calls``: what the call block parses to on its own (``call_complete``, when the reader
    was made with ``early_calls``; informative, the authoritative calls are
    ``result.calls``); ``result`` on ``final``. A named tuple,
    not a dataclass: a reply fed one character at a time makes one event per character.
    """

    kind: EventKind
    text: str = ""
    start: int = 0
    end: int = 0
    calls: tuple[ToolCall, ...] = ()
    result: ParseResult | None = None


class IncrementalReader(Protocol):
    """Reads a reply chunk by chunk. ``result`` is valid after :meth:`close`."""

    def feed(self, chunk: str) -> list[Event]: ...

    def close(self) -> list[Event]: ...

    @property
    def result(self) -> ParseResult: ...

    @property
    def held(self) -> int:
        """Characters of visible text received but held back (could become an opener)."""
        ...


class Parser(Protocol):
    """What a reader needs of its format: the whole parse (at close, and of each call
    block when the reader was made with ``early_calls``)."""

    def parse(self, text: str, tools: Sequence[ToolDef] | None = None) -> ParseResult: ...


new_event = tuple.__new__
"""Builds an :class:`Event` without the named tuple's Python-level ``__new__`` (a reader's
fast path makes one per character of text; all six fields are given, in order)."""
