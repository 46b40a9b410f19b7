"""The request-aware fake server: its reply is a function of the request."""

from __future__ import annotations

import json
import urllib.request
from typing import Any

from toolbench.providers.fake import (
    FakeServer,
    Fault,
    by_last_user,
    by_turn,
    completion,
    in_order,
    last_user,
    turn_of,
)


def _req(*messages: tuple[str, str]) -> dict[str, Any]:
    return {"model": "m", "messages": [{"role": r, "content": c} for r, c in messages]}


def test_by_last_user_answers_the_first_key_the_message_contains() -> None:
    respond = by_last_user({"Paris": "sunny", "joke": "ha"}, default="?")
    assert respond(_req(("user", "Weather in Paris?"))) == "sunny"
    assert respond(_req(("user", "Paris"), ("assistant", "x"), ("user", "a joke"))) == "ha"
    assert respond(_req(("system", "Paris"))) == "?"  # only user messages count


def test_in_order_keeps_each_keys_own_order() -> None:
    fault = Fault(503)
    respond = in_order({"Paris": [fault, "sunny"]}, default="other")
    assert respond(_req(("user", "joke"))) == "other"  # another trial in between
    assert respond(_req(("user", "Paris"))) is fault
    assert respond(_req(("user", "joke"))) == "other"
    assert respond(_req(("user", "Paris"))) == "sunny"
    assert respond(_req(("user", "Paris"))) == "other"


def test_by_turn_answers_by_the_conversations_turn() -> None:
    respond = by_turn({"Lisbon": ["call", "23 degrees"]}, default="?")
    first = _req(("user", "Temperature in Lisbon?"))
    second = _req(("user", "Temperature in Lisbon?"), ("assistant", "call"), ("tool", "23"))
    assert (turn_of(first), turn_of(second)) == (0, 1)
    assert (respond(first), respond(second)) == ("call", "23 degrees")
    assert respond(_req(("user", "Paris"))) == "?"


def test_last_user_reads_content_parts() -> None:
    parts = [{"type": "text", "text": "a "}, {"type": "text", "text": "b"}]
    assert last_user({"messages": [{"role": "user", "content": parts}]}) == "a b"
    assert last_user({"messages": "not a list"}) == ""


def test_the_reply_is_openais_chat_completion_shape() -> None:
    body = completion({"model": "m"}, {"content": None, "tool_calls": [
        {"name": "f", "arguments": {"x": 1}}]})  # fmt: skip
    (choice,) = body["choices"]
    assert body["object"] == "chat.completion" and choice["finish_reason"] == "tool_calls"
    call = choice["message"]["tool_calls"][0]
    assert call == {"id": "call_0", "type": "function",
                    "function": {"name": "f", "arguments": '{"x": 1}'}}  # fmt: skip
    assert set(body["usage"]) == {"prompt_tokens", "completion_tokens", "total_tokens"}


def test_the_server_answers_over_http_by_request() -> None:
    with FakeServer(by_last_user({"Paris": "sunny"}, default="?")) as fake:
        for text, want in (("Paris", "sunny"), ("Rome", "?")):
            data = json.dumps(_req(("user", text))).encode()
            req = urllib.request.Request(fake.base_url + "/chat/completions", data=data,
                                         headers={"content-type": "application/json"})  # fmt: skip
            with urllib.request.urlopen(req, timeout=5) as r:
                got = json.loads(r.read())
            assert got["choices"][0]["message"]["content"] == want
    assert [last_user(r.body) for r in fake.received] == ["Paris", "Rome"]
