"""pythonic: Llama 3.2/4 ``[f(a=1), g(b='x')]`` call lists, read with ast, never evaluated."""
# ruff: noqa: E501  (one table row per line reads better than wrapped rows)

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path

import pytest
from fmt_helpers import (
    TOOLS,
    USER_Q,
    ParseCase,
    case_ids,
    check_parse,
    check_sanitize,
)
from hypothesis import given, settings
from hypothesis import strategies as st
from stream_corpus import read_all

from toolbench import codes
from toolbench.formats.base import (
    Format,
    FormatOptions,
    ModelReply,
    Requirements,
    ToolCall,
)
from toolbench.formats.pythonic import MAX_CHARS, Pythonic, PythonicOptions
from toolbench.scoring.core import abstained
from toolbench.tools import ToolDef

F = Pythonic()
W = "[get_weather(city='Paris')]"
PARIS = [("get_weather", {"city": "Paris"})]
NOT_LITERAL = [codes.ARGS_NOT_LITERAL]
LENIENT = [codes.CALL_LENIENT]

CONTRACT = (PythonicOptions, Requirements())
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
    ("prose_after", W + " done", PARIS, "repaired", "done", LENIENT, [codes.STOP_TEXT_AFTER_CALL]),
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
    ("hyphenated_tool_name", '[weather-forecast(city="London")]', [("weather-forecast", {"city": "London"})], "repaired", "", [*LENIENT, codes.CALL_UNKNOWN_TOOL], []),
    ("keyword_named_arguments", '[book_flight(from="SFO", to="JFK", class="economy")]', [("book_flight", {"from": "SFO", "to": "JFK", "class": "economy"})], "repaired", "", [*LENIENT, codes.CALL_UNKNOWN_TOOL], []),
    ("hyphenated_argument_names", '[get-time(), web-search(query="a-b=c", max-results=5)]', [("get-time", {}), ("web-search", {"query": "a-b=c", "max-results": 5})], "repaired", "", [*LENIENT, codes.CALL_UNKNOWN_TOOL, codes.CALL_UNKNOWN_TOOL], []),
    ("keyword_argument_in_python_start", "<|python_start|>[search(q='x', lambda=1)]<|python_end|>", [("search", {"q": "x", "lambda": 1})], "repaired", "", LENIENT, []),
    ("keyword_name_as_value_still_refused", "[search(q=lambda: 1)]", [], "failed", "", NOT_LITERAL, []),
    ("subtraction_still_refused", "[search(q=a-b)]", [], "failed", "", NOT_LITERAL, []),
    ("stand_in_text_in_a_string_untouched", "[search(q='_tb_0', from='x')]", [("search", {"q": "_tb_0", "from": "x"})], "repaired", "", LENIENT, []),
]  # fmt: skip


@pytest.mark.parametrize("case", CASES, ids=case_ids(CASES))
def test_parse(case: ParseCase) -> None:
    check_parse(F, case)


def _tool(name: str, **types: str) -> ToolDef:
    props = {k: {"type": t} for k, t in types.items()}
    return ToolDef(
        name=name, description=f"{name}.", parameters={"type": "object", "properties": props}
    )


NAMESPACED = [
    _tool("math.gcd", num1="integer", num2="integer"),
    _tool(
        "triangle_properties.get",
        side1="number",
        side2="number",
        side3="number",
        get_area="boolean",
    ),
    _tool("fs/read_file", path="string"),
    _tool("calendar:add_event", title="string", date="string"),
    _tool("github.create_issue", repo="string", title="string", labels="array"),
    _tool("weather-forecast", city="string", days="integer"),
    _tool("get_weather", city="string", unit="string"),
    _tool("movies.find", title="string", year="integer"),
    _tool("spotify.play", artist="string", duration="integer", shuffle="boolean", device="string"),
    _tool("search", q="string", ids="array"),
]
"""Tools named the ways tool lists name them: dotted (BFCL, OpenAPI operation ids, MCP
servers), slashed, with a colon, hyphenated, plain."""


