"""Incremental readers: a reply read as it streams, and what a streaming user saw.

A chat application streams the model's text to its user as it arrives. Whether raw call
markup reaches the screen depends on when the application's parser recognises a call, and
on how much text it is willing to hold back while a tail could still become a marker. This
module measures exactly that, for any format:

* :class:`MarkerReader` reads a reply chunk by chunk from the format's declared
  :class:`~toolbench.formats.streamsyntax.StreamSyntax` and returns :class:`Event`\\ s:
  visible text (with a held-back tail that could still become an opener), a call started,
  a call complete, hidden markup, and at :meth:`~MarkerReader.close` the final result,
  which is exactly ``fmt.parse(whole text, tools)`` (one whole parse at close keeps split
  invariance exact; the events are what an application could act on earlier).
  Linear in total bytes: each chunk is scanned once, plus a bounded tail.
* :func:`observe_stream` replays timed chunks through a reader under a display policy
  (``careful``: show the reader's text events; ``naive``: show everything until a call is
  recognised) and reports what was displayed, whether it leaked, and the timings.

A format that declares no syntax still gets a working reader: all text is shown at once
and calls are only known at close (a naive application, by necessity).
"""

from __future__ import annotations

import codecs
import operator
import re
from bisect import bisect_left, bisect_right
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from itertools import accumulate, chain, pairwise, repeat
from typing import TYPE_CHECKING, Literal, NamedTuple, Protocol

import regex

from toolbench.formats.base import ParseResult, ToolCall
from toolbench.formats.scanning import (
    IN_CODE,
    IN_STRING,
    NEVER,
    Brackets,
    Firsts,
    after_newline_firsts,
    compiled,
    context_width,
    first_chars,
    line_start_firsts,
    literal_firsts,
    openers,
    overlap,
    pending,
)
from toolbench.formats.streamsyntax import Region, StreamSyntax
from toolbench.tools import ToolDef

if TYPE_CHECKING:
    from toolbench.formats.base import Format

EventKind = Literal["text", "call_started", "call_complete", "markup", "final"]

_CTX = 8
"""Characters kept before the scanned window, so ``^`` and lookbehinds see their context."""


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


_tuple_new = tuple.__new__
"""Builds an :class:`Event` without the named tuple's Python-level ``__new__`` (the fast
path makes one per character of text; all six fields are given, in order)."""


_HOLDS_MAX = 4096
Holds = dict[tuple[str, str], None]
_HOLDS: dict[int, tuple[object, Holds, int]] = {}


def _holds_of(pattern: regex.Pattern[str] | None) -> tuple[Holds, int]:
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
    width = context_width(pattern.pattern, _CTX) if pattern is not None else _CTX
    _HOLDS[id(pattern)] = (pattern, made, width)
    return made, width


class _Plan(NamedTuple):
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


_PLANS: dict[int, tuple[StreamSyntax, _Plan]] = {}


def _plan(syntax: StreamSyntax) -> _Plan:
    got = _PLANS.get(id(syntax))
    if got is not None and got[0] is syntax:
        return got[1]
    pattern, first = openers(syntax)
    holds, width = _holds_of(pattern)
    groups = {f"r{i}": i for i in range(len(syntax.regions))}
    armed = first if width == 0 else None
    if pattern is not None and width == 1:
        armed = line_start_firsts(pattern.pattern)
        first = after_newline_firsts(pattern.pattern) or first
    made = _Plan(pattern, first, armed, holds, width, groups)
    if len(_PLANS) >= 256:
        _PLANS.clear()
    _PLANS[id(syntax)] = (syntax, made)
    return made


_CLASS_ONLY = re.compile(r"(?:\[(?:\\.|[^\]\\])*\](?:\|\[(?:\\.|[^\]\\])*\])*|\(\?!\))")


@lru_cache(maxsize=256)
def _class_only(pattern: str) -> bool:
    """Whether a fast path's pattern is character classes alone (``[...]|[...]``, or the
    never-matching ``(?!)``): then a chunk holds a match exactly when the joined text
    holds one within it, whatever chunk comes before or after."""
    return _CLASS_ONLY.fullmatch(pattern) is not None


