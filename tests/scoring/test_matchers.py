"""Argument matchers: each check, the JSON-equality rules, missing and absent arguments."""

from __future__ import annotations

from typing import Any

import pytest

from toolbench import codes
from toolbench.scenarios.model import ArgMatcher
from toolbench.scoring.matchers import check_arg, json_equal, json_type

M = ArgMatcher.model_validate


@pytest.mark.parametrize(
    ("a", "b", "ignore_case", "equal"),
    [
        (1, 1.0, False, True),
        (True, 1, False, False),
        (False, 0, False, False),
        (True, True, False, True),
        ("Paris", "paris", False, False),
        ("Paris", "paris", True, True),
        ([1, "A"], [1.0, "a"], True, True),
        ([1, 2], [2, 1], False, False),
        ([1], [1, 1], False, False),
        ({"a": {"b": [1]}}, {"a": {"b": [1.0]}}, False, True),
        ({"a": 1}, {"a": 1, "b": 2}, False, False),
        (None, None, False, True),
        (None, "", False, False),
        ("1", 1, False, False),
    ],
)
def test_json_equal(a: Any, b: Any, ignore_case: bool, equal: bool) -> None:
    assert json_equal(a, b, ignore_case) is equal


@pytest.mark.parametrize(
    ("value", "name"),
    [
        (None, "null"),
        (True, "boolean"),
        (3, "integer"),
        (3.5, "number"),
        ("x", "string"),
        ([1], "array"),
        ({}, "object"),
    ],
)
def test_json_type(value: Any, name: str) -> None:
    assert json_type(value) == name


OK = None
MISMATCH = codes.ARGS_MISMATCH
MISSING = codes.ARGS_MISSING_REQUIRED
UNEXPECTED = codes.ARGS_UNEXPECTED

CASES: list[tuple[str, Any, dict[str, Any], str | None]] = [
    # (id, matcher, call arguments, expected code or None)
    ("exact-ok", "Paris", {"x": "Paris"}, OK),
    ("exact-case", "Paris", {"x": "paris"}, MISMATCH),
    ("exact-ignore-case", {"exact": "Paris", "ignore_case": True}, {"x": "PARIS"}, OK),
    ("exact-int-float", 4, {"x": 4.0}, OK),
    ("exact-bool-not-int", 1, {"x": True}, MISMATCH),
    ("exact-true-not-one", True, {"x": 1}, MISMATCH),
    ("exact-null", None, {"x": None}, OK),
    ("exact-list", {"exact": [1, 2]}, {"x": [1, 2]}, OK),
    ("exact-object", {"exact": {"a": "b"}}, {"x": {"a": "c"}}, MISMATCH),
    ("exact-missing", "Paris", {}, MISSING),
    ("any-of-ok", {"any_of": ["Paris", "Paris, France"]}, {"x": "Paris, France"}, OK),
    ("any-of-miss", {"any_of": ["Paris", "Paris, France"]}, {"x": "Lyon"}, MISMATCH),
    ("any-of-empty-means-absent", {"any_of": ["celsius", ""]}, {}, OK),
    ("any-of-without-empty-missing", {"any_of": ["celsius"]}, {}, MISSING),
    ("any-of-lists", {"any_of": [[1, 2], [2, 1]]}, {"x": [2, 1]}, OK),
    ("regex-fullmatch", {"regex": "1[0-9]"}, {"x": "15"}, OK),
    ("regex-not-partial", {"regex": "1[0-9]"}, {"x": "150"}, MISMATCH),
    ("regex-string-only", {"regex": "15"}, {"x": 15}, MISMATCH),
    ("regex-ignore-case", {"regex": "abc", "ignore_case": True}, {"x": "ABC"}, OK),
    ("type-integer", {"type": "integer"}, {"x": 3}, OK),
    ("type-integer-not-bool", {"type": "integer"}, {"x": True}, MISMATCH),
    ("type-integer-integral-float", {"type": "integer"}, {"x": 3.0}, OK),
    ("type-integer-not-fraction", {"type": "integer"}, {"x": 3.5}, MISMATCH),
    ("type-number", {"type": "number"}, {"x": 3}, OK),
    ("type-number-not-string", {"type": "number"}, {"x": "3"}, MISMATCH),
    ("type-boolean", {"type": "boolean"}, {"x": False}, OK),
    ("type-array", {"type": "array"}, {"x": {}}, MISMATCH),
    ("approx-in", {"approx": 21.5, "tol": 0.01}, {"x": 21.505}, OK),
    ("approx-edge", {"approx": 10, "tol": 0.5}, {"x": 10.5}, OK),
    ("approx-out", {"approx": 21.5, "tol": 0.01}, {"x": 21.6}, MISMATCH),
    ("approx-not-bool", {"approx": 1, "tol": 0.5}, {"x": True}, MISMATCH),
    ("approx-not-string", {"approx": 1}, {"x": "1"}, MISMATCH),
    ("optional-missing", {"type": "string", "optional": True}, {}, OK),
    ("optional-wrong", {"exact": "a", "optional": True}, {"x": "b"}, MISMATCH),
    ("absent-ok", {"absent": True}, {}, OK),
    ("absent-given", {"absent": True}, {"x": "song"}, UNEXPECTED),
]


@pytest.mark.parametrize(
    ("matcher", "args", "code"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_check_arg(matcher: Any, args: dict[str, Any], code: str | None) -> None:
    problem = check_arg("x", M(matcher), args)
    assert (problem[0] if problem else None) == code
    if problem:
        assert "'x'" in problem[1]


def test_mismatch_reason_shows_expected_and_got() -> None:
    problem = check_arg("city", M("Paris"), {"city": "Lyon"})
    assert problem == (codes.ARGS_MISMATCH, "argument 'city': expected 'Paris', got 'Lyon'")
