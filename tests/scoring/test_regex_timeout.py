"""Catastrophic regexes cannot stall scoring: each check fails on time with a typed code.

With ``re``, ``(a|a)+`` against 30 ``a`` and a ``!`` backtracks for about a minute. The
bound is :data:`~toolbench.timedregex.REGEX_TIMEOUT_S` per match; every case below must
finish within a few bounds and report the timeout code, not raise. The last test: the
other way schema validation could blow up on a model's arguments (a recursive schema).
"""

from __future__ import annotations

import time
from typing import Any

import pytest

from toolbench import codes
from toolbench.formats.base import ToolCall
from toolbench.scenarios.model import AnswerCheck, ArgMatcher
from toolbench.scoring.answer import answer_problems
from toolbench.scoring.arg_schema import schema_problems
from toolbench.scoring.matchers import check_arg
from toolbench.timedregex import REGEX_TIMEOUT_S, RegexTimeout, matches
from toolbench.tools import ToolDef

EVIL = "(a|a)+$"
HOSTILE = "a" * 30 + "!"
BOUND = 8 * REGEX_TIMEOUT_S  # generous: a stalled match takes a minute


def test_timed_match_raises_regex_timeout() -> None:
    start = time.monotonic()
    with pytest.raises(RegexTimeout, match=r"gave up after"):
        matches(EVIL, HOSTILE)
    assert time.monotonic() - start < BOUND


def test_timed_match_agrees_with_re_on_ordinary_patterns() -> None:
    assert matches(r"\s*17\s*[*x×]\s*23\s*", " 17 × 23 ")
    assert not matches(r"ab", "abc")
    assert matches(r"ab", "xabc", how="search")
    assert matches(r"PARIS", "paris", ignore_case=True)


@pytest.mark.parametrize(
    ("matcher", "value", "code"),
    [
        ({"regex": "(a|a)+"}, HOSTILE, codes.ARGS_REGEX_TIMEOUT),
        ({"regex": EVIL, "ignore_case": True}, HOSTILE, codes.ARGS_REGEX_TIMEOUT),
        ({"regex": "a+"}, "aaa!", codes.ARGS_MISMATCH),
    ],
)
def test_matcher_regex(matcher: dict[str, Any], value: str, code: str) -> None:
    start = time.monotonic()
    problem = check_arg("x", ArgMatcher.model_validate(matcher), {"x": value})
    assert time.monotonic() - start < BOUND
    assert problem is not None and problem[0] == code


def test_answer_regex_timeout() -> None:
    start = time.monotonic()
    problems = answer_problems(AnswerCheck(regex=EVIL), HOSTILE)
    assert time.monotonic() - start < BOUND
    assert [code for code, _ in problems] == [codes.ANSWER_REGEX_TIMEOUT]


def tool(schema: dict[str, Any]) -> ToolDef:
    return ToolDef(name="f", parameters={"type": "object", **schema})


@pytest.mark.parametrize(
    ("schema", "arguments", "found"),
    [
        (
            {"properties": {"x": {"type": "string", "pattern": EVIL}}},
            {"x": HOSTILE},
            [(codes.ARGS_REGEX_TIMEOUT, f"f: x: regex /{EVIL}/ gave up after {REGEX_TIMEOUT_S} s")],
        ),
        (
            {"patternProperties": {EVIL: {"type": "integer"}}},
            {HOSTILE: 1},
            [
                (
                    codes.ARGS_REGEX_TIMEOUT,
                    f"f: arguments: property '{HOSTILE}': regex /{EVIL}/ gave up after"
                    f" {REGEX_TIMEOUT_S} s",
                )
            ],
        ),
        (
            {"anyOf": [{"properties": {"x": {"pattern": EVIL}}}, {"required": ["y"]}]},
            {"x": HOSTILE},
            [
                (
                    codes.ARGS_REGEX_TIMEOUT,
                    f"f: arguments: {{'x': '{HOSTILE}'}} is not valid under any of the"
                    " given schemas",
                )
            ],
        ),
        # jsonschema's own texts are kept when the patterns finish in time
        (
            {"properties": {"x": {"pattern": "^a+$"}}},
            {"x": "ab"},
            [(codes.ARGS_SCHEMA_INVALID, "f: x: 'ab' does not match '^a+$'")],
        ),
        (
            {"patternProperties": {"^a": {}}, "additionalProperties": False},
            {"b": 1},
            [
                (
                    codes.ARGS_SCHEMA_INVALID,
                    "f: arguments: 'b' does not match any of the regexes: '^a'",
                )
            ],
        ),
        (
            {"properties": {"a": {}}, "additionalProperties": False},
            {"b": 1, "c": 2},
            [
                (
                    codes.ARGS_SCHEMA_INVALID,
                    "f: arguments: Additional properties are not allowed"
                    " ('b', 'c' were unexpected)",
                )
            ],
        ),
        ({"properties": {"x": {"pattern": "^a+$"}}}, {"x": "aa"}, []),
    ],
)
def test_schema_patterns(
    schema: dict[str, Any], arguments: dict[str, Any], found: list[tuple[str, str]]
) -> None:
    start = time.monotonic()
    problems = schema_problems(ToolCall(name="f", arguments=arguments), [tool(schema)])
    assert time.monotonic() - start < BOUND
    assert problems == found


def test_arguments_deeper_than_a_recursive_schema_can_follow() -> None:
    """``$ref: '#'`` descends once per level of the model's arguments: no RecursionError."""
    arguments: dict[str, Any] = {}
    level = arguments
    for _ in range(900):
        level["x"] = {}
        level = level["x"]
    recursive = tool({"properties": {"x": {"$ref": "#"}}})
    problems = schema_problems(ToolCall(name="f", arguments=arguments), [recursive])
    assert problems == [(codes.ARGS_SCHEMA_INVALID, "f: arguments: nested too deeply to validate")]