def check_with(
    fmt: Format, case: ParseCase, tools: Sequence[ToolDef], text_field: str = "content"
) -> None:
    """:func:`check_parse` with a tool list of the row's own, and the abstention rule: a
    reply that tried to call is never an abstention."""
    got = check_parse(fmt, case, text_field, tools)
    assert abstained(got) == (case[3] == "no_call")


GCD = [("math.gcd", {"num1": 36, "num2": 48})]
L1 = [codes.CALL_LENIENT]
L2 = [codes.CALL_LENIENT, codes.CALL_LENIENT]
UNKNOWN = [codes.CALL_UNKNOWN_TOOL]

# Tool names read back exactly as the tool list offered them (issue 34, section 1):
# (id, reply, calls, status, content, error codes, stop signals), read with NAMESPACED
NAME_CASES: list[ParseCase] = [
    ("dotted_first", "[math.gcd(num1=36, num2=48)]", GCD, "strict", "", [], []),
    ("dotted_later", '[get_weather(city="Boston"), math.gcd(num1=36, num2=48)]', [("get_weather", {"city": "Boston"}), *GCD], "strict", "", [], []),
    ("dotted_with_underscores", "[triangle_properties.get(side1=5, side2=4, side3=3, get_area=True)]", [("triangle_properties.get", {"side1": 5, "side2": 4, "side3": 3, "get_area": True})], "strict", "", [], []),
    ("slashed_and_colon", '[fs/read_file(path="/etc/hosts"), calendar:add_event(title="Standup", date="2025-03-04")]', [("fs/read_file", {"path": "/etc/hosts"}), ("calendar:add_event", {"title": "Standup", "date": "2025-03-04"})], "repaired", "", L1, []),
    ("mcp_namespaced", "[github.create_issue(repo='octo/hello', title='Crash on start', labels=['bug'])]", [("github.create_issue", {"repo": "octo/hello", "title": "Crash on start", "labels": ["bug"]})], "strict", "", [], []),
    ("parallel_dotted", '[spotify.play(artist="Taylor Swift", duration=20), spotify.play(artist="Maroon 5", duration=15)]', [("spotify.play", {"artist": "Taylor Swift", "duration": 20}), ("spotify.play", {"artist": "Maroon 5", "duration": 15})], "strict", "", [], []),
    ("spaces_inside", "[ math.gcd( num1 = 36 , num2 = 48 ) ]", GCD, "strict", "", [], []),
    ("llama4_wrapper", "<|python_start|>[math.gcd(num1=36, num2=48)]<|python_end|>", GCD, "strict", "", [], []),
    ("llama4_wrapper_after_text", "Computing it. <|python_start|>[fs/read_file(path='notes.md')]<|python_end|>", [("fs/read_file", {"path": "notes.md"})], "repaired", "Computing it.", L1, []),
    ("olmo_lines", "<function_calls>\nmath.gcd(num1=36, num2=48)\nweather-forecast(city='Lima', days=3)\n</function_calls>", [*GCD, ("weather-forecast", {"city": "Lima", "days": 3})], "repaired", "", L1, []),
    ("unoffered_dotted_is_unknown_not_text", "[scipy.stats.ttest_ind(a=[1, 2], b=[3, 4])]", [("scipy.stats.ttest_ind", {"a": [1, 2], "b": [3, 4]})], "strict", "", UNKNOWN, []),
    ("unoffered_slashed", "[db/drop_table(name='users')]", [("db/drop_table", {"name": "users"})], "repaired", "", [*L1, *UNKNOWN], []),
    ("attribute_in_arguments_refused", "[math.gcd(num1=math.pi, num2=2)]", [], "failed", "", NOT_LITERAL, []),
    ("call_in_arguments_refused", "[fs/read_file(path=os.path.join('a', 'b'))]", [], "failed", "", NOT_LITERAL, []),
    ("dotted_truncated", "[math.gcd(num1=36, num2=", [], "failed", "", [codes.CALL_TRUNCATED], []),
    ("keyword_named_parameter_of_dotted_tool", "[movies.find(title='Heat', year=1995, from='imdb')]", [("movies.find", {"title": "Heat", "year": 1995, "from": "imdb"})], "repaired", "", L1, []),
]  # fmt: skip


