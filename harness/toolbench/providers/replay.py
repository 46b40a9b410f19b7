"""How a trial's cassette answers a request at the provider boundary: the one place that
decides it, and computes the replay key.

A replay at the boundary (the default ``--replay boundary``) answers a request the
cassette holds without the sender's request and response machinery, in this order:

1. **the reply kept as read** (:func:`replay_kept`): the recording keeps, on the cassette,
   the model's capabilities and, on each exchange, the reply as read (a stream's as
   assembled, with its stream record) with the parameters sent and dropped
   (:class:`~toolbench.cassettes.recording.ReadReply`). The kept capabilities build the
   request with every sampling parameter sent; its key finds the exchange
   (``asked_key``); the parameters the recording dropped are taken out and the result
   must have the key of the request sent (recorded with the exchange): a record that
   does not hold together is not trusted. No request is built by the kind, no LiteLLM;
2. **the recorded body** (:func:`replay_plain`), found by toolbench's own request key
   (:func:`replay_key`, recorded with every exchange since keys exist) or, in older
   cassettes, by the HTTP request the sender would send (:func:`wire_request`, matched
   as the HTTP replay matches it), and read as the one event of its stream by the reader
   that reads a stream's events (:func:`~toolbench.providers.reply.whole`): a server of
   toolbench's own (plain OpenAI chat, no price) without LiteLLM; a Responses API body
   after its wire's translation; a model LiteLLM reads with its generic OpenAI
   conversion after that conversion (:func:`~toolbench.providers.litellm_api.read_recorded`);
3. **the recorded stream** (:func:`replays_stream`): the cassette's ``replay_stream``
   plays the recorded events through the same framing guard, found by the wire request.

Anything else (a request the cassette does not hold, a recorded refusal, a body that is
no reply, another provider's conversion) takes the full path through the kind, which
replays at the HTTP layer, records or refuses. ``--replay full`` and ``--record all``
answer nothing here. Both modes give the same results (``tests/providers``).
"""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from toolbench import codes
from toolbench.cassettes import boundary
from toolbench.cassettes.recording import ReadReply
from toolbench.errors import UserError
from toolbench.formats.base import ModelReply, RenderedRequest
from toolbench.providers.capabilities import CHECKED, provider_of
from toolbench.providers.litellm_api import read_recorded, response_cost
from toolbench.providers.model_api import (
    Capabilities,
    CassetteView,
    Completion,
    CompletionRequest,
    Endpoint,
    Fault,
    WireRequest,
)
from toolbench.providers.reply import reply_of, whole
from toolbench.providers.turn_request import adaptations, as_streamed, build_request
from toolbench.providers.wire.chat import request as chat_request
from toolbench.providers.wire.responses import request as responses_request
from toolbench.providers.wire.responses.reader import completion
from toolbench.providers.wire.responses.request import is_responses
from toolbench.results import Attempt, RequestParams, StreamTurn


def replay_key(request: dict[str, Any]) -> str:
    """toolbench's key of a request (:func:`toolbench.cassettes.boundary.request_key`)."""
    return boundary.request_key(request)


def at_boundary(tc: CassetteView) -> bool:
    """Whether the trial's cassette answers at the boundary (the run's ``--replay`` is
    not ``full``)."""
    return tc.replay_mode == "boundary"


# ---------------------------------------------------------------- the recorded body


def wire_request(
    endpoint: Endpoint, request: dict[str, Any], own_server: bool
) -> WireRequest | None:
    """The HTTP request the sender sends for ``request``, as its wire protocol predicts it
    (None where it cannot be told: a wrong prediction would match nothing)."""
    if is_responses(request):
        return responses_request.wire_request(endpoint, request)
    return chat_request.wire_request(endpoint, request, own_server)