class MarkerReader:
    """The incremental reader for any :class:`StreamSyntax` (see the module docstring)."""

    def __init__(
        self,
        fmt: Format,
        tools: Sequence[ToolDef] | None,
        syntax: StreamSyntax,
        *,
        early_calls: bool = True,
    ) -> None:
        self._fmt, self._tools, self._syntax = fmt, tools, syntax
        self._hold = syntax.max_hold
        self._early_calls = early_calls
        self._regions = syntax.regions
        plan = _plan(syntax)
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

    # -- public ------------------------------------------------------------------------

    @property
    def held(self) -> int:
        return len(self._win) if self._region is None else 0

    @property
    def result(self) -> ParseResult:
        if self._result is None:
            raise RuntimeError("the reader's result is known after close()")
        return self._result

    def feed(self, chunk: str) -> list[Event]:
        if not chunk:
            return []
        fast = self._fast
        if fast is not None and (
            chunk not in fast[1] and (chunk < "\x80" or not fast[2])
            if len(chunk) == 1
            else fast[0].search(chunk) is None
        ):
            # The common case: nothing in this chunk can begin what is looked for (and
            # nothing is held back: the fast path is off while a tail is held).
            self._parts.append(chunk)
            at = self._fed
            self._fed = end = at + len(chunk)
            self._stale = True
            if self._region is not None:
                self._rparts.append(chunk)
                return []
            return [_tuple_new(Event, ("text", chunk, at, end, (), None))]
        if fast is not None and self._armed and self._fed != self._armed_at:
            # Chunks went by since the search that ended on a line start: this one begins
            # no line, and only the characters that begin a match anywhere matter.
            self._armed = False
            self._fast = self._fast_path()
            return self.feed(chunk)
        if self._holding:
            held = self._win + chunk
            if (self._hctx, held) in self._holds:
                # The held tail grows and is still the beginning of an opener, as a
                # search of this very context and tail found before: no search again.
                self._win = held
                self._parts.append(chunk)
                self._fed += len(chunk)
                return []
        if self._result is not None:
            return []
        self._parts.append(chunk)
        at = self._fed
        self._fed += len(chunk)
        events: list[Event] = []
        rest: str | None = chunk
        self._holding = False
        region = self._region
        if region is not None and region.close == "balanced":
            # inside a bracketed call, most chunks end nothing: counted and kept, at once
            brackets = self._brackets
            i = brackets.scan(chunk)
            self._rparts.append(chunk)
            if i < 0:
                quote = brackets.quote
                self._fast = None if brackets.escape else IN_STRING[quote] if quote else IN_CODE
                return events
            self._end_region(at + i, events)
            rest, at = chunk[i:], at + i
        while rest is not None:
            if self._region is None:
                rest, at = self._scan_text(rest, at, events)
            else:
                rest, at = self._scan_region(rest, at, events)
        if self._region is None and not self._win:  # _fast_path's usual case, inline
            self._fast = self._armed_fast if self._armed else self._text_fast
        else:
            self._fast = self._fast_path()
        self._armed_at = self._fed
        return events

    def feed_run(
        self,
        chunks: Sequence[str],
        i: int,
        shown: list[Event],
        whole: str | None = None,
        ends: Sequence[int] | None = None,
    ) -> int:
        """Feed ``chunks[i:]`` while each goes by :meth:`feed`'s fast path (nothing in it
        can begin what is looked for, nothing held back), appending the text event each
        brings to ``shown`` (none inside a region); returns the index of the first chunk
        not fed, which :meth:`feed` must take. The same bookkeeping as that fast path, in
        one loop: a replayed stream's 200 deltas, measured for display, paid a call to
        :meth:`feed` and to :attr:`held` each (a fast chunk leaves nothing held).

        Given the chunks joined (``whole``) and where each ends (``ends``), and when what
        is looked for is characters alone (a class: no line start, no lookaround), one
        search of the joined text finds the first chunk that needs the reader; the ones
        before it are taken together."""
        fast = self._fast
        if fast is None:
            return i
        if whole is not None and ends is not None and _class_only(fast[0].pattern):
            pos = ends[i - 1] if i else 0
            if pos == self._fed:
                return self._class_run(chunks, i, shown, whole, ends, fast[0].search(whole, pos))
        search, firsts, non_ascii = fast[0].search, fast[1], fast[2]
        parts, region, fed, n = self._parts, self._region, self._fed, len(chunks)
        while i < n:
            chunk = chunks[i]
            if len(chunk) == 1:
                if chunk in firsts or (chunk >= "\x80" and non_ascii):
                    break
            elif chunk and search(chunk) is not None:
                break
            if chunk:
                parts.append(chunk)
                at, fed = fed, fed + len(chunk)
                if region is None:
                    shown.append(_tuple_new(Event, ("text", chunk, at, fed, (), None)))
                else:
                    self._rparts.append(chunk)
            i += 1
        if fed != self._fed:
            self._fed, self._stale = fed, True
        return i

    def _class_run(
        self,
        chunks: Sequence[str],
        i: int,
        shown: list[Event],
        whole: str,
        ends: Sequence[int],
        found: re.Match[str] | None,
    ) -> int:
        """:meth:`feed_run` when one search of the joined chunks found the first
        character that needs the reader (``found``; None: no chunk needs it)."""
        stop = len(chunks) if found is None else bisect_right(ends, found.start(), i)
        if stop <= i:
            return i
        texts = chunks[i:stop]
        if "" in texts:  # an empty chunk brings no event: the one-by-one way
            return self.feed_run(chunks, i, shown)
        closes = ends[i:stop]
        starts = [ends[i - 1] if i else 0, *closes[:-1]]
        self._parts.extend(texts)
        if self._region is None:
            shown.extend(map(_tuple_new, repeat(Event), zip(
                repeat("text"), texts, starts, closes, repeat(()), repeat(None))))  # fmt: skip
        else:
            self._rparts.extend(texts)
        self._fed, self._stale = closes[-1], True
        return stop

    def close(self) -> list[Event]:
        if self._result is not None:
            return []
        events: list[Event] = []
        if self._region is None:
            if self._win:
                self._text(self._win, self._win_start, events)
                self._win = ""
        elif self._region.call:
            self._end_region(self._fed, events, closing=True)
        whole = "".join(self._parts)
        self._result = self._fmt.parse(whole, self._tools)
        self._fast = None
        self._holding = False
        answer = self._result.final_answer
        text = answer if answer is not None else self._result.content
        events.append(_tuple_new(Event, ("final", text, 0, self._fed, (), self._result)))
        return events

    def _fast_path(self) -> Firsts | None:
        """The first characters of what the current state looks for (None: no fast path).

        A chunk that holds none of them, with nothing held back, is shown (or kept in the
        call) without running the pattern engine: most of a reply fed a character at a
        time never reaches it, which is what keeps one-character feeding fast.
        """
        region = self._region
        if self._result is not None or self._win:
            return None
        if region is None:
            return self._armed_fast if self._armed else self._text_fast
        if region.close == "end":
            return NEVER
        if region.close_text:
            return literal_firsts(region.close_text[0])
        if region.close == "marker":
            _, first, armed = _closer(region.close_pattern)
            return armed if self._armed else first
        brackets = self._brackets
        if region.close == "balanced" and not brackets.escape:
            return IN_STRING[brackets.quote] if brackets.quote else IN_CODE
        return None

    def _earlier_partial(self, s: str, base: int, m: regex.Match[str]) -> regex.Match[str]:
        """A possible match that begins before the complete one ``m`` (the ``regex``
        module prefers a complete match to an earlier partial one): the earliest start
        wins, as it does when the same text is searched whole."""
        assert self._open is not None
        lo, hi = max(base, m.start() - self._syntax.max_hold), m.start()
        first = self._open_first
        if first is None:
            starts: Iterable[int] = range(lo, hi)
        else:  # where a first character is (after a newline: the next one too)
            found = (f.start() for f in first.pattern.finditer(s, lo, hi))
            line_start = [lo] if lo == 0 or s[lo - 1] == "\n" else []
            starts = chain(
                line_start, (p for f in found for p in ((f, f + 1) if s[f] == "\n" else (f,)))
            )
        for pos in starts:
            if pos >= hi:
                break
            got = self._open.match(s, pos, partial=True)
            if got is not None and got.partial:
                return got
        return m

    def _fresh_context(self, at: int) -> None:
        """After fast-path chunks, read the scan's context again (only a search needs it)."""
        if self._stale:
            self._ctx = self._tail_before(self._fed - at)
            self._stale = False

    def _tail_before(self, skip: int, keep: int = _CTX) -> str:
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

    # -- text state ----------------------------------------------------------------------

    def _text(self, text: str, start: int, events: list[Event]) -> None:
        if text:
            events.append(_tuple_new(Event, ("text", text, start, start + len(text), (), None)))

    def _scan_text(self, new: str, at: int, events: list[Event]) -> tuple[str | None, int]:
        if self._open is None:
            self._text(new, at, events)
            return None, at
        width = self._width
        if width < _CTX:
            # The opener never looks behind, or only at the one character before (``^``):
            # no more is searched again, and the whole context (which a region's closer
            # may need) is read when it is needed.
            if not width:
                ctx = ""
            elif self._win:  # a held tail: its context is the one remembered with it
                ctx = self._hctx
            else:
                ctx = self._tail_before(self._fed - at, width)
            self._stale = True
        elif self._stale:
            self._ctx = ctx = self._tail_before(self._fed - at)
            self._stale = False
        else:
            ctx = self._ctx
        s = ctx + self._win + new
        base = len(ctx)
        abs0 = at - len(self._win) - base
        m = self._open.search(s, base, partial=True)
        n = len(s)
        if m is None or (m.partial and m.start() == n):
            # The usual outcome: no opener begins in this text (but perhaps on the next
            # line: the empty partial match after a newline): all of it is shown.
            if n > base:
                shown = ("text", s[base:], abs0 + base, abs0 + n, (), None)
                events.append(_tuple_new(Event, shown))
            if width == _CTX:
                self._ctx = s[n - _CTX :] if n > _CTX else s
            self._win = ""
            self._win_start = abs0 + n
            self._holding = False
            self._armed = m is not None and s.endswith("\n")
            return None, at
        if m.partial and m.start() == base < n <= base + self._hold:
            # the held tail is still the beginning of an opener: hold it longer
            self._win = s[base:]
            self._win_start = abs0 + base
            self._armed = True
            self._holding = True
            self._hctx = hctx = ctx[-width:] if width else ""
            holds = self._holds
            if len(holds) >= _HOLDS_MAX:
                holds.clear()
            holds[hctx, self._win] = None
            return None, at
        if m is not None and not m.partial:
            m = self._earlier_partial(s, base, m)
        self._armed = pending(m, s)
        if m is None or m.partial:
            cut = n if m is None else max(m.start(), n - self._syntax.max_hold)
            self._text(s[base:cut], abs0 + base, events)
            if width == _CTX:
                self._ctx = s[max(0, cut - _CTX) : cut]
            if width:
                self._hctx = s[max(0, cut - width) : cut]
            self._win = s[cut:]
            self._win_start = abs0 + cut
            self._holding = cut < n
            return None, at
        self._text(s[base : m.start()], abs0 + base, events)
        # the region's group closes last, so it is the match's last group
        index = self._groups.get(m.lastgroup or "", -1)
        if index < 0:
            index = next(i for i in range(len(self._regions)) if m.group(f"r{i}") is not None)
        end = m.end()
        if width == _CTX:
            self._ctx = s[max(0, end - _CTX) : end]
        self._win = ""
        self._begin_region(self._regions[index], m.group(0), abs0 + m.start(), events)
        return s[end:], abs0 + end

    # -- region state --------------------------------------------------------------------

    def _begin_region(self, region: Region, opener: str, start: int, events: list[Event]) -> None:
        self._region = region
        self._rstart = start
        self._rparts = [opener]
        self._win = ""
        if region.call:
            events.append(
                _tuple_new(Event, ("call_started", opener, start, start + len(opener), (), None))
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
        width = _closer(region.close_pattern)[0]
        if width < _CTX:  # as in _scan_text: only the context the closer can look at
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
            if width == _CTX:
                self._ctx = s[max(0, cut - _CTX) : cut]
            self._win = s[cut:]
            return None, at
        end = m.end()
        if width == _CTX:
            self._ctx = s[max(0, end - _CTX) : end]
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
        self._ctx = s[max(0, end - _CTX) : end]
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
                _tuple_new(Event, ("call_complete", block, self._rstart, end, calls, None))
            )
            return
        if region.call_when and not closing and compiled(region.call_when).search(block):
            events.append(_tuple_new(Event, ("call_started", block, self._rstart, end, (), None)))
            self._region = _header_call(region.call_close)
            self._rparts = [block]
            return
        events.append(_tuple_new(Event, ("markup", block, self._rstart, end, (), None)))


