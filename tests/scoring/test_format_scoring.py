"""Real formats, real-looking replies, bundled scenarios: the scores the defects of issue 7
changed (xml call boundaries and strictness, react answers and raw leakage, native calls
left in the content).

The conversation is driven the way the runner drives it (parse, scripted results,
should_continue), with hand-written replies instead of a model.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from toolbench import codes
from toolbench.formats import ModelReply, get_format
from toolbench.results import TrialScores, TurnRecord
from toolbench.scenarios.loader import bundled_dir, load_scenarios
from toolbench.scenarios.script import should_continue, tool_results
from toolbench.scoring import score_trial
from toolbench.scoring.leakage import find_marker, markers_for

SUITE = {sc.id: sc for sc in load_scenarios([bundled_dir()])}
Reply = str | ModelReply


def converse(spec: str, scenario_id: str, replies: list[Reply]) -> TrialScores:
    fmt = get_format(spec)
    sc = SUITE[scenario_id]
    messages = fmt.render(sc.tools, [m.model_dump() for m in sc.messages]).messages
    turns: list[TurnRecord] = []
    for i, item in enumerate(replies):
        reply = item if isinstance(item, ModelReply) else ModelReply(text=item)
        reply = reply.model_copy(update={"finish_reason": "stop"})
        parsed = fmt.parse_reply(reply, sc.tools)
        turns.append(TurnRecord(request={"messages": list(messages)}, reply=reply, parsed=parsed))
        if not should_continue(sc, i, parsed):
            assert i == len(replies) - 1, "the conversation stopped before the replies ran out"
            break
        messages = fmt.continue_conversation(messages, reply, tool_results(sc, i, parsed.calls))
    return score_trial(sc, fmt, turns)


PARIS_JSON = json.dumps({"name": "get_weather", "arguments": {"city": "Paris"}})
PARIS = f"<tool_call>\n{PARIS_JSON}\n</tool_call>"
REACT_PARIS = 'Thought: I need the weather.\nAction: get_weather\nAction Input: {"city": "Paris"}'
LEAKED = f"<tool_call>{PARIS_JSON}</tool_call>"

# (id, format, scenario, replies, expected scores, codes that must be among the errors)
CASES: list[tuple[str, str, str, list[Reply], dict[str, Any], list[str]]] = [
    (
        "xml_unclosed_call_then_chat_token",
        "xml",
        "weather-paris",
        [f"<tool_call>\n{PARIS_JSON}\n<|im_end|>"],
        {"parse": "strict", "call_accuracy": True, "stop": "text_after_call", "leak_raw": True},
        [codes.STOP_TEXT_AFTER_CALL, codes.LEAK_RAW],
    ),
    (
        "xml_unclosed_call_then_invented_result",
        "xml",
        "weather-paris",
        [f"<tool_call>\n{PARIS_JSON}\n<tool_response>\nsunny\n</tool_response>"],
        {"call_accuracy": True, "stop": "hallucinated_result", "stop_compliant": False},
        [codes.STOP_HALLUCINATED_RESULT],
    ),
    (
        "xml_one_block_failed",
        "xml",
        "weather-paris",
        [PARIS + "\n<tool_call>get_weather(city=Paris)</tool_call>"],
        {"parse": "repaired", "parse_strict_ok": False, "parse_ok": True, "call_accuracy": True},
        [codes.JSON_DECODE_FAILED],
    ),
    (
        "xml_doubled_tag",
        "xml",
        "weather-paris",
        [f"<tool_call><tool_call>{PARIS_JSON}</tool_call>"],
        {"parse": "repaired", "parse_strict_ok": False, "call_accuracy": True},
        [codes.CALL_LENIENT],
    ),
    (
        "react_compliant_call_does_not_leak",
        "react",
        "weather-paris",
        [REACT_PARIS],
        {"parse": "strict", "stop": "clean", "leak_raw": False, "leak_sanitized": False},
        [],
    ),
    (
        "react_compliant_answer_does_not_leak",
        "react",
        "irrelevant-joke",
        ["Thought: No tool helps here.\nFinal Answer: Cats purr to debug their humans."],
        {"no_call_correct": True, "stop": "no_call", "leak_raw": False},
        [],
    ),
    (
        "react_observation_outside_the_call_leaks",
        "react",
        "weather-paris",
        [REACT_PARIS + "\nObservation: sunny"],
        {"stop": "hallucinated_result", "leak_raw": True, "leak_sanitized": False},
        [codes.LEAK_RAW],
    ),
    (
        "react_other_format_syntax_leaks",
        "react",
        "irrelevant-joke",
        ["Thought: none needed <|im_end|>\nFinal Answer: A joke."],
        {"no_call_correct": True, "leak_raw": True},
        [codes.LEAK_RAW],
    ),
    (
        "react_mid_line_final_answer",
        "react",
        "mt-weather-report",
        [
            'Thought: look it up.\nAction: get_weather\nAction Input: {"city": "Lisbon"}',
            "Thought: I have it. Final Answer: It is 23 degrees in Lisbon.",
        ],
        {"call_accuracy": True, "final_answer_ok": True, "stop": "clean", "leak_raw": False},
        [],
    ),
    (
        "react_answer_not_cut_at_later_thought",
        "react",
        "mt-weather-report",
        [
            'Action: get_weather\nAction Input: {"city": "Lisbon"}',
            "Final Answer: Here is the weather.\nThought: quote the number.\nIt is 23 C.",
        ],
        {"call_accuracy": True, "final_answer_ok": True, "stop_compliant": True},
        [],
    ),
    (
        "native_call_left_in_content_is_no_abstention",
        "native",
        "irrelevant-joke",
        [ModelReply(text=LEAKED)],
        {"no_call_correct": False, "parse": "failed", "leak_raw": True, "leak_sanitized": False},
        [codes.CALL_IN_CONTENT, codes.NO_CALL_DECODE_FAILURE, codes.LEAK_RAW],
    ),
    (
        "native_call_left_in_content_is_no_call",
        "native",
        "weather-paris",
        [ModelReply(text=f"Sure.\n{LEAKED}")],
        {"call_accuracy": False, "parse": "failed", "parse_ok": False, "leak_raw": True},
        [codes.CALL_IN_CONTENT, codes.CALL_MISSING],
    ),
]


@pytest.mark.parametrize(
    ("spec", "scenario_id", "replies", "expected", "must"),
    [c[1:] for c in CASES],
    ids=[c[0] for c in CASES],
)
def test_scores(
    spec: str, scenario_id: str, replies: list[Reply], expected: dict[str, Any], must: list[str]
) -> None:
    s = converse(spec, scenario_id, replies)
    assert {k: s.get(k) for k in expected} == expected
    assert set(must) <= set(s.errors), s.errors
    if not expected.get("leak_raw", True):
        assert codes.LEAK_RAW not in s.errors


@pytest.mark.parametrize(
    "tail", ["<|im_end|>", "\nAnything else?", "\n<tool_response>\n{}\n</tool_response>"]
)
def test_xml_unclosed_call_scores_as_closed(tail: str) -> None:
    """Scored as closed, but strict only before the end of the turn (issue 20: Hermes is
    strict only where a strict reader reads the same; other text makes it repaired)."""
    unclosed = converse("xml", "weather-paris", [f"<tool_call>\n{PARIS_JSON}\n{tail}"])
    closed = converse("xml", "weather-paris", [f"{PARIS}{tail}"])
    if tail == "<|im_end|>":
        assert unclosed == closed
    else:
        strictness = {"parse": "repaired", "parse_strict_ok": False}
        assert {k: unclosed.get(k) for k in strictness} == strictness
        assert codes.CALL_LENIENT in unclosed.errors
        others = set(closed.values) - set(strictness)
        assert set(unclosed.values) == set(closed.values)
        assert {k: unclosed.values[k] for k in others} == {k: closed.values[k] for k in others}
    assert unclosed.get("stop") != "clean"


def test_native_visible_text_keeps_no_raw_call_json() -> None:
    fmt = get_format("native")
    got = fmt.parse_reply(ModelReply(text=f"Sure.\n{LEAKED}"))
    assert got.content == "Sure."
    assert "get_weather" not in got.content


@pytest.mark.parametrize(
    ("text", "hit"),
    [
        ("Thought: fine\nFinal Answer: 42", None),
        ("  Thought: indented is fine", None),
        ("Thought: fine\nAction: get_weather", "Action:"),
        ("Thought: x\nObservation: y", "Observation:"),
        ("Final Answer: 42 <|im_end|>", "<|im_end|>"),
        ('Thought: {"tool": "f"}', '{"tool":'),
    ],
)
def test_raw_leak_is_markup_outside_what_the_format_allows(text: str, hit: str | None) -> None:
    react = type(get_format("react"))
    assert find_marker(text, markers_for(get_format("react")), react.visible_markup) == hit
    assert find_marker("Thought: x", markers_for(get_format("xml")), ()) == "Thought:"
