"""Incremental readers: 1 MB fed one character at a time, and the cost of streaming a reply
against parsing it whole.

Run: ``python benchmarks/bench_stream_readers.py`` (``--quick``: 200 KB, one repeat;
``--tiny``: 5,000 characters, one repeat, 20 replies a format read once: checks it still
runs).

* **one character at a time**: per format, 1 MB of prose with calls in the format's own
  syntax, fed one character per ``feed`` (the worst split a server can send), then
  ``close`` (which parses the whole reply once). Target: under 2 s per format.
* **hostile**: an opener that almost forms, repeated (every character of it is held
  back), one character at a time; and **hostile, varied**: the same after ever different
  text (numbers), so the context before a held tail never repeats. Target: under 2 s.
* **incremental vs whole**: the committed cassettes' replies and the format tests' parse
  tables, each read by its own format, fed in chunks of 4 characters (about one token),
  16, and as one chunk, and closed, against one ``parse`` of each whole reply. The
  reader runs as :func:`observe_stream` runs it (``early_calls=False``); the figure
  with each call block also parsed as it completes is printed beside it.
  Target: at most 2x. CPU time of this process (``time.process_time``), so that other
  work on a shared machine disturbs the figures less. The chunks are cut before the
  clock starts (they arrive cut); ``--harness DIR`` times another checkout's readers
  with this same benchmark (an A/B on the same load).

Timing lives here rather than in the tests so the suite never depends on machine speed.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(
    0,
    sys.argv[sys.argv.index("--harness") + 1]  # the package to time (an A/B)
    if "--harness" in sys.argv[:-1]
    else str(Path(__file__).resolve().parents[1] / "harness"),
)
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "formats"))

from toolbench.formats.base import Format
from toolbench.formats.format_registry import builtin_format_names, get_format
from toolbench.formats.xml import call_text as hermes_call

PROSE = "Let me look that up for you (it may take {a moment}) <br> and compare. "


def one_mb(fmt: Format, size: int) -> str:
    write: Callable[[str, dict[str, Any]], str] = getattr(fmt, "call_text", hermes_call)
    unit = PROSE + write("get_weather", {"city": "Paris", "days": 3}) + "\nDone.\n"
    return unit * (size // len(unit))


HOSTILE = {
    "xml": "<tool_ca",
    "prompt-json": '{ "too',
    "react": "\nActio",
    "pythonic": "[abc ",
    "llama3-json": '{"na',
    "deepseek": "<｜tool▁call",
    "harmony": "<|chan",
}
"""Openers that almost form, again and again: every character goes through the pattern
engine with a held-back tail (the slow path), for reference next to the realistic text."""


def vary(unit: str, size: int) -> str:
    """``unit`` again and again, each time after a different number (no period: what a
    reader remembers of the text before a held tail does not come round again)."""
    parts: list[str] = []
    n = i = 0
    while n < size:
        piece = f"{i}{unit}"
        parts.append(piece)
        n += len(piece)
        i += 1
    return "".join(parts)[:size]


def feed_one_by_one(fmt: Format, text: str) -> float:
    reader = fmt.reader()
    feed = reader.feed
    start = time.process_time()
    for ch in text:
        feed(ch)
    reader.close()
    return time.process_time() - start


def best(fn: Callable[[], float], repeat: int) -> float:
    return min(fn() for _ in range(repeat))


def corpus_by_format() -> dict[str, list[str]]:
    from stream_corpus import corpus

    out: dict[str, list[str]] = {}
    for reply in corpus():
        name = registered(reply.fmt)
        if name is not None and reply.source.startswith(("test_", "local_")):
            out.setdefault(name, []).append(reply.text)
    return out


def registered(label: str) -> str | None:
    """The format a corpus label names: the label itself, or the format a cassette
    directory's name starts with (``native_tool_choice_required`` is ``native`` with an
    option); None when it names none (such replies are left out)."""
    names = builtin_format_names()
    if label in names:
        return label
    return next((n for n in names if label.startswith(f"{n}_")), None)


LOOPS = 10
"""Each reply set is read this many times per measurement (a few milliseconds are too
short to time on a shared machine)."""


def cut(texts: list[str], size: int) -> list[list[str]]:
    """Each reply as the chunks a server would send (``size`` 0: one chunk)."""
    out = []
    for text in texts:
        step = size or max(1, len(text))
        out.append([text[i : i + step] for i in range(0, len(text), step)])
    return out


def streamed(fmt: Format, texts: list[str], size: int = 4, early: bool = False) -> float:
    """The reader's time: the chunks arrive already cut (as from a socket), so cutting
    them is not timed."""
    replies = cut(texts, size) * LOOPS
    start = time.process_time()
    for chunks in replies:
        reader = fmt.reader(early_calls=early)
        feed = reader.feed
        for chunk in chunks:
            feed(chunk)
        reader.close()
    return time.process_time() - start


def whole(fmt: Format, texts: list[str]) -> float:
    start = time.process_time()
    for text in texts * LOOPS:
        fmt.parse(text)
    return time.process_time() - start


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="200 KB and one repeat")
    ap.add_argument("--tiny", action="store_true", help="5,000 characters, one repeat, one loop")
    ap.add_argument("--harness", default="", help="time the toolbench package under DIR")
    ap.add_argument("--only", default="", help="comma-separated parts: mb,hostile,varied,ratio")
    args = ap.parse_args()
    size, repeat = (200_000, 1) if args.quick else (1_000_000, 2)
    if args.tiny:
        global LOOPS
        size, repeat, LOOPS = 5_000, 1, 1
    specs = [*builtin_format_names(), "native|xml"]
    parts = set(args.only.split(",")) if args.only else {"mb", "hostile", "varied", "ratio"}
    if "mb" in parts:
        one_at_a_time(specs, size, repeat)
    if "hostile" in parts:
        hostile(size, repeat, varied=False)
    if "varied" in parts:
        hostile(size, repeat, varied=True)
    if "ratio" in parts:
        ratios(repeat, *((0, 20) if args.tiny else ()))
    return 0


def one_at_a_time(specs: list[str], size: int, repeat: int) -> None:
    print(f"one character at a time, {size:,} characters (best of {repeat}); target < 2 s")
    worst = 0.0
    for spec in specs:
        fmt = get_format(spec)
        text = one_mb(fmt, size)
        secs = best(lambda fmt=fmt, text=text: feed_one_by_one(fmt, text), repeat)  # type: ignore[misc]
        worst = max(worst, secs)
        print(f"  {spec:<14} {secs:6.2f} s  ({len(text) / secs / 1e6:5.2f} M chars/s)")
    print(f"  worst: {worst:.2f} s")


def hostile(size: int, repeat: int, varied: bool) -> None:
    if varied:
        print(f"\nhostile, varied: the same after ever different text, {size:,} characters")
    else:
        print(f"\nhostile: an opener that almost forms, repeated, {size:,} characters, one by one")
    for spec, unit in HOSTILE.items():
        fmt = get_format(spec)
        text = vary(unit, size) if varied else unit * (size // len(unit))
        secs = best(lambda fmt=fmt, text=text: feed_one_by_one(fmt, text), repeat)  # type: ignore[misc]
        print(f"  {spec:<14} {unit!r:<14} {secs:6.2f} s")


def ratios(repeat: int, extra: int = 3, most: int | None = None) -> None:
    """Each format's replies (its first ``most``) read ``repeat + extra`` times each way."""
    print("\nincremental (chunks of N characters, then close) vs whole parse; target <= 2x")
    texts = corpus_by_format()
    sizes = (1, 4, 8, 16, 0)  # 0: the whole reply as one chunk (the reader's own overhead)
    worst = dict.fromkeys((*sizes, -4), 0.0)
    for spec, replies in sorted(texts.items()):
        fmt = get_format(spec)
        replies = replies[:most]
        # parse and reads alternate, so that a change of load touches both alike
        runs: dict[int | str, list[float]] = {k: [] for k in (*sizes, "whole", "early")}
        for _ in range(repeat + extra):
            runs["whole"].append(whole(fmt, replies))
            for size in sizes:
                runs[size].append(streamed(fmt, replies, size))
            runs["early"].append(streamed(fmt, replies, 4, early=True))
        par = min(runs["whole"])
        cells = []
        for size in sizes:
            inc = min(runs[size])
            worst[size] = max(worst[size], inc / par)
            cells.append(f"{inc / par:5.2f}")
        early = min(runs["early"])
        worst[-4] = max(worst[-4], early / par)
        n = sum(map(len, replies))
        print(
            f"  {spec:<14} {len(replies):4d} replies {n:8,d} chars"
            f"  whole {par * 1e3 / LOOPS:6.1f} ms"
            f"  ratio at 1 / 4 / 8 / 16 / whole: {' / '.join(cells)}"
            f"  (4, early calls: {early / par:5.2f})"
        )
    print(
        "  worst ratio at 1 / 4 / 8 / 16 / whole: "
        + " / ".join(f"{worst[s]:.2f}" for s in sizes)
        + f"  (4, early calls: {worst[-4]:.2f})"
    )


if __name__ == "__main__":
    raise SystemExit(main())
