"""What a provider's finish signal means for the trial, plain or streamed, any provider.

LiteLLM maps every provider's finish reason onto OpenAI's few, which loses two things a
benchmark of tool calling must keep apart from the model's own answer:

- **A provider's filter** (Gemini ``SAFETY``, ``RECITATION``, ``BLOCKLIST``,
  ``PROHIBITED_CONTENT``, ``SPII``, ``LANGUAGE``, ``OTHER`` and the image ones; Anthropic
  ``refusal``; Bedrock ``guardrail_intervened``; OpenAI and Azure ``content_filter``: all
  ``content_filter`` in LiteLLM's table) stopped the reply: what the model would have
  said is unknown. The trial ends ``provider.filtered`` (status ``infra_error``), kept out
  of the format's rates like any infrastructure fault and counted in
  ``infra_error_rate``; not asked again (a filter answers the same), and its exchange,
  which is what the provider answered, replays to the same code.
- **A failed call attempt** (Gemini ``MALFORMED_FUNCTION_CALL``: the model generated a
  call the API could not parse; ``UNEXPECTED_TOOL_CALL``, ``TOO_MANY_TOOL_CALLS``)
  reaches LiteLLM's reply as ``stop`` with no content, an answer that declined to call.
  Its finish reason becomes the native one lower-cased
  (:data:`toolbench.codes.FAILED_CALL_FINISHES`), which the ``native`` format reads as a
  call attempt that failed (``call.malformed``): never an abstention.

A prompt the provider blocked before the model answered (Gemini's ``promptFeedback
.blockReason`` without candidates) is the same filter, plain or streamed.

The native reason is read from the bytes where LiteLLM drops it: a streamed Gemini
candidate's ``finishReason``; a whole reply's ``provider_specific_fields
.native_finish_reason`` (LiteLLM keeps it on the choice).
"""

from __future__ import annotations

from typing import Any

from toolbench import codes
from toolbench.formats.base import ModelReply
from toolbench.providers.model_api import Fault

FILTERED = "content_filter"
"""LiteLLM's finish reason for every provider's filter (its ``_FINISH_REASON_MAP``)."""
FAILED_CALL = {reason.upper(): reason for reason in codes.FAILED_CALL_FINISHES}
"""Gemini's native finish reasons that say the model tried to call and failed."""


def _get(obj: Any, key: str) -> Any:
    return obj.get(key) if isinstance(obj, dict) else getattr(obj, key, None)


def native_of_reply(resp: Any) -> str | None:
    """The provider's own finish reason of a whole reply, where LiteLLM kept it."""
    choices = _get(resp, "choices")
    first = choices[0] if isinstance(choices, list) and choices else None
    extras = _get(first, "provider_specific_fields") if first is not None else None
    native = _get(extras, "native_finish_reason") if extras is not None else None
    return native if isinstance(native, str) else None


def native_of_events(events: list[tuple[Any, float | None]]) -> str | None:
    """A streamed Gemini reply's own finish reason (its last candidate's that has one)."""
    found = None
    for data, _ in events:
        candidates = data.get("candidates") if isinstance(data, dict) else None
        first = candidates[0] if isinstance(candidates, list) and candidates else None
        reason = first.get("finishReason") if isinstance(first, dict) else None
        if isinstance(reason, str) and reason:
            found = reason
    return found


def blocked_prompt(events: list[tuple[Any, float | None]]) -> str | None:
    """The ``promptFeedback.blockReason`` of a Gemini stream that blocked the prompt (no
    candidate: the model never answered), else None."""
    for data, _ in events:
        feedback = data.get("promptFeedback") if isinstance(data, dict) else None
        reason = feedback.get("blockReason") if isinstance(feedback, dict) else None
        if isinstance(reason, str) and reason and not data.get("candidates"):
            return reason
    return None


def filtered(why: str) -> Fault:
    """The fault of a reply a provider's filter stopped (not retried: it answers the same)."""
    return Fault(codes.PROVIDER_FILTERED, f"the provider's filter stopped the reply{why}: "
                 "what the model would have said is not known", False)  # fmt: skip


def settle(reply: ModelReply, native: str | None) -> None:
    """Apply the rules above to ``reply``: raise ``provider.filtered`` (a :class:`Fault`,
    not retried) for a filtered reply; mark a failed call attempt's finish reason."""
    if native in FAILED_CALL and not reply.tool_calls:
        reply.finish_reason = FAILED_CALL[native]
        return
    if reply.finish_reason == FILTERED:
        raise filtered(f" ({native})" if native and native.lower() != FILTERED else "")
