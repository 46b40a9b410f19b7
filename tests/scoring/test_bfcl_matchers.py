"""The matcher options that reproduce BFCL's AST checker, one row per rule.

``normalize`` (BFCL's ``standardize_string``), ``type`` as a guard beside another check
with ``strict_type``, ``fields`` / ``items`` / ``alternatives`` for nested answers, and
``required`` (``""`` among the answers does not excuse a required argument).
"""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from toolbench import codes
from toolbench.scenarios.model import ArgMatcher
from toolbench.scoring.matchers import check_arg, normalize_string

M = ArgMatcher.model_validate
MISSING = object()

STR = {"type": "string", "strict_type": True, "normalize": True}
INT = {"type": "integer", "strict_type": True}
NUM = {"type": "number", "strict_type": True}
STYLE = {"fields": {"color": {"any_of": ["red"], "normalize": True}, "size": {"any_of": [3, ""]}}}

ROWS: list[tuple[str, dict[str, Any], Any, str | None]] = [
    # normalize: lowercase; spaces and ,./-_*^ removed; ' read as "
    ("norm-case", {**STR, "any_of": ["New York"]}, "NEW YORK", None),
    ("norm-punct", {**STR, "any_of": ["April 1, 2024"]}, "april 1 2024", None),
    ("norm-all-punct", {**STR, "any_of": ["a,b.c/d-e_f*g^h"]}, "ABCDEFGH", None),
    ("norm-quote", {**STR, "any_of": ["say 'hi'"]}, 'say "hi"', None),
    ("norm-other-word", {**STR, "any_of": ["New York"]}, "Newark", codes.ARGS_MISMATCH),
    ("norm-keeps-other-chars", {**STR, "any_of": ["ab"]}, "a:b", codes.ARGS_MISMATCH),
    (
        "norm-list-items",
        {"any_of": [["San Francisco", 1]], "normalize": True},
        ["sanfrancisco", 1],
        None,
    ),
    ("norm-off", {"any_of": ["New York"]}, "new york", codes.ARGS_MISMATCH),
    # type guard with strict_type: int where float is expected, not the reverse
    ("int-for-float", {**NUM, "any_of": [5.0]}, 5, None),
    ("float-for-int", {**INT, "any_of": [5]}, 5.0, codes.ARGS_MISMATCH),
    ("float-for-int-loose", {"type": "integer", "any_of": [5]}, 5.0, None),
    ("bool-for-int", {**INT, "any_of": [1]}, True, codes.ARGS_MISMATCH),
    ("string-for-int", {**INT, "any_of": [5]}, "5", codes.ARGS_MISMATCH),
    ("any-is-a-string", {**STR, "any_of": ["1"]}, 1, codes.ARGS_MISMATCH),
    ("type-alone", {"type": "integer", "strict_type": True}, 7, None),
    ("type-with-regex", {"type": "string", "regex": "a+"}, "aaa", None),
    ("type-with-approx", {"type": "number", "approx": 1.0, "tol": 0.1}, 1.05, None),
    # "" = may be absent, unless the schema requires the argument
    ("empty-optional", {**INT, "any_of": [3, ""]}, MISSING, None),
    (
        "empty-required",
        {**INT, "any_of": [3, ""], "required": True},
        MISSING,
        codes.ARGS_MISSING_REQUIRED,
    ),
    ("no-empty", {**INT, "any_of": [3]}, MISSING, codes.ARGS_MISSING_REQUIRED),
    # nested dict alternatives
    ("dict-match", {"alternatives": [STYLE]}, {"color": "RED", "size": 3}, None),
    ("dict-optional-key", {"alternatives": [STYLE]}, {"color": "red"}, None),
    ("dict-missing-key", {"alternatives": [STYLE]}, {"size": 3}, codes.ARGS_MISMATCH),
    ("dict-extra-key", {"alternatives": [STYLE]}, {"color": "red", "x": 1}, codes.ARGS_MISMATCH),
    ("dict-second-alt", {"alternatives": [STYLE, {"fields": {"c": {"exact": 1}}}]}, {"c": 1}, None),
    ("dict-not-object", {"alternatives": [STYLE]}, "red", codes.ARGS_MISMATCH),
    ("dict-whole-optional", {"alternatives": [STYLE], "optional": True}, MISSING, None),
    # list of dicts, in order
    (
        "items-match",
        {"items": [STYLE, STYLE]},
        [{"color": "red"}, {"color": "Red", "size": 3}],
        None,
    ),
    ("items-count", {"items": [STYLE]}, [{"color": "red"}, {"color": "red"}], codes.ARGS_MISMATCH),
    ("items-empty", {"alternatives": [{"items": []}, {"items": [STYLE]}]}, [], None),
]


@pytest.mark.parametrize(("label", "spec", "value", "code"), ROWS, ids=[r[0] for r in ROWS])
def test_bfcl_matcher_rules(label: str, spec: dict[str, Any], value: Any, code: str | None) -> None:
    args = {} if value is MISSING else {"x": value}
    problem = check_arg("x", M(spec), args)
    assert (problem[0] if problem else None) == code, label


@pytest.mark.parametrize(
    ("text", "want"),
    [("April 1, 2024", "april12024"), ("A_b-c/d.e*f^g h", "abcdefgh"), ("it's", 'it"s')],
)
def test_normalize_string_is_bfcls_standardize_string(text: str, want: str) -> None:
    assert normalize_string(text) == want


@pytest.mark.parametrize(
    "spec",
    [
        {"any_of": [1], "regex": "x"},
        {"fields": {}, "items": []},
        {"alternatives": [], "exact": 1},
        {"absent": True, "type": "string"},
        {"normalize": True},
    ],
)
def test_one_value_check_besides_the_type_guard(spec: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        M(spec)


def test_nested_matchers_round_trip() -> None:
    m = M({"type": "object", "alternatives": [STYLE], "optional": True})
    assert M(m.model_dump(exclude_defaults=True)) == m
