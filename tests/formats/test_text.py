"""Think-block splitting and tidying."""

from __future__ import annotations

import pytest

from toolbench.formats.text import drop_think_tags, split_think, tidy


@pytest.mark.parametrize(
    ("text", "visible", "reasoning"),
    [
        ("plain", "plain", None),
        ("<think>a</think>b", "b", "a"),
        ("x<think> a </think>y<think>b</think>z", "xyz", "a\nb"),
        ("<think>never closed", "", "never closed"),
        ("opened by template\n</think>\nanswer", "\nanswer", "opened by template"),
        ("</think>answer", "answer", ""),
        ("<think></think>answer", "answer", ""),
    ],
)
def test_split_think(text: str, visible: str, reasoning: str | None) -> None:
    got = split_think(text)
    assert (got.text, got.reasoning) == (visible, reasoning)


def test_drop_think_tags_removes_stray_tags() -> None:
    assert drop_think_tags("a</think>b<think>c") == "b"
    assert drop_think_tags("x </think> y </think>") == " y "


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("  a\n\n\n\nb  ", "a\n\nb"),
        ("Call:\n```json\n\n```\nDone", "Call:\n\nDone"),
        ("```python\nprint(1)\n```", "```python\nprint(1)\n```"),
    ],
)
def test_tidy(text: str, expected: str) -> None:
    assert tidy(text) == expected
