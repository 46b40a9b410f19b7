"""Streamed exchanges recorded at the httpx transport, with chunk timings.

vcrpy reads a whole body before returning it, which loses when each piece arrived. A
streamed trial therefore records itself: the response stream of the transport is wrapped,
and every chunk is kept as received (bytes, text when it is whole UTF-8 text, base64
otherwise, so a chunk that splits a character is kept as it came) with its arrival
offset in milliseconds from the moment the request was handed to the transport. Replay
feeds the same chunks in order, offline and without sleeping, and sets the same clock,
so a trial reports the recorded offsets whether it ran live or from the cassette.

The file is the trial's one cassette (:mod:`toolbench.cassettes.recording`: a versioned
JSON record, ``<scenario>.json``), its exchanges holding ``chunks``, saved atomically. A
replay at the provider boundary reads the same chunks without HTTP
(:meth:`SseTrialCassette.replay_stream`). Headers go through
the same scrubbing as the other cassettes; a body is redacted as a reader of the stream
sees it (:mod:`toolbench.cassettes.stream_scrub`: decoded JSON strings, a key split over
events), and its lines keep the offsets of the chunks that completed them.

Only a stream that ended cleanly with a 2xx status is recorded: a stream cut off, stalled
or malformed is a transient fault, asked again (as vcrpy's side never records a 5xx).
"""

from __future__ import annotations

import contextvars
import json
import time
from collections.abc import AsyncIterator, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Literal

import httpx

import toolbench.cassettes.recording as rec
from toolbench import codes, eventstream
from toolbench.cassettes.boundary import url_path
from toolbench.cassettes.faults import error_object
from toolbench.cassettes.hosts import normalise_local_model
from toolbench.cassettes.match import echo_equivalent, without_echo_extras
from toolbench.cassettes.persist import move_aside, write_atomically
from toolbench.cassettes.route import real_async, reset_stream_route, set_stream_route
from toolbench.cassettes.scrub import scrub_body_data, scrub_headers, scrub_request
from toolbench.cassettes.stream_scrub import redact_frames, redact_stream
from toolbench.cassettes.use import RecordOption
from toolbench.errors import CassetteLayoutError, CassetteMissingError, CassetteUnreadableError
from toolbench.redaction import redact_data, secret_values

MAX_EVENT_BYTES = 1_000_000
"""The largest server-sent event accepted (bytes between two blank lines)."""

RawChunk = rec.Chunk
SseExchange = rec.RecordedExchange
SseCassette = rec.Recording
"""A streamed trial's cassette is the one recording format
(:mod:`toolbench.cassettes.recording`)."""


def load(path: Path) -> SseCassette:
    """Read a trial's cassette; a file that is not one raises ``CassetteUnreadableError``
    (``CassetteLayoutError`` for the old layout or chunks without offsets)."""
    return rec.load(path)


def save(path: Path, cassette: SseCassette) -> None:
    """Write atomically (a temporary file renamed over the cassette)."""
    write_atomically(path, rec.dump(cassette), 0o644)


# --------------------------------------------------------------------------- streams


