"""Reading a streamed reply inside the shared call: chunk by chunk under the attempt's
deadline, stamped with the cassette clock's offsets, assembled by the protocol reader.

The kind's transport returns an async iterator of chat completion chunks (LiteLLM's
translation of any provider's stream); this module reads it and turns what goes wrong
into typed faults the shared call (:mod:`.call`) settles and retries like a plain
request's: a stream cut off, a bad event, an oversized event (the framing guard of the
cassette layer reports them on its clock), a stream not finished by the deadline
(``infra.stream_stalled``), a stream the sender could not decode or that carried nothing
(``infra.bad_reply``, never ``ok``). OpenAI-shaped streams are assembled from the events
as the bytes carried them (the clock's ``raw_events``), other providers' from the
chunks LiteLLM yields.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator
from typing import Any

from toolbench import codes
from toolbench.cassettes import stream_fault
from toolbench.formats.base import ParseIssue
from toolbench.providers import finish as finish_signal
from toolbench.providers.model_api import CassetteView, Fault
from toolbench.providers.wire import signals
from toolbench.providers.wire.chat.reader import Assembled, Assembler
from toolbench.providers.wire.cohere import reader as cohere
from toolbench.providers.wire.gemini import reader as gemini
from toolbench.providers.wire.wire_registry import WIRES
from toolbench.redaction import redact_error, redact_pieces
from toolbench.results import StreamTurn, TimedText

ARRIVED_CHARS = 2000
"""How much of what arrived before a stream failed is kept in the trial's message."""


def left(deadline: float) -> float:
    """Seconds until the attempt's deadline (never negative)."""
    return max(0.0, deadline - time.monotonic())


def _wire(tc: CassetteView) -> Assembler | None:
    """The reply assembled from the events as the bytes carried them, by the protocol's
    own reader: OpenAI chat chunks (LiteLLM repairs broken delta sequences on the way,
    which would hide them), Cohere v2 events (which LiteLLM misreads) and the Responses
    API's typed events (whose output items go back verbatim), Gemini events with a call
    in parts (``partialArgs``, which LiteLLM cannot read); None for the other protocols,
    whose chunks LiteLLM translates."""
    events = tc.clock.raw_events
    if tc.clock.chat_chunks:
        stored = getattr(tc.clock, "stored", None)
        if stored is not None:  # replayed from a cassette's decoded events
            return Assembler().feed_stored(stored)
        return Assembler().feed_events(events)
    for wire in WIRES.values():  # the registered protocols, toolbench's own first
        if wire.speaks(events):
            return wire.assemble(events)
    return None


class _ReadPast:
    """Whether to read past a failure of the sender. A stream that one of toolbench's
    own event readers reads (Cohere v2's events, a Gemini call in parts or in a part
    LiteLLM cannot read: :data:`PAST_READERS`) is judged by that reader from the events
    the bytes carried, not by the sender: LiteLLM 1.106 fails on each event of theirs it
    cannot read (Cohere's ``event:`` lines, a ``functionCall`` without ``name`` or
    ``args``), having read it, and reads on when asked for the next chunk. A failure is
    read past while the events seen so far are such a stream and the failures stay
    within :data:`READ_PAST_PER_EVENT` for each event decoded (an SSE event is a few
    lines), so a sender stuck on one failure still ends the stream; each event is looked
    at once (linear in the stream). A failure on any other stream ends it as before."""

    def __init__(self, tc: CassetteView) -> None:
        self.tc, self.looked, self.failures, self.ours = tc, 0, 0, False

    def once(self) -> bool:
        clock = self.tc.clock
        if clock.fault is not None:
            return False
        events = clock.raw_events
        if not self.ours:
            fresh = events[self.looked :]
            self.ours = cohere.speaks(events) or any(gemini.partial(d) for d, _ in fresh)
            self.looked = len(events)
        self.failures += 1
        return self.ours and self.failures <= READ_PAST_PER_EVENT * (clock.events + 1)


