"""The one call every request goes through, plain or streamed, whatever its kind.

A kind only sends (:meth:`~toolbench.providers.model_api.ModelAPI.send`) and says what a
fault means (:meth:`~toolbench.providers.model_api.ModelAPI.classify`); this module owns
what is around the send, the same for every kind and for both modes, as stages with
typed values between them: build the request once (:mod:`.turn_request`, parameters filtered
by the kind's capabilities: :class:`Built`) -> replay at the boundary or send
(:class:`~toolbench.providers.attempts.Attempts`: retries, the deadline, a refused
``stop`` dropped, the provider's time, one :class:`KindSend` for both modes:
:class:`~toolbench.providers.attempts.Sent`) -> read the reply by the one reader (a plain
reply is a stream of one event, :func:`~.reply.whole`; a stream's events delta by delta,
:mod:`.stream_read` and :mod:`.wire`) -> keep it as read in the cassette.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from toolbench import codes
from toolbench.errors import InfraError
from toolbench.providers import finish as finish_signal
from toolbench.providers.attempts import Attempts, Sent
from toolbench.providers.capabilities import invents_call_ids
from toolbench.providers.model_api import (
    Capabilities,
    CassetteView,
    Completion,
    CompletionRequest,
    Endpoint,
    Fault,
    ModelAPI,
)
from toolbench.providers.replay import (
    keep,
    kept_capabilities,
    replay_kept,
    replay_plain,
    replays_stream,
)
from toolbench.providers.reply import reply_of, whole
from toolbench.providers.stream_read import as_completion, finish, left, read_stream, stream_record
from toolbench.providers.turn_request import adaptations, as_streamed, build_request
from toolbench.results import Attempt, RequestParams

DEADLINE_GRACE_S = 0.25
"""How long past ``--timeout`` a plain request may run before the total deadline cuts
it, so that a silent server is still reported by httpx's per-read timeout."""


@dataclass
class Built:
    """The request of a turn as built for its kind (stage one of :func:`call`)."""

    request: dict[str, Any]
    params: RequestParams
    caps: Capabilities


@dataclass
class KindSend:
    """One attempt's transport, plain or streamed: the kind's send under the deadline,
    then its events read. A plain reply is a stream of one event, the whole completion
    (read by :func:`~.reply.whole` in the read stage); a stream's events are read
    delta by delta (:func:`~.stream_read.read_stream`), or, when the cassette answers it
    at the boundary, its recorded events are played instead of any send.

    ``streamed``: the trial's cassette for a streamed request (None: plain);
    ``answered``: what it said before the first attempt (None: ask it)."""

    api: ModelAPI
    endpoint: Endpoint
    streamed: CassetteView | None
    own_server: bool
    answered: bool | None

    async def __call__(self, request: dict[str, Any], deadline: float) -> Sent:
        tc = self.streamed
        answered, self.answered = self.answered, None  # a retry asks again
        if tc is not None and answered is None:
            answered = replays_stream(self.endpoint, tc, request, self.own_server)
        if tc is not None and answered:
            done = finish(tc)
        else:
            events = await self._send(request, deadline)
            if tc is None:
                return Sent(events)  # the one event: the whole completion
            done = await read_stream(events, tc, deadline, self.endpoint.timeout_s)
        native = finish_signal.native_of_events(tc.clock.raw_events)
        return Sent(as_completion(done, str(request.get("model"))), done, native)

    async def _send(self, request: dict[str, Any], deadline: float) -> Any:
        """What the kind's send returned: a completion, or a stream's async iterator."""
        send = self.api.send(self.endpoint, request)
        if self.streamed is None:
            # httpx's own timeout answers a silent server first (the kind's timeout); the
            # total deadline catches a server that drips bytes.
            return await asyncio.wait_for(send, self.endpoint.timeout_s + DEADLINE_GRACE_S)
        try:  # the stream's first event within the deadline; read_stream bounds the rest
            return await asyncio.wait_for(send, left(deadline))
        except TimeoutError:
            raise Fault(codes.INFRA_TIMEOUT, "no response", True) from None


