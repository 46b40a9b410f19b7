"""Replay at the boundary for the Responses API (``native:api=responses``): a request
the trial's cassette holds is answered from the recording, read by the Responses reader,
without LiteLLM's request and response machinery (nor its stream iterator).

A plain exchange is found by toolbench's own request key (recorded with every exchange), a
streamed one by the HTTP request LiteLLM sends (:func:`wire_request`); anything else (no
key, a recorded refusal, a body that is no reply) takes the full path through LiteLLM,
which replays, records or refuses as for every other request. The price is LiteLLM's, as
on the full path, so both give the same results."""

from __future__ import annotations

from typing import Any

from toolbench.cassettes import boundary
from toolbench.formats.base import RenderedRequest
from toolbench.providers.base import CassetteView, Completion, Endpoint, WireRequest
from toolbench.providers.own_replay import replayed
from toolbench.providers.readers.responses import completion
from toolbench.providers.reply import read_reply
from toolbench.results import Attempt, RequestParams


def replay_plain(
    endpoint: Endpoint, request: dict[str, Any], params: RequestParams,
    exchange: CassetteView, log: list[Attempt], turn: int, rendered: RenderedRequest,
) -> Completion | None:  # fmt: skip
    """The recorded reply to the Responses API ``request``; None: the full path runs."""
    body = exchange.replay_reply(boundary.request_key(request), None)
    if body is None or "output" not in body:
        return None
    try:
        resp = completion(body)
        reply = read_reply(resp)
    except Exception:  # no reply (a typed fault): the full path judges it
        return None
    from toolbench.providers.litellm_api import response_cost

    usage = resp.get("usage") or {}
    tokens = (usage.get("prompt_tokens"), usage.get("completion_tokens"))
    return replayed(endpoint, request, params, log, turn, rendered, reply, tokens,
                    response_cost(resp))  # fmt: skip


def wire_request(endpoint: Endpoint, request: dict[str, Any]) -> WireRequest | None:
    """The HTTP request LiteLLM sends for the Responses API ``request`` to OpenAI (its
    OpenAI transformation passes the request on as it is but for the model's name, and it
    sends no ``stream_options``); None for another provider. A wrong prediction matches
    nothing and takes the full path."""
    from toolbench.errors import UserError
    from toolbench.providers.capabilities import provider_of

    try:
        name, provider = provider_of(endpoint.model, endpoint.api_base)
    except UserError:
        return None
    if provider not in boundary.WIRE_PROVIDERS:
        return None
    base = (endpoint.api_base or boundary.OPENAI_BASE).rstrip("/")
    body = {k: v for k, v in request.items() if k != "stream_options"}
    return WireRequest("POST", f"{base}/responses", {**body, "model": name})
