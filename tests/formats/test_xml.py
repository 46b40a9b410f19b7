"""xml: Hermes/Qwen ``<tool_call>`` tags."""
# ruff: noqa: E501  (one table row per line reads better than wrapped rows)

from __future__ import annotations

import json
from typing import Any

import pytest
from fmt_helpers import (
    NAMESPACED,
    TOOLS,
    ParseCase,
    calls_of,
    case_ids,
    check_name_read_back,
    check_parse,
    check_sanitize,
    named_tool,
    system_prompt,
)

from toolbench import codes
from toolbench.formats.base import FormatOptions, ModelReply, Requirements, ShotsOptions, ToolCall
from toolbench.formats.xml import Xml

F = Xml()


def tc(name: str, args: dict[str, Any]) -> str:
    return "<tool_call>\n" + json.dumps({"name": name, "arguments": args}) + "\n</tool_call>"


W = tc("get_weather", {"city": "Paris"})
PARIS = [("get_weather", {"city": "Paris"})]

CONTRACT = (ShotsOptions, Requirements(stop_sequences=True))
"""This format's contract row (options model, requirements): its ``Format.test_cases``
module is this one, and the shared contract test reads the row here."""


# (id, reply, calls, status, content, error codes, stop signals)
CASES: list[ParseCase] = [
    ("single", W, PARIS, "strict", "", [], []),
    ("prose_before", "Checking.\n" + W, PARIS, "strict", "Checking.", [], []),
    ("prose_after", W + " ok?", PARIS, "strict", "ok?", [], [codes.STOP_TEXT_AFTER_CALL]),
    (
        "two_calls",
        W + "\n" + tc("search", {"q": "x"}),
        [*PARIS, ("search", {"q": "x"})],
        "strict",
        "",
        [],
        [],
    ),
    (
        "tricky_strings",
        tc("search", {"q": 'a {b} "c" \\ \n ü 東京 }{'}),
        [("search", {"q": 'a {b} "c" \\ \n ü 東京 }{'})],
        "strict",
        "",
        [],
        [],
    ),
    ("code_fence", "```xml\n" + W + "\n```", PARIS, "strict", "", [], []),
    (
        "fence_inside_tag",
        '<tool_call>```json\n{"name": "search", "arguments": {}}\n```</tool_call>',
        [("search", {})],
        "repaired",
        "",
        [codes.CALL_LENIENT],
        [],
    ),
    (
        "think",
        "<think>plan " + tc("search", {"q": "no"}) + "</think>" + W,
        PARIS,
        "strict",
        "",
        [],
        [],
    ),
    (
        "open_think_from_template",
        "I should call it\n</think>\n" + W,
        PARIS,
        "strict",
        "",
        [],
        [],
    ),
    (
        "closing_tag_eaten_by_stop",
        '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}',
        PARIS,
        "strict",
        "",
        [],
        [],
    ),
    (
        "truncated",
        'Hi <tool_call>\n{"name": "get_weather", "arguments": {"city": "Par',
        [],
        "failed",
        "Hi",
        [codes.CALL_TRUNCATED],
        [],
    ),
    (
        "unknown_tool",
        tc("launch", {}),
        [("launch", {})],
        "strict",
        "",
        [codes.CALL_UNKNOWN_TOOL],
        [],
    ),
    (
        "repaired",
        '<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}</tool_call>',
        PARIS,
        "repaired",
        "",
        [codes.JSON_REPAIRED],
        [],
    ),
    (
        "hopeless",
        "<tool_call>get_weather city=Paris</tool_call>",
        [],
        "failed",
        "",
        [codes.JSON_DECODE_FAILED],
        [],
    ),
    ("no_call", "It is sunny.", [], "no_call", "It is sunny.", [], []),
    (
        "arguments_as_string",
        '<tool_call>{"name": "search", "arguments": "{\\"q\\": \\"x\\"}"}</tool_call>',
        [("search", {"q": "x"})],
        "repaired",
        "",
        [codes.CALL_LENIENT],
        [],
    ),
    ("empty_tag", "<tool_call></tool_call>", [], "failed", "", [codes.CALL_BAD_SHAPE], []),
    (
        "missing_name",
        '<tool_call>{"arguments": {}}</tool_call>',
        [],
        "failed",
        "",
        [codes.CALL_MISSING_NAME],
        [],
    ),
    (
        "args_not_object",
        '<tool_call>{"name": "search", "arguments": 5}</tool_call>',
        [],
        "failed",
        "",
        [codes.ARGS_NOT_OBJECT],
        [],
    ),
    (
        "hallucinated_result",
        W + "\n<tool_response>\nsunny\n</tool_response>",
        PARIS,
        "strict",
        "",
        [],
        [codes.STOP_TEXT_AFTER_CALL, codes.STOP_HALLUCINATED_RESULT],
    ),
    # issue 20 (real Hermes replies): a call without its opening tag is read, repaired
    ("call_without_opening_tag", W + '\n{"name": "search", "arguments": {"q": "x"}}\n</tool_call>', [*PARIS, ("search", {"q": "x"})], "repaired", "", [codes.CALL_LENIENT], []),
    ("stray_close_after_prose_object_is_text", W + '\nSee {"a": 1}</tool_call>', PARIS, "repaired", 'See {"a": 1}', [codes.CALL_LENIENT], [codes.STOP_TEXT_AFTER_CALL]),
    # issue 34: a </tool_call> that closes no block is read past, never strict nor visible
    ("stray_close_between_blocks", W + "\n</tool_call>\n" + tc("search", {"q": "x"}), [*PARIS, ("search", {"q": "x"})], "repaired", "", [codes.CALL_LENIENT], []),
    ("doubled_close", W + "</tool_call>", PARIS, "repaired", "", [codes.CALL_LENIENT], [codes.STOP_TEXT_AFTER_CALL]),
    ("stray_close_before_the_call", "</tool_call>\n" + W, PARIS, "repaired", "", [codes.CALL_LENIENT], []),
    ("stray_close_without_calls_is_prose", "Done.</tool_call>", [], "no_call", "Done.", [], []),
    # an object with a name and other keys: a call only if those keys are the tool's parameters
    ("arguments_beside_the_name", '<tool_call>\n{"name": "get_weather", "city": "Paris"}\n</tool_call>', PARIS, "repaired", "", [codes.CALL_LENIENT], []),
    ("keys_not_parameters_not_a_call", '<tool_call>\n{"name": "get_weather", "colour": "red"}\n</tool_call>', [], "failed", "", [codes.CALL_BAD_SHAPE], []),
    ("tool_result_shape_not_a_call", '<tool_call>\n{"name": "_error", "message": "boom"}\n</tool_call>', [], "failed", "", [codes.CALL_BAD_SHAPE], []),
    ("echoed_tool_schema_not_a_call", '<tool_call>\n{"name": "get_weather", "description": "Weather.", "parameters": {"type": "object", "properties": {}}}\n</tool_call>', [], "failed", "", [codes.CALL_BAD_SHAPE], []),
    ("hallucinated_result_list_not_calls", W + '\n<tool_call>\n[{"name": "get_weather", "content": "21C"}]', PARIS, "repaired", "", [codes.CALL_BAD_SHAPE], []),
    ("description_beside_arguments_still_a_call", '<tool_call>\n{"name": "search", "arguments": {"q": "x"}, "description": "look it up"}\n</tool_call>', [("search", {"q": "x"})], "repaired", "", [codes.CALL_LENIENT], []),
    ("name_only_is_a_call_without_arguments", '<tool_call>\n{"name": "search"}\n</tool_call>', [("search", {})], "repaired", "", [codes.CALL_LENIENT], []),
    ("id_and_type_beside_arguments", '<tool_call>\n{"id": "c1", "type": "function", "name": "search", "arguments": {"q": "x"}}\n</tool_call>', [("search", {"q": "x"})], "repaired", "", [codes.CALL_LENIENT], []),
    # at most 128 call blocks per reply are read (as in the dialects); the rest is not shown
    ("call_blocks_past_the_cap_not_read", (W + "\n") * 130 + "tail", PARIS * 128, "repaired", "", [codes.CALL_BAD_SHAPE], []),
    # a stray trailing <tool_call> followed by prose is named for what it is
    ("stray_open_tag_then_prose", W + "\n<tool_call>\nI will wait for the result.", PARIS, "repaired", "I will wait for the result.", [codes.CALL_STRAY_TAG], [codes.STOP_TEXT_AFTER_CALL]),
]  # fmt: skip