@lru_cache(maxsize=256)
def _closer(pattern: str) -> tuple[int, Firsts | None, Firsts | None]:
    """A closing pattern's context width, its first characters, and what a chunk must hold
    to need a search after a line start (see ``MarkerReader._armed_fast``)."""
    width = context_width(pattern, _CTX)
    first = first_chars(pattern)
    armed = first if width == 0 else line_start_firsts(pattern) if width == 1 else None
    if width == 1:
        first = after_newline_firsts(pattern) or first
    return width, first, armed


@lru_cache(maxsize=64)
def _header_call(close_pattern: str) -> Region:
    """The call region a markup header turns into (made once, not per header)."""
    if not close_pattern:
        return Region(open="", close="end")
    return Region(open="", close="marker", close_pattern=close_pattern)


class ByteReader:
    """A reader fed bytes: UTF-8 decoded incrementally, so a chunk may split a character
    (the decoder keeps the partial sequence for the next chunk; invalid bytes become
    U+FFFD, as a lenient client would show them)."""

    def __init__(self, inner: IncrementalReader) -> None:
        self._inner = inner
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")

    def feed(self, chunk: bytes) -> list[Event]:
        text = self._decoder.decode(chunk)
        return self._inner.feed(text) if text else []

    def close(self) -> list[Event]:
        tail = self._decoder.decode(b"", final=True)
        events = self._inner.feed(tail) if tail else []
        return [*events, *self._inner.close()]

    @property
    def result(self) -> ParseResult:
        return self._inner.result

    @property
    def held(self) -> int:
        return self._inner.held


