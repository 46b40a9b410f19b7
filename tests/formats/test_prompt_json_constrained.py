"""``prompt-json:constrained``: the reply held to the schema of one call or an answer."""

from __future__ import annotations

import pytest

from toolbench.formats.format_registry import get_format
from toolbench.formats.prompt_json import reply_schema
from toolbench.tools import ToolDef

CITY = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
TOOL = ToolDef(name="get_weather", parameters=CITY)
HI = [{"role": "user", "content": "Weather in Paris?"}]


@pytest.mark.parametrize(
    ("spec", "canonical"),
    [
        ("prompt-json:constrained", "prompt-json:constrained"),
        ("prompt-json:shots=2,constrained=true", "prompt-json:constrained,shots=2"),
        ("prompt-json:shots=2", "prompt-json:shots=2"),
        ("prompt-json:constrained=false", "prompt-json"),
    ],
)
def test_spec(spec: str, canonical: str) -> None:
    assert get_format(spec).spec == canonical
    assert get_format(canonical).spec == canonical


def test_render_asks_for_the_schema_of_one_call_or_an_answer() -> None:
    r = get_format("prompt-json:constrained").render([TOOL], HI)
    fmt = r.params["response_format"]
    assert fmt == reply_schema([TOOL])
    assert fmt["type"] == "json_schema" and fmt["json_schema"]["strict"] is False
    call, answer = fmt["json_schema"]["schema"]["anyOf"]
    assert call["properties"] == {
        "tool": {"type": "string", "enum": ["get_weather"]}, "arguments": TOOL.parameters,
    }  # fmt: skip
    assert call["required"] == ["tool", "arguments"] and call["additionalProperties"] is False
    assert answer["properties"] == {"answer": {"type": "string"}}
    assert '{"answer": "<your answer>"}' in r.messages[0]["content"]
    plain = get_format("prompt-json").render([TOOL], HI)
    assert plain.params == {} and "answer in plain text" in plain.messages[0]["content"]


@pytest.mark.parametrize(
    ("text", "calls", "content"),
    [
        ('{"tool": "get_weather", "arguments": {"city": "Paris"}}', 1, ""),
        ('{"answer": "It is 23 degrees."}', 0, "It is 23 degrees."),
        ('{"answer": "x", "more": 1}', 0, '{"answer": "x", "more": 1}'),
        ('{"answer": 3}', 0, '{"answer": 3}'),
        ("plain text", 0, "plain text"),
    ],
)
def test_parse(text: str, calls: int, content: str) -> None:
    got = get_format("prompt-json:constrained").parse(text, [TOOL])
    assert (len(got.calls), got.content) == (calls, content)
    assert got.status == ("strict" if calls else "no_call")


def test_unconstrained_keeps_an_answer_object_as_text() -> None:
    got = get_format("prompt-json").parse('{"answer": "hi"}', [TOOL])
    assert got.content == '{"answer": "hi"}'
