"""Parser speed on hostile 1 MB inputs: every format must stay linear.

Run: ``python benchmarks/bench_parsers.py`` (prints ms and MB/s per case and format, for
``parse`` and for ``sanitize``; best of 3, CPU time of this process so that other work
on a shared machine inflates the figures less than wall time would). Timing lives here
rather than in the tests so the test suite never depends on machine speed. The target is
well under 100 ms for each adversarial case; the ``bulk`` cases are many real calls,
objects or call blocks, reported for reference (each format reads at most 128 calls).
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "harness"))

from toolbench.formats.registry import format_names, get_format

MB = 1_000_000


def _fill(unit: str, size: int = MB) -> str:
    return unit * (size // len(unit))


CALL = json.dumps({"tool": "f", "name": "f", "arguments": {"a": 1}})

CASES: dict[str, str] = {
    'nesting {"a":': _fill('{"a":'),
    "open braces {": _fill("{"),
    "open brackets {[": _fill("{["),
    "<tool_call> repeated": _fill("<tool_call>"),
    "<tool_call>{ repeated": _fill("<tool_call>{"),
    'quotes+backslashes "\\': "{" + _fill('"\\'),
    "quotes only": _fill('"'),
    "unclosed <think>": "<think>" + _fill("let me think {"),
    "</think> repeated": _fill("</think>"),
    "ReAct labels": _fill("Action: f\nAction Input: {\n"),
    "Tool Result ( repeated": _fill("Tool Result ("),
    "closing braces }": _fill("}"),
    "Final Answer: repeated": _fill("Final Answer: "),
    "empty objects {}": _fill("{}"),
    # the model-family dialects' own syntax (issue 11)
    "pythonic 10,000-deep [": "[f(a=" + "[" * 10_000 + "]" * 10_000 + ")]",
    "pythonic lambda/not chain": "[f(a=" + "not " * 100_000 + "1)]",
    "pythonic long string": "[f(a='" + _fill("x") + "')]",
    "pythonic open [f(": _fill("[f("),
    "<|python_start|>[f(a=": _fill("<|python_start|>[f(a="),
    "[TOOL_CALLS] repeated": _fill("[TOOL_CALLS]"),
    "[TOOL_CALLS]a[ARGS]{ repeated": _fill("[TOOL_CALLS]a[ARGS]{"),
    "[TOOL_CALLS] [ repeated": _fill("[TOOL_CALLS] ["),
    "<function= repeated": _fill("<function="),
    "<parameter= unclosed": "<function=a>" + _fill("<parameter=b>x"),
    "DSML invoke unclosed": "<｜DSML｜function_calls>" + _fill('<｜DSML｜invoke name="a">'),
    "<invoke><parameter> unclosed": "<function_calls>"
    + _fill('<invoke name="a"><parameter name="b">'),
    "deepseek call+sep+{": _fill("<｜tool▁call▁begin｜>a<｜tool▁sep｜>{"),
    "kimi call+args+{": _fill("<|tool_call_begin|>functions.a:0<|tool_call_argument_begin|>{"),
    "kimi K3 call": _fill('<|open|>call tool="a"<|sep|>'),
    "harmony <|message|><|call|>": _fill("<|message|><|call|>"),
    "harmony to=functions.a {": _fill("<|channel|>commentary to=functions.a<|message|>{"),
    '{"name":..,"parameters":{': _fill('{"name": "a", "parameters": {'),
    # issue 20's lenient readings: each must stay linear on hostile text
    "DSML bare invoke unclosed": _fill('<｜DSML｜invoke name="a"><｜DSML｜parameter name="b">'),
    "<function=x>{ repeated": _fill("<function=x>{"),
    "stray <tool_call> + prose": _fill("<tool_call>\nI will wait. "),
    "pythonic [a-b(from=": _fill("[a-b(from="),
    # issue 34's readings: several lists, nested lists, calls as strings, bare calls
    "pythonic lists [a.b(c=1)]": _fill("[a.b(c=1)] "),
    "pythonic nested [[[[": _fill("[[[["),
    "pythonic strings ['a(": _fill("['a("),
    "pythonic apostrophes": "[f(a='" + _fill("it's ") + "')]",
    "pythonic bare lines a(b=1)": _fill("a(b=1)\n"),
    "pythonic quotes broken": _fill("[f(a='x' y')] "),
    # The densest bracket tokens for the JSON scanner: each a token every 2-7 characters.
    "mismatched pairs {]": _fill("{]"),
    '{"":{} repeated': _fill('{"":{}'),
    '{"a":[] repeated': _fill('{"a":[]'),
    "{[] repeated": _fill("{[]"),
    '{"a":1} repeated': _fill('{"a":1}'),
    "junk then one call": _fill("{]") + CALL,
    "text with one call": _fill("lorem ipsum dolor sit amet ") + CALL,
    "bulk: many small objects": _fill('{"a": 1} '),
    "bulk: many real calls": _fill(CALL + "\n"),
    # Many short blocks, each located and decoded (the last one through JSON repair).
    "bulk: unclosed <tool_call>s": _fill('<tool_call>{"name": "f", "arguments": {}}\n'),
    "bulk: text in <tool_call>s": _fill('<tool_call>{"name": "f"} x</tool_call>'),
    "bulk: </tool_call> in strings": _fill('<tool_call>{"a</tool_call>"'),
    # 25k real calls, each without its opening tag (xml reads at most 128 of them)
    "bulk: orphan {..}</tool_call>": _fill('{"name": "a", "arguments": {}}</tool_call>'),
}


def best_of(fn: Callable[[], object], repeat: int = 3) -> float:
    best = float("inf")
    for _ in range(repeat):
        t0 = time.process_time()
        fn()
        best = min(best, time.process_time() - t0)
    return best


def main() -> None:
    """Every format, or only those named on the command line."""
    wanted = sys.argv[1:]
    formats = [get_format(n) for n in format_names() if not wanted or n in wanted]
    head = f"{'case':28}" + "".join(f"{f.name:>22}" for f in formats)
    for op in ("parse", "sanitize"):
        print(f"\n{op}: ms of CPU (MB/s), best of 3")
        print(head)
        for case, text in CASES.items():
            mb = len(text.encode("utf-8")) / MB
            cells = []
            for fmt in formats:
                fn = fmt.parse if op == "parse" else fmt.sanitize
                secs = best_of(lambda fn=fn, text=text: fn(text))  # type: ignore[misc]
                cells.append(f"{secs * 1000:9.1f} ({mb / secs:6.1f})")
            print(f"{case:28}" + "".join(f"{c:>22}" for c in cells))


if __name__ == "__main__":
    main()
