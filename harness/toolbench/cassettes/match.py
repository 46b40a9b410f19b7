"""Request matching: method, host, port, path and the JSON body compared as data."""

from __future__ import annotations

import json
from typing import Any

from vcr import matchers
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


def json_body(r1: VcrRequest, r2: VcrRequest) -> None:
    """Bodies equal as JSON data (key order and spacing ignored), else as bytes."""
    a, b = r1.body or b"", r2.body or b""
    try:
        same = without_echo_extras(json.loads(a or b"null")) == without_echo_extras(
            json.loads(b or b"null")
        )
    except ValueError:
        same = a == b
    if not same:
        raise AssertionError("request bodies differ")


MATCH_ON = (matchers.method, matchers.host, matchers.port, matchers.path, json_body)