@pytest.mark.parametrize("case", CASES, ids=case_ids(CASES))
def test_parse(case: ParseCase) -> None:
    check_parse(F, case)


J = json.dumps({"name": "get_weather", "arguments": {"city": "Paris"}})
S = json.dumps({"name": "search", "arguments": {"q": "a</tool_call>b"}})
LENIENT = [codes.CALL_LENIENT]

# Defects found on real replies (issue 7): where a call ends, and what is strict.
# (id, reply, calls, status, content, error codes, stop signals)
BOUNDARY_CASES: list[ParseCase] = [
    (
        "unclosed_then_chat_token",
        f"<tool_call>\n{J}\n<|im_end|>",
        PARIS,
        "strict",
        "<|im_end|>",
        [],
        [codes.STOP_TEXT_AFTER_CALL],
    ),
    (
        "unclosed_then_prose",
        f"<tool_call>\n{J}\nDone! Anything else?",
        PARIS,
        "repaired",
        "Done! Anything else?",
        [codes.CALL_LENIENT],
        [codes.STOP_TEXT_AFTER_CALL],
    ),
    (
        "unclosed_then_invented_result",
        f"<tool_call>\n{J}\n<tool_response>\nsunny\n</tool_response>",
        PARIS,
        "repaired",
        "",
        [codes.CALL_LENIENT],
        [codes.STOP_TEXT_AFTER_CALL, codes.STOP_HALLUCINATED_RESULT],
    ),
    (
        "close_tag_inside_string",
        f"<tool_call>{S}</tool_call> after",
        [("search", {"q": "a</tool_call>b"})],
        "strict",
        "after",
        [],
        [codes.STOP_TEXT_AFTER_CALL],
    ),
    (
        "close_tag_inside_string_unclosed",
        f"<tool_call>{S}",
        [("search", {"q": "a</tool_call>b"})],
        "strict",
        "",
        [],
        [],
    ),
    (
        "response_tag_inside_string_is_no_result",
        '<tool_call>{"name": "search", "arguments": {"q": "<tool_response>"}}</tool_call>',
        [("search", {"q": "<tool_response>"})],
        "strict",
        "",
        [],
        [],
    ),
    (
        "two_objects_in_one_block",
        f"<tool_call>{J}\n{J}</tool_call>",
        [*PARIS, *PARIS],
        "repaired",
        "",
        LENIENT,
        [],
    ),
    (
        "doubled_open_tag",
        f"<tool_call><tool_call>{J}</tool_call>",
        PARIS,
        "repaired",
        "",
        LENIENT,
        [],
    ),
    ("prose_inside_block", f"<tool_call>Sure: {J}</tool_call>", PARIS, "repaired", "", LENIENT, []),
    (
        "prose_after_json_inside_block",
        f"<tool_call>{J} hope this works</tool_call>",
        PARIS,
        "repaired",
        "",
        LENIENT,
        [],
    ),
    (
        "special_token_inside_block",
        f"<tool_call>{J}<|im_end|></tool_call>",
        PARIS,
        "repaired",
        "",
        LENIENT,
        [],
    ),
    ("list_in_block", f"<tool_call>[{J}]</tool_call>", PARIS, "repaired", "", LENIENT, []),
    (
        "missing_close_before_next_call",
        f"<tool_call>{J}\n{W}",
        [*PARIS, *PARIS],
        "repaired",
        "",
        LENIENT,
        [],
    ),
    (
        "one_block_failed_to_decode",
        f"{W}\n<tool_call>get_weather(city=Paris)</tool_call>",
        PARIS,
        "repaired",
        "",
        [codes.JSON_DECODE_FAILED],
        [],
    ),
    (
        "one_block_truncated",
        f'{W}\n<tool_call>{{"name": "search", "argu',
        PARIS,
        "repaired",
        "",
        [codes.CALL_TRUNCATED],
        [],
    ),
    (
        "broken_call_then_close_tag_inside_string",
        '<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}</tool_call>\n'
        f"<tool_call>{S}</tool_call>",
        [*PARIS, ("search", {"q": "a</tool_call>b"})],
        "repaired",
        "",
        [codes.JSON_REPAIRED],
        [],
    ),
    (
        "arguments_null",
        '<tool_call>{"name": "search", "arguments": null}</tool_call>',
        [("search", {})],
        "repaired",
        "",
        [codes.CALL_LENIENT],
        [],
    ),
    (
        "arguments_null_string",
        '<tool_call>{"name": "search", "arguments": "null"}</tool_call>',
        [("search", {})],
        "repaired",
        "",
        [codes.CALL_LENIENT],
        [],
    ),
]