READ_PAST_PER_EVENT = 4
"""The sender's failures read past for each event decoded (see :class:`_ReadPast`)."""


def _signal(tc: CassetteView) -> Fault | None:
    """The provider's failure signal in the events seen (:mod:`.wire.signals`: an
    error event, no terminal event, a block no reader knows), typed."""
    clock = tc.clock
    return signals.fault(clock.raw_events, getattr(clock, "path", ""), clock.framing)


def _read_fault(tc: CassetteView) -> Fault | None:
    """Why the events seen are no reply, whatever the sender raised about them: the
    provider's failure signal (:func:`_signal`), or the protocol reader's refusal (a
    Responses API stream without its terminal event is cut short,
    ``infra.stream_truncated``); None when neither has a say."""
    signal = _signal(tc)
    if signal is not None:
        return signal
    wire = _wire(tc)
    if wire is None:
        return None
    try:
        wire.close()
    except Fault as f:
        return f
    return None


def _arrived(asm: Assembler) -> str:
    text = "".join(asm.parts)
    calls = ", ".join(
        f"{c.name or '?'}({''.join(c.args)[:200]})" for _, c in sorted(asm.calls.items())
    )
    what = f"text {text[:ARRIVED_CHARS]!r}" + (f", calls {calls}" if calls else "")
    return f"{len(asm.deltas)} text delta(s) arrived: {what}"


async def read_stream(
    chunks: AsyncIterator[Any], tc: CassetteView, deadline: float, timeout_s: float
) -> Assembled:
    """Every chunk of one streamed attempt, assembled; a typed :class:`Fault` when the
    stream failed or carried no reply (the cassette keeps it only when it did not). The
    stream is closed however the attempt ends, so its connection is released before the
    next attempt (a stream left open after a failure kept it)."""
    try:
        return await _read(chunks, tc, deadline, timeout_s)
    finally:
        close = getattr(chunks, "aclose", None)
        if close is not None:
            # Closing what already failed or ended: nothing more to learn from it.
            with contextlib.suppress(Exception):
                await asyncio.wait_for(close(), CLOSE_S)


CLOSE_S = 1.0
"""How long closing a stream may take (a stalled server's connection is dropped)."""


async def _read(
    chunks: AsyncIterator[Any], tc: CassetteView, deadline: float, timeout_s: float
) -> Assembled:
    asm = Assembler()

    def seen() -> Assembler:
        return _wire(tc) or asm

    it = chunks.__aiter__()
    past = _ReadPast(tc)
    while True:
        try:
            chunk = await asyncio.wait_for(it.__anext__(), left(deadline))
        except StopAsyncIteration:
            break
        except TimeoutError:
            raise Fault(
                codes.INFRA_STREAM_STALLED,
                f"the stream did not end within the {timeout_s:g}s deadline; "
                f"{_arrived(seen())}", True,
            ) from None  # fmt: skip
        except Exception as exc:
            if past.once():  # the protocol reader reads those events (_wire)
                continue
            fault = tc.clock.fault
            known = _read_fault(tc) if fault is None else None
            if known is not None:  # the provider's signal or the reader says why
                raise Fault(known.code, f"{known.message}; {_arrived(seen())}",
                            known.retryable, known.status) from None  # fmt: skip
            if fault is None:
                # The server said 200 and sent bytes the sender cannot read: no 500.
                raise Fault(
                    codes.INFRA_BAD_REPLY,
                    f"a stream LiteLLM could not read ({type(exc).__name__}: "
                    f"{redact_error(str(exc)[:2000])[:300]}); {_arrived(seen())}",
                    True, 200,
                ) from None  # fmt: skip
            raise Fault(fault.code, f"{fault}; {_arrived(seen())}", True) from None
        asm.feed(chunk, tc.clock.last_ms)
    return finish(tc, asm)


