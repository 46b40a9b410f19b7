"""score_trial end to end on hand-built turns (no real format needed)."""

from __future__ import annotations

from typing import Any

import pytest
from scoring_helpers import FakeFormat, call, scenario, turn

from toolbench import codes
from toolbench.results import TrialScores
from toolbench.scoring import score_trial

FMT = FakeFormat()
PARIS = {"calls": [{"name": "get_weather", "arguments": {"city": "Paris"}}]}
NO_CALL = {"no_call": True}
TWO_ROUNDS = {
    "max_turns": 3,
    "rounds": [
        {"calls": [{"name": "get_time", "arguments": {"timezone": "UTC"}, "result": "12:00"}]},
        {"calls": [{"name": "get_weather", "arguments": {"city": "Oslo"}, "result": {"t": 4}}]},
    ],
    "final_answer": {"contains": ["4 degrees"], "regex": "noon|12:00"},
}


def test_correct_single_call() -> None:
    s = score_trial(scenario(PARIS), FMT, [turn([call("get_weather", city="Paris")])])
    assert s == TrialScores.of(
        parse="strict",
        parse_strict_ok=True,
        parse_ok=True,
        call_accuracy=True,
        args_schema_valid=True,
        stop="clean",
        stop_compliant=True,
        leak_raw=False,
        leak_sanitized=False,
        no_call_correct=None,
        final_answer_ok=None,
        first_try_ok=True,
        retried=False,
        retry_recovered=None,
    )


def test_repaired_parse_counts_for_parse_ok_only() -> None:
    t = turn(
        [call("get_weather", city="Paris")],
        status="repaired",
        errors=[(codes.JSON_REPAIRED, "trailing comma")],
    )
    s = score_trial(scenario(PARIS), FMT, [t])
    assert (
        s.get("parse"),
        s.get("parse_strict_ok"),
        s.get("parse_ok"),
        s.get("call_accuracy"),
    ) == (
        "repaired",
        False,
        True,
        True,
    )
    assert s.errors == [codes.JSON_REPAIRED]
    assert s.reasons == ["trailing comma"]


def test_failed_parse() -> None:
    t = turn(status="failed", errors=[(codes.JSON_DECODE_FAILED, "bad JSON")])
    s = score_trial(scenario(PARIS), FMT, [t])
    assert (s.get("parse"), s.get("parse_strict_ok"), s.get("parse_ok")) == ("failed", False, False)
    assert s.get("call_accuracy") is False
    assert s.get("args_schema_valid") is None
    assert s.errors == [codes.JSON_DECODE_FAILED, codes.CALL_MISSING]
    assert s.reasons[1] == "the reply did not parse; a call to get_weather was not made"
    assert s.get("stop") == "clean"  # it tried to call and stopped


def test_text_instead_of_call() -> None:
    s = score_trial(scenario(PARIS), FMT, [turn(text="It is sunny.")])
    assert (s.get("parse"), s.get("parse_ok"), s.get("call_accuracy"), s.get("stop")) == (
        "no_call",
        None,
        False,
        "no_call",
    )
    assert s.errors == [codes.CALL_MISSING]


def test_schema_violation_is_separate_from_matching() -> None:
    sc = scenario(
        {
            "calls": [
                {"name": "get_weather", "arguments": {"city": "Paris", "unit": {"type": "string"}}}
            ]
        }
    )
    s = score_trial(sc, FMT, [turn([call("get_weather", city="Paris", unit="kelvin")])])
    assert s.get("call_accuracy") is True
    assert s.get("args_schema_valid") is False
    assert s.errors == [codes.ARGS_SCHEMA_INVALID]
    assert s.reasons[0].startswith("get_weather: unit: 'kelvin' is not one of")


def test_unknown_tool_fails_schema() -> None:
    s = score_trial(scenario(PARIS), FMT, [turn([call("get_news", topic="x")])])
    assert s.get("args_schema_valid") is False
    assert s.errors == [codes.CALL_WRONG_TOOL, codes.CALL_UNKNOWN_TOOL]


