"""Replay at the boundary for a server toolbench runs itself, without LiteLLM.

The embedded models' ``llama-server`` speaks plain OpenAI chat, takes what its kind says
it takes and has no price: nothing about a replayed exchange needs LiteLLM's tables or its
response conversion, so a replay of its cassettes never imports LiteLLM (that import was as
much CPU as all the rest of a 1,000-trial replay). The recorded body is read by the one
reply reader (:func:`~toolbench.providers.reply.read_reply`) that reads LiteLLM's
objects too; a test holds the two readings equal on every committed body.
"""

from __future__ import annotations

from typing import Any

from toolbench.cassettes import boundary
from toolbench.formats.base import ModelReply, RenderedRequest
from toolbench.providers.base import CassetteView, Completion, Endpoint, WireRequest
from toolbench.providers.reply import read_reply
from toolbench.providers.request import adaptations
from toolbench.results import Attempt, RequestParams


def wire_request(endpoint: Endpoint, request: dict[str, Any]) -> WireRequest | None:
    """The HTTP request LiteLLM's OpenAI route sends for ``request`` to the server
    (``openai/<alias>`` at the endpoint's base)."""
    provider, _, name = endpoint.model.partition("/")
    return boundary.wire_request(name, provider, endpoint.api_base, request)


def replay_plain(
    endpoint: Endpoint, request: dict[str, Any], params: RequestParams,
    exchange: CassetteView, log: list[Attempt], turn: int, rendered: RenderedRequest,
) -> Completion | None:  # fmt: skip
    """The recorded reply to ``request``; None when the cassette cannot answer it here
    (then the full path replays, records or refuses as always)."""
    body = exchange.replay_reply(boundary.request_key(request), wire_request(endpoint, request))
    if body is None or not isinstance(body.get("choices"), list):
        return None
    try:
        reply = read_reply(body, own_server=True)
    except Exception:  # not a chat completion: let the full path judge it
        return None
    found = body.get("usage")
    usage: dict[str, Any] = found if isinstance(found, dict) else {}
    tokens = (usage.get("prompt_tokens"), usage.get("completion_tokens"))
    return replayed(endpoint, request, params, log, turn, rendered, reply, tokens, None)


def replayed(
    endpoint: Endpoint, request: dict[str, Any], params: RequestParams, log: list[Attempt],
    turn: int, rendered: RenderedRequest, reply: ModelReply,
    tokens: tuple[int | None, int | None], cost: float | None,
) -> Completion:  # fmt: skip
    """The completion of a request answered at the boundary (one ``ok`` attempt logged,
    no provider time), however its reply was read."""
    n = sum(1 for a in log if a.turn == turn) + 1
    log.append(Attempt(turn=turn, n=n, outcome="ok"))
    return Completion(
        reply=reply, request=request, latency_s=0.0,
        prompt_tokens=tokens[0], completion_tokens=tokens[1],
        cost=cost, attempts=n, params=params, replayed=True,
        adaptations=adaptations(endpoint, request, rendered),
    )  # fmt: skip