class StreamFault(Exception):
    """The event stream itself failed (typed ``infra.stream_*`` code)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


Framing = Literal["sse", "ndjson", "eventstream", "lines"]
"""How a streamed body is cut into events: server-sent events, one JSON object per line
(Ollama's ``application/x-ndjson``), AWS eventstream frames (Bedrock), or lines of a
body whose type says nothing more (only their size is guarded, and what the stream
carried is not judged: LiteLLM reads it)."""


def framing_of(headers: Any) -> Framing:
    ctype = str(headers.get("content-type", "")).lower()
    if eventstream.CONTENT_TYPE in ctype:
        return "eventstream"
    if "event-stream" in ctype:
        return "sse"
    return "ndjson" if "ndjson" in ctype or "jsonl" in ctype else "lines"


class _EventGuard:
    """Watches the raw bytes as they pass, event by event, in linear time: refuses an
    event larger than :data:`MAX_EVENT_BYTES`, and notes an event that is not JSON (or an
    eventstream frame whose CRC does not match) and a stream that ends inside an event
    (its fault is on the :class:`Clock`)."""

    def __init__(self, clock: Clock, framing: Framing = "sse") -> None:
        self.clock = clock
        self.framing = framing
        clock.framing = framing
        self.sse = framing == "sse"
        """False for a line-delimited stream (Ollama's NDJSON): each line is an event."""
        self.line = bytearray()
        self.event = 0
        self.frames = eventstream.FrameReader(MAX_EVENT_BYTES)
        self.sniffed = framing == "eventstream"
        """Whether the body's first line confirmed (or chose) the line framing."""

    def _too_large(self) -> StreamFault:
        fault = StreamFault(
            codes.INFRA_STREAM_EVENT_TOO_LARGE,
            f"a server-sent event exceeded {MAX_EVENT_BYTES} bytes",
        )
        self.clock.fault = fault
        return fault

    def feed(self, data: bytes) -> None:
        if self.framing == "eventstream":
            self._frames(data)
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

    def _frames(self, data: bytes) -> None:
        if self.clock.fault is not None:
            return
        try:
            frames = self.frames.feed(data)
        except eventstream.FrameTooLarge:
            raise self._too_large() from None
        except eventstream.FrameError as exc:
            self.clock.fault = StreamFault(codes.INFRA_STREAM_BAD_EVENT, str(exc))
            return
        for frame in frames:
            if frame.headers.get(":message-type", "event") != "event":
                continue  # an exception frame: LiteLLM raises it, classified as such
            self._payload(frame.payload, "an eventstream payload")

    def _line(self, line: bytes) -> None:
        if not self.sniffed and line.strip():
            self._sniff(line)
        if not line or not self.sse:
            self.event = 0
        if not line or self.clock.fault is not None or self.framing == "lines":
            return
        if self.sse:
            if not line.startswith(b"data:"):
                return
            payload = line[5:].strip()
            if payload == b"[DONE]":
                return
        else:
            payload = line.strip()
        self._payload(payload, "a data: line" if self.sse else "an NDJSON line")

    def _sniff(self, line: bytes) -> None:
        """The framing of a line-cut body, chosen by its first line as well as by its
        content type: providers label the same events ``text/event-stream``,
        ``application/x-ndjson``, ``application/stream+json``, ``application/json`` or
        nothing (Cohere v2 sends server-sent events; gateways relabel them). A line that
        starts a server-sent event field (``data:``, ``event:``, ``id:``, ``retry:``, a
        ``:`` comment) is SSE, one that starts a JSON object is NDJSON; any other first
        line keeps the declared framing (``lines``: nothing toolbench can read, judged
        by the streamed completion)."""
        self.sniffed = True
        head = line.lstrip()
        if head.startswith((b"data:", b"event:", b"id:", b"retry:", b":")):
            chosen: Framing = "sse"
        elif head.startswith(b"{"):
            chosen = "ndjson"
        else:
            return
        self.framing = self.clock.framing = chosen
        self.sse = chosen == "sse"

    def _payload(self, payload: bytes, what: str) -> None:
        try:
            data = json.loads(payload)
        except ValueError:
            head = payload[:60].decode("utf-8", "replace")
            self.clock.fault = StreamFault(
                codes.INFRA_STREAM_BAD_EVENT, f"{what} is not JSON ({head!r})"
            )
            return
        self.clock.add(data, self.clock.last_ms)

    def close(self) -> None:
        """The body ended: a partial line left over means the stream was cut off."""
        unfinished = self.frames.pending if self.framing == "eventstream" else self.line.strip()
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
        self.framing: Framing | None = None
        """How the body was cut into events (None: no body read yet)."""
        self.events = 0
        """JSON events read (``data:`` lines, NDJSON lines, eventstream payloads)."""
        self.carried: set[str] = set()
        """The :data:`CARRIERS` some event held with a value."""
        self.chat_chunks = False
        """The stream carried OpenAI ``chat.completion.chunk`` events (with ``choices``)."""
        self.raw_events: list[tuple[Any, float | None]] = []
        """The JSON events as the server sent them, with their offsets, for the protocol
        readers (:mod:`toolbench.providers.readers`). LiteLLM repairs a delta
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
        self.framing, self.last_ms, self.decoded, self.stored = framing, last_ms, events, events
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


_FRAMING = frozenset({"content-length", "content-encoding", "transfer-encoding"})
"""Headers about how the recorded body was framed on the wire, not what it is: a replay
hands over the recorded bytes as they are (a redacted body may differ in length)."""


def decode(chunks: Sequence[RawChunk], framing: Framing, path: str = "") -> Clock | None:
    """The clock of reading ``chunks`` as the wire would (its ``decoded`` events are what
    a cassette keeps); None when the stream's framing fails (too large, cut off, not
    JSON: no events kept, the chunks are judged again when replayed)."""
    clock = Clock(path)
    guard = _EventGuard(clock, framing)
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


class _Replay(httpx.AsyncByteStream):
    def __init__(self, chunks: Sequence[RawChunk], clock: Clock, framing: Framing = "sse") -> None:
        self.chunks, self.clock, self.framing = chunks, clock, framing

    async def __aiter__(self) -> AsyncIterator[bytes]:
        guard = _EventGuard(self.clock, self.framing)
        for c in self.chunks:
            data = c.data()
            self.clock.last_ms = c.offset_ms
            guard.feed(data)
            yield data
        guard.close()


class _Recording(httpx.AsyncByteStream):
    """The live stream, passed through; each chunk kept with its arrival offset."""

    def __init__(
        self, inner: httpx.AsyncByteStream, t0: float, clock: Clock, done: Any,
        framing: Framing = "sse",
    ) -> None:  # fmt: skip
        self.inner, self.t0, self.clock, self.done = inner, t0, clock, done
        self.framing = framing
        self.chunks: list[RawChunk] = []

    async def __aiter__(self) -> AsyncIterator[bytes]:
        guard = _EventGuard(self.clock, self.framing)
        try:
            async for data in self.inner:
                offset = round((time.perf_counter() - self.t0) * 1000, 3)  # as stored
                self.clock.last_ms = offset
                self.chunks.append(RawChunk.of(data, offset))
                guard.feed(data)
                yield data
        except StreamFault:
            raise
        except httpx.HTTPError as exc:
            self.clock.fault = StreamFault(
                codes.INFRA_STREAM_TRUNCATED, f"the event stream broke off: {type(exc).__name__}"
            )
            raise
        guard.close()

    def commit(self) -> None:
        """Record what was read, once: only when the streamed completion has judged the
        reply whole (:meth:`SseTrialCassette.commit`); a stream that carried nothing, or
        a provider's error event (:attr:`Clock.error`: the stream answered nothing,
        whatever its reader made of it), is never recorded."""
        if self.clock.fault is None and self.clock.error is None and self.done is not None:
            done, self.done = self.done, None
            done(self.chunks)

    async def aclose(self) -> None:
        await self.inner.aclose()


# --------------------------------------------------------------------------- the trial side


def _responses_events(clock: Clock) -> bool:
    """The stream was the Responses API's typed events (read by toolbench's own reader,
    ``providers/readers/responses.py``, not translated by LiteLLM)."""
    first = clock.raw_events[0][0] if clock.raw_events else None
    kind = first.get("type") if isinstance(first, dict) else None
    return isinstance(kind, str) and kind.startswith("response.")


def _same_body(a: Any, b: Any) -> bool:
    def norm(body: Any) -> Any:
        return echo_equivalent(without_echo_extras(body))

    return bool(norm(a) == norm(b))


def _json(content: bytes) -> Any:
    try:
        return json.loads(content or b"null")
    except ValueError:
        return content.decode("utf-8", "replace")


class SseTrialCassette:
    """The SSE cassette a streamed trial records into or replays from.

    Has what the provider asks of a trial's cassette (``unmatched``, ``last_fault``,
    ``last_replayed``, ``forget_last``, ``played``, ``latency``), plus the stream
    ``clock`` its streamed completion reads.
    """

    def __init__(self, path: Path, record: RecordOption, data: SseCassette) -> None:
        self.path, self.record, self.data = path, record, data
        self.unmatched: list[str] = []
        self.notes: list[str] = []
        self.last_fault: str | None = None
        self.last_replayed = False
        self.last_provider_s: float | None = None
        """Not timed at the transport for a stream: the streamed completion's own clock
        gives the provider's time (first byte to last chunk)."""
        self.clock = Clock()
        self.dirty = False
        self._played: set[int] = set()
        self._count = 0
        self._values = secret_values()
        self._rewritten: set[int] = set()
        """The exchanges recorded this run whose chunks redaction rewrote (by id)."""

    def played(self) -> int:
        return self._count

    def may_replay(self) -> bool:
        """A plain reply is never answered from here (:meth:`replay_reply`)."""
        return False

    def replay_reply(self, key: str, wire: Any) -> dict[str, Any] | None:
        """A stream is never answered at the provider boundary (the plain-request fast
        path): its chunks and their timings replay through the transport."""
        return None

    def remember_key(self, key: str) -> None:
        """Record toolbench's request ``key`` with the stream the last exchange recorded
        (a replay of what was kept as read finds the exchange by it; the HTTP replay
        matches streams by their request body)."""
        if self._recorded is not None:
            self._recorded.key = key

    def keep_read(self, read: dict[str, Any], capabilities: dict[str, Any]) -> None:
        """Keep with the stream the last exchange recorded its reply as assembled and
        what the sender decided (:class:`~toolbench.cassettes.recording.ReadReply`), and
        on the cassette what the sender's tables said the model takes."""
        if self._recorded is None or id(self._recorded) in self._rewritten:
            # A stream whose chunks redaction rewrote: what a replay reads from them (its
            # deltas, their offsets) is not what was assembled live, so nothing is kept
            # and a replay reads the chunks.
            return
        self._recorded.read = rec.ReadReply.model_validate(redact_data(read, self._values))
        self.data.capabilities = capabilities
        self.dirty = True

    def kept_capabilities(self) -> dict[str, Any] | None:
        """What the sender's tables said the model takes when recorded (None: not kept,
        or ``--record all``, which asks again)."""
        return None if self.record == "all" else self.data.capabilities

    def replay_read(
        self, asked_key: str, streamed: bool = True
    ) -> tuple[rec.ReadReply, str | None, int] | None:
        """The reply kept as read for the streamed request whose key before the sender's
        parameter filter is ``asked_key`` (one not played yet first), the key of the
        request that was sent, and the exchange's index (:meth:`play` counts it)."""
        self.last_fault, self.last_replayed, self._recorded, self._live = None, False, None, None
        if not streamed or self.kept_capabilities() is None:
            return None
        fallback = None
        for i, ex in enumerate(self.data.exchanges):
            read = ex.read
            if read is None or read.asked_key != asked_key or not ex.response.chunks:
                continue
            if not 200 <= ex.response.status < 300:
                continue
            if i not in self._played:
                return read, ex.key, i
            fallback = (read, ex.key, i) if fallback is None else fallback
        return fallback

    def play(self, index: int) -> None:
        """Count the exchange ``index`` as replayed (answered from what it kept)."""
        self.clock = Clock(self.clock.path)
        self._played.add(index)
        self._count += 1
        self.last_replayed, self._last_exchange = True, self.data.exchanges[index]

    def replay_stream(self, method: str, path: str, body: Any) -> bool:
        """Answer a streamed request at the provider boundary: the recorded chunks of the
        exchange whose request is ``body`` (the HTTP body the SDK would send) go through
        the same event guard as on the wire, setting :attr:`clock` with its offsets and
        its assembly of OpenAI chat chunks, with no HTTP and no LiteLLM stream wrapper.

        False (nothing played) when the full path must answer: no such exchange, a
        recorded refusal, a stream that is neither OpenAI chat chunks nor the Responses
        API's events (LiteLLM translates the others), or one whose replay would fail (the
        full path types the fault)."""
        if self.record == "all":
            return False
        found = self._find(method, path, body)
        if found is None:
            return False
        ex = self.data.exchanges[found]
        if not 200 <= ex.response.status < 300 or not ex.response.chunks:
            return False
        framing, events = framing_of(ex.response.headers), ex.response.events
        # No decoded events kept (a stream whose framing failed when recorded): the
        # chunks are read as on the wire, and a failed read left to the full path.
        clock = (
            Clock(path).replay(framing, events, ex.response.chunks.offsets_ms[-1])
            if events is not None
            else decode(ex.response.chunks, framing, path)
        )
        if clock is None:
            return False
        if clock.fault is not None or not (clock.chat_chunks or _responses_events(clock)):
            return False
        self.clock = clock
        self.last_fault, self.last_replayed, self._last_exchange = None, True, ex
        self._recorded, self._live = None, None
        self._played.add(found)
        self._count += 1
        return True

    def forget_last(self) -> None:
        """Drop a 4xx the last exchange recorded provisionally (the trial did not act on
        it, so ``--record new`` asks the server again); a stream is recorded only once it
        ended cleanly, and is never forgotten."""
        ex = self._recorded
        if ex is not None and ex.response.status >= 400:
            self.data.exchanges = [e for e in self.data.exchanges if e is not ex]
            self._recorded = None

    def latency(self, index: int, measured: float, replayed: bool) -> float | None:
        if replayed:
            ex = self._last_exchange
            return None if ex is None else ex.latency_s
        if self._recorded is not None:
            self._recorded.latency_s = round(measured, 4)
        return measured

    _last_exchange: SseExchange | None = None
    _recorded: SseExchange | None = None

    def _find(self, method: str, path: str, body: Any) -> int | None:
        """The exchange recorded for this request (one not played yet first), matched on
        the body as it is recorded: redacted (:func:`~.scrub.scrub_body_data`, the
        function that made the recorded body). The body as sent is tried first: it is
        the recorded one unless it holds a secret, and redacting it costs a scan."""
        found = self._find_as(method, path, body)
        if found is not None:
            return found
        recorded = scrub_body_data(body, self._values)
        if recorded == body:
            return None
        return self._find_as(method, path, recorded)

    def _find_as(self, method: str, path: str, body: Any) -> int | None:
        fallback = None
        for i, ex in enumerate(self.data.exchanges):
            if ex.response.chunks is None:
                continue  # a plain exchange: not this side's
            if ex.request.method != method or url_path(ex.request.uri) != path:
                continue
            if not _same_body(ex.request.body, body):
                continue
            if i not in self._played:
                return i
            fallback = i if fallback is None else fallback
        return fallback

    async def handle(self, transport: Any, request: httpx.Request) -> httpx.Response:
        self.clock = Clock(request.url.path)
        self.last_fault, self.last_replayed, self._recorded, self._live = None, False, None, None
        content = await request.aread()
        body = _json(content)
        found = None if self.record == "all" else self._find(request.method, request.url.path, body)
        if found is not None:
            ex = self.data.exchanges[found]
            self._played.add(found)
            self._count += 1
            self.last_replayed, self._last_exchange = True, ex
            headers = {
                k: v for k, v in ex.response.headers.items()
                if isinstance(v, str) and k.lower() not in _FRAMING
            }  # fmt: skip
            return httpx.Response(
                ex.response.status, headers=headers,
                stream=_Replay(
                    ex.response.chunks or [], self.clock, framing_of(ex.response.headers)
                ),
                request=request,
            )  # fmt: skip
        if self.record == "none":
            self.unmatched.append(f"{request.method} {request.url.path}")
            raise CassetteMissingError(
                f"cassette {self.path} has no recorded stream for this request"
            )
        # Plain bytes on the wire: a compressed stream could be neither read nor redacted.
        request.headers["accept-encoding"] = "identity"
        t0 = time.perf_counter()
        response: httpx.Response = await real_async(transport, request)
        status = response.status_code
        if not 200 <= status < 300:
            if not 400 <= status < 500 or status in (408, 429):
                return response  # a transient fault: never recorded
            # A refusal is kept, as on the vcrpy side: one the trial acts on (a model that
            # cannot stream or take the tools) must replay the same way.
            content = await response.aread()
            elapsed = (time.perf_counter() - t0) * 1000
            self._recorded = self._keep(request, body, response, [RawChunk.of(content, elapsed)])
            headers = {k: v for k, v in response.headers.items() if k.lower() not in _FRAMING}
            return httpx.Response(status, headers=headers, content=content, request=request)

        def done(chunks: list[RawChunk]) -> None:
            self._recorded = self._keep(request, body, response, chunks)

        assert isinstance(response.stream, httpx.AsyncByteStream)
        framing = framing_of(response.headers)
        self._live = _Recording(response.stream, t0, self.clock, done, framing)
        response.stream = self._live
        return response

    _live: _Recording | None = None

    def commit(self) -> None:
        """The streamed reply was read to its end and is a reply: record the live
        exchange now (the client may close the response before the body is exhausted,
        after ``[DONE]``)."""
        if self._live is not None:
            self._live.commit()
            self._live = None

    def _keep(
        self, request: httpx.Request, body: Any, response: httpx.Response, chunks: list[RawChunk]
    ) -> SseExchange:
        values = self._values
        headers: dict[str, Any] = {k: v for k, v in response.headers.items()}
        scrub_headers(headers, values)
        from vcr.request import Request as VcrRequest  # recording only: vcrpy is slow to import

        # The body is recorded as a replay matches it (scrub_body_data), the rest scrubbed.
        vreq = VcrRequest(request.method, str(request.url), b"", dict(request.headers))
        scrubbed = scrub_request(vreq, values)
        # llama-server's GGUF path in each chunk's ``model`` field, recorded as the alias.
        chunks = [
            RawChunk(offset_ms=c.offset_ms, text=normalise_local_model(c.text))
            if c.text is not None
            else c
            for c in chunks
        ]
        raw = [(c.data(), c.offset_ms) for c in chunks]
        rewritten = False
        if framing_of(response.headers) == "eventstream":
            frames = redact_frames(raw, values)
            if frames is not None:
                chunks = [RawChunk.of(data, offset) for data, offset in frames]
                self.notes.append("a secret in a streamed body was redacted")
                rewritten = True
        else:
            redacted = redact_stream(raw, values)
            if redacted is not None:
                chunks = [RawChunk(offset_ms=offset, text=text) for text, offset in redacted]
                self.notes.append("a secret in a streamed body was redacted")
                rewritten = True
        recorded = rec.RecordedResponse(status=response.status_code, headers=headers,
                                        chunks=chunks)  # fmt: skip
        # Decoded from what is written (redacted, the model's alias): never a value apart.
        recorded.events = events_of(recorded)
        ex = SseExchange(
            request=rec.RecordedRequest(
                method=request.method, uri=scrubbed.uri, body=scrub_body_data(body, values)
            ),
            response=recorded,
        )
        if rewritten:
            self._rewritten.add(id(ex))
        self.data.exchanges.append(ex)
        self.dirty = True
        return ex


