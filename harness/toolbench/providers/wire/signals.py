"""A provider's failure signals inside a 2xx stream, read from the events the bytes
carried, the same way for every wire: what LiteLLM would turn into an ``ok`` reply (a
stream cut short, a block it drops) or into an untyped failure (an error event).

- **An error event** (Anthropic's ``{"type": "error", "error": {"type":
  "overloaded_error"}}``; a gateway's, Gemini's or Ollama's ``{"error": ...}`` in place
  of a chunk; the shape of :func:`toolbench.cassettes.faults.error_object`) is the fault
  it names: by its HTTP-like ``code``/``status`` (429 rate limited, 5xx server error,
  other 4xx client error), else by its type (``overloaded_error``, ``api_error``,
  ``UNAVAILABLE`` ... a server error; ``rate_limit_error``, ``RESOURCE_EXHAUSTED`` rate
  limited; ``invalid_request_error``, ``authentication_error`` ... a client error); any
  other is ``infra.bad_reply``.
- **A stream without its wire's terminal event** is ``infra.stream_truncated``
  (retried, never recorded): Anthropic's ``message_stop``, Bedrock ConverseStream's
  ``messageStop`` (its payload holds ``stopReason``), Cohere v2's ``message-end``,
  Ollama's ``done: true``, a Gemini candidate's ``finishReason``. An OpenAI chat stream
  without ``finish_reason`` stays a ``stream.no_finish`` issue of a reply (servers that
  omit it are common, and its chunks are read whole as they came). The Responses API's
  stream has its own reader (:mod:`.responses`).
- **An Anthropic content block no reader knows** (neither one of
  :data:`~toolbench.cassettes.faults.ANTHROPIC_BLOCKS` nor a ``*_tool_result``) is
  ``infra.bad_reply``, as a whole message with one is: LiteLLM drops it without a word.

Linear in the events; never raises.
"""

from __future__ import annotations

from typing import Any

from toolbench import codes
from toolbench.cassettes.faults import ANTHROPIC_BLOCKS, carried_error
from toolbench.providers.model_api import Fault
from toolbench.providers.wire.cohere import reader as cohere
from toolbench.providers.wire.responses import reader as responses

Events = list[tuple[Any, float | None]]

ANTHROPIC_EVENTS = frozenset({
    "message_start", "message_delta", "message_stop", "content_block_start",
    "content_block_delta", "content_block_stop", "ping",
})  # fmt: skip
SERVER_ERRORS = frozenset({
    "overloaded_error", "api_error", "server_error", "internal_error", "internal_server_error",
    "service_unavailable", "unavailable", "internal", "deadline_exceeded", "timeout_error",
})  # fmt: skip
RATE_LIMITS = frozenset({"rate_limit_error", "rate_limit_exceeded", "resource_exhausted",
                         "too_many_requests"})  # fmt: skip
CLIENT_ERRORS = frozenset({
    "invalid_request_error", "authentication_error", "permission_error", "not_found_error",
    "request_too_large", "billing_error", "invalid_argument", "permission_denied",
    "unauthenticated", "not_found", "failed_precondition",
})  # fmt: skip


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


EVENT_REPLY_FIELDS = ("choices", "candidates", "message", "delta")
"""An event's fields that carry (part of) a reply: beside one, an ``error`` field is not
the event's failure signal."""


def _error_of(data: dict[str, Any]) -> Any:
    """The error an event carries in place of a reply (None: it carries none)."""
    error = carried_error(data, EVENT_REPLY_FIELDS)
    if error is True:  # a ``type: error`` event without an ``error`` field
        return data.get("message") or "an error event"
    return error


def error_fault(error: Any) -> Fault:
    """The typed fault an error event names (see the module docstring)."""
    body = _dict(error)
    kind = body.get("type") or body.get("status") or body.get("code")
    number = next((v for v in (body.get("code"), body.get("status")) if isinstance(v, int)),
                  None)  # fmt: skip
    what = str(body.get("message") or error)[:300]
    said = f"an error event in the stream ({kind}: {what})" if kind else f"an error event ({what})"
    name = str(kind).lower() if isinstance(kind, str) else ""
    if number == 429 or name in RATE_LIMITS:
        return Fault(codes.INFRA_RATE_LIMITED, said, True, 200)
    if (number is not None and number >= 500) or name in SERVER_ERRORS:
        return Fault(codes.INFRA_SERVER_ERROR, said, True, 200)
    if (number is not None and 400 <= number < 500) or name in CLIENT_ERRORS:
        return Fault(codes.INFRA_CLIENT_ERROR, said, False, 200)
    return Fault(codes.INFRA_BAD_REPLY, said, True, 200)


def wire(events: Events, path: str, framing: str | None) -> str | None:
    """Which provider's stream these events are (None: one this module has no rule for)."""
    first = next((d for d, _ in events if isinstance(d, dict)), None)
    path = path.rstrip("/")
    if path.endswith("/converse-stream") and framing == "eventstream":
        return "bedrock"
    if first is None:
        return None
    kind = first.get("type")
    if kind in ANTHROPIC_EVENTS or (kind == "error" and path.endswith("/messages")):
        return "anthropic"
    if kind in cohere.EVENT_TYPES:
        return "cohere"
    if "candidates" in first or path.endswith(":streamGenerateContent"):
        return "gemini"
    if isinstance(first.get("done"), bool) and "model" in first:
        return "ollama"
    return None


def _ended(name: str, data: dict[str, Any]) -> bool:
    """Whether ``data`` is the terminal event of wire ``name``."""
    if name == "anthropic":
        return data.get("type") == "message_stop"
    if name == "bedrock":
        return "stopReason" in data
    if name == "cohere":
        return data.get("type") == "message-end"
    if name == "ollama":
        return data.get("done") is True
    candidates = data.get("candidates")  # gemini: a finish reason, or a blocked prompt
    first = candidates[0] if isinstance(candidates, list) and candidates else None
    if isinstance(first, dict) and first.get("finishReason"):
        return True
    return bool(_dict(data.get("promptFeedback")).get("blockReason"))


def fault(events: Events, path: str, framing: str | None) -> Fault | None:
    """The provider's failure signal in a 2xx stream's events, typed (None: none)."""
    if responses.speaks(events):
        return None  # the Responses API's reader judges its own events
    name = wire(events, path, framing)
    ended = False
    for data, _ in events:
        if not isinstance(data, dict):
            continue
        error = _error_of(data)
        if error is not None:
            return error_fault(error)
        if name == "anthropic" and data.get("type") == "content_block_start":
            block = _dict(data.get("content_block")).get("type")
            if not isinstance(block, str) or not (
                block in ANTHROPIC_BLOCKS or block.endswith("_tool_result")
            ):
                what = f"an Anthropic content block of unknown type {block!r}"
                return Fault(codes.INFRA_BAD_REPLY, what, True, 200)
        if name is not None and not ended:
            ended = _ended(name, data)
    if name is not None and not ended and events:
        return Fault(codes.INFRA_STREAM_TRUNCATED, f"the {name} stream ended without "
                     f"its terminal event ({TERMINAL[name]})", True, 200)  # fmt: skip
    return None


TERMINAL = {"anthropic": "message_stop", "bedrock": "messageStop", "cohere": "message-end",
            "ollama": "done: true", "gemini": "a candidate's finishReason"}  # fmt: skip
