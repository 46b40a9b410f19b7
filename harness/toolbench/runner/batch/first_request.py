"""A trial's first request exactly as its live call would put it on the wire.

The request is built as the shared call builds its first attempt (the format rendered by
the engine's conversation, :func:`~toolbench.providers.turn_request.build_request` with
the kind's capabilities), then handed to the kind's send under a route that keeps the
HTTP request and answers it with an empty reply: what the provider's batch is given is the
body LiteLLM would have sent (its own transformation for Anthropic included), and what
the trial's cassette records is that request, so the run that follows replays it as if
it had come live. Which trials qualify: those whose conversation is one model request
(:func:`single_turn`); multi-turn trials stay live (each turn would be a batch round trip).
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass
from typing import Any

import httpx

from toolbench.cassettes.route import reset_route, set_route
from toolbench.engine import Conversation
from toolbench.formats.base import RenderedRequest
from toolbench.providers.kind_registry import Providers
from toolbench.providers.model_api import Endpoint, ModelAPI
from toolbench.providers.turn_request import build_request
from toolbench.runner.drive import BASE_SEED, TrialSpec, settings_of
from toolbench.runner.matrix import Matrix
from toolbench.runner.model_params import API_BASE
from toolbench.runner.variants import bare_model

REFUSAL = b'{"error": {"message": "toolbench: request kept for a batch", "type": "batch"}}'
"""What the capturing route answers a request of an endpoint it does not know."""
PLACEHOLDERS: dict[str, bytes] = {
    "/chat/completions": json.dumps({
        "id": "toolbench-batch", "object": "chat.completion", "created": 0, "model": "batch",
        "choices": [{"index": 0, "finish_reason": "stop",
                     "message": {"role": "assistant", "content": ""}}],
    }).encode(),
    "/messages": json.dumps({
        "id": "toolbench-batch", "type": "message", "role": "assistant", "model": "batch",
        "content": [{"type": "text", "text": ""}], "stop_reason": "end_turn",
        "usage": {"input_tokens": 0, "output_tokens": 0},
    }).encode(),
}  # fmt: skip
"""What the capturing route answers, by the path's end: an empty reply of the endpoint's
shape, read and dropped (nothing left the process). A reply, not a refusal: LiteLLM's
exception mapping and failure logging made the capture of a refused request much slower
than the reading of a reply."""


@dataclass
class Captured:
    """One trial's first request: as built (the key a replay finds it by) and as sent."""

    spec: TrialSpec
    rendered: RenderedRequest
    seed: int
    built: dict[str, Any]
    """The request as the call built it (toolbench's own replay key is of this)."""
    http: httpx.Request
    """The HTTP request the kind made of it (method, URL, headers with the key)."""
    sent: bytes
    """Its body as sent."""

    @property
    def body(self) -> Any:
        return json.loads(self.sent or b"null")


def single_turn(spec: TrialSpec) -> bool:
    """Whether the trial's conversation is one model request: a single-turn scenario
    (its limit is one turn) whose calls run in no environment. A retry after a parse
    error (``--retry-on-parse-error``) is a second request: it goes live."""
    return settings_of(spec).max_turns == 1 and not spec.scenario.environment


async def live_endpoint(
    providers: Providers, matrix: Matrix, spec: TrialSpec
) -> tuple[ModelAPI, Endpoint]:
    """The kind and live endpoint of the trial's model, as the scheduler makes them for a
    live trial (a variant is its bare model with the variant's parameters)."""
    model = spec.model
    api = providers.for_model(bare_model(model))
    endpoint = await api.endpoint(bare_model(model), spec.fmt, True)
    mine = dict(matrix.params.get(model, {}))
    mine.pop(API_BASE, None)
    if "max_tokens" in mine:
        endpoint.params.pop("max_tokens", None)
    endpoint.model_params = mine
    return api, endpoint


class _Keep:
    """A route that keeps the first request it is given and refuses it."""

    def __init__(self) -> None:
        self.request: httpx.Request | None = None
        self.sent = b""

    def _refuse(self, request: httpx.Request) -> httpx.Response:
        headers = {"content-type": "application/json"}
        path = request.url.path
        for end, body in PLACEHOLDERS.items():
            if path.endswith(end):
                return httpx.Response(200, headers=headers, content=body, request=request)
        return httpx.Response(400, headers=headers, content=REFUSAL, request=request)

    async def handle(
        self, transport: httpx.AsyncHTTPTransport, request: httpx.Request
    ) -> httpx.Response:
        sent = await request.aread()
        if self.request is None:
            self.request, self.sent = request, sent
        return self._refuse(request)

    def handle_sync(self, transport: httpx.HTTPTransport, request: httpx.Request) -> httpx.Response:
        sent = request.read()
        if self.request is None:
            self.request, self.sent = request, sent
        return self._refuse(request)


async def capture(spec: TrialSpec, api: ModelAPI, endpoint: Endpoint) -> Captured | None:
    """The trial's first request as built and as sent (the router must be installed);
    None when the kind sent nothing (it refused the request before the wire: the trial
    stays live, and its live call says why)."""
    conv = Conversation(spec.fmt, spec.scenario, settings_of(spec))
    rendered = conv.request()
    seed = BASE_SEED + spec.sample
    caps = api.capabilities(endpoint.model)
    takes = caps.params if caps.own_server else None
    built, _params = build_request(endpoint, rendered, seed, caps.echo_extras, takes)
    route = _Keep()
    token = set_route(route)
    try:
        await api.send(endpoint, copy.deepcopy(built))
    except Exception:  # a refusal, as the kind raises it: the request is kept all the same
        pass
    finally:
        reset_route(token)
    if route.request is None or route.request.method != "POST":
        return None
    return Captured(spec, rendered, seed, built, route.request, route.sent)
