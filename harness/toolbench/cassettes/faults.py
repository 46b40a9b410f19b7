"""What is recorded: a reply is kept only when it is complete and well-formed (or a 4xx
refusal the trial may act on); the protocol checks of each provider's reply shape."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from toolbench.cassettes.recording import Recording


def reply_fault(status: int, content: bytes, path: str) -> str | None:
    """Why a response is not a complete, well-formed reply (None when it is one).

    Any reply must be 2xx with a JSON object body that is not an error object
    (:func:`error_object`); a chat completion (its path ends in
    ``/chat/completions``, or its body has ``choices``) also needs a non-empty
    ``choices`` list whose first entry has a ``message`` object. An HTML page, an empty
    body or ``{}`` with status 200 is a provider fault, never a model's answer.
    """
    if not 200 <= status < 300:
        return f"HTTP {status}"
    try:
        data = json.loads(content)
    except ValueError:
        head = content[:60].decode("utf-8", "replace").strip()
        return "empty body" if not head else f"body is not JSON ({head!r}...)"
    if not isinstance(data, dict):
        return "body is not a JSON object"
    error = error_object(data)
    if error is not None:
        return f"HTTP {status} carrying an error object ({error})"
    protocol_fault = _protocol_fault(data, path.rstrip("/"))
    if protocol_fault is not None:
        return protocol_fault
    if path.rstrip("/").endswith("/chat/completions") or "choices" in data:
        choices = data.get("choices")
        if not isinstance(choices, list) or not choices:
            return "chat completion without choices"
        first = choices[0]
        if not isinstance(first, dict) or not isinstance(first.get("message"), dict):
            return "chat completion whose first choice has no message"
    return None


REPLY_FIELDS = ("choices", "candidates", "content", "message", "output")
"""Top-level fields that carry a reply (OpenAI chat, Gemini, Anthropic, Ollama, the
Responses API): a body holding one with a value is read as a reply, whatever else it
says."""


def error_object(data: dict[str, Any]) -> str | None:
    """What a 2xx JSON body says failed, when it is a provider's error object rather than
    a reply (None: it is no error object).

    Providers send their failure signals with status 200 too: Anthropic an ``{"type":
    "error", "error": {...}}`` body (``overloaded_error``), OpenAI-compatible gateways
    and Gemini an ``{"error": {...}}`` body, Ollama ``{"error": "..."}``. Such a body is
    the provider's fault, never the model's answer: it is not recorded (a retry or a
    later ``--record new`` asks the server again) and no recorded one is replayed. The
    rule is the shape, not a provider's wording: ``type`` ``"error"``, or a non-empty
    ``error`` field in a body that carries no reply field (:data:`REPLY_FIELDS`); a
    Responses API body (``object: response``) is judged by its own rule. The text says the error's
    type and message, cut short. The status-shaped wording (``HTTP 200 ...``,
    :func:`reply_fault`) leaves its classification to the sender's exception, as for a
    4xx or 5xx that carried the same object.
    """
    if data.get("type") != "error" and data.get("object") == "response":
        return None  # a Responses API body: its own rule (_responses_fault)
    if carried_error(data, REPLY_FIELDS) is None:
        return None
    error = data.get("error")
    if isinstance(error, dict):
        kind = error.get("type") or error.get("status") or error.get("code")
        parts = [str(p) for p in (kind, error.get("message")) if p not in (None, "")]
        return ": ".join(parts)[:200] or "an error"
    return str(error)[:200] if error else "an error"


def carried_error(data: dict[str, Any], reply_fields: Sequence[str]) -> Any:
    """The error a JSON object (a body, or a stream's event) carries in place of a reply,
    by its shape alone: ``type`` ``"error"`` (its ``error`` field, or True when it has
    none), or a non-empty ``error`` field beside none of ``reply_fields``. None: no
    error. One rule for what is recorded (:func:`error_object`) and what a stream's
    reader types (:mod:`toolbench.providers.wire.signals`); each names the fields
    that carry a reply on what it reads."""
    error = data.get("error")
    if data.get("type") == "error":
        return error or True
    if error and not any(data.get(k) for k in reply_fields):
        return error
    return None


ANTHROPIC_BLOCKS = frozenset({"text", "tool_use", "server_tool_use", "thinking",
                              "redacted_thinking", "compaction"})  # fmt: skip
"""The content blocks of an Anthropic message that LiteLLM 1.106 reads (and every
``*_tool_result``); it drops any other block without a word, so a reply made only of
them would pass for an empty answer of the model."""


def _protocol_fault(data: dict[str, Any], path: str) -> str | None:
    """Why a 2xx JSON body of a non-OpenAI protocol is not a reply (found by the provider
    round trips, tests/providers/test_bad_input.py): an Anthropic message with a block
    LiteLLM cannot read, a Gemini ``generateContent`` reply without candidates (a
    blocked prompt). A candidate without content (``finishReason`` SAFETY,
    MALFORMED_FUNCTION_CALL) is the model's empty answer, as LiteLLM reads it: scored."""
    if path.endswith("/v1/messages") and data.get("type") == "message":
        content = data.get("content")
        if not isinstance(content, list):
            return "Anthropic message without a content list"
        for block in content:
            kind = block.get("type") if isinstance(block, dict) else None
            if not isinstance(kind, str):
                return "Anthropic message with a content block without a type"
            if kind not in ANTHROPIC_BLOCKS and not kind.endswith("_tool_result"):
                return f"Anthropic message with an unknown content block type {kind!r}"
    elif path.endswith("/responses") and data.get("object") == "response":
        return _responses_fault(data)
    elif path.endswith(":generateContent"):
        candidates = data.get("candidates")
        if not isinstance(candidates, list) or not candidates:
            feedback = data.get("promptFeedback")
            reason = feedback.get("blockReason") if isinstance(feedback, dict) else None
            why = f" (blockReason {reason})" if reason else ""
            return f"Gemini reply without candidates{why}"
    return None


def stream_fault(path: str, events: int, carried: set[str], chat_chunks: bool) -> str | None:
    """Why a streamed 2xx body is not a reply (None when it may be one): the streamed
    counterpart of :func:`reply_fault`, from what the stream's events carried. No event at
    all (an empty stream, or ``[DONE]`` alone); OpenAI chat chunks that never held a
    choice (only ``choices: []``, the usage chunk); a Gemini stream without candidates
    (a blocked prompt). A stream whose events did carry something is read, and what the
    model said in it is scored, however little."""
    path = path.rstrip("/")
    if events == 0:
        return "an empty stream (no event)"
    if chat_chunks and "choices" not in carried:
        return "a chat completion stream whose chunks carry no choices"
    if path.endswith(":streamGenerateContent") and "candidates" not in carried:
        return "a Gemini stream without candidates"
    return None


def _responses_fault(data: dict[str, Any]) -> str | None:
    """A Responses API body that is no reply (``native:api=responses``): a failed response,
    or one without output items (the reader, ``providers/wire/responses/reader.py``, says the
    same to the trial)."""
    if data.get("status") == "failed" or data.get("error"):
        return "a failed Responses API response"
    output = data.get("output")
    if not isinstance(output, list) or not output:
        return "a Responses API response without output items"
    return None


def recordable(response: dict[str, Any], path: str) -> bool:
    """The recording decision: only complete replies, and 4xx answers.

    A 4xx is kept provisionally: a refusal the trial acts on (a model that rejects
    ``stop``, a provider without tool support) must replay the same way, so it stays;
    any other 4xx ends the trial as an infra error and the provider forgets it
    (:meth:`TrialCassette.forget_last`), so ``--record new`` asks the server again.
    Timeouts (408), 429, 5xx, redirects and malformed 2xx bodies are never recorded.
    """
    status = int(response.get("status", {}).get("code", 200))
    if 400 <= status < 500:
        return status not in (408, 429)
    body = response.get("body", {}).get("string", b"")
    if isinstance(body, str):
        body = body.encode("utf-8")
    return reply_fault(status, body or b"", path) is None


def answered(recording: Recording) -> Recording:
    """``recording`` without the plain 2xx exchanges whose body is a provider's error
    object (:func:`error_object`), which a toolbench before this rule recorded as
    replies: such an exchange is never replayed (``--record none`` then reports the
    request missing, ``--record new`` asks the server again and saves the cassette
    without it). The recording itself when it holds none (the common case: a dict look-up
    an exchange)."""
    exchanges = recording.exchanges
    keep = [ex for ex in exchanges if not _recorded_error(ex.response.status, ex.response.body)]
    if len(keep) == len(exchanges):
        return recording
    return recording.model_copy(update={"exchanges": keep})


def _recorded_error(status: int, body: Any) -> bool:
    return 200 <= status < 300 and type(body) is dict and error_object(body) is not None