def test_invalid_tool_schema_does_not_crash() -> None:
    bad = {"name": "f", "parameters": {"type": "object", "properties": {"x": {"type": 5}}}}
    sc = scenario({"calls": [{"name": "f", "arguments": {"x": 1}}]}, tools=[bad])
    s = score_trial(sc, FMT, [turn([call("f", x=1)])])
    assert s.get("call_accuracy") is True
    assert s.get("args_schema_valid") is False
    assert s.errors == [codes.ARGS_SCHEMA_INVALID]
    assert s.reasons[0].startswith("tool 'f' has an invalid schema:")


@pytest.mark.parametrize(
    ("signals", "finish", "stop", "code"),
    [
        ([], "stop", "clean", None),
        ([codes.STOP_TEXT_AFTER_CALL], "stop", "text_after_call", codes.STOP_TEXT_AFTER_CALL),
        ([codes.STOP_MULTIPLE_ACTIONS], "stop", "multiple_actions", codes.STOP_MULTIPLE_ACTIONS),
        (
            [codes.STOP_TEXT_AFTER_CALL, codes.STOP_HALLUCINATED_RESULT],
            "stop",
            "hallucinated_result",
            codes.STOP_HALLUCINATED_RESULT,
        ),
        ([codes.STOP_TEXT_AFTER_CALL], "length", "length", codes.STOP_LENGTH),
    ],
)
def test_stop_classes(signals: list[str], finish: str, stop: str, code: str | None) -> None:
    t = turn([call("get_weather", city="Paris")], signals=signals, finish=finish)
    s = score_trial(scenario(PARIS), FMT, [t])
    assert s.get("stop") == stop
    assert s.get("stop_compliant") is (code is None)
    assert s.errors == ([code] if code else [])


@pytest.mark.parametrize(
    ("raw", "content", "leak_raw", "leak_sanitized"),
    [
        ("Sure.", "Sure.", False, False),
        ("Sure <<CALL>>", "Sure", True, False),  # the format's own marker, sanitized away
        ("ok<|im_end|>", "ok<|im_end|>", True, True),  # a chat special token that survived
        ("", "<end_of_turn>", False, True),
    ],
)
def test_leakage(raw: str, content: str, leak_raw: bool, leak_sanitized: bool) -> None:
    t = turn([call("get_weather", city="Paris")], text=content, raw=raw)
    s = score_trial(scenario(PARIS), FMT, [t])
    assert (s.get("leak_raw"), s.get("leak_sanitized")) == (leak_raw, leak_sanitized)
    want = [codes.LEAK_RAW] * leak_raw + [codes.LEAK_SANITIZED] * leak_sanitized
    assert s.errors == want


@pytest.mark.parametrize(
    ("t", "correct", "errors"),
    [
        (turn(text="Here is a joke."), True, []),
        (turn([call("get_weather", city="Paris")]), False, [codes.CALL_UNEXPECTED]),
        (
            turn(status="failed", errors=[(codes.CALL_TRUNCATED, "cut")]),
            False,
            [codes.CALL_TRUNCATED, codes.NO_CALL_DECODE_FAILURE],
        ),
    ],
    ids=["abstains", "calls", "failed-attempt-is-not-abstention"],
)
def test_no_call(t: Any, correct: bool, errors: list[str]) -> None:
    s = score_trial(scenario(NO_CALL), FMT, [t])
    assert s.get("no_call_correct") is correct
    assert s.get("call_accuracy") is None
    assert s.get("final_answer_ok") is None
    assert s.errors == errors


def _mt(*turns: Any) -> TrialScores:
    return score_trial(scenario(TWO_ROUNDS), FMT, list(turns))


R1 = turn([call("get_time", timezone="UTC")])
R2 = turn([call("get_weather", city="Oslo")])


