"""Replay at the boundary for every provider kind LiteLLM sends to, without LiteLLM.

A replay asked LiteLLM four things it had already answered when the exchange was
recorded: what the model takes (its parameter tables: which sampling parameters are sent
or dropped), how to read the reply (its per-provider response conversion: Anthropic's
blocks, Gemini's parts, DeepSeek's reasoning), how many tokens and what price. Importing
LiteLLM to ask again cost more CPU than the rest of a small replay, and reading a reply
through it more than the rest of a trial; so the recording keeps the answers: on the
cassette, the model's capabilities; on each exchange, the reply as read (a stream's as
assembled, with its stream record) and the parameters sent and dropped
(:class:`~toolbench.cassettes.recording.ReadReply`). A replay at the boundary (the default
``--replay boundary``) answers from them, plain or streamed:

1. the capabilities kept build the request as the recording did, but with every sampling
   parameter sent (what toolbench can build without LiteLLM's tables); its key finds the
   exchange (``asked_key``);
2. the parameters the recording dropped are taken out, and the result must have the key
   of the request that was sent (recorded with the exchange): a record that does not hold
   together is not trusted, the full path reads the exchange instead;
3. the reply, tokens, price and stream record kept are the turn's.

A streamed reply kept is what the protocol reader (or LiteLLM, for wires toolbench has no
reader of) assembled from the very events recorded; reading them again would give it
again, and ``--replay full`` does, to check it. A cassette recorded before replies were
kept, a refusal, a turn that needed a second attempt, a stream whose chunks redaction
rewrote, or the Responses API are answered as before (the boundary replays of
:mod:`.litellm_api`, :mod:`.responses_replay`, the cassette's ``replay_stream``, or the
full path). Both modes give the same results (``tests/providers/test_kept_replay.py``).
"""

from __future__ import annotations

from typing import Any, Protocol, TypeGuard, runtime_checkable

from pydantic import ValidationError

from toolbench.cassettes import boundary
from toolbench.cassettes.recording import ReadReply
from toolbench.formats.base import ModelReply, RenderedRequest
from toolbench.providers.base import Capabilities, Completion, Endpoint
from toolbench.providers.capabilities import CHECKED
from toolbench.providers.own_replay import replayed
from toolbench.providers.request import as_streamed, build_request
from toolbench.results import Attempt, RequestParams, StreamTurn


@runtime_checkable
class KeptView(Protocol):
    """A trial's cassette that keeps replies as read (plain or streamed)."""

    last_replayed: bool

    def keep_read(self, read: dict[str, Any], capabilities: dict[str, Any]) -> None: ...

    def kept_capabilities(self) -> dict[str, Any] | None: ...

    def replay_read(
        self, asked_key: str, streamed: bool
    ) -> tuple[ReadReply, str | None, int] | None: ...

    def play(self, index: int) -> None: ...


_KEPT: dict[type, bool] = {}


def is_kept(exchange: object) -> TypeGuard[KeptView]:
    """``isinstance(exchange, KeptView)``, answered once per class: the protocol check
    looks up every member on each call (and a replayed plain trial asks it three times),
    and a cassette class either keeps replies or does not (its members are set in
    ``__init__``)."""
    kind = type(exchange)
    known = _KEPT.get(kind)
    if known is None:
        known = _KEPT[kind] = isinstance(exchange, KeptView)
    return known


def capabilities(exchange: object) -> Capabilities | None:
    """The capabilities the trial's cassette kept, for a replay at the boundary; None
    when it kept none (recorded before they were kept, ``--record all``, ``--replay full``,
    a streamed trial): the kind is asked."""
    if not is_kept(exchange) or boundary.replay_mode() != "boundary":
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


def _sent(asked: dict[str, Any], params: RequestParams) -> dict[str, Any]:
    gone = {p for p in params.asked if p not in params.sent}
    return {k: v for k, v in asked.items() if k not in gone}


def keep(
    exchange: object, endpoint: Endpoint, rendered: RenderedRequest, seed: int,
    caps: Capabilities, done: Completion, stream: bool,
) -> None:  # fmt: skip
    """At record time: keep the reply of an exchange that just went live, as read (a
    stream's as assembled, with its stream record), with what the sender decided about
    its request; only a turn answered by its first attempt (a later one's request differs
    from the one asked, e.g. ``stop`` taken out)."""
    if not is_kept(exchange) or done.replayed or done.attempts != 1:
        return
    if rendered.api != "chat" or done.params is None or stream != (done.stream is not None):
        return
    asked = asked_request(endpoint, rendered, seed, caps, stream)
    read = ReadReply(
        asked_key=boundary.request_key(asked),
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


def replay(
    exchange: object, endpoint: Endpoint, rendered: RenderedRequest, seed: int,
    caps: Capabilities, log: list[Attempt], turn: int, stream: bool,
) -> Completion | None:  # fmt: skip
    """The turn's completion from the reply the cassette kept for this request (plain,
    or streamed with its stream record); None when it kept none that holds together
    (then the other replays or the full path answer, as for a cassette recorded before
    replies were kept)."""
    if not is_kept(exchange) or rendered.api != "chat":
        return None
    asked = asked_request(endpoint, rendered, seed, caps, stream)
    found = exchange.replay_read(boundary.request_key(asked), stream)
    if found is None:
        return None
    read, key, index = found
    try:
        params = RequestParams.model_validate(read.params)
        reply = ModelReply.model_validate(read.reply)
        record = None if read.stream is None else StreamTurn.model_validate(read.stream)
    except ValidationError:  # a hostile or damaged record: the full path reads the bytes
        return None
    sent = _sent(asked, params)
    if key is None or boundary.request_key(sent) != key or stream != (record is not None):
        return None
    exchange.play(index)
    tokens = (read.prompt_tokens, read.completion_tokens)
    done = replayed(endpoint, sent, params, log, turn, rendered, reply, tokens, read.cost)
    done.stream = record
    return done
