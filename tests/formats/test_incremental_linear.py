"""The incremental readers stay linear in the bytes fed, counted in operations, not seconds.

A reply twice as long, fed in the same chunks, must cost at most about twice the work:
the characters the reader hands to the pattern engine (a re-scan of the whole buffer per
chunk would make that quadratic) and the function calls made while feeding and closing
(``sys.setprofile`` events, Python and C). Realistic replies (prose and calls in each
format's own syntax), near-openers repeated (every character held back), and calls that
never close, one character and three characters at a time. Wall-clock limits live in
``benchmarks/bench_stream_readers.py``, never here.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest

import toolbench.formats.reader_regions as reader_regions
from toolbench.formats.base import Format
from toolbench.formats.format_registry import builtin_format_names, get_format
from toolbench.formats.xml import call_text as hermes_call

SPECS = [*builtin_format_names(), "native|xml"]
PROSE = "Let me look that up (it may take {a moment}) <br> and compare.\n"


def _realistic(fmt: Format) -> str:
    write: Callable[[str, dict[str, Any]], str] = getattr(fmt, "call_text", hermes_call)
    return PROSE + write("get_weather", {"city": "Paris", "days": 3}) + "\nDone.\n"


# (format, a unit repeated to the size fed, text before the units)
HOSTILE = [
    ("xml", "<tool_ca", ""),
    ("prompt-json", '{ "too', ""),
    ("react", "\nActio", ""),
    ("react", "Actio\n", ""),
    ("pythonic", "[abc ", ""),
    ("llama3-json", '{"na', ""),
    ("deepseek", "<｜tool▁call", ""),
    ("harmony", "<|chan", ""),
    ("kimi-k2", "<|tool_calls_sec", ""),
    ("claude-xml", "<function_ca", ""),
    ("native|xml", "<tool_", ""),
    # calls that never end: the reader keeps them, and looks only at what is new
    ("xml", "x </tool_cal", '<tool_call>{"name": "a", "arguments": {"b": "'),
    ("prompt-json", '[{"a": "\\"', '{"tool": "a", "arguments": '),
    ("pythonic", "(x='[', ", "[get_weather("),
    ("mistral", "[ARGS]{", "[TOOL_CALLS]"),
    ("react", "Thought", "Action: get_weather\nAction Input: "),
    ("harmony", "<|mes", "<|channel|>commentary to=functions.a <|message|>"),
]


class _Counting:
    """A compiled pattern that adds up the characters each search may look at."""

    def __init__(self, inner: Any, counter: list[int]) -> None:
        self.inner, self.counter = inner, counter
        self.pattern = inner.pattern

    def search(self, s: str, pos: int = 0, *args: Any, **kwargs: Any) -> Any:
        self.counter[0] += len(s) - pos
        return self.inner.search(s, pos, *args, **kwargs)

    def match(self, s: str, pos: int = 0, *args: Any, **kwargs: Any) -> Any:
        self.counter[0] += len(s) - pos
        return self.inner.match(s, pos, *args, **kwargs)

    def finditer(self, s: str, *args: Any, **kwargs: Any) -> Any:
        return self.inner.finditer(s, *args, **kwargs)


@contextmanager
def _profiled(counter: list[int]) -> Iterator[None]:
    def count(frame: Any, event: str, arg: Any) -> None:
        counter[0] += 1

    sys.setprofile(count)
    try:
        yield
    finally:
        sys.setprofile(None)


def _work(fmt: Format, text: str, size: int, monkeypatch: pytest.MonkeyPatch) -> tuple[int, int]:
    """(characters searched, calls made) to read ``text`` in chunks of ``size``."""
    searched = [0]
    closers = reader_regions.compiled
    monkeypatch.setattr(reader_regions, "compiled", lambda p: _Counting(closers(p), searched))
    reader = fmt.reader()
    opener = reader._open  # type: ignore[attr-defined]
    if opener is not None:
        reader._open = _Counting(opener, searched)  # type: ignore[attr-defined]
    chunks = [text[i : i + size] for i in range(0, len(text), size)]
    calls = [0]
    with _profiled(calls):
        for chunk in chunks:
            reader.feed(chunk)
        reader.close()
    monkeypatch.setattr(reader_regions, "compiled", closers)
    return searched[0], calls[0]


def _assert_linear(fmt: Format, make: Callable[[int], str], mp: pytest.MonkeyPatch) -> None:
    for size in (1, 3):
        small = _work(fmt, make(2_000), size, mp)
        large = _work(fmt, make(4_000), size, mp)
        for what, a, b in zip(("characters searched", "calls"), small, large, strict=True):
            assert b <= 2.25 * a + 200, (what, size, a, b)
        # and bounded per character fed: a held tail and its context, not the buffer
        assert large[0] <= 100 * 4_000, ("characters searched per character", size, large[0])


@pytest.mark.parametrize("spec", SPECS)
def test_a_realistic_reply_twice_as_long_costs_twice_the_work(
    spec: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    fmt = get_format(spec)
    unit = _realistic(fmt)
    _assert_linear(fmt, lambda n: (unit * (n // len(unit) + 1))[:n], monkeypatch)


@pytest.mark.parametrize(
    ("spec", "unit", "head"), HOSTILE, ids=[f"{h[0]}:{h[2][:12]}{h[1]}" for h in HOSTILE]
)
def test_hostile_input_twice_as_long_costs_twice_the_work(
    spec: str, unit: str, head: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    fmt = get_format(spec)
    _assert_linear(fmt, lambda n: head + unit * (n // len(unit)), monkeypatch)


@pytest.mark.parametrize(
    ("spec", "unit"),
    [(h[0], h[1]) for h in HOSTILE if not h[2]],
    ids=[h[0] for h in HOSTILE if not h[2]],
)
def test_hostile_input_after_ever_different_text_costs_twice_the_work(
    spec: str, unit: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The near-opener after a new number each time: what the reader remembers of held
    tails does not come round again, and the work stays linear all the same."""
    fmt = get_format(spec)

    def make(n: int) -> str:
        return "".join(f"{i}{unit}" for i in range(n // len(unit)))[:n]

    _assert_linear(fmt, make, monkeypatch)
