"""The Responses API reader, case by case: what each body or event sequence reads as, and
what it refuses with a typed fault. Model output is hostile input: nothing a server sends
raises anything but a :class:`Fault`. Shapes: OpenAI API reference (responses object and
streaming events); see :mod:`tests.providers.servers.responses`."""

from __future__ import annotations

import random
from typing import Any

import pytest

from tests.providers.servers.responses import events, response
from toolbench import codes
from toolbench.providers.model_api import Fault
from toolbench.providers.wire.responses.reader import OUTPUT_ITEMS, assemble, completion, speaks
from toolbench.providers.wire.responses.request import flat_tool, shape, tool_choice
from toolbench.results import RequestParams

CALL = {
    "type": "function_call",
    "id": "fc_1",
    "call_id": "call_1",
    "name": "f",
    "arguments": '{"a": 1}',
    "status": "completed",
}
TEXT = {
    "type": "message",
    "id": "msg_1",
    "role": "assistant",
    "status": "completed",
    "content": [
        {"type": "output_text", "text": "Hi", "annotations": []},
        {"type": "refusal", "refusal": "no"},
    ],
}
THINK = {
    "type": "reasoning",
    "id": "rs_1",
    "encrypted_content": "e",
    "summary": [{"type": "summary_text", "text": "a"}, {"type": "summary_text", "text": "b"}],
}

# (id, output, status/extra, expected: (text, call names, finish, reasoning) or a fault code)
PLAIN: list[tuple[str, dict[str, Any], Any]] = [
    ("call", response([THINK, CALL]), (None, ["f"], "tool_calls", "a\nb")),
    ("text", response([TEXT]), ("Hi", [], "stop", None)),
    (
        "incomplete",
        response([TEXT], status="incomplete", incomplete_details={"reason": "max_output_tokens"}),
        ("Hi", [], "length", None),
    ),
    ("call-without-name", response([{**CALL, "name": None}, TEXT]), ("Hi", [], "stop", None)),
    ("no-output", response([]), codes.INFRA_BAD_REPLY),
    ("output-not-a-list", {**response([]), "output": {"x": 1}}, codes.INFRA_BAD_REPLY),
    ("item-without-type", response([{"id": "x"}]), codes.INFRA_BAD_REPLY),
    ("item-not-an-object", response(["text"]), codes.INFRA_BAD_REPLY),  # type: ignore[list-item]
    ("failed", response([TEXT], status="failed", error={"message": "m"}), codes.INFRA_BAD_REPLY),
    ("empty-body", {}, codes.INFRA_BAD_REPLY),
]


@pytest.mark.parametrize(("body", "expected"), [p[1:] for p in PLAIN], ids=[p[0] for p in PLAIN])
def test_a_whole_response(body: dict[str, Any], expected: Any) -> None:
    if isinstance(expected, str):
        with pytest.raises(Fault) as got:
            completion(body)
        assert got.value.code == expected and got.value.retryable
        return
    out = completion(body)
    (choice,) = out["choices"]
    msg = choice["message"]
    text, names, finish, reasoning = expected
    assert msg["content"] == text
    assert [c["function"]["name"] for c in msg.get("tool_calls", [])] == names
    assert choice["finish_reason"] == finish
    assert msg.get("reasoning_content") == reasoning
    assert msg[OUTPUT_ITEMS] == body["output"]  # kept verbatim for the echo
    assert out["usage"] == {"prompt_tokens": 20, "completion_tokens": 9, "total_tokens": 29}


def test_a_call_is_read_with_its_call_id() -> None:
    (tc,) = completion(response([CALL]))["choices"][0]["message"]["tool_calls"]
    assert tc == {
        "id": "call_1",
        "type": "function",
        "function": {"name": "f", "arguments": '{"a": 1}'},
    }


def _stream(evs: list[Any]) -> list[tuple[Any, float | None]]:
    return [(e, float(n)) for n, e in enumerate(evs)]


STREAMS: list[tuple[str, list[Any], Any]] = [
    ("call", events(response([THINK, CALL])), (["f"], "tool_calls", [])),
    ("text", events(response([TEXT])), ([], "stop", [])),
    (
        "bad-arguments",
        events(response([{**CALL, "arguments": '{"a": '}])),
        (["f"], "tool_calls", [codes.STREAM_ARGS_INVALID]),
    ),
    ("no-terminal", events(response([CALL]))[:-1], codes.INFRA_STREAM_TRUNCATED),
    ("nothing", [], codes.INFRA_STREAM_TRUNCATED),
    ("error-event", [{"type": "error", "message": "boom"}], codes.INFRA_BAD_REPLY),
    (
        "failed",
        [{"type": "response.failed", "response": response([], status="failed")}],
        codes.INFRA_BAD_REPLY,
    ),
    (
        "completed-empty",
        [{"type": "response.completed", "response": response([])}],
        codes.INFRA_BAD_REPLY,
    ),
    (
        "garbage-then-completed",
        [
            None,
            3,
            "x",
            {"type": 1},
            {"type": "response.output_item.added", "output_index": "0"},
            {"type": "response.function_call_arguments.delta", "output_index": 9, "delta": 5},
            *events(response([TEXT])),
        ],
        ([], "stop", []),
    ),
]


