"""The protocol readers on their own: what each assembles, and hostile events that must
not raise (model output and servers are hostile input)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from toolbench.providers.wire.chat.reader import Assembler
from toolbench.providers.wire.cohere import reader as cohere


def _delta(**delta: Any) -> dict[str, Any]:
    return {"choices": [{"index": 0, "delta": delta, "finish_reason": None}]}


def test_thinking_fragments_join_into_blocks_each_closed_by_its_signature() -> None:
    """LiteLLM's Anthropic stream: ``thinking_blocks`` deltas carry the thinking text in
    pieces, then its ``signature`` alone; a redacted block comes whole
    (docs.anthropic.com extended-thinking, streaming)."""
    asm = Assembler()
    for i, delta in enumerate([
        _delta(thinking_blocks=[{"type": "thinking", "thinking": "Let me ", "signature": None}]),
        _delta(thinking_blocks=[{"type": "thinking", "thinking": "think.", "signature": None}]),
        _delta(thinking_blocks=[{"type": "thinking", "thinking": "", "signature": "sig-1"}]),
        _delta(thinking_blocks=[{"type": "redacted_thinking", "data": "Enc=="}]),
        _delta(thinking_blocks=[{"type": "thinking", "thinking": "Again.", "signature": "sig-2"}]),
        {"choices": [{"index": 0, "delta": {"content": "Hi"}, "finish_reason": "stop"}]},
    ]):  # fmt: skip
        asm.feed(delta, float(i))
    done = asm.close()
    assert done.thinking_blocks == [
        {"type": "thinking", "thinking": "Let me think.", "signature": "sig-1"},
        {"type": "redacted_thinking", "data": "Enc=="},
        {"type": "thinking", "thinking": "Again.", "signature": "sig-2"},
    ]
    assert done.message()["thinking_blocks"] == done.thinking_blocks
    assert done.message()["content"] == "Hi" and not done.issues


def test_a_calls_thought_signature_stays_on_the_call() -> None:
    """LiteLLM's Gemini stream: the call's ``provider_specific_fields.thought_signature``
    (and the id carrying it after ``__thought__``) go back with the call."""
    asm = Assembler()
    asm.feed(_delta(tool_calls=[{
        "index": 0, "id": "call_1__thought__c2ln", "type": "function",
        "function": {"name": "f", "arguments": "{}"},
        "provider_specific_fields": {"thought_signature": "c2ln"},
    }]), 0.0)  # fmt: skip
    asm.feed({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}, 1.0)
    (call,) = asm.close().tool_calls
    assert call["id"] == "call_1__thought__c2ln"
    assert call["provider_specific_fields"] == {"thought_signature": "c2ln"}


HOSTILE: list[Any] = [
    None, 5, "text", [], {}, {"type": "nope"}, {"type": "tool-call-delta"},
    {"type": "tool-call-start", "delta": "x"}, {"type": "tool-call-start", "index": "0",
     "delta": {"message": {"tool_calls": [None]}}},
    {"type": "content-delta", "delta": {"message": {"content": 5}}},
    {"type": "message-end", "delta": "x"}, {"type": "message-end", "delta": {"usage": 3}},
    {"type": "message-end", "delta": {"finish_reason": 7, "usage": {"tokens": "x"}}},
    {"type": "tool-plan-delta", "delta": {"message": {"tool_plan": ["x"]}}},
]  # fmt: skip


@pytest.mark.parametrize("event", HOSTILE, ids=[repr(e)[:40] for e in HOSTILE])
def test_the_cohere_reader_never_raises(event: Any) -> None:
    done = cohere.assemble([({"type": "message-start"}, 0.0), (event, 1.0)]).close()
    assert done.text == "" and done.tool_calls == []
    assert done.finish_reason is None  # nothing ended the stream: said, not invented


@pytest.mark.parametrize(
    ("events", "speaks"),
    [([], False), ([({"choices": []}, 0.0)], False), ([({"type": "message-start"}, 0.0)], True),
     ([(None, 0.0)], False)],
)  # fmt: skip
def test_cohere_events_are_told_apart(events: list[tuple[Any, float | None]], speaks: bool) -> None:
    assert cohere.speaks(events) is speaks


def test_cohere_finish_reasons_map_to_the_chat_ones() -> None:
    for reason, finish in cohere.FINISH.items():
        event = {"type": "message-end", "delta": {"finish_reason": reason}}
        assert cohere.assemble([(event, 0.0)]).close().finish_reason == finish


def _step_by_step(events: list[tuple[Any, Any]]) -> Assembler:
    """The stored events read one at a time, as :meth:`Assembler.feed_stored` read them
    before it took runs of text deltas whole."""
    a = Assembler()
    for offset, data in events:
        if type(data) is str:
            a._text(data, float(offset))
            a.last = float(offset)
        elif isinstance(data, dict) and isinstance(data.get("choices"), list):
            a.feed(data, offset)
    return a


_CALL = {"choices": [{"index": 0, "delta": {"tool_calls": [
    {"index": 0, "id": "c1", "function": {"name": "f", "arguments": "{}"}}]}}]}  # fmt: skip
_FINISH = {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
           "usage": {"prompt_tokens": 3, "completion_tokens": 2}}  # fmt: skip
_EVENT_DATA = st.one_of(
    st.text(max_size=3),
    st.sampled_from([_CALL, _FINISH, {"choices": "x"}, {}, None, 7, ["a"]]),
)


@given(st.lists(st.tuples(st.one_of(st.floats(0, 1e4), st.integers(0, 99)), _EVENT_DATA),
                max_size=12))  # fmt: skip
def test_stored_events_read_in_runs_as_one_at_a_time(events: list[tuple[Any, Any]]) -> None:
    """Runs of text deltas taken whole give the reply, deltas (their offsets floats),
    timings and issues that one event at a time gives."""
    whole = Assembler().feed_stored(events)
    one = _step_by_step(events)
    assert whole.close() == one.close()
    assert [(type(o), o, t) for o, t in whole.deltas] == [(type(o), o, t) for o, t in one.deltas]
    assert (whole.first_token, whole.last, whole._text_since_call) == (
        one.first_token, one.last, one._text_since_call)  # fmt: skip
