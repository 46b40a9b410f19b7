"""Parser speed on hostile 1 MB inputs: every format must stay linear.

Run: ``python benchmarks/bench_parsers.py`` (prints ms and MB/s per case and format, for
``parse`` and for ``sanitize``; best of 3, CPU time of this process so that other work
on a shared machine inflates the figures less than wall time would). Timing lives here
rather than in the tests so the test suite never depends on machine speed. The target is
well under 100 ms for each adversarial case; the ``bulk`` cases are many real calls,
objects or call blocks, reported for reference (each format reads at most 128 calls).
``--tiny``: inputs of 2,000 characters, best of 1 (checks it still runs).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "harness"))

from toolbench.formats.format_registry import format_names, get_format

MB = 1_000_000


def _fill(unit: str, size: int = MB) -> str:
    return unit * (size // len(unit))


CALL = json.dumps({"tool": "f", "name": "f", "arguments": {"a": 1}})


def cases(size: int = MB) -> dict[str, str]:
    """The hostile inputs, each about ``size`` characters (``--tiny``: a few thousand)."""

    def fill(unit: str) -> str:
        return _fill(unit, size)

    return {
        'nesting {"a":': fill('{"a":'),
        "open braces {": fill("{"),
        "open brackets {[": fill("{["),
        "<tool_call> repeated": fill("<tool_call>"),
        "<tool_call>{ repeated": fill("<tool_call>{"),
        'quotes+backslashes "\\': "{" + fill('"\\'),
        "quotes only": fill('"'),
        "unclosed <think>": "<think>" + fill("let me think {"),
        "</think> repeated": fill("</think>"),
        "ReAct labels": fill("Action: f\nAction Input: {\n"),
        "Tool Result ( repeated": fill("Tool Result ("),
        "closing braces }": fill("}"),
        "Final Answer: repeated": fill("Final Answer: "),
        "empty objects {}": fill("{}"),
        # the model-family dialects' own syntax (issue 11)
        "pythonic 10,000-deep [": "[f(a=" + "[" * (size // 100) + "]" * (size // 100) + ")]",
        "pythonic lambda/not chain": "[f(a=" + "not " * (size // 10) + "1)]",
        "pythonic long string": "[f(a='" + fill("x") + "')]",
        "pythonic open [f(": fill("[f("),
        "<|python_start|>[f(a=": fill("<|python_start|>[f(a="),
        "[TOOL_CALLS] repeated": fill("[TOOL_CALLS]"),
        "[TOOL_CALLS]a[ARGS]{ repeated": fill("[TOOL_CALLS]a[ARGS]{"),
        "[TOOL_CALLS] [ repeated": fill("[TOOL_CALLS] ["),
        "<function= repeated": fill("<function="),
        "<parameter= unclosed": "<function=a>" + fill("<parameter=b>x"),
        "DSML invoke unclosed": "<｜DSML｜function_calls>" + fill('<｜DSML｜invoke name="a">'),
        "<invoke><parameter> unclosed": "<function_calls>"
        + fill('<invoke name="a"><parameter name="b">'),
        "deepseek call+sep+{": fill("<｜tool▁call▁begin｜>a<｜tool▁sep｜>{"),
        "kimi call+args+{": fill("<|tool_call_begin|>functions.a:0<|tool_call_argument_begin|>{"),
        "kimi K3 call": fill('<|open|>call tool="a"<|sep|>'),
        "harmony <|message|><|call|>": fill("<|message|><|call|>"),
        "harmony to=functions.a {": fill("<|channel|>commentary to=functions.a<|message|>{"),
        '{"name":..,"parameters":{': fill('{"name": "a", "parameters": {'),
        # issue 20's lenient readings: each must stay linear on hostile text
        "DSML bare invoke unclosed": fill('<｜DSML｜invoke name="a"><｜DSML｜parameter name="b">'),
        "<function=x>{ repeated": fill("<function=x>{"),
        "stray <tool_call> + prose": fill("<tool_call>\nI will wait. "),
        "pythonic [a-b(from=": fill("[a-b(from="),
        # issue 34's readings: several lists, nested lists, calls as strings, bare calls
        "pythonic lists [a.b(c=1)]": fill("[a.b(c=1)] "),
        "pythonic nested [[[[": fill("[[[["),
        "pythonic strings ['a(": fill("['a("),
        "pythonic apostrophes": "[f(a='" + fill("it's ") + "')]",
        "pythonic bare lines a(b=1)": fill("a(b=1)\n"),
        "pythonic quotes broken": fill("[f(a='x' y')] "),
        # The densest bracket tokens for the JSON scanner: each a token every 2-7 characters.
        "mismatched pairs {]": fill("{]"),
        '{"":{} repeated': fill('{"":{}'),
        '{"a":[] repeated': fill('{"a":[]'),
        "{[] repeated": fill("{[]"),
        '{"a":1} repeated': fill('{"a":1}'),
        "junk then one call": fill("{]") + CALL,
        "text with one call": fill("lorem ipsum dolor sit amet ") + CALL,
        "bulk: many small objects": fill('{"a": 1} '),
        "bulk: many real calls": fill(CALL + "\n"),
        # Many short blocks, each located and decoded (the last one through JSON repair).
        "bulk: unclosed <tool_call>s": fill('<tool_call>{"name": "f", "arguments": {}}\n'),
        "bulk: text in <tool_call>s": fill('<tool_call>{"name": "f"} x</tool_call>'),
        "bulk: </tool_call> in strings": fill('<tool_call>{"a</tool_call>"'),
        # 25k real calls, each without its opening tag (xml reads at most 128 of them)
        "bulk: orphan {..}</tool_call>": fill('{"name": "a", "arguments": {}}</tool_call>'),
    }


CASES = cases()


def best_of(fn: Callable[[], object], repeat: int = 3) -> float:
    best = float("inf")
    for _ in range(repeat):
        t0 = time.process_time()
        fn()
        best = min(best, time.process_time() - t0)
    return best


def main() -> None:
    """Every format, or only those named on the command line."""
    ap = argparse.ArgumentParser()
    ap.add_argument("formats", nargs="*", help="only these formats (default: every one)")
    ap.add_argument("--tiny", action="store_true", help="2,000-character inputs, best of 1")
    args = ap.parse_args()
    wanted = args.formats
    table, repeat = (cases(2_000), 1) if args.tiny else (CASES, 3)
    formats = [get_format(n) for n in format_names() if not wanted or n in wanted]
    head = f"{'case':28}" + "".join(f"{f.name:>22}" for f in formats)
    for op in ("parse", "sanitize"):
        print(f"\n{op}: ms of CPU (MB/s), best of {repeat}")
        print(head)
        for case, text in table.items():
            mb = len(text.encode("utf-8")) / MB
            cells = []
            for fmt in formats:
                fn = fmt.parse if op == "parse" else fmt.sanitize
                secs = best_of(lambda fn=fn, text=text: fn(text), repeat)  # type: ignore[misc]
                cells.append(f"{secs * 1000:9.1f} ({mb / max(secs, 1e-9):6.1f})")
            print(f"{case:28}" + "".join(f"{c:>22}" for c in cells))


if __name__ == "__main__":
    main()
