"""A streamed body read as the wire hands it over: how it is cut into events (its
framing, :mod:`toolbench.framings`, chosen by content type and confirmed by its first
line), the guard that watches
the bytes event by event (an oversized event, one that is not JSON, a body cut off inside
an event), and the :class:`Clock` that keeps what was read (each JSON event with the
offset of the chunk that completed it, which fields carried a reply, a provider's error
object).

The same guard reads a live stream, a stream replayed through the transport and a
recorded stream decoded for its cassette (:func:`events_of`), so the three see the same
events and the same faults.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import toolbench.cassettes.recording as rec
from toolbench import codes
from toolbench.cassettes.faults import error_object
from toolbench.framings import (
    FRAMINGS,
    BadFrame,
    FrameCutter,
    FrameTooLarge,
    Framing,
    framing_of,
)

MAX_EVENT_BYTES = 1_000_000
"""The largest server-sent event accepted (bytes between two blank lines)."""

# --------------------------------------------------------------------------- streams


class StreamFault(Exception):
    """The event stream itself failed (typed ``infra.stream_*`` code)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


class EventGuard:
    """Watches the raw bytes as they pass, event by event, in linear time: refuses an
    event larger than :data:`MAX_EVENT_BYTES`, and notes an event that is not JSON (or a
    binary frame that is not one) and a stream that ends inside an event (its fault is on
    the :class:`Clock`). How the bytes are cut is the :class:`~toolbench.framings.Framing`'s
    (registered by content type), so a new framing is a module of its own."""

    def __init__(self, clock: Clock, framing: Framing) -> None:
        self.clock = clock
        self.framing = framing
        clock.framing = framing.name
        self.line = bytearray()
        self.event = 0
        self.frames = framing.frames(MAX_EVENT_BYTES) if framing.frames is not None else None
        self.sniffed = self.frames is not None
        """Whether the body's first line confirmed (or chose) the line framing."""

    def _too_large(self) -> StreamFault:
        fault = StreamFault(
            codes.INFRA_STREAM_EVENT_TOO_LARGE,
            f"a server-sent event exceeded {MAX_EVENT_BYTES} bytes",
        )
        self.clock.fault = fault
        return fault

    def feed(self, data: bytes) -> None:
        if self.frames is not None:
            self._frames(self.frames, data)
            return
        start = 0
        while True:
            nl = data.find(b"\n", start)
            piece = data[start:] if nl < 0 else data[start:nl]
            self.line += piece
            self.event += len(piece) + (0 if nl < 0 else 1)
            if self.event > MAX_EVENT_BYTES:
                raise self._too_large()
            if nl < 0:
                return
            self._line(bytes(self.line).rstrip(b"\r"))
            self.line.clear()
            start = nl + 1

    def _frames(self, cutter: FrameCutter, data: bytes) -> None:
        if self.clock.fault is not None:
            return
        try:
            payloads = cutter.feed(data)
        except FrameTooLarge:
            raise self._too_large() from None
        except BadFrame as exc:
            self.clock.fault = StreamFault(codes.INFRA_STREAM_BAD_EVENT, str(exc))
            return
        for payload in payloads:
            self._payload(payload)

    def _line(self, line: bytes) -> None:
        if not self.sniffed and line.strip():
            self._sniff(line)
        framing = self.framing
        if not line or framing.event_per_line:
            self.event = 0
        if not line or self.clock.fault is not None or framing.line is None:
            return
        payload = framing.line(line)
        if payload is not None:
            self._payload(payload)

    def _sniff(self, line: bytes) -> None:
        """The framing of a line-cut body, chosen by its first line as well as by its
        content type: providers label the same events ``text/event-stream``,
        ``application/x-ndjson``, ``application/stream+json``, ``application/json`` or
        nothing (Cohere v2 sends server-sent events; gateways relabel them). The first
        registered line framing that claims the line (:attr:`Framing.sniff`) is chosen;
        a line none claims keeps the declared framing."""
        self.sniffed = True
        head = line.lstrip()
        for framing in FRAMINGS.sniffers():
            if framing.sniff is not None and framing.sniff(head):
                self.framing = framing
                self.clock.framing = framing.name
                return

    def _payload(self, payload: bytes) -> None:
        try:
            data = json.loads(payload)
        except ValueError:
            head = payload[:60].decode("utf-8", "replace")
            self.clock.fault = StreamFault(
                codes.INFRA_STREAM_BAD_EVENT, f"{self.framing.what} is not JSON ({head!r})"
            )
            return
        self.clock.add(data, self.clock.last_ms)

    def close(self) -> None:
        """The body ended: a partial line left over means the stream was cut off."""
        unfinished = self.frames.pending if self.frames is not None else self.line.strip()
        if unfinished and self.clock.fault is None:
            self.clock.fault = StreamFault(
                codes.INFRA_STREAM_TRUNCATED, "the event stream ended inside an event"
            )


