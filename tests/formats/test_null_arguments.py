"""Arguments sent as JSON ``null`` or the string ``"null"`` (tools without parameters)
are read as ``{}`` by every format, and noted on the call as ``args.null``.

Strict, but for ``xml``: Hermes' own syntax has an ``arguments`` object, and ``xml`` is
``strict`` only where a strict Hermes reader reads the same (``test_xml_strict_reader``),
so there it is ``repaired`` with ``call.lenient``."""

from __future__ import annotations

import pytest

from toolbench import codes
from toolbench.formats.format_registry import get_format

CASES: list[tuple[str, str]] = [
    ("mistral", "[TOOL_CALLS]search[ARGS]null"),
    ("mistral", '[TOOL_CALLS]search[ARGS]"null"'),
    ("mistral", '[TOOL_CALLS][{"name": "search", "arguments": null}]'),
    ("mistral", '[TOOL_CALLS][{"name": "search", "arguments": "null"}]'),
    ("llama3-json", '{"name": "search", "parameters": null}'),
    ("llama3-json", '<|python_tag|>{"name": "search", "parameters": "null"}'),
    ("deepseek", "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>search<｜tool▁sep｜>null"
     "<｜tool▁call▁end｜><｜tool▁calls▁end｜>"),
    ("kimi-k2", "<|tool_calls_section_begin|><|tool_call_begin|>functions.search:0"
     "<|tool_call_argument_begin|>null<|tool_call_end|><|tool_calls_section_end|>"),
    ("harmony", "<|channel|>commentary to=functions.search <|constrain|>json"
     "<|message|>null<|call|>"),
    ("prompt-json", '{"tool": "search", "arguments": null}'),
    ("xml", '<tool_call>{"name": "search", "arguments": "null"}</tool_call>'),
]  # fmt: skip


@pytest.mark.parametrize(("fmt", "reply"), CASES)
def test_null_arguments_are_an_empty_object_with_a_note(fmt: str, reply: str) -> None:
    result = get_format(fmt).parse(reply)
    assert result.status == ("repaired" if fmt == "xml" else "strict"), result.errors
    assert [(c.name, c.arguments, c.notes) for c in result.calls] == [
        ("search", {}, [codes.ARGS_NULL])
    ]
