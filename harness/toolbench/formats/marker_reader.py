"""The incremental reader of every format: a reply read as it streams.

A chat application streams the model's text to its user as it arrives. Whether raw call
markup reaches the screen depends on when the application's parser recognises a call, and
on how much text it is willing to hold back while a tail could still become a marker.
:class:`MarkerReader` reads a reply chunk by chunk from the format's declared
:class:`~toolbench.formats.stream_syntax.StreamSyntax` and returns
:class:`~toolbench.formats.reader_events.Event`\\ s: visible text (with a held-back tail that
could still become an opener), a call started, a call complete, hidden markup, and at
:meth:`~MarkerReader.close` the final result, which is exactly ``fmt.parse(whole text,
tools)`` (one whole parse at close keeps split invariance exact; the events are what an
application could act on earlier). Linear in total bytes: each chunk is scanned once, plus
a bounded tail. What a user saw of them is :mod:`toolbench.formats.observe`.

A format that declares no syntax still gets a working reader: all text is shown at once
and calls are only known at close (a naive application, by necessity).
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Iterable, Sequence
from itertools import chain, repeat

import regex

from toolbench.formats.reader_events import Event, new_event
from toolbench.formats.reader_plan import CTX, HOLDS_MAX, class_only, closer
from toolbench.formats.reader_regions import RegionScanner
from toolbench.formats.scanning import (
    IN_CODE,
    IN_STRING,
    NEVER,
    Firsts,
    literal_firsts,
    pending,
)


class MarkerReader(RegionScanner):
    """The incremental reader for any :class:`StreamSyntax` (see the module docstring)."""

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
            return [new_event(Event, ("text", chunk, at, end, (), None))]
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
        if whole is not None and ends is not None and class_only(fast[0].pattern):
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
                    shown.append(new_event(Event, ("text", chunk, at, fed, (), None)))
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
            shown.extend(map(new_event, repeat(Event), zip(
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
        events.append(new_event(Event, ("final", text, 0, self._fed, (), self._result)))
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
            _, first, armed = closer(region.close_pattern)
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

    def _scan_text(self, new: str, at: int, events: list[Event]) -> tuple[str | None, int]:
        if self._open is None:
            self._text(new, at, events)
            return None, at
        width = self._width
        if width < CTX:
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
                events.append(new_event(Event, shown))
            if width == CTX:
                self._ctx = s[n - CTX :] if n > CTX else s
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
            if len(holds) >= HOLDS_MAX:
                holds.clear()
            holds[hctx, self._win] = None
            return None, at
        if m is not None and not m.partial:
            m = self._earlier_partial(s, base, m)
        self._armed = pending(m, s)
        if m is None or m.partial:
            cut = n if m is None else max(m.start(), n - self._syntax.max_hold)
            self._text(s[base:cut], abs0 + base, events)
            if width == CTX:
                self._ctx = s[max(0, cut - CTX) : cut]
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
        if width == CTX:
            self._ctx = s[max(0, end - CTX) : end]
        self._win = ""
        self._begin_region(self._regions[index], m.group(0), abs0 + m.start(), events)
        return s[end:], abs0 + end
