"""What a streaming user saw: a reply's timed chunks replayed through its format's reader
under a display policy.

:func:`observe_stream` reports what was displayed, whether raw call markup leaked to the
screen, how long text was held back and when the first call was known (``careful``: show
the reader's text events; ``naive``: show everything until a call is recognised).
"""

from __future__ import annotations

import operator
import re
from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import accumulate, pairwise
from typing import Literal, Protocol

from toolbench.formats.base import Format
from toolbench.formats.exchange import ParseResult
from toolbench.formats.reader_events import Event
from toolbench.tools import ToolDef


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