@pytest.mark.parametrize("case", NAME_CASES, ids=case_ids(NAME_CASES))
def test_tool_names_read_back_as_offered(case: ParseCase) -> None:
    check_with(F, case, NAMESPACED)


OSLO = [("get_weather", {"city": "Oslo"})]
FENCE = "```python\n{}\n```"

# What real models write around a call (issue 34, section 2), one documented rule each
# (docs/dialects.md, "Pythonic quirks"): read leniently (repaired, call.lenient) where the
# intent is unambiguous, refused with a typed code, or left as text. Read with NAMESPACED.
QUIRK_CASES: list[ParseCase] = [
    # a call without its list
    ("bare_whole_reply", "math.gcd(num1=36, num2=48)", GCD, "repaired", "", L1, []),
    ("bare_whole_reply_two_calls", 'get_weather(city="Paris"), get_weather(city="Rome")', [("get_weather", {"city": "Paris"}), ("get_weather", {"city": "Rome"})], "repaired", "", L1, []),
    ("bare_whole_reply_one_per_line", "movies.find(title='Heat', year=1995)\nmovies.find(title='Ronin', year=1998)\n", [("movies.find", {"title": "Heat", "year": 1995}), ("movies.find", {"title": "Ronin", "year": 1998})], "repaired", "", L1, []),
    ("bare_whole_reply_multiline_args", "github.create_issue(\n    repo='octo/hello',\n    title='Crash',\n)", [("github.create_issue", {"repo": "octo/hello", "title": "Crash"})], "repaired", "", L1, []),
    ("bare_in_fence", FENCE.format("get_weather(city='Oslo')"), OSLO, "repaired", "", L1, []),
    ("bare_unoffered_whole_reply", "numpy.mean(a=[1, 2, 3])", [("numpy.mean", {"a": [1, 2, 3]})], "repaired", "", [codes.CALL_LENIENT, codes.CALL_UNKNOWN_TOOL], []),
    ("bare_own_line_after_prose", 'Let me check the forecast.\nweather-forecast(city="Lima", days=2)', [("weather-forecast", {"city": "Lima", "days": 2})], "repaired", "Let me check the forecast.", L2, []),
    ("bare_inline_code", "Running `spotify.play(artist='Adele', duration=30)` for you.", [("spotify.play", {"artist": "Adele", "duration": 30})], "repaired", "Running  for you.", L1, [codes.STOP_TEXT_AFTER_CALL]),
    ("bare_semicolons", "search(q='rust borrow checker'); search(q='rust lifetimes');", [("search", {"q": "rust borrow checker"}), ("search", {"q": "rust lifetimes"})], "repaired", "", L1, []),
    ("bare_positional_whole_reply_is_an_attempt", "get_weather('Paris')", [], "failed", "", [codes.CALL_BAD_SHAPE], []),
    ("bare_truncated", "fs/read_file(path='/var/lo", [], "failed", "", [codes.CALL_TRUNCATED], []),
    ("bare_unclosed_in_a_closed_fence_is_malformed", FENCE.format("stats.mean(values=[1, 2]"), [], "failed", "", [codes.CALL_BAD_SHAPE], []),
    ("bare_truncated_after_prose", "Checking.\nget_weather(city='Ber", [], "failed", "Checking.", [codes.CALL_TRUNCATED], []),
    ("bare_mention_in_a_sentence_is_text", "get_weather(city=...) needs a city; which one?", [], "no_call", "get_weather(city=...) needs a city; which one?", [], []),
    ("bare_mid_sentence_is_text", "You could call search(q='x') yourself.", [], "no_call", "You could call search(q='x') yourself.", [], []),
    ("code_is_text_print", "print(x)", [], "no_call", "print(x)", [], []),
    ("code_is_text_subscript", "Index it with `d[f(x)]` or `row[get_weather(city)]`.", [], "no_call", "Index it with `d[f(x)]` or `row[get_weather(city)]`.", [], []),
    ("code_is_text_assignment", FENCE.format("forecast = get_weather(city='Paris')\nprint(forecast)"), [], "no_call", FENCE.format("forecast = get_weather(city='Paris')\nprint(forecast)"), [], []),
    ("code_is_text_unoffered_line", "Then run:\nplt.show(block=True)\nand look.", [], "no_call", "Then run:\nplt.show(block=True)\nand look.", [], []),
    # the list inside a code fence or after a sentence
    ("list_in_fence", FENCE.format("[math.gcd(num1=36, num2=48)]"), GCD, "repaired", "", L1, []),
    ("list_in_bare_fence", "```\n[movies.find(title='Heat', year=1995)]\n```", [("movies.find", {"title": "Heat", "year": 1995})], "repaired", "", L1, []),
    ("list_after_sentence", 'To find it I will call: [movies.find(title="Heat", year=1995)]', [("movies.find", {"title": "Heat", "year": 1995})], "repaired", "To find it I will call:", L1, []),
    ("list_in_inline_code", "Calling `[fs/read_file(path='todo.txt')]`", [("fs/read_file", {"path": "todo.txt"})], "repaired", "Calling", L2, []),
    # Markdown-escaped underscores
    ("markdown_escaped_names", '[get\\_weather(city="New\\_York", unit="celsius")]', [("get_weather", {"city": "New_York", "unit": "celsius"})], "repaired", "", L1, []),
    ("markdown_escaped_dotted", "[triangle\\_properties.get(side1=3, side2=4, side3=5, get\\_area=True)]", [("triangle_properties.get", {"side1": 3, "side2": 4, "side3": 5, "get_area": True})], "repaired", "", L1, []),
    ("escape_only_in_a_string_kept_as_python_reads_it", "[search(q='C:\\_data\\_old')]", [("search", {"q": "C:\\_data\\_old"})], "strict", "", [], []),
    # a list of strings
    ("list_of_strings", "['get_weather(city=\"Paris\")', 'search(q=\"louvre hours\")']", [("get_weather", {"city": "Paris"}), ("search", {"q": "louvre hours"})], "repaired", "", L1, []),
    ("list_of_strings_double_quoted", '["math.gcd(num1=36, num2=48)"]', GCD, "repaired", "", L1, []),
    ("list_of_strings_that_are_not_calls_is_text", "Pick one of ['get_weather(city)', 'search(q)'].", [], "no_call", "Pick one of ['get_weather(city)', 'search(q)'].", [], []),
    # a nested list
    ("nested_list", "[[math.gcd(num1=36, num2=48)]]", GCD, "repaired", "", L1, []),
    ("nested_lists_parallel", "[[get_weather(city='Oslo')], [search(q='fjords')]]", [*OSLO, ("search", {"q": "fjords"})], "repaired", "", L1, []),
    # JSON literals inside a Python call
    ("json_literals", '[spotify.play(artist="Adele", shuffle=true, device=null)]', [("spotify.play", {"artist": "Adele", "shuffle": True, "device": None})], "repaired", "", L1, []),
    ("json_literal_nested", "[github.create_issue(repo='a/b', title='x', labels=[false])]", [("github.create_issue", {"repo": "a/b", "title": "x", "labels": [False]})], "repaired", "", L1, []),
    ("python_literals_strict", "[spotify.play(artist='Adele', shuffle=True, device=None)]", [("spotify.play", {"artist": "Adele", "shuffle": True, "device": None})], "strict", "", [], []),
    ("json_name_as_a_string_is_strict", "[search(q='true')]", [("search", {"q": "true"})], "strict", "", [], []),
    # an unescaped apostrophe inside a single-quoted string
    ("apostrophe", "[movies.find(title='Schindler's List', year=1993)]", [("movies.find", {"title": "Schindler's List", "year": 1993})], "repaired", "", L1, []),
    ("apostrophes_two", "[search(q='Ender's Game vs Hitchhiker's Guide')]", [("search", {"q": "Ender's Game vs Hitchhiker's Guide"})], "repaired", "", L1, []),
    ("escaped_apostrophe_strict", "[movies.find(title='Schindler\\'s List', year=1993)]", [("movies.find", {"title": "Schindler's List", "year": 1993})], "strict", "", [], []),
    ("apostrophe_before_a_space_is_a_quote_error", "[movies.find(title='The Dogs' Day Afternoon')]", [], "failed", "", [codes.CALL_BAD_SHAPE], []),
    ("quote_error_then_text", "[search(q='it is 'quoted' here')]\nDone.", [], "failed", "Done.", [codes.CALL_BAD_SHAPE], [codes.STOP_TEXT_AFTER_CALL]),
    # several call lists in one reply
    ("several_lists", '[get_weather(city="Paris")]\n[search(q="Eiffel tower height")]', [("get_weather", {"city": "Paris"}), ("search", {"q": "Eiffel tower height"})], "repaired", "", L1, []),
    ("several_lists_nested_data", "[search(q='a', ids=[[1,2]])] [search(q='b', ids=[[1,2]])]", [("search", {"q": "a", "ids": [[1, 2]]}), ("search", {"q": "b", "ids": [[1, 2]]})], "repaired", "", L1, []),
    ("several_lists_with_prose", "First: [math.gcd(num1=36, num2=48)]\nThen: [fs/read_file(path='out.txt')]", [*GCD, ("fs/read_file", {"path": "out.txt"})], "repaired", "First: \nThen:", [*L2, *L1], []),
    ("several_lists_one_refused", "[search(q='x')] [search(q=open('f').read())]", [("search", {"q": "x"})], "repaired", "", NOT_LITERAL, []),
    ("several_lists_last_truncated", "[search(q='x')]\n[search(q='y", [("search", {"q": "x"})], "repaired", "", [codes.CALL_TRUNCATED], []),
    # a hypothetical call written inside prose that declines: read (docs/dialects.md)
    ("hypothetical_in_prose", "I can't look that up with these tools, but the call would be `[get_weather(city='Atlantis')]`.", [("get_weather", {"city": "Atlantis"})], "repaired", "I can't look that up with these tools, but the call would be .", L2, [codes.STOP_TEXT_AFTER_CALL]),
    ("hypothetical_with_placeholders", "None of the functions fit. A call would look like [math.gcd(num1=..., num2=...)]", [], "failed", "None of the functions fit. A call would look like", NOT_LITERAL, []),
    ("declining_without_a_call", "None of the functions can compute a gcd of text; please give two integers.", [], "no_call", "None of the functions can compute a gcd of text; please give two integers.", [], []),
]  # fmt: skip


