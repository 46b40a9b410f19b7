"""Provider-safe tool names: what ``native`` sends, what it maps back, what it refuses."""

from __future__ import annotations

import json

import pytest

from toolbench import codes
from toolbench.formats.base import ModelReply
from toolbench.formats.native import Native
from toolbench.formats.tool_names import MAX_LENGTH, name_map, name_problem, provider_safe
from toolbench.tools import ToolDef

# (scenario name, what native sends)
NAMES = [
    ("get_weather", "get_weather"),
    ("weather-forecast", "weather-forecast"),
    ("math.gcd", "math_gcd"),
    ("triangle_properties.get", "triangle_properties_get"),
    ("fs/read_file", "fs_read_file"),
    ("github.create_issue", "github_create_issue"),
    ("api.users.create", "api_users_create"),
    ("ns:tool", "ns_tool"),
    ("météo", "m_t_o"),
    ("a b", "a_b"),
]


@pytest.mark.parametrize(("name", "sent"), NAMES)
def test_provider_safe_names(name: str, sent: str) -> None:
    assert provider_safe(name) == sent
    names = name_map([ToolDef(name=name)])
    assert names.to_provider(name) == sent
    assert names.from_provider(sent) == name
    assert names.notes() == ([] if sent == name else [f"native: tool '{name}' sent as '{sent}'"])


@pytest.mark.parametrize(("name", "sent"), [n for n in NAMES if n[0] != n[1]])
def test_native_sends_safe_names_and_reads_calls_back(name: str, sent: str) -> None:
    tools = [ToolDef(name=name), ToolDef(name="other")]
    fmt = Native()
    req = fmt.render(tools, [{"role": "user", "content": "hi"}])
    assert [t["function"]["name"] for t in req.tools or []] == [sent, "other"]
    assert fmt.notes(tools) == [f"native: tool '{name}' sent as '{sent}'"]
    call = {"id": "c1", "type": "function", "function": {"name": sent, "arguments": "{}"}}
    reply = ModelReply(tool_calls=[call], raw_message={"role": "assistant", "tool_calls": [call]})
    got = fmt.parse_reply(reply, tools)
    assert [(c.name, c.arguments) for c in got.calls] == [(name, {})]
    assert got.errors == []
    # What the model said goes back to the provider as it said it.
    again = fmt.continue_conversation([], reply, [(got.calls[0], "4")])
    assert again[0]["tool_calls"][0]["function"]["name"] == sent


def test_a_name_the_tools_do_not_offer_is_an_unknown_tool_not_an_abstention() -> None:
    tools = [ToolDef(name="math.gcd")]
    call = {"id": "c1", "type": "function", "function": {"name": "math_lcm", "arguments": "{}"}}
    got = Native().parse_reply(ModelReply(tool_calls=[call]), tools)
    assert [c.name for c in got.calls] == ["math_lcm"]
    assert [e.code for e in got.errors] == [codes.CALL_UNKNOWN_TOOL]


def test_forced_tool_choice_is_sent_under_the_safe_name() -> None:
    from toolbench.formats.native import NativeOptions

    fmt = Native(NativeOptions(tool_choice="math.gcd"))
    req = fmt.render([ToolDef(name="math.gcd")], [{"role": "user", "content": "hi"}])
    assert json.dumps(req.params["tool_choice"]) == json.dumps(
        {"type": "function", "function": {"name": "math_gcd"}}
    )


@pytest.mark.parametrize(
    ("names", "problem"),
    [
        (["math.gcd", "math_gcd"], "tools 'math.gcd' and 'math_gcd' both become 'math_gcd'"),
        (["fs/read", "fs.read"], "tools 'fs/read' and 'fs.read' both become 'fs_read'"),
        (["x" * (MAX_LENGTH + 1)], f"name of {MAX_LENGTH + 1} characters"),
        (["x" * MAX_LENGTH, "math.gcd"], None),
        (["a.b", "a-b"], None),
    ],
)
def test_names_native_cannot_send(names: list[str], problem: str | None) -> None:
    tools = [ToolDef(name=n) for n in names]
    got = name_problem(tools)
    assert (got is None) if problem is None else (got is not None and problem in got)
    assert Native().refuses(tools) == got
