"""One trial's cassette: every exchange of the trial, plain or streamed, recorded and
replayed through one httpx route, and answered at the provider boundary without HTTP.

The cassette is one :class:`~.recording.Recording` held in memory: each exchange keeps
its request, its response (a plain body, or a stream's chunks with their arrival
offsets and decoded events), toolbench's request key, the provider's time and the reply
as read. A request is matched on method, path and its JSON body as data, as recorded
(redacted: :func:`~.scrub.scrub_body_data`), one not played yet first (:meth:`_find`).
A recorded plain reply is handed back as its body, a recorded stream chunk by chunk
through the same framing guard as on the wire (:mod:`.stream_bytes`), setting the same
:attr:`TrialCassette.clock`, so a trial reads the same whether live or replayed.

What a live exchange is recorded as follows its mode (``streamed``, the trial's format):
a plain reply only when complete (:mod:`.plain_record`), held provisionally until its
attempt claims it (:meth:`TrialCassette.remember_key`); a stream only once its reader
judged it whole (:meth:`TrialCassette.commit`, :mod:`.stream_record`), which is also why
a streamed live exchange is read with ``accept-encoding: identity``.
"""

from __future__ import annotations

import json
import time
from typing import Any

import httpx

import toolbench.cassettes.recording as rec
from toolbench.cassettes.exchanges import RecordOption as RecordOption
from toolbench.cassettes.exchanges import TrialExchanges
from toolbench.cassettes.faults import reply_fault
from toolbench.cassettes.plain_record import recorded_plain
from toolbench.cassettes.route import real_async, real_sync
from toolbench.cassettes.stream_bytes import RecordingStream, ReplayStream
from toolbench.cassettes.stream_framing import Clock
from toolbench.cassettes.stream_record import recorded_exchange
from toolbench.framings import framing_of

_FRAMING = frozenset({"content-length", "content-encoding", "transfer-encoding"})
"""Headers about how the recorded body was framed on the wire, not what it is: a replay
hands over the recorded bytes as they are (a redacted body may differ in length)."""


def _json(content: bytes) -> Any:
    try:
        return json.loads(content or b"null")
    except ValueError:
        return content.decode("utf-8", "replace")


class TrialCassette(TrialExchanges):
    """The cassette a trial records into or replays from: its exchanges
    (:class:`~.exchanges.TrialExchanges`), answered or recorded through HTTP. What the
    provider asks of it is :class:`~toolbench.providers.model_api.CassetteView`."""

    def _begin(self, request: httpx.Request) -> None:
        if request.method == "POST":  # the attempt that recorded one failed: this one asks again
            self.drop_unconfirmed()
        self.clock = Clock(request.url.path)
        self._reset()

    def _answer(self, request: httpx.Request, body: Any) -> httpx.Response | None:
        """The recorded response to ``request`` (None: none recorded, and it may go live)."""
        found = None if self.record == "all" else self._find(request.method, request.url.path, body)
        if found is None:
            if not self.live:
                raise self.gap(request)
            return None
        response = self._pristine(found).response
        self._played(found)
        headers = [(k, v) for k, v in response.headers.items() if k.lower() not in _FRAMING]
        chunks = response.chunks
        if chunks is not None:
            stream = ReplayStream(chunks, self.clock, framing_of(response.headers))
            return httpx.Response(response.status, headers=headers, stream=stream, request=request)
        content = response.content().encode("utf-8")
        self.last_fault = reply_fault(response.status, content, request.url.path)
        extensions = {"reason_phrase": response.reason.encode("ascii")} if response.reason else None
        return httpx.Response(
            response.status, headers=headers, stream=httpx.ByteStream(content),
            extensions=extensions, request=request,
        )  # fmt: skip

    async def handle(
        self, transport: httpx.AsyncHTTPTransport, request: httpx.Request
    ) -> httpx.Response:
        """Answer an async request: from the recording, else live (recorded by its mode)."""
        self._begin(request)
        sent = await request.aread()
        replayed = self._answer(request, _json(sent))
        if replayed is not None:
            return replayed
        if self.streamed:
            return await self._live_stream(transport, request, sent)
        t0 = time.perf_counter()
        try:
            response = await real_async(transport, request)
            assert isinstance(response.stream, httpx.AsyncByteStream)
            content = b"".join([part async for part in response.stream])
            await response.stream.aclose()
        finally:
            self.last_provider_s = time.perf_counter() - t0  # a timeout, a refused connection
        response.stream = httpx.ByteStream(content)
        return self._live_plain(request, sent, response, content, await response.aread())

    def handle_sync(self, transport: httpx.HTTPTransport, request: httpx.Request) -> httpx.Response:
        """Answer a blocking request (always recorded as a plain exchange)."""
        self._begin(request)
        sent = request.read()
        replayed = self._answer(request, _json(sent))
        if replayed is not None:
            return replayed
        t0 = time.perf_counter()
        try:
            response = real_sync(transport, request)
            assert isinstance(response.stream, httpx.SyncByteStream)
            content = b"".join(response.stream)
            response.stream.close()
        finally:
            self.last_provider_s = time.perf_counter() - t0
        response.stream = httpx.ByteStream(content)
        return self._live_plain(request, sent, response, content, response.read())

    def _live_plain(
        self, request: httpx.Request, sent: bytes, response: httpx.Response, raw: bytes,
        content: bytes,
    ) -> httpx.Response:  # fmt: skip
        """Record a live plain exchange when it is recordable, provisionally (a 2xx POST
        until its attempt claims it)."""
        status = response.status_code
        self.last_fault = reply_fault(status, content, request.url.path)
        ex = recorded_plain(request, sent, response, raw, self._values)
        if ex is not None:
            self.data.exchanges.append(ex)
            self.dirty = True
            self._recorded = ex
            if request.method == "POST" and 200 <= status < 300:
                self._unconfirmed = ex
        return response

    async def _live_stream(
        self, transport: httpx.AsyncHTTPTransport, request: httpx.Request, sent: bytes
    ) -> httpx.Response:
        """Send a streamed request live; its chunks are recorded with their offsets once
        the reader judged the stream whole (:meth:`commit`), a 4xx refusal at once."""
        body = _json(sent)
        # Plain bytes on the wire: a compressed stream could be neither read nor redacted.
        request.headers["accept-encoding"] = "identity"
        t0 = time.perf_counter()
        response: httpx.Response = await real_async(transport, request)
        status = response.status_code
        if not 200 <= status < 300:
            if not 400 <= status < 500 or status in (408, 429):
                return response  # a transient fault: never recorded
            # A refusal is kept, as a plain one is: one the trial acts on (a model that
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

    def commit(self) -> None:
        """The streamed reply was read to its end and is a reply: record the live
        exchange now (the client may close the response before the body is exhausted,
        after ``[DONE]``)."""
        if self._live is not None:
            self._live.commit()
            self._live = None

    def _keep(
        self, request: httpx.Request, body: Any, response: httpx.Response, chunks: list[rec.Chunk]
    ) -> rec.RecordedExchange:
        ex, rewritten = recorded_exchange(request, body, response, chunks, self._values)
        if rewritten:
            self.notes.append("a secret in a streamed body was redacted")
            self._rewritten.add(id(ex))
        self.data.exchanges.append(ex)
        self.dirty = True
        return ex