def replay_plain(
    asked: CompletionRequest, request: dict[str, Any], params: RequestParams,
    own_server: bool, log: list[Attempt],
) -> Completion | None:  # fmt: skip
    """The plain reply the trial's cassette holds for ``request`` (``asked``'s turn as
    built), read by its wire; None when it cannot answer it here (the full path runs)."""
    exchange, endpoint = asked.exchange, asked.endpoint
    if exchange is None or not exchange.may_replay() or not at_boundary(exchange):
        return None
    key = replay_key(request)
    if is_responses(request):  # found by its key only
        body = exchange.replay_reply(key, None)
        if body is None or "output" not in body:
            return None
        try:
            resp = completion(body)
            reply = reply_of(whole(resp))
        except Exception:  # no reply (a typed fault): the full path judges it
            return None
        usage = resp.get("usage") or {}
        tokens = (usage.get("prompt_tokens"), usage.get("completion_tokens"))
        cost = response_cost(resp)
    elif own_server:
        body = exchange.replay_reply(key, wire_request(endpoint, request, own_server))
        if body is None or not isinstance(body.get("choices"), list):
            return None
        try:
            reply = reply_of(whole(body), own_server=True)
        except Exception:  # not a chat completion: let the full path judge it
            return None
        found = body.get("usage")
        usage = found if isinstance(found, dict) else {}
        tokens, cost = (usage.get("prompt_tokens"), usage.get("completion_tokens")), None
    else:
        if not _generic_openai(endpoint):
            return None
        body = exchange.replay_reply(key, wire_request(endpoint, request, own_server))
        if body is None or not isinstance(body.get("choices"), list):
            return None
        read = read_recorded(body, endpoint)
        if read is None:
            return None
        reply, tokens, cost = read
    return replayed(asked, request, params, log, reply, tokens, cost)


def _generic_openai(endpoint: Endpoint) -> bool:
    """Whether LiteLLM reads this model's replies with its generic OpenAI conversion (the
    one :func:`~toolbench.providers.litellm_api.read_recorded` reproduces). Other
    OpenAI-compatible providers (DeepSeek, Mistral, OpenRouter, hosted vLLM, ...) apply
    their own transformations to the reply, so they replay through LiteLLM in full."""
    try:
        return provider_of(endpoint.model, endpoint.api_base)[1] == "openai"
    except UserError:
        return False


def replays_stream(
    endpoint: Endpoint, tc: CassetteView, request: dict[str, Any], own_server: bool
) -> bool:
    """Whether the trial's cassette answered this streamed request at the boundary (its
    ``replay_stream``: the recorded chunks through the same event guard, no HTTP, no
    sender's stream wrapper), for providers whose HTTP request is predicted."""
    if not at_boundary(tc):
        return False
    wire = wire_request(endpoint, request, own_server)
    if wire is None:
        return False
    return tc.replay_stream(wire.method, boundary.url_path(wire.uri), wire.body)


def replayed(
    asked: CompletionRequest, request: dict[str, Any], params: RequestParams,
    log: list[Attempt], reply: ModelReply, tokens: tuple[int | None, int | None],
    cost: float | None,
) -> Completion:  # fmt: skip
    """The completion of a request answered at the boundary (one ``ok`` attempt logged,
    no provider time), however its reply was read."""
    turn = asked.turn
    n = sum(1 for a in log if a.turn == turn) + 1
    log.append(Attempt(turn=turn, n=n, outcome="ok"))
    return Completion(
        reply=reply, request=request, latency_s=0.0,
        prompt_tokens=tokens[0], completion_tokens=tokens[1],
        cost=cost, attempts=n, params=params, replayed=True,
        adaptations=adaptations(asked.endpoint, request, asked.rendered),
    )  # fmt: skip


# ---------------------------------------------------------------- the reply kept as read


def kept_capabilities(exchange: CassetteView | None) -> Capabilities | None:
    """The capabilities the trial's cassette kept, for a replay at the boundary; None
    when it kept none (recorded before they were kept, ``--record all``, ``--replay
    full``): the kind is asked."""
    if exchange is None or not at_boundary(exchange):
        return None
    found = exchange.kept_capabilities()
    if found is None:
        return None
    params = found.get("params")
    tools = found.get("function_calling")
    return Capabilities(
        params=frozenset(str(p) for p in params) if isinstance(params, list) else None,
        function_calling=tools if isinstance(tools, bool) else None,
        echo_extras=found.get("echo_extras") is True,
    )