@pytest.mark.parametrize(("evs", "expected"), [s[1:] for s in STREAMS], ids=[s[0] for s in STREAMS])
def test_a_stream(evs: list[Any], expected: Any) -> None:
    reader = assemble(_stream(evs))
    if isinstance(expected, str):
        with pytest.raises(Fault) as got:
            reader.close()
        assert got.value.code == expected
        return
    done = reader.close()
    names, finish, issues = expected
    assert [c["function"]["name"] for c in done.tool_calls] == names
    assert done.finish_reason == finish
    assert [code for code, _ in done.issues] == issues
    assert done.message()[OUTPUT_ITEMS] == evs[-1]["response"]["output"]
    assert done.usage == {"prompt_tokens": 20, "completion_tokens": 9}


def test_a_streamed_reply_reads_as_the_same_reply_whole() -> None:
    body = response([THINK, TEXT, CALL])
    whole = completion(body)["choices"][0]["message"]
    streamed = assemble(_stream(events(body))).close()
    assert streamed.message() == whole
    assert [d.text for d in streamed.deltas] == ["Hi"]
    assert streamed.first_call_ms is not None and streamed.call_complete_ms is not None


def test_hostile_events_raise_nothing_but_a_fault() -> None:
    """Shuffled and mutated events of a valid stream: a reply or a typed fault."""
    rng = random.Random(24)
    base = events(response([THINK, TEXT, CALL]))
    junk: list[Any] = [
        None,
        [],
        "data",
        7,
        {"type": None},
        {"type": "response.completed"},
        {"type": "response.completed", "response": "x"},
    ]
    for _ in range(300):
        evs = [rng.choice(base + junk) for _ in range(rng.randrange(0, 12))]
        try:
            assemble(_stream(evs)).close()
        except Fault as f:
            assert f.code in (codes.INFRA_BAD_REPLY, codes.INFRA_STREAM_TRUNCATED)
    assert speaks(_stream(base)) and not speaks(_stream([{"choices": []}]))


def test_the_request_shapes() -> None:
    chat_tool = {
        "type": "function",
        "function": {
            "name": "f",
            "description": "d",
            "parameters": {"type": "object"},
            "strict": True,
        },
    }
    assert flat_tool(chat_tool) == {
        "type": "function",
        "name": "f",
        "description": "d",
        "parameters": {"type": "object"},
        "strict": True,
    }
    assert tool_choice({"type": "function", "function": {"name": "f"}}) == {
        "type": "function",
        "name": "f",
    }
    assert tool_choice("required") == "required"
    record = RequestParams(
        asked={"seed": 1, "stop": ["x"], "temperature": 0}, sent=["seed", "stop", "temperature"]
    )
    out = shape(
        {
            "model": "m",
            "messages": [{"role": "user", "content": "q"}],
            "seed": 1,
            "stop": ["x"],
            "temperature": 0,
            "reasoning_effort": "low",
            "max_tokens": 5,
            "stream": True,
            "stream_options": {"include_usage": True},
        },
        record,
    )
    assert out == {
        "model": "m",
        "input": [{"role": "user", "content": "q"}],
        "temperature": 0,
        "reasoning": {"effort": "low"},
        "max_output_tokens": 5,
        "stream": True,
    }
    assert record.sent == ["temperature"]
    assert set(record.dropped) == {"seed", "stop"}


REFUSALS = [
    ("openai/gpt-5-mini", "litellm", None),
    ("azure/my-deployment", "litellm", None),
    ("xai/grok-4", "litellm", None),
    ("anthropic/claude-x", "litellm", "LiteLLM has no Responses API for provider 'anthropic'"),
    ("gemini/gemini-2.5-flash", "litellm", "LiteLLM has no Responses API for provider 'gemini'"),
    ("ollama_chat/llama3", "litellm", "LiteLLM has no Responses API for provider 'ollama_chat'"),
    ("local/smollm2-135m", "local", "served by toolbench's 'local' kind, which speaks chat"
     " completions only"),
]  # fmt: skip


@pytest.mark.parametrize(("model", "kind", "why"), REFUSALS, ids=[r[0] for r in REFUSALS])
def test_which_models_take_the_responses_api(model: str, kind: str, why: str | None) -> None:
    """LiteLLM 1.106.2's own answer (its Responses API transformations), asked per model."""
    from toolbench.providers.wire.responses.request import refusal

    assert refusal(model, None, kind) == why
