"""A reply, plain or streamed, as a :class:`~toolbench.formats.base.ModelReply`.

Every kind hands the shared call an OpenAI chat completion (LiteLLM's ``ModelResponse``
or the same shape as a dict), whole or as a stream of chunks. Both are read by the one
chat reader (:class:`~toolbench.providers.wire.chat.reader.Assembler`): a plain reply is
a stream of one event (:func:`whole`); what it assembled becomes the turn's reply here
(:func:`reply_of`). The message is kept as the model sent it (``content: null`` stays
null; reasoning, thinking blocks and thought signatures stay on the raw message, which
is what goes back in the next turn).
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

from toolbench import codes
from toolbench.formats.base import ModelReply
from toolbench.providers.model_api import Fault
from toolbench.providers.server_tools import client_calls
from toolbench.providers.wire.chat.reader import Assembled, Assembler

_INVENTED_ID = re.compile(
    r"call_[0-9a-f]{28}|(?:call_)?[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
)
"""The ids LiteLLM 1.106 makes up: ``call_<uuid4 hex[:28]>`` (Gemini), ``call_<uuid4>`` or
a bare uuid4 (Ollama)."""
THOUGHT_SEPARATOR = "__thought__"
"""LiteLLM's ``THOUGHT_SIGNATURE_SEPARATOR``: a Gemini call id carries its thought
signature after it (LiteLLM reads it back from there on the next turn), kept as is."""


def stable_ids(calls: list[dict[str, Any]]) -> None:
    """Replace the call ids LiteLLM made up by ids derived from the calls themselves.

    The provider sent none (:func:`~toolbench.providers.capabilities.invents_call_ids`), so
    the id is not part of the exchange; a random one would make every replay of the
    trial differ from its recording. Ids a provider did send are left alone.
    """
    for i, tc in enumerate(calls):
        cid = tc.get("id")
        if not isinstance(cid, str):
            continue
        head, sep, signature = cid.partition(THOUGHT_SEPARATOR)
        if _INVENTED_ID.fullmatch(head):
            fn = tc.get("function") or {}
            tc["id"] = f"{derived_id(i, fn.get('name'), fn.get('arguments'))}{sep}{signature}"


def derived_id(index: int, name: Any, arguments: Any) -> str:
    """The id of a call the provider sent without one: derived from the call (its
    position, name and arguments), the same however the reply was read."""
    text = json.dumps([index, name, arguments], sort_keys=True)
    return f"call_{hashlib.sha256(text.encode()).hexdigest()[:24]}"


def _dump(msg: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in msg.items() if v is not None}


def whole(resp: Any) -> Assembled:
    """A plain reply read as the one event of its stream by the chat reader (a chat
    completion, LiteLLM's ``ModelResponse`` or its JSON); a completion without
    ``choices[0].message`` is an unreadable reply (``infra.bad_reply``, a :class:`Fault`)."""
    asm = Assembler()
    asm.feed(resp, None)
    done = asm.close()
    if done.whole is None:
        raise Fault(codes.INFRA_BAD_REPLY, "a chat completion without choices[0].message", True)
    return done


def reply_of(done: Assembled, stable: bool = False, own_server: bool = False) -> ModelReply:
    """The reply the chat reader assembled, plain (one event) or streamed, as a
    :class:`ModelReply`: its message as the model sent it, its client calls."""
    raw = _dump(done.message())
    # A call-only message comes back with ``content: null``; dumping without None values
    # would drop the key. It goes back as the model sent it: null, never "" (LiteLLM's
    # Anthropic conversion turns "" into a text block the model never wrote). The one
    # server that needs "" gets it by its own adaptation (:mod:`.request`).
    if "content" not in raw:
        raw["content"] = None
    # LiteLLM adds ``provider_specific_fields`` to every message it converts; for a server
    # of toolbench's own, whose replies also replay from the recorded JSON without
    # LiteLLM, one that carries nothing (``{"refusal": None}``) is left out on both paths.
    extras = raw.get("provider_specific_fields")
    if own_server and isinstance(extras, dict) and all(v is None for v in extras.values()):
        del raw["provider_specific_fields"]
    tool_calls = [_dump(tc) for tc in done.tool_calls]  # copies: stable ids rewrite them
    if stable:
        stable_ids(tool_calls)
        stable_ids(raw.get("tool_calls") or [])
    content = raw["content"]
    return ModelReply(
        text=content if isinstance(content, str) else "",
        # The tools the provider ran itself stay on the message (shown, and echoed), out
        # of the calls the formats parse and the scorers judge.
        tool_calls=client_calls(tool_calls, raw),
        finish_reason=done.finish_reason,
        raw_message=raw,
    )