def _record(caps: Capabilities) -> dict[str, Any]:
    return {
        "params": None if caps.params is None else sorted(caps.params),
        "function_calling": caps.function_calling,
        "echo_extras": caps.echo_extras,
    }


def asked_request(
    endpoint: Endpoint, rendered: RenderedRequest, seed: int, caps: Capabilities, stream: bool
) -> dict[str, Any]:
    """The request as built with every sampling parameter sent (none dropped by the
    sender's tables; a ``stop`` list over the limit is still cut, as it always is)."""
    everything = frozenset(CHECKED) | frozenset(rendered.params)
    request, _ = build_request(endpoint, rendered, seed, caps.echo_extras, everything)
    if stream:
        as_streamed(request)
    return request


def keep(asked: CompletionRequest, caps: Capabilities, done: Completion, stream: bool) -> None:
    """At record time: keep the reply of an exchange that just went live, as read (a
    stream's as assembled, with its stream record), with what the sender decided about
    its request; only a turn answered by its first attempt (a later one's request differs
    from the one asked, e.g. ``stop`` taken out)."""
    exchange, rendered = asked.exchange, asked.rendered
    if exchange is None or done.replayed or done.attempts != 1:
        return
    if rendered.api != "chat" or done.params is None or stream != (done.stream is not None):
        return
    full = asked_request(asked.endpoint, rendered, asked.seed, caps, stream)
    read = ReadReply(
        asked_key=replay_key(full),
        params=done.params.model_dump(mode="json"),
        reply=done.reply.model_dump(mode="json"),
        prompt_tokens=_int(done.prompt_tokens),
        completion_tokens=_int(done.completion_tokens),
        cost=done.cost,
        stream=None if done.stream is None else done.stream.model_dump(mode="json"),
    )
    exchange.keep_read(read.model_dump(mode="json", exclude_none=True), _record(caps))


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def kept_event(kept: dict[str, Any]) -> dict[str, Any]:
    """The one event of a kept reply: its message as the model sent it (after the
    sender's conversion), read again by the one reader like any recorded body; a kept
    reply without a message is no reply (``infra.bad_reply``: not trusted)."""
    message = kept.get("raw_message")
    if not isinstance(message, dict):
        raise Fault(codes.INFRA_BAD_REPLY, "a kept reply without its message", True)
    return {"choices": [{"message": message, "finish_reason": kept.get("finish_reason")}]}


def replay_kept(
    asked: CompletionRequest, caps: Capabilities, log: list[Attempt], stream: bool
) -> Completion | None:
    """The turn's completion from the reply the cassette kept for this request (plain,
    or streamed with its stream record); None when it kept none that holds together
    (then the recorded body or the full path answers, as for a cassette recorded before
    replies were kept)."""
    exchange, rendered = asked.exchange, asked.rendered
    if exchange is None or rendered.api != "chat":
        return None
    full = asked_request(asked.endpoint, rendered, asked.seed, caps, stream)
    found = exchange.replay_read(replay_key(full), stream)
    if found is None:
        return None
    read, key, index = found
    try:
        params = RequestParams.model_validate(read.params)
        reply = reply_of(whole(kept_event(read.reply)))
        record = None if read.stream is None else StreamTurn.model_validate(read.stream)
    except (ValidationError, Fault):  # a hostile or damaged record: the full path reads the bytes
        return None
    gone = {p for p in params.asked if p not in params.sent}
    sent = {k: v for k, v in full.items() if k not in gone}
    if key is None or replay_key(sent) != key or stream != (record is not None):
        return None
    exchange.play(index)
    tokens = (read.prompt_tokens, read.completion_tokens)
    done = replayed(asked, sent, params, log, reply, tokens, read.cost)
    done.stream = record
    return done
