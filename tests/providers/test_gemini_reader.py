"""The Gemini reader of calls streamed in parts (``partialArgs``), on its own: what it
puts together, and hostile parts that must be a typed fault, never a raise.

Shapes: googleapis js-genai ``FunctionCall`` (``partialArgs``, ``willContinue``) and
``PartialArg`` (``jsonPath`` per RFC 9535, ``stringValue`` | ``numberValue`` | ``boolValue``
| ``nullValue: "NULL_VALUE"``, ``willContinue``),
https://googleapis.github.io/js-genai/release_docs/interfaces/types.PartialArg.html;
Vertex AI ``FunctionCallingConfig.stream_function_call_arguments``."""

from __future__ import annotations

import json
from typing import Any

import pytest

from toolbench import codes
from toolbench.providers.model_api import Fault
from toolbench.providers.reply import derived_id
from toolbench.providers.wire.gemini import reader as gemini

SIG = "c2lnbmF0dXJl"


def _event(*parts: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    cand: dict[str, Any] = {"content": {"role": "model", "parts": list(parts)}, "index": 0}
    if finish:
        cand["finishReason"] = finish
    return {"candidates": [cand]}


def _piece(path: str, more: bool = False, **value: Any) -> dict[str, Any]:
    return {"jsonPath": path, **value, **({"willContinue": True} if more else {})}


def _call(*pieces: dict[str, Any], name: str | None = None, more: bool = False) -> dict[str, Any]:
    fc: dict[str, Any] = {}
    if name:
        fc["name"] = name
    if pieces:
        fc["partialArgs"] = list(pieces)
    if more:
        fc["willContinue"] = True
    return {"functionCall": fc}


def _read(events: list[dict[str, Any]]) -> Any:
    return gemini.assemble([(e, float(i)) for i, e in enumerate(events)]).close()


START = {**_call(name="f", more=True), "thoughtSignature": SIG}

ASSEMBLED = [
    ("string in three parts", [
        _call(_piece("$.city", True, stringValue="Li"), more=True),
        _call(_piece("$.city", True, stringValue="sb"), more=True),
        _call(_piece("$.city", stringValue="on")),
    ], {"city": "Lisbon"}),
    ("number, bool, null", [
        _call(_piece("$.n", numberValue=3), _piece("$.x", numberValue=2.5), more=True),
        _call(_piece("$.ok", boolValue=False), _piece("$.none", nullValue="NULL_VALUE")),
    ], {"n": 3, "x": 2.5, "ok": False, "none": None}),
    ("nested objects and arrays", [
        _call(_piece("$.a.b[0].c", True, stringValue="x"), more=True),
        _call(_piece("$.a.b[0].c", stringValue="y"), _piece("$.a.b[1].c", numberValue=1),
              more=True),
        _call(_piece("$['odd key'][0]", stringValue="q"), _piece('$["k\\"q"]', boolValue=True)),
    ], {"a": {"b": [{"c": "xy"}, {"c": 1}]}, "odd key": ["q"], 'k"q': True}),
    ("unicode and empty strings", [
        _call(_piece("$.s", True, stringValue=""), more=True),
        _call(_piece("$.s", stringValue="Zürich ✓")),
    ], {"s": "Zürich ✓"}),
]  # fmt: skip


@pytest.mark.parametrize(("parts", "args"), [(p, a) for _, p, a in ASSEMBLED],
                         ids=[i for i, _, _ in ASSEMBLED])  # fmt: skip
def test_parts_put_together_into_the_call_read_whole(
    parts: list[dict[str, Any]], args: dict[str, Any]
) -> None:
    events = [_event(START)] + [_event(p) for p in parts]
    events[-1]["candidates"][0]["finishReason"] = "STOP"
    done = _read(events)
    (tc,) = done.tool_calls
    arguments = json.dumps(args, ensure_ascii=False)  # as LiteLLM dumps a whole call's args
    assert tc["function"] == {"name": "f", "arguments": arguments}
    assert tc["id"] == f"{derived_id(0, 'f', arguments)}__thought__{SIG}"
    assert tc["provider_specific_fields"] == {"thought_signature": SIG}
    assert done.finish_reason == "tool_calls" and not done.issues
    assert (done.first_call_ms, done.call_complete_ms) == (0.0, float(len(parts)))


def test_text_reasoning_usage_and_a_second_call_with_its_own_id() -> None:
    done = _read([
        _event({"text": "Hmm.", "thought": True}, {"text": "Let me check. "}),
        _event({"functionCall": {"name": "g", "args": {"k": 1}, "id": "fc-1"}}),
        _event(START),
        _event(_call(_piece("$.q", stringValue="v"))),
        {**_event(finish="STOP"), "usageMetadata": {"promptTokenCount": 5,
                                                    "candidatesTokenCount": 7,
                                                    "thoughtsTokenCount": 2}},
    ])  # fmt: skip
    assert (done.text, done.reasoning) == ("Let me check. ", "Hmm.")
    assert done.tool_calls[0]["id"] == "fc-1"
    assert [c["function"]["arguments"] for c in done.tool_calls] == ['{"k": 1}', '{"q": "v"}']
    assert done.usage == {"prompt_tokens": 5, "completion_tokens": 9}


HOSTILE = [
    ("path without $", [_call(_piece("city", stringValue="x"))], "does not start with '$'"),
    ("path it cannot read", [_call(_piece("$..city", stringValue="x"))], "cannot be read"),
    ("path through a string", [_call(_piece("$.a", stringValue="x"), more=True),
                               _call(_piece("$.a.b", stringValue="y"))], "another type"),
    ("object indexed as array", [_call(_piece("$.a.b", numberValue=1), more=True),
                                 _call(_piece("$.a[0]", numberValue=2))], "another type"),
    ("arguments indexed as array", [_call(_piece("$[0]", numberValue=1))], "wrong way"),
    ("array index past its end", [_call(_piece("$.a[3]", numberValue=1))], "past its end"),
    ("string after a number", [_call(_piece("$.a", numberValue=1), more=True),
                               _call(_piece("$.a", stringValue="x"))], "conflicting"),
    ("number set twice", [_call(_piece("$.a", numberValue=1), _piece("$.a", numberValue=1))],
     "conflicting"),
    ("two values in one piece", [_call(_piece("$.a", numberValue=1, boolValue=True))],
     "numberValue and boolValue"),
    ("value of the wrong type", [_call(_piece("$.a", numberValue="1"))], "not of its type"),
    ("bool as number", [_call(_piece("$.a", numberValue=True))], "not of its type"),
    ("piece not an object", [{"functionCall": {"partialArgs": ["$.a"]}}], "not an object"),
    ("partialArgs not a list", [{"functionCall": {"partialArgs": {"jsonPath": "$.a"}}}],
     "not a list"),
    ("a call begun inside another", [{"functionCall": {"name": "g", "willContinue": True}}],
     "began before"),
    ("too deep", [_call(_piece("$" + ".a" * 65, numberValue=1))], "deeper"),
    ("path '$' alone", [_call(_piece("$", numberValue=1))], "names the arguments"),
]  # fmt: skip


@pytest.mark.parametrize(("parts", "why"), [(p, w) for _, p, w in HOSTILE],
                         ids=[i for i, _, _ in HOSTILE])  # fmt: skip
def test_parts_that_cannot_be_put_together_are_a_typed_fault(
    parts: list[dict[str, Any]], why: str
) -> None:
    events = [_event(START)] + [_event(p) for p in parts] + [_event(finish="STOP")]
    with pytest.raises(Fault) as got:
        _read(events)
    assert got.value.code == codes.INFRA_BAD_REPLY and got.value.retryable
    assert why in got.value.message


@pytest.mark.parametrize(("events", "why"), [
    ([_event(START), _event(_call(_piece("$.a", True, stringValue="x"), more=True))],
     "willContinue never ended"),
    ([_event(START), _event(_call(_piece("$.a", True, stringValue="x")))], "still continuing"),
    ([_event(_call(_piece("$.a", stringValue="x")))], "outside any call"),
])  # fmt: skip
def test_a_call_left_open_or_never_begun_is_a_typed_fault(
    events: list[dict[str, Any]], why: str
) -> None:
    with pytest.raises(Fault) as got:
        _read(events)
    assert why in got.value.message
    assert got.value.code in (codes.INFRA_STREAM_TRUNCATED, codes.INFRA_BAD_REPLY)


@pytest.mark.parametrize("event", [None, 3, "x", [], {"candidates": "x"},
                                   {"candidates": [{"content": {"parts": [1, None, "t"]}}]},
                                   {"candidates": [{"content": {"parts": [{"functionCall": 2}]}}]},
                                   {"usageMetadata": [], "candidates": [None]}])  # fmt: skip
def test_events_of_no_shape_are_passed_over(event: Any) -> None:
    done = _read([event, _event({"text": "ok"}, finish="STOP")])
    assert done.text == "ok" and not done.tool_calls


def test_a_long_stream_of_parts_joins_every_piece() -> None:
    """20,000 pieces of one string at a nested path: each piece is kept and joined once
    (the reader's cost is linear; its speed is not timed here)."""
    n = 20_000
    events = [_event(START)] + [
        _event(_call(_piece("$.a.b[0].c", True, stringValue="xy"), more=True)) for _ in range(n)
    ] + [_event(_call(_piece("$.a.b[0].c", stringValue="z")), finish="STOP")]  # fmt: skip
    done = _read(events)
    assert json.loads(done.tool_calls[0]["function"]["arguments"]) == {
        "a": {"b": [{"c": "xy" * n + "z"}]}}  # fmt: skip
    assert done.call_complete_ms == float(n + 1)
