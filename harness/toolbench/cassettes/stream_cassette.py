"""A streamed trial's cassette: streamed exchanges recorded at the httpx transport, with
chunk timings, and replayed from them.

vcrpy reads a whole body before returning it, which loses when each piece arrived. A
streamed trial therefore records itself: the response stream of the transport is wrapped
(:mod:`.stream_bytes`), and every chunk is kept as received (bytes, text when it is whole
UTF-8 text, base64 otherwise, so a chunk that splits a character is kept as it came) with
its arrival offset in milliseconds from the moment the request was handed to the
transport. Replay feeds the same chunks in order, offline and without sleeping, through
the same framing guard (:mod:`.stream_framing`), and sets the same clock, so a trial
reports the recorded offsets whether it ran live or from the cassette.

The file is the trial's one cassette (:mod:`toolbench.cassettes.recording`: a versioned
JSON record, ``<scenario>.json``), its exchanges holding ``chunks``, saved atomically. A
replay at the provider boundary reads the same chunks without HTTP
(:meth:`SseTrialCassette.replay_stream`). What a live exchange is written as (scrubbed,
redacted as a reader of the stream sees it) is :mod:`.stream_record`'s.

Only a stream that ended cleanly with a 2xx status is recorded: a stream cut off, stalled
or malformed is a transient fault, asked again (as vcrpy's side never records a 5xx).
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx

import toolbench.cassettes.recording as rec
from toolbench.cassettes.boundary import url_path
from toolbench.cassettes.match import echo_equivalent, without_echo_extras
from toolbench.cassettes.persist import move_aside, write_atomically
from toolbench.cassettes.route import real_async, reset_stream_route, set_stream_route
from toolbench.cassettes.scrub import scrub_body_data
from toolbench.cassettes.stream_bytes import RecordingStream, ReplayStream
from toolbench.cassettes.stream_framing import Clock, decode, framing_of
from toolbench.cassettes.stream_record import recorded_exchange
from toolbench.cassettes.use import RecordOption
from toolbench.errors import CassetteLayoutError, CassetteMissingError, CassetteUnreadableError
from toolbench.redaction import redact_data, secret_values

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


_FRAMING = frozenset({"content-length", "content-encoding", "transfer-encoding"})
"""Headers about how the recorded body was framed on the wire, not what it is: a replay
hands over the recorded bytes as they are (a redacted body may differ in length)."""


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
            headers = {k: v for k, v in ex.response.headers.items() if k.lower() not in _FRAMING}
            return httpx.Response(
                ex.response.status, headers=headers,
                stream=ReplayStream(
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
            self._recorded = self._keep(request, body, response, [rec.Chunk.of(content, elapsed)])
            headers = {k: v for k, v in response.headers.items() if k.lower() not in _FRAMING}
            return httpx.Response(status, headers=headers, content=content, request=request)

        def done(chunks: list[rec.Chunk]) -> None:
            self._recorded = self._keep(request, body, response, chunks)

        assert isinstance(response.stream, httpx.AsyncByteStream)
        framing = framing_of(response.headers)
        self._live = RecordingStream(response.stream, t0, self.clock, done, framing)
        response.stream = self._live
        return response

    _live: RecordingStream | None = None

    def commit(self) -> None:
        """The streamed reply was read to its end and is a reply: record the live
        exchange now (the client may close the response before the body is exhausted,
        after ``[DONE]``)."""
        if self._live is not None:
            self._live.commit()
            self._live = None

    def _keep(
        self, request: httpx.Request, body: Any, response: httpx.Response, chunks: list[rec.Chunk]
    ) -> SseExchange:
        ex, rewritten = recorded_exchange(request, body, response, chunks, self._values)
        if rewritten:
            self.notes.append("a secret in a streamed body was redacted")
            self._rewritten.add(id(ex))
        self.data.exchanges.append(ex)
        self.dirty = True
        return ex


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
    reset = set_stream_route(tc.handle)
    try:
        yield tc
    finally:
        reset_stream_route(reset)
        if record != "none" and tc.dirty and tc.data.exchanges:
            save(path, tc.data)