@pytest.mark.parametrize("case", BOUNDARY_CASES, ids=case_ids(BOUNDARY_CASES))
def test_call_boundaries_and_strictness(case: ParseCase) -> None:
    check_parse(F, case)


@pytest.mark.parametrize(
    "tail",
    [
        "<|im_end|>",
        "\nI called the tool.",
        "\n<tool_response>\n{}\n</tool_response>\nIt is sunny.",
        "\nThought: done <end_of_turn>",
        "",
        "\n```",
    ],
)
def test_unclosed_call_reads_as_if_closed(tail: str) -> None:
    """What follows an unclosed final call is seen exactly as with the tag added; only the
    end of the turn after it keeps the call strict (a strict Hermes reader reads nothing
    else: ``test_xml_strict_reader.py``), any other text makes it ``repaired``."""
    unclosed = F.parse(f"<tool_call>\n{J}\n{tail}", TOOLS)
    closed = F.parse(f"<tool_call>\n{J}\n</tool_call>{tail}", TOOLS)
    ended = tail in ("", "<|im_end|>")
    assert unclosed.status == ("strict" if ended else "repaired")
    assert [e.code for e in unclosed.errors] == ([] if ended else [codes.CALL_LENIENT])
    seen = ("content", "raw_content", "reasoning", "stop_signals", "attempted")
    assert [getattr(unclosed, k) for k in seen] == [getattr(closed, k) for k in seen]
    assert [(c.name, c.arguments) for c in unclosed.calls] == [
        (c.name, c.arguments) for c in closed.calls
    ]
    assert F.sanitize(f"<tool_call>\n{J}\n{tail}") == F.sanitize(
        f"<tool_call>\n{J}\n</tool_call>{tail}"
    )


