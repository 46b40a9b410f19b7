"""pythonic: Llama 3.2/4 ``[f(a=1), g(b='x')]`` call lists, read with ast, never evaluated."""
# ruff: noqa: E501  (one table row per line reads better than wrapped rows)

from __future__ import annotations

import time
from pathlib import Path

import pytest
from fmt_helpers import TOOLS, USER_Q, ParseCase, case_ids, check_parse, check_sanitize

from toolbench import codes
from toolbench.formats.base import FormatOptions, ModelReply, Requirements, ShotsOptions, ToolCall
from toolbench.formats.pythonic import MAX_CHARS, Pythonic

F = Pythonic()
W = "[get_weather(city='Paris')]"
PARIS = [("get_weather", {"city": "Paris"})]
NOT_LITERAL = [codes.ARGS_NOT_LITERAL]
LENIENT = [codes.CALL_LENIENT]

CONTRACT = (ShotsOptions, Requirements())
"""This format's contract row (options model, requirements): its ``Format.test_cases``
module is this one, and the shared contract test reads the row here."""


# (id, reply, calls, status, content, error codes, stop signals)
CASES: list[ParseCase] = [
    ("single", W, PARIS, "strict", "", [], []),
    ("two_calls", "[get_weather(city=\"Paris\", days=2), search(q='x')]", [("get_weather", {"city": "Paris", "days": 2}), ("search", {"q": "x"})], "strict", "", [], []),
    ("no_args", "[search()]", [("search", {})], "strict", "", [], []),
    ("literals", "[get_weather(city='Paris', days=-3, unit=None, x=[1, (2, 3)], y={'a': True}, z=None)]", [("get_weather", {"city": "Paris", "days": -3, "unit": None, "x": [1, [2, 3]], "y": {"a": True}, "z": None})], "strict", "", [], []),
    ("python_start", "<|python_start|>" + W + "<|python_end|>", PARIS, "strict", "", [], []),
    ("olmo_lines", "<function_calls>get_weather(city='Paris')\nsearch(q='x')</function_calls>", [*PARIS, ("search", {"q": "x"})], "strict", "", [], []),
    ("prose_before", "Let me look. " + W, PARIS, "repaired", "Let me look.", LENIENT, []),
    ("prose_after", W + " done", PARIS, "strict", "done", [], [codes.STOP_TEXT_AFTER_CALL]),
    ("missing_close", "[get_weather(city='Paris')", PARIS, "repaired", "", [codes.JSON_REPAIRED], []),
    ("truncated", "[get_weather(city='Par", [], "failed", "", [codes.CALL_TRUNCATED], []),
    ("lambda", "[get_weather(city=lambda: 'x')]", [], "failed", "", NOT_LITERAL, []),
    ("attribute", "[get_weather(city=os.environ)]", [], "failed", "", NOT_LITERAL, []),
    ("call_in_args", "[get_weather(city=str(1))]", [], "failed", "", NOT_LITERAL, []),
    ("dunder_import", "[get_weather(city=__import__('os').system('id'))]", [], "failed", "", NOT_LITERAL, []),
    ("variable", "[get_weather(city=paris)]", [], "failed", "", NOT_LITERAL, []),
    ("positional", "[get_weather('Paris')]", [], "failed", "", [codes.CALL_BAD_SHAPE], []),
    ("syntax_error", "[get_weather(city='a' 'b' =)]", [], "failed", "", [codes.CALL_BAD_SHAPE], []),
    ("deep", "[get_weather(city=" + "[" * 5000 + "]" * 5000 + ")]", [], "failed", "", [codes.CALL_TOO_DEEP], []),
    ("not_chain", "[get_weather(city=" + "not " * 3000 + "1)]", [], "failed", "", NOT_LITERAL, []),
    ("minus_chain", "[get_weather(days=" + "- " * 3000 + "1)]", [], "failed", "", NOT_LITERAL, []),
    ("dotted_unknown_name_is_a_call", "[os.system(cmd='x')]", [("os.system", {"cmd": "x"})], "strict", "", [codes.CALL_UNKNOWN_TOOL], []),
    ("markdown_link", "See [the docs](https://x.y) for more.", [], "no_call", "See [the docs](https://x.y) for more.", [], []),
    ("unknown_tool", "[fly(to='Mars')]", [("fly", {"to": "Mars"})], "strict", "", [codes.CALL_UNKNOWN_TOOL], []),
    ("plain", "It is sunny.", [], "no_call", "It is sunny.", [], []),
    # issue 20: MCP-style hyphenated names and keyword-named arguments, still read with ast
    ("hyphenated_tool_name", '[weather-forecast(city="London")]', [("weather-forecast", {"city": "London"})], "strict", "", [codes.CALL_UNKNOWN_TOOL], []),
    ("keyword_named_arguments", '[book_flight(from="SFO", to="JFK", class="economy")]', [("book_flight", {"from": "SFO", "to": "JFK", "class": "economy"})], "strict", "", [codes.CALL_UNKNOWN_TOOL], []),
    ("hyphenated_argument_names", '[get-time(), web-search(query="a-b=c", max-results=5)]', [("get-time", {}), ("web-search", {"query": "a-b=c", "max-results": 5})], "strict", "", [codes.CALL_UNKNOWN_TOOL, codes.CALL_UNKNOWN_TOOL], []),
    ("keyword_argument_in_python_start", "<|python_start|>[search(q='x', lambda=1)]<|python_end|>", [("search", {"q": "x", "lambda": 1})], "strict", "", [], []),
    ("keyword_name_as_value_still_refused", "[search(q=lambda: 1)]", [], "failed", "", NOT_LITERAL, []),
    ("subtraction_still_refused", "[search(q=a-b)]", [], "failed", "", NOT_LITERAL, []),
    ("stand_in_text_in_a_string_untouched", "[search(q='_tb_0', from='x')]", [("search", {"q": "_tb_0", "from": "x"})], "strict", "", [], []),
]  # fmt: skip