def test_multi_turn_all_good() -> None:
    s = _mt(R1, R2, turn(text="At 12:00 it is 4 degrees in Oslo."))
    assert (s.get("call_accuracy"), s.get("final_answer_ok"), s.get("stop"), s.get("parse")) == (
        True,
        True,
        "clean",
        "strict",
    )
    assert s.errors == []


def test_multi_turn_uses_final_answer_field() -> None:
    s = _mt(R1, R2, turn(text="Thought: done", final="4 DEGREES at noon"))
    assert s.get("final_answer_ok") is True


@pytest.mark.parametrize(
    ("turns", "errors", "final_ok"),
    [
        (
            [R1, R2, turn(text="It is 5 degrees at noon.")],
            [codes.ANSWER_MISMATCH],
            False,
        ),
        ([R1, R2, turn(text="4 degrees.")], [codes.ANSWER_MISMATCH], False),
        ([R1, R2, turn(text="  ")], [codes.ANSWER_MISSING], False),
        ([R1, R2, R2], [codes.TURNS_EXHAUSTED], False),
        ([R1, R2, turn(status="failed")], [codes.ANSWER_MISSING], False),
        (
            [R1, turn([call("get_weather", city="Rome")]), turn(text="4 degrees at noon")],
            [codes.ARGS_MISMATCH],
            True,
        ),
        ([R1, turn(text="4 degrees at noon")], [codes.CALL_MISSING], True),
    ],
    ids=["wrong-fact", "regex-fails", "empty", "exhausted", "failed-last", "bad-round-2", "early"],
)
def test_multi_turn_failures(turns: list[Any], errors: list[str], final_ok: bool) -> None:
    s = _mt(*turns)
    assert s.get("call_accuracy") is False
    assert s.get("final_answer_ok") is final_ok
    assert s.errors == errors


def test_multi_turn_calls_after_last_round_are_extra() -> None:
    sc = scenario({**TWO_ROUNDS, "max_turns": 5})
    turns = [R1, R2, R2, turn(text="4 degrees at noon")]
    s = score_trial(sc, FMT, turns)
    assert s.errors == [codes.CALL_EXTRA]
    assert s.reasons == ["turn 3: call to get_weather after the last round"]
    assert s.get("final_answer_ok") is True
    assert s.get("call_accuracy") is False


def test_multi_turn_mismatch_reason_names_round() -> None:
    s = _mt(R1, turn([call("get_weather", city="Rome")]), turn(text="4 degrees at noon"))
    assert s.reasons == ["round 2: argument 'city': expected 'Oslo', got 'Rome'"]


def test_retry_replaces_failed_turn() -> None:
    turns = [
        turn(status="failed", errors=[(codes.JSON_DECODE_FAILED, "bad")]),
        turn([call("get_weather", city="Paris")], retry=True),
    ]
    s = score_trial(scenario(PARIS), FMT, turns)
    assert (s.get("parse"), s.get("parse_ok"), s.get("call_accuracy")) == ("strict", True, True)
    assert (s.get("retried"), s.get("first_try_ok"), s.get("retry_recovered")) == (
        True,
        False,
        True,
    )
    assert s.errors == []


def test_retry_that_parses_but_misses_is_not_recovered() -> None:
    turns = [turn(status="failed"), turn([call("get_weather", city="Lyon")], retry=True)]
    s = score_trial(scenario(PARIS), FMT, turns)
    assert (s.get("parse_ok"), s.get("call_accuracy"), s.get("retry_recovered")) == (
        True,
        False,
        False,
    )


def test_no_retry_leaves_retry_fields_unset() -> None:
    s = score_trial(scenario(PARIS), FMT, [turn([call("get_weather", city="Paris")])])
    assert (s.get("retried"), s.get("retry_recovered")) == (False, None)


def test_scores_survive_json_round_trip() -> None:
    s = _mt(R1, R2, turn(text="5 degrees"))
    assert TrialScores.model_validate_json(s.model_dump_json()) == s
