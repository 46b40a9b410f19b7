"""The fakes refuse what their providers refuse: without that, a round trip that passes
would prove nothing. Driven over HTTP with httpx, as a client would."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx
import pytest

from tests.providers.cases import FORMATS
from tests.providers.servers import anthropic, gemini, ollama, openai_chat
from tests.providers.servers.brain import Answer, Call, as_text, decide
from toolbench.formats.format_registry import get_format
from toolbench.providers.fake import FakeServer, LocalServer

USER = {"role": "user", "content": "Weather in Lisbon?"}


def post(url: str, body: dict[str, Any], **headers: str) -> httpx.Response:
    return httpx.post(url, json=body, headers=headers, timeout=10)


def test_brain_answers_by_the_request_not_its_order() -> None:
    assert decide([("user", "Weather in Oslo?")]) == Call("get_weather", {"city": "Oslo"})
    turns = [("user", "Weather in Oslo?"), ("assistant", ""), ("tool", '{"temperature": -3}')]
    assert decide(turns) == Answer("It is -3 degrees in Oslo right now.")


@pytest.mark.parametrize("fmt", [f for f in FORMATS if f != "native"])
def test_brain_writes_calls_each_format_parses(fmt: str) -> None:
    text = as_text(Call("get_weather", {"city": "Lisbon"}), fmt)
    parsed = get_format(fmt).parse(text)
    assert [(c.name, c.arguments) for c in parsed.calls] == [("get_weather", {"city": "Lisbon"})]
    assert parsed.status == "strict"


def test_mistral_refuses_an_unknown_field_on_an_echoed_message() -> None:
    with openai_chat.server("mistral") as srv:
        assistant = {"role": "assistant", "content": "",
                     "provider_specific_fields": {"refusal": None}}  # fmt: skip
        body = {"model": "m", "messages": [USER, assistant, USER]}
        r = post(f"{srv.base_url}/chat/completions", body, authorization="Bearer k")
        assert r.status_code == 422
        assert r.json()["message"]["detail"][0]["loc"] == [
            "body", "messages", 1, "assistant", "provider_specific_fields",
        ]  # fmt: skip
        assert post(f"{srv.base_url}/chat/completions", {**body, "seed": 1},
                    authorization="Bearer k").status_code == 422  # fmt: skip


def test_anthropic_refuses_seed_and_an_orphan_tool_result() -> None:
    with anthropic.server() as srv:
        url = f"{srv.base_url}/v1/messages"
        hdrs = {"x-api-key": "k", "anthropic-version": "2023-06-01"}
        base = {"model": "c", "max_tokens": 10, "messages": [USER]}
        assert post(url, base, **hdrs).status_code == 200
        r = post(url, {**base, "seed": 1}, **hdrs)
        assert r.status_code == 400
        assert r.json()["error"]["message"] == "seed: Extra inputs are not permitted"
        orphan = {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "toolu_x", "content": "23"}]}  # fmt: skip
        messages = [USER, {"role": "assistant", "content": "ok"}, orphan]
        assert post(url, {**base, "messages": messages}, **hdrs).status_code == 400
        assert post(url, base, **{"anthropic-version": "2023-06-01"}).status_code == 401


def test_gemini_refuses_a_second_turn_without_the_thought_signature() -> None:
    with gemini.server() as srv:
        url = f"{srv.base_url}/models/gemini-x:generateContent"
        user = {"role": "user", "parts": [{"text": "Weather in Lisbon?"}]}
        tools = [{"functionDeclarations": [{"name": "get_weather"}]}]
        first = post(url, {"contents": [user], "tools": tools}, **{"x-goog-api-key": "k"})
        part = first.json()["candidates"][0]["content"]["parts"][0]
        assert part["functionCall"] == {"name": "get_weather", "args": {"city": "Lisbon"}}
        result = {"role": "user", "parts": [{"functionResponse": {
            "name": "get_weather", "response": {"temperature": 23}}}]}  # fmt: skip
        echoed = {"role": "model", "parts": [part]}
        unsigned = {"role": "model", "parts": [{"functionCall": part["functionCall"]}]}
        ok = post(url, {"contents": [user, echoed, result], "tools": tools},
                  **{"x-goog-api-key": "k"})  # fmt: skip
        assert ok.status_code == 200
        assert "23" in ok.json()["candidates"][0]["content"]["parts"][0]["text"]
        refused = post(url, {"contents": [user, unsigned, result], "tools": tools},
                       **{"x-goog-api-key": "k"})  # fmt: skip
        assert refused.status_code == 400
        assert "missing a thought_signature" in refused.json()["error"]["message"]


def test_moonshot_refuses_a_temperature_over_one() -> None:
    with openai_chat.server("moonshot") as srv:
        body = {"model": "kimi", "messages": [USER], "temperature": 1.5}
        r = post(f"{srv.base_url}/chat/completions", body, authorization="Bearer k")
        assert r.status_code == 400


def test_gemini_3_refuses_a_function_response_without_the_call_id() -> None:
    with gemini.server() as srv:
        url = f"{srv.base_url}/models/gemini-3-pro-preview:generateContent"
        key = {"x-goog-api-key": "k"}
        user = {"role": "user", "parts": [{"text": "Weather in Oslo?"}]}
        tools = [{"functionDeclarations": [{"name": "get_weather"}]}]
        part = post(url, {"contents": [user], "tools": tools}, **key).json()["candidates"][0][
            "content"
        ]["parts"][0]
        assert part["functionCall"]["id"] == "fc-oslo-0"
        answer: dict[str, Any] = {"name": "get_weather", "response": {"temperature": -3}}
        history = [user, {"role": "model", "parts": [part]}]
        without = {"role": "user", "parts": [{"functionResponse": answer}]}
        with_id = {"role": "user", "parts": [{"functionResponse": {**answer, "id": "fc-oslo-0"}}]}
        refused = post(url, {"contents": [*history, without], "tools": tools}, **key)
        assert refused.status_code == 400
        assert "matches no function call" in refused.json()["error"]["message"]
        accepted = post(url, {"contents": [*history, with_id], "tools": tools}, **key)
        assert accepted.status_code == 200


@pytest.mark.parametrize(
    ("make", "suffix"),
    [
        (lambda: openai_chat.server("openai"), "/v1"),
        (lambda: gemini.server(), "/v1beta"),
        (lambda: anthropic.server(), ""),
        (lambda: ollama.server(), ""),
        (lambda: FakeServer(), "/v1"),
    ],
    ids=["openai-chat", "gemini", "anthropic", "ollama", "toolbench-fake"],
)
def test_every_fake_has_one_lifecycle(make: Callable[[], LocalServer], suffix: str) -> None:
    """The protocol fakes and toolbench's OpenAI fake share one server lifecycle
    (:class:`LocalServer`): a free port, the base URL with its prefix, a thread started on
    ``with`` and the port closed after it."""
    fake = make()
    assert isinstance(fake, LocalServer)
    with fake as srv:
        assert srv is fake
        assert srv.base_url == f"http://127.0.0.1:{srv.port}{suffix}"
        assert srv.thread.is_alive()
    srv.thread.join(timeout=5)
    assert not srv.thread.is_alive()
    with pytest.raises(httpx.ConnectError):
        httpx.get(srv.base_url, timeout=2)