def content_of(body: Any) -> bytes:
    if isinstance(body, str):
        return body.encode("utf-8")
    return json.dumps(body, ensure_ascii=False).encode("utf-8")


_current: contextvars.ContextVar[SseTrialCassette | None] = contextvars.ContextVar(
    "toolbench_sse_cassette", default=None
)


def current() -> SseTrialCassette | None:
    return _current.get()


@contextmanager
def use_sse_cassette(path: Path, record: RecordOption) -> Iterator[SseTrialCassette]:
    """Route this task's HTTP through the SSE cassette at ``path`` (see the module doc).

    ``none``: replay only; ``new``: replay what is recorded, record what is missing (an
    unreadable file is moved aside); ``all``: record again (the old file is replaced
    only when the new one is saved).
    """
    data = SseCassette()
    notes: list[str] = []
    if record != "all":
        try:
            found = rec.load_if_present(path)  # one open, no stat before it
        except CassetteUnreadableError as exc:
            if record != "new" or isinstance(exc, CassetteLayoutError):
                raise
            aside = move_aside(path)
            notes.append(f"{exc}; moved to {aside.name} and recorded again")
        else:
            if found is None:
                old_layout = rec.legacy_error(path)
                if old_layout is not None:
                    raise old_layout  # not recorded over: the old file is converted, not lost
                if record == "none":
                    raise CassetteMissingError(f"no cassette {path}")
            else:
                data = found
    tc = SseTrialCassette(path, record, data)
    tc.notes.extend(notes)
    token = _current.set(tc)
    reset = set_stream_route(tc.handle)
    try:
        yield tc
    finally:
        reset_stream_route(reset)
        _current.reset(token)
        if record != "none" and tc.dirty and tc.data.exchanges:
            save(path, tc.data)