async def call(api: ModelAPI, request: CompletionRequest, stream: bool = False) -> Completion:
    """Send one request of a trial through ``api`` and read its reply; raise typed
    errors (:class:`InfraError`, :class:`UnsupportedError`, :class:`CassetteMissingError`)
    otherwise. Every attempt is appended to ``request.attempts``. ``stream``: send with
    ``stream=True`` and read the reply delta by delta (``request.exchange`` is then the
    trial's streamed cassette); the completion carries the turn's stream record."""
    endpoint, exchange = request.endpoint, request.exchange
    log: list[Attempt] = [] if request.attempts is None else request.attempts
    if stream and exchange is None:
        raise TypeError("a streamed request needs the trial's streamed cassette")
    # Stages: the reply kept as read, else build -> replay or send -> read -> keep.
    kept = kept_capabilities(exchange)
    if kept is not None and (done := replay_kept(request, kept, log, stream)) is not None:
        return _settled(done, None)
    built = _build(api, request, kept, stream)
    if not stream:  # a plain request the cassette holds is answered from it
        done = replay_plain(request, built.request, built.params, built.caps.own_server, log)
        if done is not None:
            return _settled(done, None)
    answered = _answers(built, request.endpoint, exchange) if stream else None
    streamed = exchange if stream else None
    send = KindSend(api, endpoint, streamed, built.caps.own_server, answered)
    attempts = Attempts(api, endpoint, exchange, log, request.turn, built.request, built.params)
    try:  # a stream the cassette answers is read once: a replay answers the same again
        sent = await attempts.run(send, retry=answered is not True)
    except Fault as f:
        raise InfraError(f.message, f.code) from None
    done = _read(api, request, built, attempts, sent)
    if exchange is not None and not built.caps.own_server:
        keep(request, built.caps, done, stream)
    return done


def _build(
    api: ModelAPI, request: CompletionRequest, kept: Capabilities | None, stream: bool
) -> Built:
    """The request built once, its parameters filtered by the model's capabilities (the
    ones the cassette kept, else the kind's)."""
    endpoint = request.endpoint
    caps = kept or api.capabilities(endpoint.model)
    takes = caps.params if caps.own_server else None
    sent, params = build_request(endpoint, request.rendered, request.seed, caps.echo_extras, takes)
    if stream:
        as_streamed(sent)
    return Built(sent, params, caps)


def _answers(built: Built, endpoint: Endpoint, tc: CassetteView | None) -> bool | None:
    """Whether the cassette answers this stream at the boundary, asked before the first
    attempt (None: what it raised is typed in the attempt, which asks again)."""
    if tc is None:
        return False
    try:
        return replays_stream(endpoint, tc, built.request, built.caps.own_server)
    except Exception:
        return None


def _read(
    api: ModelAPI, request: CompletionRequest, built: Built, attempts: Attempts, sent: Sent
) -> Completion:  # fmt: skip
    """The turn's completion from what the successful attempt got back."""
    sent_request = attempts.request
    endpoint, exchange, caps, resp = request.endpoint, request.exchange, built.caps, sent.response
    usage = _get(resp, "usage")
    stable = not caps.own_server and invents_call_ids(endpoint.model, endpoint.api_base)
    read = sent.assembled if sent.assembled is not None else whole(resp)
    done = Completion(
        reply=reply_of(read, stable, caps.own_server),
        request=sent_request,
        latency_s=sent.latency_s,
        prompt_tokens=_get(usage, "prompt_tokens"),
        completion_tokens=_get(usage, "completion_tokens"),
        cost=api.cost(resp),
        attempts=sum(1 for a in attempts.log if a.turn == request.turn),
        params=built.params,
        replayed=exchange is not None and exchange.last_replayed,
        adaptations=adaptations(endpoint, sent_request, request.rendered),
    )
    if sent.assembled is None:
        return _settled(done, finish_signal.native_of_reply(resp))
    done.stream = stream_record(sent.assembled)
    return _settled(done, sent.native)


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
