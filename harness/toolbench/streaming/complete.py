"""A streamed model call: ``stream=True`` through LiteLLM, assembled, timed, typed.

It reuses the provider's :func:`~toolbench.providers.litellm_api.complete` (request building,
capabilities, classification, retries) and replaces only the call itself: the stream is
read delta by delta under a bounded wait, each delta stamped with the offset of the last
raw chunk the SSE cassette saw (:mod:`toolbench.streaming.sse`), and assembled
(:mod:`toolbench.streaming.assemble`). OpenAI-shaped streams (``chat.completion.chunk``
events) are assembled from the events as the bytes carried them, because LiteLLM repairs
a broken delta sequence on its way to the caller and would hide it; streams of other
providers, which LiteLLM translates, from the deltas LiteLLM yields.

A stream that fails (cut off, a ``data:`` line that is not JSON, an event over 1 MB, not
ended by the deadline) is a typed ``infra.stream_*`` fault, with what arrived kept in its
message, asked again like a plain request's fault; a stream that carried nothing is
``infra.bad_reply``.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

import httpx

from toolbench import codes
from toolbench.cassettes import boundary, stream_fault
from toolbench.formats.base import ParseIssue, RenderedRequest
from toolbench.providers.base import CompletionRequest
from toolbench.providers.capabilities import provider_of
from toolbench.providers.litellm_api import (
    Completion,
    Endpoint,
    Fault,
    complete,
    litellm,
    wire_request,
)
from toolbench.redaction import redact_error, redact_pieces
from toolbench.results import Attempt, StreamTurn, TimedText
from toolbench.streaming.assemble import Assembled, Assembler
from toolbench.streaming.sse import SseTrialCassette

ARRIVED_CHARS = 2000
"""How much of what arrived before a stream failed is kept in the trial's message."""


def stream_args(endpoint: Endpoint) -> dict[str, Any]:
    """``stream=True``, plus ``stream_options.include_usage`` where the provider takes it
    (LiteLLM's own table of supported parameters)."""
    args: dict[str, Any] = {"stream": True}
    lm = litellm()
    try:
        name, provider = provider_of(endpoint.model, endpoint.api_base)
        supported = lm.get_supported_openai_params(model=name, custom_llm_provider=provider) or []
    except Exception:  # LiteLLM cannot tell: stream without asking for usage
        supported = []
    if "stream_options" in supported:
        args["stream_options"] = {"include_usage": True}
    return args


TRANSPORT_ARGS = frozenset({"max_retries", "timeout", "api_base", "api_key"})
"""What :func:`~toolbench.providers.litellm_api.complete` adds to LiteLLM's arguments for
the transport: not in the HTTP body."""


def at_boundary(endpoint: Endpoint, tc: SseTrialCassette, kwargs: dict[str, Any]) -> bool:
    """Whether the trial's cassette answered this streamed request at the provider
    boundary (:meth:`SseTrialCassette.replay_stream`: the recorded chunks read without
    HTTP and without LiteLLM's stream wrapper), for the providers whose HTTP request is
    predicted; in ``--replay full`` never."""
    if boundary.replay_mode() != "boundary" or tc.record == "all":
        return False
    request = {k: v for k, v in kwargs.items() if k not in TRANSPORT_ARGS}
    wire = wire_request(endpoint, request)
    if wire is None:
        return False
    return tc.replay_stream(wire.method, httpx.URL(wire.uri).path, wire.body)


def _left(deadline: float) -> float:
    """Seconds until the attempt's deadline (never negative)."""
    return max(0.0, deadline - time.monotonic())


def _arrived(asm: Assembler) -> str:
    text = "".join(asm.parts)
    calls = ", ".join(
        f"{c.name or '?'}({''.join(c.args)[:200]})" for _, c in sorted(asm.calls.items())
    )
    what = f"text {text[:ARRIVED_CHARS]!r}" + (f", calls {calls}" if calls else "")
    return f"{len(asm.deltas)} text delta(s) arrived: {what}"


async def stream_request(request: CompletionRequest) -> tuple[Completion, StreamTurn]:
    """:meth:`~toolbench.providers.base.ModelAPI.stream` of the LiteLLM-backed kinds
    (``litellm``, ``local``): :func:`stream_complete` with the request's fields. A stream
    is only recorded or replayed through an SSE cassette; any other exchange is a bug."""
    tc = request.exchange
    if not isinstance(tc, SseTrialCassette):
        raise TypeError(f"a streamed request needs an SSE cassette, not {type(tc).__name__}")
    return await stream_complete(
        request.endpoint, request.rendered, request.seed, tc, request.attempts, request.turn
    )


