"""What of a trial is written: each string over its cap is cut, and a trial with nothing
over any cap is written as it is (the same object, not a copy)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from toolbench.formats.base import ModelReply, ParseIssue, ParseResult, ToolCall
from toolbench.results import StreamTurn, TimedText, TrialResult, TurnRecord
from toolbench.runner.compact import (
    COPY_CAP,
    DELTA_CAP,
    ERROR_CAP,
    REPLY_TEXT_CAP,
    compact,
    cut,
)

OVER = "y" * (COPY_CAP + 5)
BASE = {"run_id": "r", "toolbench_version": "0", "model": "m", "format": "xml",
        "scenario_id": "s"}  # fmt: skip


def _turn(**update: Any) -> TurnRecord:
    turn = TurnRecord(
        request={"messages": [{"role": "user", "content": "hi"}], "tools": [{"x": ["a"]}]},
        reply=ModelReply(text="ok", tool_calls=[{"function": {"arguments": "{}"}}],
                         raw_message={"content": "ok"}),
        parsed=ParseResult(content="ok", raw_content="ok", reasoning="r", final_answer="f",
                           errors=[ParseIssue(code="parse.x", message="m")],
                           calls=[ToolCall(name="t", arguments={"a": ["b"]})]),
        stream=StreamTurn(deltas=[TimedText(1.0, "ok")]),
    )  # fmt: skip
    return turn.model_copy(update=update)


def _with(part: str, **values: Any) -> Callable[[TurnRecord], TurnRecord]:
    def make(turn: TurnRecord) -> TurnRecord:
        return turn.model_copy(update={part: getattr(turn, part).model_copy(update=values)})

    return make


# (what is over its cap, how to make it, where to read it back, the cap it is cut to)
CASES: list[tuple[str, Callable[[TurnRecord], TurnRecord], Callable[[TurnRecord], Any], int]] = [
    ("reply text", _with("reply", text="x" * (REPLY_TEXT_CAP + 3)),
     lambda t: t.reply.text, REPLY_TEXT_CAP),
    ("a native tool call", _with("reply", tool_calls=[{"function": {"arguments": OVER}}]),
     lambda t: t.reply.tool_calls[0]["function"]["arguments"], COPY_CAP),
    ("the raw message", _with("reply", raw_message={"content": OVER}),
     lambda t: t.reply.raw_message["content"], COPY_CAP),
    ("parsed content", _with("parsed", content=OVER), lambda t: t.parsed.content, COPY_CAP),
    ("parsed raw content", _with("parsed", raw_content=OVER),
     lambda t: t.parsed.raw_content, COPY_CAP),
    ("reasoning", _with("parsed", reasoning=OVER), lambda t: t.parsed.reasoning, COPY_CAP),
    ("a final answer", _with("parsed", final_answer=OVER),
     lambda t: t.parsed.final_answer, COPY_CAP),
    ("a parse error's message", _with("parsed", errors=[ParseIssue(code="c", message=OVER)]),
     lambda t: t.parsed.errors[0].message, COPY_CAP),
    ("a call's arguments, nested",
     _with("parsed", calls=[ToolCall(name="t", arguments={"a": [{"b": OVER}]})]),
     lambda t: t.parsed.calls[0].arguments["a"][0]["b"], COPY_CAP),
    ("the request, nested in a tuple",
     lambda t: t.model_copy(update={"request": {"tools": [{"x": ("a", OVER)}]}}),
     lambda t: t.request["tools"][0]["x"][1], COPY_CAP),
]  # fmt: skip


def test_a_trial_within_every_cap_is_written_as_it_is() -> None:
    trial = TrialResult(**BASE, turns=[_turn(), _turn()], infra_error="e" * ERROR_CAP)
    assert compact(trial) is trial


@pytest.mark.parametrize(("make", "read", "cap"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_each_string_over_its_cap_is_cut_alone(
    make: Callable[[TurnRecord], TurnRecord], read: Callable[[TurnRecord], Any], cap: int
) -> None:
    big = make(_turn())
    trial = TrialResult(**BASE, turns=[_turn(), big])
    out = compact(trial)
    assert out is not trial
    assert out.turns[0] == trial.turns[0]  # the other turn: unchanged
    assert read(out.turns[1]) == cut(read(big), cap)
    assert len(read(big)) > cap  # the scored trial itself is untouched
    assert len(_differences(big.model_dump(), out.turns[1].model_dump())) == 1


def _differences(a: Any, b: Any, at: str = "") -> list[str]:
    """Where two dumped trees differ (paths of differing leaves)."""
    if isinstance(a, dict) and isinstance(b, dict) and a.keys() == b.keys():
        return [d for k in a for d in _differences(a[k], b[k], f"{at}.{k}")]
    if isinstance(a, list | tuple) and isinstance(b, list | tuple) and len(a) == len(b):
        return [
            d
            for i, (x, y) in enumerate(zip(a, b, strict=True))
            for d in _differences(x, y, f"{at}.{i}")
        ]
    return [] if a == b else [at]


def test_an_error_over_its_cap_and_a_turn_of_too_many_deltas() -> None:
    deltas = [TimedText(float(i), "x") for i in range(DELTA_CAP + 2)]
    trial = TrialResult(**BASE, turns=[_turn(stream=StreamTurn(deltas=deltas))],
                        infra_error="e" * (ERROR_CAP + 1))  # fmt: skip
    out = compact(trial)
    assert out.infra_error == cut("e" * (ERROR_CAP + 1), ERROR_CAP)
    kept = out.turns[0].stream
    assert kept is not None and len(kept.deltas) == DELTA_CAP
    assert kept.deltas[-1].text == "xxx"


def test_compact_caps_copies_and_keeps_short_trials_unchanged() -> None:
    small = TurnRecord(
        request={"messages": [{"role": "user", "content": "hi"}]},
        reply=ModelReply(text="ok", raw_message={"content": "ok"}),
        parsed=ParseResult(content="ok"),
    )
    base = {"run_id": "r", "toolbench_version": "0", "model": "m", "format": "xml",
            "scenario_id": "s"}  # fmt: skip
    short = TrialResult(**base, turns=[small])
    assert compact(short) == short
    big = "x" * (REPLY_TEXT_CAP + 10)
    turn = small.model_copy(update={
        "request": {"messages": [{"role": "assistant", "content": big}]},
        "reply": ModelReply(text=big, raw_message={"content": big}),
        "parsed": ParseResult(content=big, raw_content=big),
    })  # fmt: skip
    out = compact(TrialResult(**base, turns=[turn])).turns[0]
    assert out.reply.text == cut(big, REPLY_TEXT_CAP)
    assert out.reply.text.endswith(f"cut 10 of {len(big)} characters; full text in the cassette]")
    assert out.reply.raw_message["content"] == cut(big, COPY_CAP)
    assert out.request["messages"][0]["content"] == cut(big, COPY_CAP)
    assert out.parsed.content == out.parsed.raw_content == cut(big, COPY_CAP)
    assert turn.reply.text == big  # the scored trial itself is untouched
