"""The conversation engine: limits, retries and scripted results, with replies by hand."""

from __future__ import annotations

import asyncio
import json

import pytest

from toolbench import codes
from toolbench.engine import Conversation, TurnReply, converse, effective_settings
from toolbench.formats import ModelReply, RenderedRequest, get_format
from toolbench.results import TrialResult, TrialSettings
from toolbench.scenarios.model import Scenario
from toolbench.scoring import score_trial

FMT = get_format("prompt-json")
CALL = '{"tool": "get_weather", "arguments": {"city": "Lisbon"}}'
BROKEN = '{"tool": "get_weather", "arguments": {"city": '


def mt_scenario(max_turns: int = 3) -> Scenario:
    return Scenario.model_validate(
        {
            "id": "mt",
            "tools": [
                {
                    "name": "get_weather",
                    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
                }
            ],
            "messages": [{"role": "user", "content": "Temperature in Lisbon?"}],
            "expect": {
                "max_turns": max_turns,
                "rounds": [
                    {
                        "calls": [
                            {
                                "name": "get_weather",
                                "arguments": {"city": "Lisbon"},
                                "result": {"temperature": 23},
                            }
                        ]
                    }
                ],
                "final_answer": {"contains": ["23"]},
            },
        }
    )


def single_scenario() -> Scenario:
    sc = mt_scenario().model_dump()
    sc["expect"] = {"calls": [{"name": "get_weather", "arguments": {"city": "Lisbon"}}]}
    return Scenario.model_validate(sc)


def play(sc: Scenario, settings: TrialSettings, replies: list[str]) -> Conversation:
    """Feed replies until the conversation ends (extra replies are left unused)."""
    conv = Conversation(FMT, sc, settings)
    for text in replies:
        if conv.done:
            break
        req = conv.request()
        conv.feed(TurnReply(reply=ModelReply(text=text), request={"messages": req.messages}))
    return conv


@pytest.mark.parametrize(
    ("flag", "scenario_limit", "kind", "expected"),
    [
        (None, 3, "multi", 3),  # the scenario's own limit
        (2, 3, "multi", 2),  # --max-turns lowers it
        (6, 3, "multi", 6),  # --max-turns raises it (was capped at the scenario's)
        (6, 3, "single", 1),  # single-turn scenarios take one turn whatever the flag
    ],
)
def test_effective_settings(
    flag: int | None, scenario_limit: int, kind: str, expected: int
) -> None:
    sc = mt_scenario(scenario_limit) if kind == "multi" else single_scenario()
    assert effective_settings(sc, flag, True) == TrialSettings(
        max_turns=expected, retry_on_parse_error=True
    )


@pytest.mark.parametrize(("limit", "turns"), [(2, 2), (3, 3), (5, 5)])
def test_a_model_that_keeps_calling_stops_at_the_effective_limit(limit: int, turns: int) -> None:
    sc = mt_scenario(3)
    conv = play(sc, effective_settings(sc, limit), [CALL] * 10)
    assert conv.done and len(conv.turns) == turns
    assert [json.loads(r)["temperature"] for _, r in conv.fed] == [23] * (turns - 1)


def test_capped_conversation_is_turns_exhausted_not_answer_missing() -> None:
    sc = mt_scenario(4)
    settings = effective_settings(sc, 2)
    conv = play(sc, settings, [CALL] * 10)
    s = score_trial(sc, FMT, conv.turns, settings)
    assert codes.TURNS_EXHAUSTED in s.errors and codes.ANSWER_MISSING not in s.errors
    assert s.get("final_answer_ok") is False
    # Scored without the settings (the scenario's 4 turns), it would look unanswered.
    assert codes.ANSWER_MISSING in score_trial(sc, FMT, conv.turns).errors


def test_raised_limit_lets_a_late_answer_count() -> None:
    sc = mt_scenario(3)
    settings = effective_settings(sc, 5)
    conv = play(sc, settings, [CALL, CALL, CALL, CALL, "It is 23 degrees."])
    assert len(conv.turns) == 5 and conv.done
    s = score_trial(sc, FMT, conv.turns, settings)
    assert s.get("final_answer_ok") is True
    assert codes.CALL_EXTRA in s.errors  # the calls past the one scripted round


def test_retry_on_parse_error_once_and_not_counted_against_the_limit() -> None:
    sc = mt_scenario(2)
    settings = effective_settings(sc, None, retry_on_parse_error=True)
    conv = play(sc, settings, [BROKEN, BROKEN, CALL, "23 degrees"])
    # Turn 1 fails, the retry (turn 2) fails too: no second retry, the trial ends there.
    assert [t.retry for t in conv.turns] == [False, True] and conv.done
    conv = play(sc, settings, [BROKEN, CALL, "23 degrees"])
    assert [t.retry for t in conv.turns] == [False, True, False] and conv.done
    retry_request = conv.turns[1].request["messages"]
    assert (
        retry_request[-1]["role"] == "user"
        and "could not be parsed" in retry_request[-1]["content"]
    )
    assert score_trial(sc, FMT, conv.turns, settings).get("final_answer_ok") is True


def test_without_retry_a_parse_failure_ends_a_single_turn_trial() -> None:
    sc = single_scenario()
    conv = play(sc, effective_settings(sc), [BROKEN, CALL])
    assert len(conv.turns) == 1 and conv.done
    with pytest.raises(RuntimeError):
        conv.request()


def test_converse_drives_an_async_complete_with_turn_indexes() -> None:
    sc = mt_scenario(3)
    replies = iter([CALL, "23 degrees"])
    seen: list[tuple[int, int]] = []

    async def complete(req: RenderedRequest, turn: int) -> TurnReply:
        seen.append((turn, len(req.messages)))
        return TurnReply(
            reply=ModelReply(text=next(replies)), request={"n": turn}, latency_s=0.123456
        )

    turns = asyncio.run(converse(FMT, sc, effective_settings(sc), complete))
    assert [t.request for t in turns] == [{"n": 0}, {"n": 1}]
    assert [t.latency_s for t in turns] == [0.1235, 0.1235]
    # The second request carries the reply and its scripted result.
    assert seen[1][1] == seen[0][1] + 2


def test_results_written_before_settings_were_stored_still_read() -> None:
    line = {
        "run_id": "r", "toolbench_version": "0.1.0", "model": "m", "format": "xml",
        "scenario_id": "s",
    }  # fmt: skip
    assert TrialResult.model_validate(line).settings is None
    stored = TrialResult.model_validate({**line, "settings": {"max_turns": 2}})
    assert stored.settings == TrialSettings(max_turns=2, retry_on_parse_error=False)