@pytest.mark.parametrize("arguments", ["null", '"null"'])
def test_null_arguments_are_noted(arguments: str) -> None:
    got = F.parse(f'<tool_call>{{"name": "search", "arguments": {arguments}}}</tool_call>')
    assert [(c.arguments, c.notes) for c in got.calls] == [({}, [codes.ARGS_NULL])]
    assert [e.code for e in got.errors] == [codes.CALL_LENIENT]  # not Hermes' own shape


def test_reasoning_split_out() -> None:
    got = F.parse("<think>\nhmm\n</think>\nAnswer.")
    assert (got.reasoning, got.content, got.final_answer) == ("hmm", "Answer.", "Answer.")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("a " + W + " b", "a  b"),
        ("x </tool_call> <tools>y</tools>", "x  y"),
        ("<tool_response>r</tool_response>done", "done"),
        ("keep <tool_call>{cut", "keep"),
        ("<tool_<tool_call>call>", "<tool_"),
        ("<tool_call<tool_call>>", "<tool_call"),
    ],
)
def test_sanitize(text: str, expected: str) -> None:
    check_sanitize(F, text, expected)


def test_render() -> None:
    req, system = system_prompt(
        F, [{"role": "system", "content": "Sys."}, {"role": "user", "content": "q"}]
    )
    assert system.startswith("Sys.\n\n")
    listed = system.split("<tools>\n")[1].split("\n</tools>")[0].splitlines()
    assert [json.loads(line) for line in listed] == [t.openai() for t in TOOLS]
    assert "<tool_call>" in system and "<tool_response>" in system
    assert req.stop == ["<tool_response>"]
    assert req.tools is None


def test_shots() -> None:
    _, system = system_prompt(Xml(FormatOptions(shots=1)))
    assert "Example 1:" in system and "Example 2:" not in system
    example = system.split("Example 1:")[1]
    assert calls_of(F.parse(example.split("<tool_response>")[0])) == [
        ("get_local_time", {"city": "Tokyo"})
    ]


def test_continue_conversation() -> None:
    out = F.continue_conversation(
        [{"role": "user", "content": "q"}],
        ModelReply(text=W),
        [(ToolCall(name="get_weather"), "sunny"), (ToolCall(name="search"), "none")],
    )
    assert out[1:] == [
        {"role": "assistant", "content": W},
        {
            "role": "user",
            "content": "<tool_response>\nsunny\n</tool_response>\n"
            "<tool_response>\nnone\n</tool_response>",
        },
    ]


@pytest.mark.parametrize("name", NAMESPACED)
def test_namespaced_names_read_back_exactly(name: str) -> None:
    check_name_read_back(F, tc(name, {"title": "x"}), name)
    assert F.parse(tc(name, {"title": "x"}), [named_tool(name)]).status == "strict"