def finish(tc: CassetteView, asm: Assembler | None = None) -> Assembled:
    """The end of a streamed attempt, read from the wire or answered by the cassette at
    the boundary (then only the clock's events exist): a framing fault or a stream that
    carried nothing is a typed :class:`Fault`; otherwise the cassette keeps it."""
    clock = tc.clock
    asm = asm if asm is not None else Assembler()

    def seen() -> Assembler:
        return _wire(tc) or asm

    if clock.fault is not None:
        raise Fault(clock.fault.code, f"{clock.fault}; {_arrived(seen())}", True)
    if clock.framing == "lines" and clock.events == 0:
        # Neither its content type nor its first line is a framing toolbench reads.
        raise Fault(codes.INFRA_BAD_REPLY, UNREAD_FRAMING, True, 200)
    blocked = finish_signal.blocked_prompt(clock.raw_events)
    if blocked is not None:  # no answer: the provider's filter, never the model's
        raise finish_signal.filtered(f" (the prompt: blockReason {blocked})")
    empty = (
        stream_fault(clock.path, clock.events, clock.carried, clock.chat_chunks)
        if clock.framing is not None  # a body read: its events judged
        else None
    )
    if empty is not None:
        raise Fault(codes.INFRA_BAD_REPLY, empty, True, 200)
    # Read before it is kept: a provider's failure signal and a protocol reader's typed
    # fault (a Responses API stream that never completed, an error event) are never
    # recorded.
    signal = _signal(tc)
    if signal is not None:
        raise Fault(signal.code, f"{signal.message}; {_arrived(seen())}", signal.retryable,
                    signal.status)  # fmt: skip
    done = seen().close()
    nameless = [message for code, message in done.issues if code == codes.STREAM_CALL_NO_NAME]
    if nameless:
        # Deltas of a call that never said what it calls: the server broke the call, and
        # the model's reply cannot be told (a call dropped would read as an answer).
        raise Fault(codes.INFRA_BAD_REPLY, f"a streamed {nameless[0]}; {_arrived(seen())}",
                    True, 200)  # fmt: skip
    tc.commit()
    return done


UNREAD_FRAMING = (
    "a 2xx stream in no framing toolbench reads: neither its content type nor its first "
    "line is server-sent events, NDJSON or AWS eventstream"
)


def as_completion(done: Assembled, model: str) -> dict[str, Any]:
    """The assembled reply in the shape of a plain chat completion (its usage priced and
    counted like any other's; its reply is read from the assembled reply itself)."""
    usage = None
    if "completion_tokens" in done.usage:
        p, c = done.usage.get("prompt_tokens", 0), done.usage["completion_tokens"]
        usage = {"prompt_tokens": p, "completion_tokens": c, "total_tokens": p + c}
    choice = {"index": 0, "finish_reason": done.finish_reason or "stop",
              "message": done.message()}  # fmt: skip
    return {"choices": [choice], "usage": usage, "model": model}


def stream_record(done: Assembled) -> StreamTurn:
    """The turn's stream record: its text deltas with their offsets (a key split over two
    deltas is in no delta alone: redacted over their joined text), its timings, and what
    broke in the delta sequence (``stream.*``)."""
    pieces = [d.text for d in done.deltas]
    texts = redact_pieces(pieces)
    # The reader's own deltas when nothing was redacted (redact_pieces gave the list back).
    redacted = zip(done.deltas, texts, strict=True)
    deltas = done.deltas if texts is pieces else [TimedText(d.offset_ms, t) for d, t in redacted]
    # Built, not validated: every field is typed already (the deltas are the reader's own
    # TimedText values; validating them again was a noticeable share of a replay).
    return StreamTurn.model_construct(
        deltas=deltas, first_token_ms=done.first_token_ms, first_call_ms=done.first_call_ms,
        call_complete_ms=done.call_complete_ms, last_ms=done.last_ms,
        issues=[ParseIssue(code=c, message=m) for c, m in done.issues],
    )  # fmt: skip