@pytest.mark.parametrize("case", QUIRK_CASES, ids=case_ids(QUIRK_CASES))
def test_what_models_write_around_a_call(case: ParseCase) -> None:
    check_with(F, case, NAMESPACED)


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


# A reply that calls is never scored as an abstention, whatever the tool list offered
# (BFCL's irrelevance scenarios offer tools that do not fit the question).
UNRELATED = [_tool("get_weather", city="string")]
CALLING = [
    "[math.factorial(number=5)]",
    "[triangle_properties.get(side1=3, side2=4, side3=5)]",
    "Sure! [math.factorial(number=5)]",
    FENCE.format("[math.factorial(number=5)]"),
    "math.factorial(number=5)",
    FENCE.format("math.factorial(number=5)"),
    "[[math.factorial(number=5)]]",
    "['math.factorial(number=5)']",
    "<|python_start|>[stats.mean(values=[1, 2])]<|python_end|>",
    "[math.factorial(number=five)]",
    "[calc/eval(expr='2+2'), get_weather(city='Paris')]",
    "[movies.find(title='Schindler's List')]",
    "[math.hypot(x=3, y=true)]\n[math.hypot(x=5, y=12)]",
]


@pytest.mark.parametrize("reply", CALLING)
def test_a_reply_that_calls_is_never_an_abstention(reply: str) -> None:
    got = F.parse(reply, UNRELATED)
    assert not abstained(got)
    assert got.attempted
    unknown = [c.name for c in got.calls if c.name != "get_weather"]
    assert codes.CALL_UNKNOWN_TOOL in got.codes() or not unknown


