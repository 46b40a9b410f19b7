"""Think-block splitting and tidying."""

from __future__ import annotations

import pytest

from toolbench.formats.text import Cutter, drop_think_tags, split_think, strip_markers, tidy


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


@pytest.mark.parametrize(
    ("cuts", "end", "kept", "first", "last"),
    [
        ([], None, "0123456789", None, None),
        ([(2, 4)], None, "01456789", 2, 4),
        ([(0, 3), (5, 7)], None, "34789", 0, 7),
        ([(2, 4)], 6, "0145", 2, 4),
        ([(8, 10)], None, "01234567", 8, 10),
    ],
)
def test_cutter(
    cuts: list[tuple[int, int]], end: int | None, kept: str, first: int | None, last: int | None
) -> None:
    cutter = Cutter("0123456789")
    for start, stop in cuts:
        cutter.cut(start, stop)
    assert (cutter.first_start, cutter.last_end) == (first, last)
    assert cutter.finish(end) == kept


def test_strip_markers_tidies_before_removing() -> None:
    # tidying drops the emptied fence first, so the marker it splices is removed too
    assert strip_markers(" <a```x\n```b> ", ("<ab>",)) == ""
    assert strip_markers("x <m>```json\n```</m> y", ("<m>", "</m>")) == "x  y"
