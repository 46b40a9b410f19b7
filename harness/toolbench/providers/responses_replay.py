"""Replay at the boundary for the Responses API (``native:api=responses``): a plain
request the trial's cassette holds is answered from the recorded body, read by the
Responses reader, without LiteLLM's request and response machinery.

The exchange is found by toolbench's own request key (recorded with every exchange);
anything else (no key, a recorded refusal, a body that is no reply) takes the full path
through LiteLLM, which replays, records or refuses as for every other request. The price
is LiteLLM's, as on the full path, so both give the same results."""

from __future__ import annotations

from typing import Any

from toolbench.cassettes import boundary
from toolbench.formats.base import RenderedRequest
from toolbench.providers.base import CassetteView, Completion, Endpoint
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