# -- what a streaming user saw -----------------------------------------------------------


@dataclass(frozen=True)
class TimedChunk:
    """A text delta and its arrival offset from the start of the request."""

    offset_ms: float
    text: str


class Timed(Protocol):
    """What :func:`observe_stream` reads of a delta: a :class:`TimedChunk`, or a stored
    trial's :class:`~toolbench.results.TimedText` read as it is (a copy of each of a
    stream's 200 deltas was a large share of the streaming scorer's time)."""

    @property
    def offset_ms(self) -> float: ...

    @property
    def text(self) -> str: ...


DisplayPolicy = Literal["careful", "naive"]
"""``careful``: show text at once except a held-back tail that could still become one of
the format's openers, and never a recognised call or markup. ``naive``: show everything as
it arrives until a call is recognised (then hide the call until it completes)."""


@dataclass(frozen=True)
class StreamView:
    """What the application showed while a reply streamed, and when calls were known."""

    displayed: str
    stream_leak: bool
    """A raw marker, or any part of a call's payload, reached ``displayed``."""
    leaked_chars: int
    """Characters of calls or hidden markup displayed, plus the length of raw markers of
    the format found in the rest of ``displayed``."""
    holdback_ms: float
    """Total time during which text that had arrived was held back (careful policy)."""
    first_call_byte_ms: float | None
    """Arrival of the chunk holding the first byte of the first call the reader recognised
    (the last chunk's arrival when the call was only found at the end; None: no call)."""
    call_complete_ms: float | None
    """Arrival of the chunk in which the first call was complete (same fallbacks)."""
    result: ParseResult