CARRIERS = ("choices", "candidates", "message", "delta", "content_block", "output")
"""Top-level fields of a streamed event that carry a reply when not empty (OpenAI chat
``choices``, Gemini ``candidates``, Ollama ``message``, Anthropic ``delta`` and
``content_block``, ...): which of them a stream carried tells a reply that came
apart from one that never came (:func:`toolbench.cassettes.faults.stream_fault`)."""
_CARRIER_SET = frozenset(CARRIERS)


class Clock:
    """The offset of the last raw chunk read (what a delta LiteLLM yields is stamped with)."""

    def __init__(self, path: str = "") -> None:
        self.path = path
        """The request's URL path (which protocol the stream speaks)."""
        self.last_ms: float | None = None
        self.fault: StreamFault | None = None
        self.framing: str | None = None
        """The name of the framing the body was cut by (None: no body read yet)."""
        self.events = 0
        """JSON events read (``data:`` lines, NDJSON lines, eventstream payloads)."""
        self.carried: set[str] = set()
        """The :data:`CARRIERS` some event held with a value."""
        self.chat_chunks = False
        """The stream carried OpenAI ``chat.completion.chunk`` events (with ``choices``)."""
        self.raw_events: list[tuple[Any, float | None]] = []
        """The JSON events as the server sent them, with their offsets, for the protocol
        readers (:mod:`toolbench.providers.wire`). LiteLLM repairs a delta
        sequence on the way (it drops a call without id, makes up a ``finish_reason``,
        renumbers indices), so the broken sequences are read from the bytes."""
        self.decoded: list[rec.Event] = []
        """Every JSON event read, dict or not, with its offset (what a cassette keeps)."""
        self.error: str | None = None
        """What the first event that was a provider's error object said
        (:func:`~toolbench.cassettes.faults.error_object`: Anthropic's ``error`` event, a
        gateway's ``{"error": ...}`` chunk); a stream that carried one is never recorded."""
        self.stored: list[rec.Event] | None = None
        """On a replay from a cassette's decoded events: those events (a content-only chat
        chunk as its text, :func:`~toolbench.cassettes.recording.content_only`)."""

    def add(self, data: Any, offset_ms: float | None) -> None:
        """One JSON event decoded from the wire (or from a cassette's chunks)."""
        self.decoded.append((offset_ms or 0.0, data))
        self._see(data, offset_ms)

    def replay(self, framing: Framing, events: list[rec.Event], last_ms: float) -> Clock:
        """The events a cassette keeps decoded, seen as if read from the wire (the same
        carriers and chat chunks), with no framing parsed and no JSON decoded: ``stored``
        holds them for the reader, ``raw_events`` those kept whole."""
        self.framing, self.last_ms = framing.name, last_ms
        self.decoded, self.stored = events, events
        self.events += len(events)
        carried, chat = self.carried, self.chat_chunks
        whole = [(data, offset) for offset, data in events if type(data) is dict]
        if len(whole) < len(events) and any(type(data) is str for _, data in events):
            # content-only chat chunks (the search stops at the first, most often event 1)
            carried.add("choices")
            chat = True
        for data, _ in whole:  # _see, for the few events kept whole
            for key in data.keys() & _CARRIER_SET:
                if data[key]:
                    carried.add(key)
            chat = chat or isinstance(data.get("choices"), list)
        self.raw_events.extend(whole)
        self.chat_chunks = chat
        return self

    def _see(self, data: Any, offset_ms: float | None) -> None:
        self.events += 1
        if not isinstance(data, dict):
            return
        self.carried.update(k for k in CARRIERS if data.get(k))
        if self.error is None:
            self.error = error_object(data)
        self.raw_events.append((data, offset_ms))
        if isinstance(data.get("choices"), list):
            self.chat_chunks = True


def decode(chunks: Sequence[rec.Chunk], framing: Framing, path: str = "") -> Clock | None:
    """The clock of reading ``chunks`` as the wire would (its ``decoded`` events are what
    a cassette keeps); None when the stream's framing fails (too large, cut off, not
    JSON: no events kept, the chunks are judged again when replayed)."""
    clock = Clock(path)
    guard = EventGuard(clock, framing)
    try:
        for c in chunks:
            clock.last_ms = c.offset_ms
            guard.feed(c.data())
        guard.close()
    except StreamFault:
        return None
    return None if clock.fault is not None else clock


def events_of(response: rec.RecordedResponse) -> list[rec.Event] | None:
    """The decoded events a cassette keeps beside a response's chunks: those of a 2xx
    stream whose framing reads cleanly (None otherwise)."""
    chunks = response.chunks
    if not chunks or not 200 <= response.status < 300:
        return None
    clock = decode(chunks, framing_of(response.headers))
    return None if clock is None else rec.kept(clock.decoded)
