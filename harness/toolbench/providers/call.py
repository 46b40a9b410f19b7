"""The one call every request goes through, plain or streamed, whatever its kind.

A kind only sends (:meth:`~toolbench.providers.base.ModelAPI.send`) and says what a
fault means (:meth:`~toolbench.providers.base.ModelAPI.classify`); this module owns
what is around the send, the same for every kind and for both modes: the request built
once (:mod:`.request`, parameters filtered by the kind's capabilities), the replay
hook at the boundary (one call site), attempts and retries (tenacity: ``Retry-After``
honoured up to :data:`RETRY_AFTER_CAP_S`, else exponential backoff with jitter), a
total deadline per attempt (``--timeout`` bounds the whole response, streamed or not),
dropping a ``stop`` the model refused, the provider's time, and reading the reply
(:mod:`.reply` whole, :mod:`.streamed` and :mod:`.readers` delta by delta).

A fault replayed from a cassette is not retried: the replay would answer the same.
"""

from __future__ import annotations

import asyncio
import random
import time
from typing import Any

from tenacity import AsyncRetrying, RetryCallState, retry_if_exception

from toolbench import codes
from toolbench.cassettes import boundary
from toolbench.errors import CassetteMissingError, InfraError, UnsupportedError
from toolbench.formats.base import RenderedRequest
from toolbench.providers import finish as finish_signal
from toolbench.providers import kept_replay, own_replay, responses_replay
from toolbench.providers.base import (
    CassetteView,
    Completion,
    CompletionRequest,
    Endpoint,
    Fault,
    ModelAPI,
    StreamCassetteView,
)
from toolbench.providers.capabilities import invents_call_ids
from toolbench.providers.reply import read_reply
from toolbench.providers.request import adaptations, as_streamed, build_request
from toolbench.providers.responses_request import is_responses
from toolbench.providers.streamed import as_completion, finish, read_stream, stream_record
from toolbench.redaction import redact_error
from toolbench.results import Attempt, RequestParams

RETRIES = 4
"""Transient faults (429, 5xx, connection errors, malformed 2xx bodies) are asked again
up to this many times: at most five attempts per exchange."""
TIMEOUT_RETRIES = 1
"""A request that timed out is asked again once only: a hung server costs at most two
timeouts per exchange, not five."""
DEADLINE_GRACE_S = 0.25
"""How long past ``--timeout`` a plain request may run before the total deadline cuts
it, so that a silent server is still reported by httpx's per-read timeout."""
TIMEOUT_CODES = frozenset({codes.INFRA_TIMEOUT, codes.INFRA_STREAM_STALLED})
"""Faults that spent the whole deadline: a plain timeout and a stream that stalled."""
BACKOFF_S = 0.5
RETRY_AFTER_CAP_S = 60.0
"""The longest ``Retry-After`` toolbench waits. A server asking for more is not asked
again before then: the trial fails at once (``infra.rate_limited``)."""


def _provider_s(exchange: CassetteView | None) -> float | None:
    """The provider's time of the attempt just made (None: replayed, or not seen)."""
    if exchange is None or exchange.last_replayed or exchange.last_provider_s is None:
        return None
    return round(exchange.last_provider_s, 4)


def _backoff(attempt: int) -> float:
    return float(BACKOFF_S * 2 ** (attempt - 1) * (1 + random.random()))


def _left(deadline: float) -> float:
    return max(0.0, deadline - time.monotonic())


def _replay_plain(
    own_server: bool, endpoint: Endpoint, request: dict[str, Any], params: RequestParams,
    exchange: CassetteView, log: list[Attempt], turn: int, rendered: RenderedRequest,
) -> Completion | None:  # fmt: skip
    """The plain reply the cassette holds for ``request`` (None: the full path runs). A
    server of toolbench's own is read without LiteLLM (:mod:`.own_replay`)."""
    if boundary.replay_mode() != "boundary":
        return None
    if is_responses(request):
        return responses_replay.replay_plain(endpoint, request, params, exchange, log, turn,
                                             rendered)  # fmt: skip
    if own_server:
        return own_replay.replay_plain(endpoint, request, params, exchange, log, turn, rendered)
    from toolbench.providers.litellm_api import boundary_replay

    return boundary_replay(endpoint, request, params, exchange, log, turn, rendered)