@dataclass
class _Span:
    start: int
    seen: int
    end: int


def observe_stream(
    fmt: Format,
    chunks: Sequence[Timed],
    policy: DisplayPolicy = "careful",
    tools: Sequence[ToolDef] | None = None,
) -> StreamView:
    """Feed ``chunks`` through ``fmt``'s reader and report what ``policy`` displayed."""
    reader = fmt.reader(tools, early_calls=False)
    feed = reader.feed
    texts = [c.text for c in chunks]
    ends = list(accumulate(map(len, texts)))
    holdback = 0.0
    spans: list[_Span] = []
    hidden: list[tuple[int, int]] = []
    shown: list[Event] = []
    keep = shown.append
    first_complete: float | None = None
    open_span: _Span | None = None
    n = len(chunks)
    last_ms = chunks[-1].offset_ms if chunks else 0.0

    def take(events: list[Event], fed: int, ms: float) -> None:
        """What a chunk brought besides its one text event (most chunks bring only that)."""
        nonlocal open_span, first_complete
        for ev in events:
            kind = ev.kind
            if kind == "text":
                keep(ev)
            elif kind == "call_started":
                open_span = _Span(ev.start, fed, fed)
            elif kind == "call_complete":
                span = open_span or _Span(ev.start, fed, ev.end)
                span.end = ev.end
                spans.append(span)
                open_span = None
                if first_complete is None:
                    first_complete = ms
            elif kind == "markup":
                hidden.append((ev.start, ev.end))

    # Runs of chunks that go by the reader's fast path are fed in one call (a text event
    # each, nothing held: no holdback); the others one by one.
    feed_run = getattr(reader, "feed_run", None)
    whole = "".join(texts)
    i = 0
    while i < n:
        if feed_run is not None:
            i = feed_run(texts, i, shown, whole, ends)
            if i == n:
                break
        events = feed(texts[i])
        if len(events) == 1 and events[0].kind == "text":
            keep(events[0])
        elif events:
            take(events, ends[i], chunks[i].offset_ms)
        if reader.held and i + 1 < n:
            holdback += max(0.0, chunks[i + 1].offset_ms - chunks[i].offset_ms)
        i += 1
    closing = reader.close()
    if n:  # nothing fed: nothing to show
        take(closing, ends[-1], last_ms)
    result = reader.result
    pieces = _joined(shown) if policy == "careful" else _naive_pieces(whole, spans)
    displayed = "".join([t for _, t in pieces])
    regions = sorted([(s.start, s.end) for s in spans] + hidden)
    leaked = _region_chars(pieces, regions) + _marker_chars(fmt, pieces, regions)
    first_byte = None
    if spans:
        first_byte = chunks[min(bisect_left(ends, spans[0].start + 1), n - 1)].offset_ms
    elif result.calls:
        first_byte = first_complete = last_ms
    return StreamView(
        displayed=displayed,
        stream_leak=leaked > 0,
        leaked_chars=leaked,
        holdback_ms=holdback if policy == "careful" else 0.0,
        first_call_byte_ms=first_byte,
        call_complete_ms=first_complete if spans or result.calls else None,
        result=result,
    )


