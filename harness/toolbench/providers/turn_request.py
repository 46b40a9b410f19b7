"""The request a trial's turn sends, built once for every kind, plain or streamed.

What the model said goes back unaltered: LiteLLM's own ``provider_specific_fields`` are
taken out of echoed assistant messages only for providers that would refuse them, and a
server's adaptation (llama-server's empty content) is applied here and recorded on the
trial (:func:`adaptations`). The sampling parameters are filtered by what the model takes
(:mod:`.capabilities`), and the record says what was asked, sent and dropped.
"""

from __future__ import annotations

from typing import Any

from toolbench.formats.base import RenderedRequest
from toolbench.providers.capabilities import filter_params, reads_echo_extras
from toolbench.providers.model_api import Endpoint
from toolbench.providers.wire.responses.request import is_responses, shape
from toolbench.results import RequestParams

ECHO_DROPPED = ("provider_specific_fields",)
"""Fields LiteLLM adds to a reply's message that are not part of the chat API: echoed
back in the next turn to an OpenAI-compatible API, Mistral's refuses the request (422 on
unknown fields). Providers whose LiteLLM transformation reads them (Gemini's thought
signatures, Anthropic's and Bedrock's blocks) get them back
(:attr:`~toolbench.providers.model_api.Capabilities.echo_extras`)."""


CALL_DROPPED = ("index",)
"""A delta field LiteLLM leaves on the calls of a whole message it translated (Cohere's,
Anthropic's, Gemini's replies): not what the model said, and a provider that takes the
message as it is (Cohere v2) would get it. Providers whose transformation rebuilds the
message (the echo-extras readers) ignore it."""


def _call_safe(calls: Any) -> Any:
    if not isinstance(calls, list) or not any(
        isinstance(c, dict) and any(k in c for k in CALL_DROPPED) for c in calls
    ):
        return calls
    return [
        {k: v for k, v in c.items() if k not in CALL_DROPPED} if isinstance(c, dict) else c
        for c in calls
    ]


def _echo_safe(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``messages`` with LiteLLM's own fields taken out of echoed assistant messages."""
    out = []
    for m in messages:
        if isinstance(m, dict) and m.get("role") == "assistant":
            if any(k in m for k in ECHO_DROPPED):
                m = {k: v for k, v in m.items() if k not in ECHO_DROPPED}
            calls = m.get("tool_calls")
            safe = _call_safe(calls)
            if safe is not calls:
                m = {**m, "tool_calls": safe}
        out.append(m)
    return out


NULL_CONTENT_ADAPTATION = (
    'adaptation: echoed assistant messages with content null were sent with content "" '
    "(llama-server's chat templates fail on a null content)"
)
"""The note a trial carries when its server's adaptation changed an echoed message."""


def _null_content_as_empty(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        {**m, "content": ""}
        if isinstance(m, dict) and m.get("role") == "assistant" and m.get("content") is None
        else m
        for m in messages
    ]


def adaptations(
    endpoint: Endpoint, request: dict[str, Any], rendered: RenderedRequest
) -> list[str]:
    """What a server's adaptation changed in this request (recorded on the trial)."""
    if not endpoint.null_content_as_empty:
        return []
    changed = any(
        isinstance(m, dict) and m.get("role") == "assistant" and m.get("content") is None
        for m in rendered.messages
    )
    return [NULL_CONTENT_ADAPTATION] if changed else []


def as_streamed(request: dict[str, Any]) -> None:
    """Make ``request`` a streamed one. Usage is asked of every stream: LiteLLM forwards
    ``stream_options`` only to the providers that take it, and without it drops the usage
    every other provider sends (Anthropic's message_delta, Gemini's usageMetadata,
    Ollama's counts). The Responses API has no such option: its stream always ends with
    the usage."""
    request["stream"] = True
    if not is_responses(request):
        request["stream_options"] = {"include_usage": True}


def build_request(
    endpoint: Endpoint,
    rendered: RenderedRequest,
    seed: int,
    echo_extras: bool | None = None,
    takes: frozenset[str] | None = None,
) -> tuple[dict[str, Any], RequestParams]:
    """The exact request parameters handed to the kind (and recorded in results), and
    the record of the sampling parameters asked, sent and dropped (by the model's
    capabilities, :mod:`.capabilities`; ``takes``: a server of toolbench's own says itself).
    ``echo_extras``: the kind's
    :attr:`~toolbench.providers.model_api.Capabilities.echo_extras` (None: LiteLLM's tables)."""
    messages = list(rendered.messages)
    if echo_extras is None:
        echo_extras = reads_echo_extras(endpoint.model, endpoint.api_base)
    if not echo_extras:
        messages = _echo_safe(messages)
    if endpoint.null_content_as_empty:
        messages = _null_content_as_empty(messages)
    req: dict[str, Any] = {"model": endpoint.model, "messages": messages}
    asked: dict[str, Any] = {}
    if rendered.stop:
        asked["stop"] = list(rendered.stop)
    if rendered.tools:
        req["tools"] = rendered.tools
        if rendered.tool_choice is not None:
            req["tool_choice"] = rendered.tool_choice
    asked.update({"temperature": 0, "seed": seed})
    asked.update(endpoint.model_params)
    # A format's knobs (native:tool_choice, native:parallel) are checked like the
    # harness's own parameters: one the provider does not take is dropped and recorded.
    knobs = rendered.params
    asked.update(knobs)
    sent, record = filter_params(endpoint.model, asked, endpoint.api_base, tuple(knobs), takes)
    if "stop" in sent:
        req["stop"] = sent.pop("stop")
    req.update(sent)
    req.update(endpoint.params)
    if rendered.api == "responses":
        return shape(req, record), record
    return req, record
