"""``native:api=responses`` end to end through the shared call: two turns against a fake
of OpenAI's Responses API (:mod:`tests.providers.servers.responses`, which names its
sources), plain and streamed, recorded; the turn-2 request's ``input`` items asserted
field by field; then the same two turns replayed offline (no server) into the same
replies. Unreadable replies are typed faults, never ``ok`` trials, and are not recorded.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import pytest

from tests.providers.servers.base import FakeServer, Request, Response
from tests.providers.servers.responses import ResponsesAPI, events, response, sse
from toolbench import codes
from toolbench.cassettes.route import router
from toolbench.cassettes.use import use_cassette
from toolbench.errors import InfraError
from toolbench.formats.base import ModelReply, ToolCall
from toolbench.formats.format_registry import get_format
from toolbench.providers import litellm_api
from toolbench.providers.call import call
from toolbench.providers.litellm_api import LiteLLMAPI
from toolbench.providers.model_api import Completion, CompletionRequest, ProviderSettings
from toolbench.results import Attempt
from toolbench.tools import ToolDef

MODEL = "openai/gpt-5-mini"
TOOL = ToolDef(
    name="get_weather",
    description="The weather in a city.",
    parameters={"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
)
USER = {"role": "user", "content": "What is the weather in Lisbon?"}
ARGS = '{"city":"Lisbon"}'
RESULT = '{"temp_c": 18}'
ANSWER = "It is 18 C in Lisbon."
REASONING = {
    "type": "reasoning",
    "id": "rs_67ccd2bf17f0819081ff3bb2cf6508e6",
    "summary": [{"type": "summary_text", "text": "Call the weather tool."}],
    "encrypted_content": "gAAAAABoVf-opaque-reasoning==",
}
CALL = {
    "type": "function_call",
    "id": "fc_67ccd2c0c5a88190b5b7cc1a8e1d9b2c",
    "call_id": "call_6pX8Gy0QHzqmlsQK",
    "name": "get_weather",
    "arguments": ARGS,
    "status": "completed",
}
MESSAGE = {
    "type": "message",
    "id": "msg_67ccd2c1a2a48190",
    "status": "completed",
    "role": "assistant",
    "content": [{"type": "output_text", "text": ANSWER, "annotations": []}],
}
FIRST = response([REASONING, CALL])
SECOND = response([MESSAGE])


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-responses-dummy-0000")
    yield


def _cassette(tmp: Path, streamed: bool, record: str) -> AbstractContextManager[Any]:
    if streamed:
        return use_cassette(tmp / "trial.sse.json", record, streamed=True)  # type: ignore[arg-type]
    return use_cassette(tmp / "trial.json", record)  # type: ignore[arg-type]


async def _two_turns(
    base: str | None,
    streamed: bool,
    tmp: Path,
    record: str,
    attempts: list[Attempt],
    spec: str = "native:api=responses",
) -> list[Completion]:
    """Turn 1 (the call), then turn 2 with its result, as the engine drives the format."""
    fmt = get_format(spec)
    api = LiteLLMAPI(ProviderSettings(api_base=base))
    endpoint = await api.endpoint(MODEL, fmt, live=record != "none")
    messages: list[dict[str, Any]] = [USER]
    done: list[Completion] = []
    with router(), _cassette(tmp, streamed, record) as tc:
        for turn in (0, 1):
            rendered = fmt.render([TOOL], messages)
            req = CompletionRequest(endpoint, rendered, 7, tc, attempts, turn)
            got = await call(api, req, stream=streamed)
            done.append(got)
            if turn == 0:
                parsed = fmt.parse_reply(got.reply, [TOOL])
                (tc_call,) = parsed.calls
                messages = fmt.continue_conversation(messages, got.reply, [(tc_call, RESULT)])
    return done


async def _no_call(**kw: Any) -> Any:
    raise AssertionError("a replay at the boundary called litellm.aresponses")


def _check_turn_two(body: dict[str, Any]) -> None:
    """The turn-2 request, field by field, as the Responses API documents it."""
    assert "messages" not in body and "seed" not in body and "stop" not in body
    assert body["model"] == "gpt-5-mini"
    assert body["instructions"].startswith("You are a helpful assistant.")
    first, reasoning, fcall, output = body["input"]
    assert first == USER
    assert reasoning == REASONING  # echoed exactly: summary and encrypted_content
    assert fcall == CALL  # its id, call_id, name, arguments and status as returned
    assert output == {"type": "function_call_output", "call_id": CALL["call_id"], "output": RESULT}
    assert body["tools"] == [
        {
            "type": "function",
            "name": "get_weather",
            "description": TOOL.description,
            "parameters": TOOL.parameters,
            "strict": False,
        }
    ]
    assert body["tool_choice"] == "auto"


@pytest.mark.parametrize("streamed", [False, True], ids=["plain", "streamed"])
def test_two_turns_send_the_models_items_back_and_replay_offline(
    streamed: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    server = FakeServer(ResponsesAPI(FIRST, SECOND))
    live_attempts: list[Attempt] = []
    with server:
        live = asyncio.run(_two_turns(server.base_url, streamed, tmp_path, "all", live_attempts))
    assert [r.path for r in server.received] == ["/responses", "/responses"]
    _check_turn_two(server.received[1].body)
    assert server.received[0].body.get("stream") is (True if streamed else None)
    first, second = live
    assert [c["function"] for c in first.reply.tool_calls] == [
        {"name": "get_weather", "arguments": ARGS}
    ]
    assert first.reply.tool_calls[0]["id"] == CALL["call_id"]
    assert first.reply.finish_reason == "tool_calls"
    assert first.reply.raw_message["reasoning_content"] == "Call the weather tool."
    assert second.reply.text == ANSWER and second.reply.finish_reason == "stop"
    assert (first.prompt_tokens, first.completion_tokens) == (20, 9)
    # The Responses API takes no seed, gpt-5 no temperature 0: dropped and recorded.
    assert first.params.dropped["seed"] == "the Responses API does not take seed"
    assert set(first.params.dropped) == {"seed", "temperature"} and not first.params.sent
    # The request recorded on the trial is the one sent (the fake refuses stream_options).
    assert first.request == {**server.received[0].body, "model": MODEL}
    if streamed:
        assert first.stream is not None and second.stream is not None
        assert [d.text for d in second.stream.deltas] == [ANSWER[:6], ANSWER[6:]]
        assert first.stream.first_call_ms is not None and not first.stream.issues
    assert [a.outcome for a in live_attempts] == ["ok", "ok"]

    # Offline: the server gone (its address as the run recorded it), the same replies,
    # answered at the boundary: LiteLLM's aresponses is not called.
    replay_attempts: list[Attempt] = []
    monkeypatch.setattr(litellm_api.litellm(), "aresponses", _no_call)
    replayed = asyncio.run(_two_turns(server.base_url, streamed, tmp_path, "none", replay_attempts))
    for a, b in zip(live, replayed, strict=True):
        assert b.replayed
        assert b.reply == a.reply
        assert b.request == a.request
        assert (b.prompt_tokens, b.completion_tokens, b.cost) == (
            a.prompt_tokens,
            a.completion_tokens,
            a.cost,
        )


def _answer_with(resp: Any, streamed: bool) -> ResponsesAPI:
    def answer(req: Request) -> Response:
        if streamed:
            return Response(200, resp, {"content-type": "text/event-stream"})
        return Response(200, resp)

    return answer  # type: ignore[return-value]


FAILED = response(
    [], status="failed", error={"code": "server_error", "message": "The model failed."}
)
BAD_PLAIN = [
    ("no-output", response([]), "without output items"),
    ("failed", FAILED, "The model failed."),
]
BAD_STREAMS = [
    (
        "no-completed",
        sse(events(FIRST)[:-1]),
        codes.INFRA_STREAM_TRUNCATED,
        "ended without response.completed",
    ),
    (
        "error-event",
        sse(
            [
                *events(FIRST)[:2],
                {
                    "type": "error",
                    "code": "server_error",
                    "message": "The server had an error.",
                    "sequence_number": 2,
                },
            ]
        ),
        codes.INFRA_BAD_REPLY,
        "an error event in the stream (The server had an error.)",
    ),
    (
        "failed-event",
        sse(
            [
                *events(FIRST)[:1],
                {"type": "response.failed", "response": FAILED, "sequence_number": 1},
            ]
        ),
        codes.INFRA_BAD_REPLY,
        "The model failed.",
    ),
    (
        "completed-empty",
        sse([{"type": "response.completed", "response": response([]), "sequence_number": 0}]),
        codes.INFRA_BAD_REPLY,
        "output items",
    ),
]


def _unreadable(tmp: Path, answer: Any, streamed: bool) -> tuple[InfraError, list[Attempt], int]:
    attempts: list[Attempt] = []
    server = FakeServer(answer)
    with server, pytest.raises(InfraError) as got:
        asyncio.run(_two_turns(server.base_url, streamed, tmp, "all", attempts))
    return got.value, attempts, len(server.received)


@pytest.mark.parametrize(
    ("body", "says"), [b[1:] for b in BAD_PLAIN], ids=[b[0] for b in BAD_PLAIN]
)
def test_an_unreadable_response_is_a_bad_reply_retried_and_never_recorded(
    body: dict[str, Any], says: str, tmp_path: Path
) -> None:
    err, attempts, asked = _unreadable(tmp_path, _answer_with(body, False), False)
    assert err.code == codes.INFRA_BAD_REPLY and says in str(err)
    assert [a.error_code for a in attempts] == [codes.INFRA_BAD_REPLY] * 5
    assert asked == 5  # retried live
    assert not (tmp_path / "trial.json").exists()


@pytest.mark.parametrize(
    ("body", "code", "says"), [b[1:] for b in BAD_STREAMS], ids=[b[0] for b in BAD_STREAMS]
)
def test_an_unreadable_stream_is_a_typed_fault_and_never_recorded(
    body: bytes, code: str, says: str, tmp_path: Path
) -> None:
    err, attempts, asked = _unreadable(tmp_path, _answer_with(body, True), True)
    assert err.code == code and says in str(err)
    assert {a.error_code for a in attempts} == {code} and asked == len(attempts) > 1
    assert not (tmp_path / "trial.sse.json").exists()


def test_a_forced_call_and_strict_schema_take_the_responses_shape(tmp_path: Path) -> None:
    """``tool_choice`` naming a tool is ``{"type": "function", "name"}`` (not chat's nested
    ``function``); ``strict`` goes on the flat tool with the strict schema."""
    server = FakeServer(ResponsesAPI(FIRST, SECOND))
    spec = "native:api=responses,parallel=false,strict,tool_choice=get_weather"
    with server:
        asyncio.run(_two_turns(server.base_url, False, tmp_path, "all", [], spec))
    body = server.received[0].body
    assert body["tool_choice"] == {"type": "function", "name": "get_weather"}
    assert body["parallel_tool_calls"] is False
    (tool,) = body["tools"]
    assert tool["strict"] is True and tool["parameters"]["additionalProperties"] is False


def test_a_turn_the_model_did_not_return_is_sent_as_the_items_it_would_be() -> None:
    """A scripted or few-shot assistant turn has no output items: its text is an
    assistant message, its calls ``function_call`` items with their ids."""
    from toolbench.providers.wire.responses.request import input_items

    fmt = get_format("native:api=responses")
    reply = ModelReply(
        text="Checking.",
        tool_calls=[
            {
                "id": "call_1",
                "type": "function",
                "function": {"name": "get_weather", "arguments": ARGS},
            }
        ],
    )
    call_ = ToolCall(name="get_weather", arguments={"city": "Lisbon"}, id="call_1")
    convo = fmt.continue_conversation(
        [{"role": "system", "content": "S"}, USER], reply, [(call_, RESULT)]
    )
    instructions, items = input_items(convo)
    assert instructions == "S"
    assert items == [
        USER,
        {"role": "assistant", "content": "Checking."},
        {"type": "function_call", "call_id": "call_1", "name": "get_weather", "arguments": ARGS},
        {"type": "function_call_output", "call_id": "call_1", "output": RESULT},
    ]


def test_the_recorded_request_names_the_model_and_holds_the_input(tmp_path: Path) -> None:
    server = FakeServer(ResponsesAPI(FIRST, SECOND))
    with server:
        asyncio.run(_two_turns(server.base_url, False, tmp_path, "all", []))
    saved = json.loads((tmp_path / "trial.json").read_text())
    text = json.dumps(saved)
    assert '"function_call_output"' in text and "sk-responses-dummy" not in text