def stream_replay(
    endpoint: Endpoint, tc: StreamCassetteView, request: dict[str, Any], own_server: bool = False
) -> bool:
    """Whether the trial's cassette answered this streamed request at the provider
    boundary (its ``replay_stream``: the recorded chunks through the same event guard,
    no HTTP, no LiteLLM stream wrapper), for providers whose HTTP request is predicted;
    never under ``--replay full`` or ``--record all``."""
    replay = getattr(tc, "replay_stream", None)
    if replay is None or boundary.replay_mode() != "boundary":
        return False
    if is_responses(request):
        wire = responses_replay.wire_request(endpoint, request)
    elif own_server:
        wire = own_replay.wire_request(endpoint, request)
    else:
        from toolbench.providers.litellm_api import wire_request

        wire = wire_request(endpoint, request)
    if wire is None:
        return False
    return bool(replay(wire.method, boundary.url_path(wire.uri), wire.body))


async def call(api: ModelAPI, request: CompletionRequest, stream: bool = False) -> Completion:
    """Send one request of a trial through ``api`` and read its reply; raise typed
    errors (:class:`InfraError`, :class:`UnsupportedError`, :class:`CassetteMissingError`)
    otherwise. Every attempt is appended to ``request.attempts``. ``stream``: send with
    ``stream=True`` and read the reply delta by delta (``request.exchange`` is then the
    trial's streamed cassette); the completion carries the turn's stream record."""
    endpoint, exchange, turn = request.endpoint, request.exchange, request.turn
    log: list[Attempt] = [] if request.attempts is None else request.attempts
    # A cassette that kept the reply as read, and what the sender's tables said, answers
    # from them (no LiteLLM); else the request is built and sent below.
    kept = kept_replay.capabilities(exchange)
    if kept is not None:
        answered = kept_replay.replay(exchange, endpoint, request.rendered, request.seed,
                                      kept, log, turn, stream)  # fmt: skip
        if answered is not None:
            return _settled(answered, None)
    caps = kept or api.capabilities(endpoint.model)
    takes = caps.params if caps.own_server else None
    sent, params = build_request(endpoint, request.rendered, request.seed, caps.echo_extras, takes)
    if stream:
        as_streamed(sent)
    elif exchange is not None and exchange.may_replay():
        # The record/replay hook: a plain request the cassette holds is answered from it
        # (not asked when nothing recorded can answer: a live trial of --record all).
        answered = _replay_plain(caps.own_server, endpoint, sent, params, exchange, log,
                                 turn, request.rendered)  # fmt: skip
        if answered is not None:
            return _settled(answered, None)
    if stream and exchange is None:
        raise TypeError("a streamed request needs the trial's streamed cassette")
    state: dict[str, Any] = {"request": sent, "timeouts": 0, "assembled": None}
    # A stream the cassette answers at the boundary (the record/replay hook for streams:
    # the recorded events, read without HTTP and without the sender's stream wrapper) is
    # read in one attempt with no retrying around it: a replay answers the same again.
    tc: StreamCassetteView = exchange  # type: ignore[assignment]
    try:
        replayed_stream = stream and stream_replay(endpoint, tc, sent, caps.own_server)
    except Exception:  # asked again in the attempt, where what it raises is typed
        replayed_stream = False
    else:
        state["answered"] = replayed_stream

    async def send(kwargs: dict[str, Any], deadline: float) -> Any:
        if not stream:
            # httpx's own timeout answers a silent server first (the kind's timeout);
            # the total deadline catches a server that drips bytes.
            total = endpoint.timeout_s + DEADLINE_GRACE_S
            return await asyncio.wait_for(api.send(endpoint, kwargs), total)
        answered = (  # the first attempt was asked above; a retry asks again
            state.pop("answered")
            if "answered" in state
            else stream_replay(endpoint, tc, kwargs, caps.own_server)
        )
        if answered:
            done = finish(tc)
        else:
            try:
                chunks = await asyncio.wait_for(api.send(endpoint, kwargs), _left(deadline))
            except TimeoutError:
                raise Fault(codes.INFRA_TIMEOUT, "no response", True) from None
            done = await read_stream(chunks, tc, deadline, endpoint.timeout_s)
        state["assembled"] = done
        state["native"] = finish_signal.native_of_events(tc.clock.raw_events)
        return as_completion(done, str(kwargs.get("model")))

    async def once() -> tuple[Any, float]:
        n = sum(1 for a in log if a.turn == turn) + 1
        t0 = time.perf_counter()
        # The whole response, plain or streamed, within --timeout (httpx's timeout bounds
        # each read, so a server dripping bytes would otherwise never time out).
        deadline = time.monotonic() + endpoint.timeout_s
        if exchange is not None:
            exchange.last_provider_s = None
        try:
            try:
                resp = await send(state["request"], deadline)
            except CassetteMissingError:
                raise
            except Fault as f:
                raise _settle(f) from None
            except TimeoutError:
                fault = Fault(codes.INFRA_TIMEOUT, "the response did not complete", True)
                raise _settle(fault) from None
            except Exception as exc:
                raise _fault(exc) from None
            reply_fault = exchange.last_fault if exchange is not None else None
            if reply_fault is not None:
                if _filtered(resp):
                    # A body that is no reply because the provider's filter blocked the
                    # prompt (Gemini: no candidates, a blockReason): its own code.
                    raise finish_signal.filtered(f" ({reply_fault})")
                raise Fault(codes.INFRA_BAD_REPLY, reply_fault, True, None)
            read_reply(resp)  # raises a Fault on a reply without a message
        except Fault as f:
            replayed = exchange is not None and exchange.last_replayed
            if replayed and f.code != codes.PROVIDER_STOP_REJECTED:
                f.retryable = False  # a replay answers the same; a changed request may not
            log.append(Attempt(turn=turn, n=n, outcome="fail", error_code=f.code,
                               http_status=f.status, error=f.message[:300],
                               provider_s=_provider_s(exchange)))  # fmt: skip
            raise
        replayed = exchange is not None and exchange.last_replayed
        took = _provider_s(exchange)
        if took is None and not replayed:  # no cassette saw the exchange: the call's time
            took = round(time.perf_counter() - t0, 4)
        log.append(Attempt(turn=turn, n=n, outcome="ok", provider_s=took))
        if exchange is not None and not replayed:
            from toolbench.providers.litellm_api import request_key

            exchange.remember_key(request_key(state["request"]))
        return resp, took or 0.0

    def _fault(exc: Exception) -> Exception:
        if exchange is not None and exchange.unmatched:
            return CassetteMissingError(str(exc))
        sent_now = state["request"]
        bad_body = exchange.last_fault if exchange is not None else None
        if bad_body is not None and not bad_body.startswith("HTTP "):
            # A 2xx whose body is not a reply: the sender reports it as some other error.
            text = f"{type(exc).__name__}: {redact_error(str(exc)[:20_000])[:500]}"
            status = getattr(exc, "status_code", None)
            return _settle(Fault(codes.INFRA_BAD_REPLY, f"{bad_body}: {text}", True,
                                 status if isinstance(status, int) else None))  # fmt: skip
        fault = api.classify(exc, sent_now)
        if "stop" in sent_now and fault.status == 400 and fault.param == "stop":
            # Some models refuse `stop` (reasoning models, some gateways): send the turn
            # without it; the recorded request says so by lacking it.
            state["request"] = {k: v for k, v in sent_now.items() if k != "stop"}
            params.sent = [p for p in params.sent if p != "stop"]
            params.dropped["stop"] = "the model refused it (HTTP 400 naming stop); asked again"
            return Fault(codes.PROVIDER_STOP_REJECTED, "stop rejected: asked again without it",
                         True, fault.status, retry_after=0.0)  # fmt: skip
        if fault.kind in ("unsupported", "model"):
            # Kept in the cassette: the trial acts on it, and a replay answers the same.
            return UnsupportedError(fault.message, fault.code)
        return _settle(fault)

    def _settle(fault: Fault) -> Fault:
        """What every failed attempt goes through, plain or streamed: a timeout (a stall
        is one) counts against :data:`TIMEOUT_RETRIES` and replaces a hung local server;
        a fault not asked again drops what the cassette kept provisionally."""
        if fault.code in TIMEOUT_CODES:
            state["timeouts"] += 1
            if endpoint.on_timeout is not None:
                endpoint.on_timeout()  # a hung local server is replaced, not asked again
                fault.retryable = False
            if fault.code == codes.INFRA_TIMEOUT:
                fault.message = f"timed out after {endpoint.timeout_s:g}s: {fault.message}"
        if exchange is not None and not fault.retryable:
            exchange.forget_last()  # a refusal nobody acted on is not the model's reply
        return fault

    def stop(rs: RetryCallState) -> bool:
        exc = rs.outcome.exception() if rs.outcome is not None else None
        if not isinstance(exc, Fault):
            return True
        if exc.code in TIMEOUT_CODES and state["timeouts"] > TIMEOUT_RETRIES:
            return True
        if exc.retry_after is not None and exc.retry_after > RETRY_AFTER_CAP_S:
            cap = RETRY_AFTER_CAP_S
            exc.message += f" (server asked to wait {exc.retry_after:.0f}s; cap {cap:.0f}s)"
            return True
        return rs.attempt_number > RETRIES

    def wait(rs: RetryCallState) -> float:
        exc = rs.outcome.exception() if rs.outcome is not None else None
        if isinstance(exc, Fault) and exc.retry_after is not None:
            return min(exc.retry_after, RETRY_AFTER_CAP_S)
        return _backoff(rs.attempt_number)

    async def before_sleep(rs: RetryCallState) -> None:
        last = log[-1]
        last.outcome = "retry"
        last.wait_s = round(rs.next_action.sleep if rs.next_action else 0.0, 3)

    retrying = AsyncRetrying(
        retry=retry_if_exception(lambda e: isinstance(e, Fault) and e.retryable),
        stop=stop, wait=wait, before_sleep=before_sleep, sleep=asyncio.sleep, reraise=True,
    )  # fmt: skip
    try:
        resp: Any
        latency: float
        resp, latency = await (once() if replayed_stream else retrying(once))
    except Fault as f:
        raise InfraError(f.message, f.code) from None
    usage = resp.get("usage") if isinstance(resp, dict) else getattr(resp, "usage", None)
    stable = not caps.own_server and invents_call_ids(endpoint.model, endpoint.api_base)
    reply = read_reply(resp, stable, caps.own_server)
    done = Completion(
        reply=reply,
        request=state["request"],
        latency_s=latency,
        prompt_tokens=_get(usage, "prompt_tokens"),
        completion_tokens=_get(usage, "completion_tokens"),
        cost=api.cost(resp),
        attempts=sum(1 for a in log if a.turn == turn),
        params=params,
        replayed=exchange is not None and exchange.last_replayed,
        adaptations=adaptations(endpoint, state["request"], request.rendered),
    )
    if stream:
        assembled = state["assembled"]
        done.reply.finish_reason = assembled.finish_reason
        done.stream = stream_record(assembled)
    _settled(done, state.get("native") if stream else finish_signal.native_of_reply(resp))
    if exchange is not None and not caps.own_server:
        kept_replay.keep(exchange, endpoint, request.rendered, request.seed, caps, done, stream)
    return done


def _filtered(resp: Any) -> bool:
    """Whether the sender read ``resp`` as a reply its provider's filter stopped."""
    try:
        return read_reply(resp).finish_reason == finish_signal.FILTERED
    except Fault:
        return False


def _settled(done: Completion, native: str | None) -> Completion:
    """The completion once its finish signal is read (:mod:`.finish`): a provider's
    filter fails the trial ``provider.filtered`` (never kept as a read reply: a replay
    reads the recorded exchange to the same code); a failed call attempt is marked."""
    try:
        finish_signal.settle(done.reply, native)
    except Fault as f:
        raise InfraError(f.message, f.code) from None
    return done


def _get(obj: Any, key: str) -> Any:
    return obj.get(key) if isinstance(obj, dict) else getattr(obj, key, None)
