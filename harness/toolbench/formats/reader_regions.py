"""The marker reader's state, and how it reads inside a call or markup region.

:class:`~toolbench.formats.marker_reader.MarkerReader` finds openers in visible text;
once one matched, the reader is in a region until the region's closer (a literal, a
pattern, balanced brackets, or the end of the reply). This base class holds what a
reader keeps between chunks (the parts fed, the scan's context, the held tail, the open
region) and the region half of the scan; the text half and the feeding are the reader's.
"""

from __future__ import annotations

from collections.abc import Sequence

from toolbench.formats.exchange import ParseResult
from toolbench.formats.reader_events import Event, Parser, new_event
from toolbench.formats.reader_plan import CTX, closer, header_call, plan_of
from toolbench.formats.scanning import NEVER, Brackets, Firsts, compiled, overlap, pending
from toolbench.formats.stream_syntax import Region, StreamSyntax
from toolbench.tools import ToolDef


class RegionScanner:
    """A marker reader's state between chunks and its scan inside a region (see the
    module docstring); :class:`~toolbench.formats.marker_reader.MarkerReader` is the
    reader."""

    def __init__(
        self,
        fmt: Parser,
        tools: Sequence[ToolDef] | None,
        syntax: StreamSyntax,
        *,
        early_calls: bool = True,
    ) -> None:
        self._fmt, self._tools, self._syntax = fmt, tools, syntax
        self._hold = syntax.max_hold
        self._early_calls = early_calls
        self._regions = syntax.regions
        plan = plan_of(syntax)
        self._open, self._open_first, armed_first, self._holds, self._width, self._groups = plan
        self._armed = True
        """The last search ended on a possible start (or nothing was searched yet, or a
        region just ended): the next chunk must be searched."""
        self._parts: list[str] = []
        self._fed = 0
        self._ctx = ""
        self._win = ""
        self._win_start = 0
        self._region: Region | None = None
        self._rstart = 0
        self._rparts: list[str] = []
        self._stale = False
        """Chunks went by the fast path: the scan's context is read again from the parts."""
        self._brackets = Brackets()
        self._result: ParseResult | None = None
        self._holding = False
        """A tail of text is held (``feed`` may extend it without a search when
        :attr:`_holds` knows the longer tail after :attr:`_hctx`)."""
        self._hctx = ""
        """The held tail's context as the remembered holds key it (``_width`` characters)."""
        self._text_fast = NEVER if self._open is None else self._open_first
        self._armed_fast = NEVER if self._open is None else armed_first
        """In text, nothing held: the fast path, and the one after a search that ended on
        a possible start with nothing held (the reply's start, a line start, a region's
        end): an opener that never looks behind can begin only at one of its first
        characters, whatever came before; one anchored with ``^`` also at a character
        that begins it at a line start (kept until a chunk needs a search; see
        :attr:`_armed_at`)."""
        self._fast: Firsts | None = self._armed_fast
        self._armed_at = 0
        """Where the search that left the reader armed ended (at a line start, for an
        opener anchored with ``^``); once chunks went by the fast path, it is no longer
        armed."""

    @property
    def held(self) -> int:
        return len(self._win) if self._region is None else 0

    @property
    def result(self) -> ParseResult:
        if self._result is None:
            raise RuntimeError("the reader's result is known after close()")
        return self._result

    def _fresh_context(self, at: int) -> None:
        """After fast-path chunks, read the scan's context again (only a search needs it)."""
        if self._stale:
            self._ctx = self._tail_before(self._fed - at)
            self._stale = False

    def _tail_before(self, skip: int, keep: int = CTX) -> str:
        """The last ``keep`` characters fed before the last ``skip`` ones (the scan's
        context; fewer at the start of the reply)."""
        parts = self._parts
        if parts:
            last = parts[-1]
            n = len(last)
            if n >= skip + keep:
                return last[n - skip - keep : n - skip]
            if n == skip and len(parts) > 1 and len(parts[-2]) >= keep:
                # the usual case: the context ends with the chunk before this one
                before = parts[-2]
                return before[len(before) - keep :]
        need = keep + skip
        got: list[str] = []
        n = 0
        for part in reversed(self._parts):
            got.append(part)
            n += len(part)
            if n >= need:
                break
        tail = "".join(reversed(got))
        return tail[max(0, len(tail) - need) : len(tail) - skip]

    def _text(self, text: str, start: int, events: list[Event]) -> None:
        if text:
            events.append(new_event(Event, ("text", text, start, start + len(text), (), None)))

    # -- region state --------------------------------------------------------------------

    def _begin_region(self, region: Region, opener: str, start: int, events: list[Event]) -> None:
        self._region = region
        self._rstart = start
        self._rparts = [opener]
        self._win = ""
        if region.call:
            events.append(
                new_event(Event, ("call_started", opener, start, start + len(opener), (), None))
            )
        if region.close == "none":
            self._end_region(start + len(opener), events)
        elif region.close == "balanced":
            self._brackets = Brackets()
            self._brackets.scan(opener)

    def _scan_region(self, new: str, at: int, events: list[Event]) -> tuple[str | None, int]:
        region = self._region
        assert region is not None
        if region.close == "end":
            self._keep(new)
            return None, at
        if region.close == "balanced":
            i = self._brackets.scan(new)
            self._keep(new)
            if i < 0:
                return None, at
            self._end_region(at + i, events)
            return new[i:], at + i
        if region.close_text:
            return self._scan_literal(region.close_text, new, at, events)
        width = closer(region.close_pattern)[0]
        if width < CTX:  # as in _scan_text: only the context the closer can look at
            ctx = self._tail_before(self._fed - at + len(self._win), width) if width else ""
            self._stale = True
        else:
            self._fresh_context(at)
            ctx = self._ctx
        s = ctx + self._win + new
        base = len(ctx)
        abs0 = at - len(self._win) - base
        self._keep(new)
        m = compiled(region.close_pattern).search(s, base, partial=True)
        self._armed = pending(m, s)
        if m is None or m.partial:
            cut = len(s) if m is None else max(m.start(), len(s) - self._syntax.max_hold)
            if width == CTX:
                self._ctx = s[max(0, cut - CTX) : cut]
            self._win = s[cut:]
            return None, at
        end = m.end()
        if width == CTX:
            self._ctx = s[max(0, end - CTX) : end]
        self._win = ""
        self._end_region(abs0 + end, events)
        if self._region is not None:  # a header that turned out to open a call
            return self._scan_region(s[end:], abs0 + end, events) if s[end:] else (None, at)
        return s[end:], abs0 + end

    def _scan_literal(
        self, closer: str, new: str, at: int, events: list[Event]
    ) -> tuple[str | None, int]:
        """``_scan_region`` for a literal closer: string search, and the held tail is the
        longest end of the text that begins the closer (what a partial match would hold)."""
        s = self._win + new
        abs0 = at - len(self._win)
        self._keep(new)
        i = s.find(closer)
        if i < 0:
            self._win = s[len(s) - overlap(s, closer) :]
            return None, at
        end = i + len(closer)
        self._ctx = s[max(0, end - CTX) : end]
        self._win = ""
        self._end_region(abs0 + end, events)
        return s[end:], abs0 + end

    def _keep(self, text: str) -> None:
        self._rparts.append(text)

    def _end_region(self, end: int, events: list[Event], closing: bool = False) -> None:
        region = self._region
        assert region is not None
        block = "".join(self._rparts)[: end - self._rstart]
        self._region = None
        self._armed = True
        self._stale = True
        self._rparts = []
        self._win = ""
        if region.call:
            early = self._early_calls and block
            calls = tuple(self._fmt.parse(block, self._tools).calls) if early else ()
            events.append(
                new_event(Event, ("call_complete", block, self._rstart, end, calls, None))
            )
            return
        if region.call_when and not closing and compiled(region.call_when).search(block):
            events.append(new_event(Event, ("call_started", block, self._rstart, end, (), None)))
            self._region = header_call(region.call_close)
            self._rparts = [block]
            return
        events.append(new_event(Event, ("markup", block, self._rstart, end, (), None)))