def _joined(shown: list[Event]) -> list[tuple[int, str]]:
    """The displayed text events as ``(start, text)`` pieces, each run of events that
    continue one another joined into one piece (a stream's 200 deltas are a few pieces:
    what the leak counts read, with the same counts as piece by piece)."""
    starts = [ev.start for ev in shown]
    texts = [ev.text for ev in shown]
    nexts = list(map(operator.add, starts, map(len, texts)))
    cuts = [i for i, (s, e) in enumerate(zip(starts[1:], nexts, strict=False), 1) if s != e]
    return [(starts[a], "".join(texts[a:b])) for a, b in pairwise([0, *cuts, len(shown)]) if a < b]


def _naive_pieces(whole: str, spans: Sequence[_Span]) -> list[tuple[int, str]]:
    """What a naive app shows: all text, except a call from the end of the chunk in which
    it was recognised (it had shown that chunk already) to the call's end."""
    out: list[tuple[int, str]] = []
    pos = 0
    for span in spans:
        hide = max(span.seen, span.start, pos)
        if hide > pos:
            out.append((pos, whole[pos:hide]))
        pos = max(pos, span.end)
    if pos < len(whole):
        out.append((pos, whole[pos:]))
    return out


def _region_chars(pieces: Sequence[tuple[int, str]], regions: Sequence[tuple[int, int]]) -> int:
    """Displayed characters that lie inside a call or hidden markup."""
    total = 0
    starts = [r[0] for r in regions]
    for start, text in pieces:
        end = start + len(text)
        i = max(0, bisect_left(starts, start) - 1)
        while i < len(regions) and regions[i][0] < end:
            lo, hi = max(start, regions[i][0]), min(end, regions[i][1])
            total += max(0, hi - lo)
            i += 1
    return total


def _marker_chars(
    fmt: Format, pieces: Sequence[tuple[int, str]], regions: Sequence[tuple[int, int]]
) -> int:
    """Length of the format's raw markers (outside its visible markup) in the displayed text
    that lies outside every region (inside one, it is counted by :func:`_region_chars`)."""
    starts = [r[0] for r in regions]
    outside: list[str] = []
    for start, text in pieces:
        pos, end = start, start + len(text)
        i = max(0, bisect_left(starts, start) - 1)
        while i < len(regions) and regions[i][0] < end:
            lo, hi = regions[i]
            if hi > pos:
                if lo > pos:
                    outside.append(text[pos - start : lo - start])
                pos = max(pos, hi)
            i += 1
        if pos < end:
            outside.append(text[pos - start :])
    shown = "".join(outside)
    allowed = type(fmt).visible_markup
    total = 0
    for pattern in type(fmt).markers:
        for m in pattern.finditer(shown):
            if not any(_covers(a, shown, m) for a in allowed):
                total += max(1, m.end() - m.start())
    return total


def _covers(allowed: re.Pattern[str], text: str, m: re.Match[str]) -> bool:
    got = allowed.match(text, m.start())
    return got is not None and got.end() >= m.end()
