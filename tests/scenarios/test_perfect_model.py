"""Every bundled scenario, played through the engine by a model that does everything
right, scores perfectly in ``xml``, ``prompt-json`` and ``native``: the expectations, the
scripted results, the turn limits and the final-answer checks agree with each other (a
contradiction in any of them would make the perfect reply fail). Reasoning scenarios get a
``<think>`` preamble and prose scenarios a sentence before each call, as a model would
write them."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import Any

import pytest
from tests.scenarios.suite_samples import regex_sample, sample_round

from toolbench.engine import Conversation, TurnReply, effective_settings
from toolbench.environments.mcp_tools import recorded_server_tools
from toolbench.formats import ModelReply, get_format
from toolbench.formats.base import ToolCall
from toolbench.scenarios.loader import bundled_dir, load_scenarios
from toolbench.scenarios.model import Scenario
from toolbench.scoring import score_trial

ROOT = Path(__file__).resolve().parents[2]
with contextlib.chdir(ROOT):  # its toolbench.toml names the MCP servers (mcp.yaml)
    SUITE = recorded_server_tools(load_scenarios([bundled_dir()]), ROOT / "cassettes")


def _xml(calls: list[ToolCall]) -> str:
    return "\n".join(
        "<tool_call>\n"
        + json.dumps({"name": c.name, "arguments": c.arguments}, ensure_ascii=False)
        + "\n</tool_call>"
        for c in calls
    )


def _prompt_json(calls: list[ToolCall]) -> str:
    return "\n".join(
        json.dumps({"tool": c.name, "arguments": c.arguments}, ensure_ascii=False) for c in calls
    )


def _native(calls: list[ToolCall]) -> list[dict[str, Any]]:
    return [
        {
            "id": f"call_{i}",
            "type": "function",
            "function": {"name": c.name, "arguments": json.dumps(c.arguments, ensure_ascii=False)},
        }
        for i, c in enumerate(calls)
    ]


ENCODERS = {"xml": _xml, "prompt-json": _prompt_json}


def _preamble(sc: Scenario) -> str:
    if "reasoning" in sc.tags:
        return "<think>\nWhat does the user need, and with which arguments?\n</think>\n"
    if "prose" in sc.tags:
        return "Let me look that up for you.\n"
    return ""


def _answer(sc: Scenario) -> str:
    check = sc.expect.final_answer
    if check is None:
        return "I can answer that directly, without a tool."
    parts = list(check.contains)
    if check.regex is not None:
        parts.append(regex_sample(check.regex))
    return "Here is what I found: " + ", ".join(parts) + "."


def _rounds(sc: Scenario) -> list[list[ToolCall]]:
    """The calls of each calling reply; a loop's ground truth, user turn by user turn, each
    calling turn answered after its calls (an empty round stands for that answer)."""
    if sc.expect.turns is None:
        return [sample_round(sc, r) for r in sc.expect.expected_rounds()]
    rounds: list[list[ToolCall]] = []
    for turn in sc.expect.turns:
        calls = [ToolCall(name=c.name, arguments=c.arguments) for c in turn.calls]
        rounds += [calls, []] if calls else [[]]
    return rounds[:-1]  # the last answer is the final one, added below


def _replies(sc: Scenario, spec: str) -> list[ModelReply]:
    rounds = _rounds(sc)
    if spec == "native":
        replies = []
        for calls in rounds:
            native = _native(calls)
            message = {"role": "assistant", "content": None, "tool_calls": native}
            replies.append(ModelReply(tool_calls=native, raw_message=message) if calls
                           else ModelReply(text=_answer(sc)))  # fmt: skip
    else:
        replies = [ModelReply(text=_preamble(sc) + ENCODERS[spec](calls)) if calls
                   else ModelReply(text=_answer(sc)) for calls in rounds]  # fmt: skip
    if sc.expect.kind != "calls":
        replies.append(ModelReply(text=_answer(sc)))
    return replies


@pytest.mark.parametrize("spec", [*sorted(ENCODERS), "native"])
@pytest.mark.parametrize("sc", SUITE, ids=lambda sc: sc.id)
def test_a_perfect_model_scores_perfectly(sc: Scenario, spec: str) -> None:
    fmt = get_format(spec)
    settings = effective_settings(sc)
    conv = Conversation(fmt, sc, settings)
    for reply in _replies(sc, spec):
        assert not conv.done
        req = conv.request()
        conv.feed(TurnReply(reply=reply, request={"messages": req.messages}))
    assert conv.done
    s = score_trial(sc, fmt, conv.turns, settings)
    assert s.errors == [], s.reasons
    assert s.get("parse_ok") is not False and s.get("args_schema_valid") is not False
    assert s.get("call_accuracy") is not False and s.get("no_call_correct") is not False
    assert (
        s.get("final_answer_ok") is not False and s.get("stop_compliant") and not s.get("leak_raw")
    )
