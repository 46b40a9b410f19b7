"""The httpx byte streams of a streamed exchange: a recorded stream handed back chunk by
chunk (:class:`ReplayStream`), and a live one passed through with each chunk kept at its
arrival offset (:class:`RecordingStream`). Both feed the framing guard
(:mod:`.stream_framing`) as the bytes pass, so the clock a reader sees is the same live
and replayed.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Callable, Sequence

import httpx

import toolbench.cassettes.recording as rec
from toolbench import codes
from toolbench.cassettes.stream_framing import Clock, EventGuard, StreamFault
from toolbench.framings import Framing


class ReplayStream(httpx.AsyncByteStream):
    def __init__(self, chunks: Sequence[rec.Chunk], clock: Clock, framing: Framing) -> None:
        self.chunks, self.clock, self.framing = chunks, clock, framing

    async def __aiter__(self) -> AsyncIterator[bytes]:
        guard = EventGuard(self.clock, self.framing)
        for c in self.chunks:
            data = c.data()
            self.clock.last_ms = c.offset_ms
            guard.feed(data)
            yield data
        guard.close()


class RecordingStream(httpx.AsyncByteStream):
    """The live stream, passed through; each chunk kept with its arrival offset."""

    def __init__(
        self,
        inner: httpx.AsyncByteStream,
        t0: float,
        clock: Clock,
        done: Callable[[list[rec.Chunk]], None] | None,
        framing: Framing,
    ) -> None:
        self.inner, self.t0, self.clock, self.done = inner, t0, clock, done
        self.framing = framing
        self.chunks: list[rec.Chunk] = []

    async def __aiter__(self) -> AsyncIterator[bytes]:
        guard = EventGuard(self.clock, self.framing)
        try:
            async for data in self.inner:
                offset = round((time.perf_counter() - self.t0) * 1000, 3)  # as stored
                self.clock.last_ms = offset
                self.chunks.append(rec.Chunk.of(data, offset))
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
        reply whole (:meth:`~.trial.TrialCassette.commit`); a stream that carried nothing, or
        a provider's error event (:attr:`Clock.error`: the stream answered nothing,
        whatever its reader made of it), is never recorded."""
        if self.clock.fault is None and self.clock.error is None and self.done is not None:
            done, self.done = self.done, None
            done(self.chunks)

    async def aclose(self) -> None:
        await self.inner.aclose()
