"""The linear JSON object scanner and the strict-then-repair decoder."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolbench.formats import jsonscan
from toolbench.formats.jsonscan import decode, scan_objects, value_end


def spans(text: str) -> list[str]:
    return [text[s.start : s.end] for s in scan_objects(text).spans]


@pytest.mark.parametrize(
    ("text", "expected", "unclosed"),
    [
        ('a {"x": 1} b {"y": [1, {"z": 2}]} c', ['{"x": 1}', '{"y": [1, {"z": 2}]}'], None),
        ('{"s": "} { \\" ]"}', ['{"s": "} { \\" ]"}'], None),
        ('He said "hi {there" {"k": "v"}', ['{"k": "v"}'], 12),  # rescanned after the {
        ("{} {1} x", [], None),  # objects without a string cannot hold a call
        ('stray { then {"a": 1}', ['{"a": 1}'], 6),  # recovered inside the open brace
        ('{"a": {"b": 1}', ['{"b": 1}'], 0),
        ('{"a": "unterminated', [], 0),
        ("}}}]]] no objects", [], None),
        ('{"a": 1}}}} {"b": 2}', ['{"a": 1}', '{"b": 2}'], None),
        ('[{"a": 1}, {"b": 2}]', ['{"a": 1}', '{"b": 2}'], None),
        ('{"a": [}] {"b": 1}', ['{"a": [}]', '{"b": 1}'], None),  # bracket kinds not matched
    ],
)
def test_scan(text: str, expected: list[str], unclosed: int | None) -> None:
    assert spans(text) == expected
    assert scan_objects(text).unclosed == unclosed


def test_scan_window() -> None:
    text = '{"a": 1} {"b": 2} {"c": 3}'
    got = scan_objects(text, 9, 18)
    assert [text[s.start : s.end] for s in got.spans] == ['{"b": 2}']


@pytest.mark.parametrize(
    ("budget", "text", "expected", "unclosed", "stopped"),
    [
        # Each valid object costs one unit (the C decoder measures it): two read, then stop.
        (2, '{"a": 1} {"b": {"c": [1]}} {"d": 1}', ['{"a": 1}', '{"b": {"c": [1]}}'], None, 27),
        # Invalid JSON costs a unit per object and per bracket run.
        (2, '{"a": [}] {"b": 1}', [], 0, 7),  # stopped inside the object: it is unclosed
        (6, '{] {] {"a": 1}', ["{]", "{]"], None, 6),
        (5, '{] {] {"a": 1}', ["{]"], 3, 4),
        # Within the budget: read to the end, nothing stopped.
        (4, '{"a": [}]', ['{"a": [}]'], None, None),
        (2, 'x {"a": 1} y', ['{"a": 1}'], None, None),
    ],
)
def test_scan_budget(
    monkeypatch: pytest.MonkeyPatch,
    budget: int,
    text: str,
    expected: list[str],
    unclosed: int | None,
    stopped: int | None,
) -> None:
    """Past its budget of bracket runs and objects a scan stops and says where."""
    monkeypatch.setattr(jsonscan, "TOKEN_BUDGET", budget)
    got = scan_objects(text)
    assert ([text[s.start : s.end] for s in got.spans], got.unclosed, got.stopped) == (
        expected,
        unclosed,
        stopped,
    )


def test_budget_is_not_spent_on_valid_objects() -> None:
    """A thousand real calls, 8 brackets each, cost a thousand units, not eight thousand."""
    call = json.dumps({"tool": "f", "arguments": {"a": [1, {"b": [2]}]}})
    text = "\n".join([call] * 1000)
    got = scan_objects(text)
    assert (len(got.spans), got.stopped) == (1000, None)


def test_deep_nesting_is_bounded() -> None:
    text = '{"a":' * 5000 + "1" + "}" * 5000
    assert spans(text) == [text]
    assert decode(text).ok is False  # too deep for json: reported, not raised


@settings(max_examples=200, deadline=None)
@given(
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.text(),
        lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=4), c, max_size=3),
    )
)
def test_scan_finds_every_embedded_object(value: object) -> None:
    obj = {"v": value}
    blob = json.dumps(obj, ensure_ascii=False)
    assert spans(f"before {blob} after") == [blob]


@pytest.mark.parametrize(
    ("text", "ok", "repaired", "value"),
    [
        ('{"a": 1}', True, False, {"a": 1}),
        ('{"a": 1,}', True, True, {"a": 1}),
        ("{'a': 'x'}", True, True, {"a": "x"}),
        ("", False, False, None),
    ],
)
def test_decode(text: str, ok: bool, repaired: bool, value: object) -> None:
    got = decode(text)
    assert (got.ok, got.repaired) == (ok, repaired)
    if ok:
        assert got.value == value


def test_decode_strict_only() -> None:
    assert decode('{"a": 1,}', allow_repair=False).ok is False


@pytest.mark.parametrize(
    ("text", "end"),
    [
        ('{"a": 1} x', 8),
        ('{"s": "} ] </tool_call>"} x', 25),
        ('{"a": {"b": [1, {"c": 2}]}}} x', 27),
        ("[1, [2], {}] y", 12),
        ("{} {}", 2),
        ('{"a": "\\"}"} z', 12),
        ('{"a": {"b": 1}', None),  # still open at the end
        ('{"a": "unterminated', None),
        ("x {}", None),  # no opener at the start
        ("{'a': 1,} tail", 9),  # invalid JSON still ends where its brackets balance
    ],
)
def test_value_end(text: str, end: int | None) -> None:
    assert value_end(text, 0) == end


def test_value_end_window() -> None:
    text = 'ab {"x": [1, 2]} cd'
    assert value_end(text, 3) == 16
    assert value_end(text, 3, 10) is None  # the window ends before the value closes


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=12,
)


@settings(max_examples=200, deadline=None)
@given(value=json_values.filter(lambda v: isinstance(v, (dict, list))), tail=st.text(max_size=10))
def test_value_end_agrees_with_json(value: object, tail: str) -> None:
    for dumped in (json.dumps(value), json.dumps(value, ensure_ascii=False, indent=1)):
        assert value_end(dumped + tail, 0) == len(dumped)
        broken = dumped[0] + "x" + dumped[1:]  # invalid JSON: the bracket scan, not json
        assert value_end(broken + tail, 0) == len(broken)
