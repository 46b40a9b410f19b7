"""toolbench's parsers against agent-tool-parser (a Rust tool-call parser), side by side.

Run: ``python benchmarks/bench_vs_agent_tool_parser.py`` (needs the ``bench`` extra:
``pip install -c constraints.txt -e '.[bench]'``; without it the benchmark says so and
exits 0). ``--loops N`` reads every reply set N times per measurement (default 20; ``--tiny``: 1).

Both read the same small replies, per format family: the rows of the format tests' parse
tables and, when ``../shared/conformance`` is present, the reference parsers' vectors
(the corpus the streaming tests use, ``tests/formats/stream_corpus.py``). toolbench's
side is the family's format ``parse`` (calls, content, reasoning, typed issues);
agent-tool-parser's is ``try_parse_tool_calls`` (one auto-detecting parser, calls only).
Each side's CPU time (``time.process_time``, best of 3) is printed per reply with the
ratio, and how often the two read the same calls (name and arguments), so that a speed
figure is not read without knowing whether the answers agree. A reply on which
agent-tool-parser raises (0.1.3 panics in Rust on some non-ASCII text: "byte index is not
a char boundary") is counted under ``raised`` and left out of both timings.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "harness"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "formats"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.bench_parsers import best_of

from toolbench.formats.format_registry import get_format


def replies_by_format() -> dict[str, list[str]]:
    """The parse-table rows and conformance vectors, grouped by the format that reads them."""
    from stream_corpus import corpus

    out: dict[str, list[str]] = {}
    for reply in corpus():
        if reply.source.startswith("test_") or ".jsonl:" in reply.source:
            out.setdefault(reply.fmt, []).append(reply.text)
    return out


def their_calls(atp: Any, text: str) -> list[tuple[str, Any]] | None:
    """agent-tool-parser's calls, or None when it raises (a Rust panic is a BaseException)."""
    try:
        calls = atp.try_parse_tool_calls(text) or []
    except BaseException as exc:  # pyo3's PanicException is no Exception
        if isinstance(exc, KeyboardInterrupt):
            raise
        return None
    return [(c.name, c.args) for c in calls]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--loops", type=int, default=20)
    parser.add_argument("--tiny", action="store_true", help="one loop")
    args = parser.parse_args()
    if args.tiny:
        args.loops = 1
    try:
        import agent_tool_parser as atp
    except ImportError:
        print("agent-tool-parser is not installed: pip install -c constraints.txt -e '.[bench]'")
        return 0
    print(
        f"agent-tool-parser {atp.__version__} (Rust core: {atp.ACCELERATED}); "
        f"CPU time per reply, best of 3, {args.loops} loops"
    )
    head = (
        f"{'format':14}{'replies':>8}{'raised':>7}{'toolbench us':>14}{'atp us':>9}"
        f"{'ratio':>8}{'same calls':>12}"
    )
    print(head)
    total_ours = total_theirs = 0.0
    for name, every in sorted(replies_by_format().items()):
        fmt = get_format(name)
        read = {text: their_calls(atp, text) for text in every}
        texts = [text for text in every if read[text] is not None]
        batch = texts * args.loops

        def ours(fmt: Any = fmt, batch: list[str] = batch) -> None:
            for text in batch:
                fmt.parse(text)

        def theirs(batch: list[str] = batch) -> None:
            for text in batch:
                atp.try_parse_tool_calls(text)

        t_ours, t_theirs = best_of(ours), best_of(theirs)
        total_ours += t_ours
        total_theirs += t_theirs
        agree = sum(
            [(c.name, c.arguments) for c in fmt.parse(text).calls] == read[text] for text in texts
        )
        per = 1e6 / len(batch)
        print(
            f"{name:14}{len(every):>8}{len(every) - len(texts):>7}{t_ours * per:>14.1f}"
            f"{t_theirs * per:>9.1f}{t_ours / t_theirs:>7.1f}x{f'{agree}/{len(texts)}':>12}"
        )
    print(f"{'all':14}{'':>29}{'':>9}{total_ours / total_theirs:>7.1f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
