"""Request matching, one rule for plain and streamed exchanges: method, path and the JSON
body compared as data (with what older cassettes recorded differently held equivalent)."""

from __future__ import annotations

from typing import Any


def _empty_extras(m: Any) -> bool:
    extras = m.get("provider_specific_fields") if isinstance(m, dict) else None
    return isinstance(extras, dict) and all(v is None for v in extras.values())


def without_echo_extras(body: Any) -> Any:
    """A request body without an empty ``provider_specific_fields`` (``{"refusal":
    null}``) on echoed assistant messages: toolbench no longer sends it to
    OpenAI-compatible servers (Mistral refuses it) and cassettes recorded before hold it,
    so it is not part of a request's identity. A non-empty one (Gemini's thought
    signatures) still is."""
    if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
        return body
    messages = [
        {k: v for k, v in m.items() if k != "provider_specific_fields"}
        if isinstance(m, dict) and m.get("role") == "assistant" and _empty_extras(m)
        else m
        for m in body["messages"]
    ]
    return {**body, "messages": messages}


def echo_equivalent(body: Any) -> Any:
    """A request body whose echoed assistant messages say ``content: ""`` where they said
    ``content: null`` or nothing. toolbench used to rewrite the model's null into "" for
    every provider; it now echoes null (only llama-server gets "", its adaptation), which
    LiteLLM leaves out of an OpenAI-compatible request, and the cassettes recorded before
    say "": for matching, the three are one request."""
    if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
        return body
    if not any(_null_content(m) for m in body["messages"]):
        return body
    messages = [{**m, "content": ""} if _null_content(m) else m for m in body["messages"]]
    return {**body, "messages": messages}


def _null_content(m: Any) -> bool:
    return isinstance(m, dict) and m.get("role") == "assistant" and m.get("content") is None


def same_body(recorded: Any, sent: Any) -> bool:
    """Whether two request bodies (JSON data, or text that is not JSON) are one request:
    equal as data, key order ignored, an echoed null content as "" and an empty
    ``provider_specific_fields`` left out (:func:`echo_equivalent`,
    :func:`without_echo_extras`)."""
    if recorded == sent:
        return True
    return bool(_norm(recorded) == _norm(sent))


def _norm(body: Any) -> Any:
    return echo_equivalent(without_echo_extras(body))