async def stream_complete(
    endpoint: Endpoint,
    rendered: RenderedRequest,
    seed: int,
    tc: SseTrialCassette,
    attempts: list[Attempt] | None = None,
    turn: int = 0,
) -> tuple[Completion, StreamTurn]:
    """One streamed exchange: the completion (assembled reply) and its stream record.

    The attempts, retries and their bounds are :func:`complete`'s, the same as a plain
    request's: a stream cut off, a bad event, an oversized event or a stall is asked
    again (a stall counts as a timeout); the whole response must arrive before the
    attempt's deadline (``--timeout``), however steadily events come. A stream that
    carried nothing (:func:`~toolbench.cassettes.faults.stream_fault`) or that LiteLLM
    could not decode is ``infra.bad_reply``, like a plain body that is no reply: asked
    again live, never recorded."""
    lm = litellm()
    holder: dict[str, Assembled] = {}

    async def _read_stream(
        kwargs: dict[str, Any], deadline: float, asm: Assembler, seen: Callable[[], Assembler]
    ) -> None:
        """The stream through LiteLLM (live, or replayed through the HTTP cassette)."""
        try:
            stream = await asyncio.wait_for(lm.acompletion(**kwargs), _left(deadline))
        except TimeoutError:
            raise Fault(codes.INFRA_TIMEOUT, "no response", True) from None
        it = stream.__aiter__()
        while True:
            try:
                chunk = await asyncio.wait_for(it.__anext__(), _left(deadline))
            except StopAsyncIteration:
                break
            except TimeoutError:
                raise Fault(
                    codes.INFRA_STREAM_STALLED,
                    f"the stream did not end within the {endpoint.timeout_s:g}s deadline; "
                    f"{_arrived(seen())}", True,
                ) from None  # fmt: skip
            except Exception as exc:
                fault = tc.clock.fault
                if fault is None:
                    # The server said 200 and sent bytes LiteLLM cannot read: no 500.
                    raise Fault(
                        codes.INFRA_BAD_REPLY,
                        f"a stream LiteLLM could not read ({type(exc).__name__}: "
                        f"{redact_error(str(exc)[:2000])[:300]}); {_arrived(seen())}",
                        True, 200,
                    ) from None  # fmt: skip
                raise Fault(fault.code, f"{fault}; {_arrived(seen())}", True) from None
            asm.feed(chunk, tc.clock.last_ms)

    async def call(kwargs: dict[str, Any], deadline: float) -> Any:
        asm = Assembler()

        def seen() -> Assembler:
            return tc.clock.raw if tc.clock.chat_chunks else asm

        if not at_boundary(endpoint, tc, kwargs):
            await _read_stream(kwargs, deadline, asm, seen)
        clock = tc.clock
        if clock.fault is not None:
            raise Fault(clock.fault.code, f"{clock.fault}; {_arrived(seen())}", True)
        empty = (
            stream_fault(clock.path, clock.events, clock.carried, clock.chat_chunks)
            if clock.framing not in (None, "lines")  # a framing read: its events judged
            else None
        )
        if empty is not None:
            raise Fault(codes.INFRA_BAD_REPLY, empty, True, 200)
        tc.commit()
        # OpenAI-shaped chunks are assembled from the bytes, as the server sent them;
        # other providers' events (Anthropic, Gemini, ...) as LiteLLM translated them.
        done = seen().close()
        holder["done"] = done
        usage = None
        if "completion_tokens" in done.usage:
            p, c = done.usage.get("prompt_tokens", 0), done.usage["completion_tokens"]
            usage = {"prompt_tokens": p, "completion_tokens": c, "total_tokens": p + c}
        choice = {"index": 0, "finish_reason": done.finish_reason or "stop",
                  "message": done.message()}  # fmt: skip
        return lm.ModelResponse(choices=[choice], usage=usage, model=str(kwargs.get("model")))

    done = await complete(
        endpoint, rendered, seed, tc, attempts, turn=turn, call=call,
        request_extra=stream_args(endpoint),
    )  # fmt: skip
    got = holder["done"]
    done.reply.finish_reason = got.finish_reason
    if "completion_tokens" not in got.usage:
        done.completion_tokens = None  # no usage chunk: not counted, not guessed
        done.prompt_tokens = None
    # A key split over two deltas is in no delta alone: redacted over their joined text.
    texts = redact_pieces([d.text for d in got.deltas])
    record = StreamTurn(
        deltas=[
            TimedText(offset_ms=d.offset_ms, text=t) for d, t in zip(got.deltas, texts, strict=True)
        ],
        first_token_ms=got.first_token_ms, first_call_ms=got.first_call_ms,
        call_complete_ms=got.call_complete_ms, last_ms=got.last_ms,
        issues=[ParseIssue(code=c, message=m) for c, m in got.issues],
    )  # fmt: skip
    return done, record
