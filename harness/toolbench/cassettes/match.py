"""Request matching: method, host, port, path and the JSON body compared as data (with
what older cassettes recorded differently held equivalent)."""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import lru_cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from vcr.request import Request as VcrRequest


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


def json_body(r1: VcrRequest, r2: VcrRequest) -> None:
    """Bodies equal as JSON data (key order and spacing ignored; an echoed null content
    as ""), else as bytes."""
    a, b = r1.body or b"", r2.body or b""

    def norm(raw: bytes | str) -> Any:
        return echo_equivalent(without_echo_extras(json.loads(raw or b"null")))

    try:
        same = norm(a) == norm(b)
    except ValueError:
        same = a == b
    if not same:
        raise AssertionError("request bodies differ")


Matcher = Callable[["VcrRequest", "VcrRequest"], None]


@lru_cache(maxsize=1)
def match_on() -> tuple[Matcher, ...]:
    """vcrpy's matchers for method, host, port and path, then :func:`json_body`.

    A function, not a constant: importing vcrpy is slow (it imports the
    stubs of every HTTP client it patches) and a replay answered at the provider boundary
    never needs it, so vcrpy is imported when a request first reaches HTTP."""
    from vcr import matchers

    return (matchers.method, matchers.host, matchers.port, matchers.path, json_body)