ROWS = [*NAME_CASES, *QUIRK_CASES]


@pytest.mark.parametrize("case", ROWS, ids=case_ids(ROWS))
def test_the_stream_reader_ends_where_the_whole_parse_does(case: ParseCase) -> None:
    """Fed a character at a time with the row's own tools (the stream corpus feeds the
    rows with the shared ones), the reader's result is the whole reply's parse."""
    reply = case[1]
    reader = F.reader(NAMESPACED)
    events = read_all(reader, list(reply))
    assert reader.result == F.parse(reply, NAMESPACED)
    assert events[-1].kind == "final"


@pytest.mark.parametrize(
    ("reply", "shown", "opener", "names"),
    [
        ("Checking. [math.gcd(num1=36, num2=48)] Done.", "Checking.  Done.", "[math.gcd(", ["math.gcd"]),
        ("[fs/read_file(path='a')]", "", "[fs/read_file(", ["fs/read_file"]),
        ("[calendar:add_event(title='x')]", "", "[calendar:add_event(", ["calendar:add_event"]),
        ("[[search(q='x')]]", "", "[[search(", ["search"]),
        ("['search(q=\"x\")']", "", "['search(", ["search"]),
        ("Use d[f(x)] here.", "Use d[f(x)] here.", None, []),
    ],
)  # fmt: skip
def test_a_careful_application_sees_no_call_text_while_it_streams(
    reply: str, shown: str, opener: str | None, names: list[str]
) -> None:
    events = read_all(F.reader(NAMESPACED), list(reply))
    assert "".join(e.text for e in events if e.kind == "text") == shown
    assert [e.text for e in events if e.kind == "call_started"] == ([opener] if opener else [])
    complete = [e for e in events if e.kind == "call_complete"]
    assert [c.name for e in complete for c in e.calls] == names


PIECES = [
    "[", "]", "(", ")", "'", '"', "`", "```", "```python\n", "\n", " ", ",", ";", "=", "\\_",
    "math.gcd", "fs/read_file", "get_weather", "search", "print", "x.y", "city", "num1",
    "true", "null", "None", "1", "'Paris'", "'it's'", "[[", "]]", "<|python_start|>",
    "<|python_end|>", "<function_calls>", "</function_calls>", "Sure: ", "d[", "lambda",
]  # fmt: skip


@settings(max_examples=500, deadline=None)
@given(text=st.lists(st.sampled_from(PIECES) | st.text(max_size=3), max_size=40).map("".join))
def test_any_text_with_tools_parses_without_raising(text: str) -> None:
    """With a tool list (calls without their list are looked for only then): no parser
    error, and the status agrees with the calls and the attempt."""
    for tools in (NAMESPACED, None):
        got = F.parse(text, tools)
        assert not any("parser error" in e.message for e in got.errors), (text, got.errors)
        assert (got.status == "no_call") == (not got.attempted)
        assert bool(got.calls) == (got.status in ("strict", "repaired"))
        assert (got.status == "strict") <= (not any(c.repaired for c in got.calls))
