"""A batch's answer written into its trial's cassette as if it had come live.

The exchange is made by the live path's own recorder (:func:`recorded_plain`: the
captured HTTP request and the reply body, scrubbed and redacted as a live one is) with
toolbench's request key, then read once through the shared call as a replay reads it,
and the reply as read is kept beside it (a :class:`ReadReply`, with the model's
capabilities), as a live exchange keeps it. The run that follows replays the trial from
that cassette: scoring, reports and gates see a recorded trial like any other.

The one difference is the price: the kept ``cost`` is the batch price (:func:`batch_cost`),
so the trial's cost is what the batch cost.
"""

from __future__ import annotations

import json
from typing import Any

import httpx

import toolbench.cassettes.recording as rec
from toolbench import codes
from toolbench.cassettes.persist import CASSETTE_MODE, write_atomically
from toolbench.cassettes.plain_record import recorded_plain
from toolbench.cassettes.use import use_cassette
from toolbench.providers.call import call
from toolbench.providers.capabilities import provider_of
from toolbench.providers.lazy_litellm import litellm
from toolbench.providers.model_api import Completion, CompletionRequest, Endpoint, ModelAPI
from toolbench.providers.replay import asked_request, replay_key
from toolbench.redaction import redact_data, secret_values
from toolbench.results import Attempt
from toolbench.runner.batch.batch_api import Failed
from toolbench.runner.batch.first_request import Captured

BATCH_FACTOR = 0.5
"""The batch price as a share of the live one where LiteLLM's cost map has no batch
price for the model: OpenAI's Batch API and Anthropic's Message Batches both bill half
the live price (their pricing pages)."""


def batch_cost(endpoint: Endpoint, done: Completion) -> float | None:
    """The reply's price at the batch rate: LiteLLM's cost map's batch prices
    (``input_cost_per_token_batches``, ``output_cost_per_token_batches``) where it has
    them for the model, else :data:`BATCH_FACTOR` of the live price."""
    try:
        name, provider = provider_of(endpoint.model, endpoint.api_base)
    except Exception:
        name, provider = endpoint.model, ""
    table: dict[str, Any] = getattr(litellm(), "model_cost", {}) or {}
    info = table.get(name) or table.get(f"{provider}/{name}") or {}
    inp, out = info.get("input_cost_per_token_batches"), info.get("output_cost_per_token_batches")
    tokens = (done.prompt_tokens, done.completion_tokens)
    if isinstance(inp, int | float) and isinstance(out, int | float) and None not in tokens:
        return float(inp) * (tokens[0] or 0) + float(out) * (tokens[1] or 0)
    return None if done.cost is None else done.cost * BATCH_FACTOR


def exchange_of(captured: Captured, body: dict[str, Any]) -> rec.RecordedExchange | None:
    """The live exchange the batch's answer stands for (None: not a complete reply)."""
    raw = json.dumps(body, ensure_ascii=False).encode("utf-8")
    response = httpx.Response(200, headers={"content-type": "application/json"}, content=raw,
                              request=captured.http)  # fmt: skip
    ex = recorded_plain(captured.http, captured.sent, response, raw, secret_values())
    if ex is not None:
        ex.key = replay_key(captured.built)
    return ex


def _caps_record(api: ModelAPI, endpoint: Endpoint) -> dict[str, Any]:
    caps = api.capabilities(endpoint.model)
    return {
        "params": None if caps.params is None else sorted(caps.params),
        "function_calling": caps.function_calling,
        "echo_extras": caps.echo_extras,
    }


async def write_answer(
    captured: Captured, body: dict[str, Any], api: ModelAPI, endpoint: Endpoint
) -> Failed | None:
    """Write the trial's cassette from the batch's reply ``body`` (the router must be
    installed); a :class:`Failed` when the body is no complete reply."""
    ex = exchange_of(captured, body)
    if ex is None:
        return Failed(codes.INFRA_BATCH_FAILED, "the batch's answer is not a complete reply",
                      codes.INFRA_BAD_REPLY)  # fmt: skip
    path = captured.spec.cassette
    recording = rec.Recording(exchanges=[ex])
    write_atomically(path, rec.dump(recording), CASSETTE_MODE)
    log: list[Attempt] = []
    try:  # read as the run will replay it: its reply, tokens and parameters
        with use_cassette(path, "none") as tc:
            asked = CompletionRequest(endpoint, captured.rendered, captured.seed, tc, log, 0)
            done = await call(api, asked)
    except Exception:  # the run replays it to the same typed fault
        return None
    if captured.rendered.api != "chat" or done.params is None:
        return None  # no reply kept as read: replayed from the body (at the live price)
    caps = api.capabilities(endpoint.model)
    full = asked_request(endpoint, captured.rendered, captured.seed, caps, False)
    read = rec.ReadReply(
        asked_key=replay_key(full),
        params=done.params.model_dump(mode="json"),
        reply=done.reply.model_dump(mode="json"),
        prompt_tokens=_int(done.prompt_tokens),
        completion_tokens=_int(done.completion_tokens),
        cost=batch_cost(endpoint, done),
    )
    values = secret_values()
    ex.read = rec.ReadReply.model_validate(
        redact_data(read.model_dump(mode="json", exclude_none=True), values)
    )
    recording.capabilities = _caps_record(api, endpoint)
    write_atomically(path, rec.dump(recording), CASSETTE_MODE)
    return None


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None