@pytest.mark.parametrize("case", CASES, ids=case_ids(CASES))
def test_parse(case: ParseCase) -> None:
    check_parse(F, case)


def test_nothing_is_evaluated(tmp_path: Path) -> None:
    target = tmp_path / "pwned"
    reply = f"[get_weather(city=__import__('os').system('touch {target}'))]"
    assert F.parse(reply, TOOLS).codes() == [codes.ARGS_NOT_LITERAL]
    assert not target.exists()


@pytest.mark.parametrize(
    "reply",
    [
        "[f(a=" + "(" * 10_000 + "1" + ")" * 10_000 + ")]",
        "[f(a=" + "[" * 10_000 + "]" * 10_000 + ")]",
        "[f(a=" + "{'a': " * 10_000 + "1" + "}" * 10_000 + ")]",
        "[f(a=" + "-" * 10_000 + "1)]",
        "[f(a=1" + "+1" * 10_000 + ")]",
        "[f(a=" + "1 if 1 else " * 10_000 + "1)]",
        "[f(a=g" + "()" * 10_000 + ")]",
        "[f(a='" + "x" * (MAX_CHARS + 10) + "')]",
    ],
    ids=["parens", "lists", "dicts", "minus", "plus", "ifelse", "calls", "too_long"],
)
def test_hostile_expressions_are_refused_fast_and_never_raise(reply: str) -> None:
    """10,000-deep expressions are refused before ``ast.parse`` sees them (it would raise)."""
    start = time.perf_counter()
    got = F.parse(reply)
    assert time.perf_counter() - start < 1.0
    assert got.status == "failed"
    assert got.codes()[0] in (codes.CALL_TOO_DEEP, codes.ARGS_NOT_LITERAL)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Sure. " + W, "Sure."),
        ("<|python_start|>" + W + "<|python_end|> ok", "ok"),
        ("[get_weather(city=lambda: 1)] hm", "hm"),
        ("plain [link](x)", "plain [link](x)"),
    ],
)
def test_sanitize(text: str, expected: str) -> None:
    check_sanitize(F, text, expected)


def test_render_lists_tools_as_json_with_the_llama32_call_instructions() -> None:
    system = F.render(TOOLS, USER_Q).messages[0]["content"]
    assert "[func_name1(params_name1=params_value1, params_name2=params_value2...)" in system
    assert '"name": "get_weather"' in system


def test_call_text_round_trips() -> None:
    args = {"city": "Paris", "days": 2, "x": [1, None, True], "y": {"k": "v"}}
    got = F.parse(F.call_text("get_weather", args))
    assert [(c.name, c.arguments) for c in got.calls] == [("get_weather", args)]
    assert got.status == "strict"


def test_results_go_back_in_the_ipython_role_and_shots_show_them() -> None:
    call = ToolCall(name="get_weather", arguments={"city": "Paris"})
    out = F.continue_conversation(USER_Q, ModelReply(text=W), [(call, "21C")])
    assert out[-1] == {"role": "ipython", "content": "21C"}
    system = Pythonic(FormatOptions(shots=1)).render(TOOLS, USER_Q).messages[0]["content"]
    assert '[get_local_time(city="Tokyo")]' in system
