"""``toolbench parse`` through run_cli: ParseResult JSON out, exact error lines."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from toolbench.cli.app import run_cli

SCENARIOS = """\
- id: weather-oslo
  tools: [{name: get_weather, parameters: {type: object, properties: {city: {type: string}}}}]
  messages: [{role: user, content: "Weather?"}]
  expect: {calls: [{name: get_weather, arguments: {city: Oslo}}]}
"""


def test_parse_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    reply = tmp_path / "reply.txt"
    reply.write_text('Sure.\n<tool_call>{"name": "get_weather", "arguments": {"city": "Oslo"}}')
    assert run_cli(["parse", "--format", "xml", str(reply)]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["status"] == "strict"
    assert data["calls"] == [
        {"name": "get_weather", "arguments": {"city": "Oslo"}, "id": None, "repaired": False}
    ]
    assert data["content"] == "Sure."


def test_parse_stdin_with_scenario_tools(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "s.yaml").write_text(SCENARIOS)
    monkeypatch.setattr("sys.stdin", io.StringIO('{"tool": "get_time", "arguments": {}}'))
    args = ["parse", "--format", "prompt-json", "-", "--scenario", "weather-oslo"]
    assert run_cli([*args, "--scenarios-dir", str(tmp_path)]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [e["code"] for e in data["errors"]] == ["call.unknown_tool"]
    assert data["calls"][0]["name"] == "get_time"


def test_parse_native_message(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    msg = {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": "c9", "type": "function", "function": {"name": "f", "arguments": "{}"}}
        ],
    }
    path = tmp_path / "msg.json"
    path.write_text(json.dumps(msg))
    assert run_cli(["parse", "--format", "native", str(path)]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["calls"] == [{"name": "f", "arguments": {}, "id": "c9", "repaired": False}]


@pytest.mark.parametrize(
    ("args", "error"),
    [
        (
            ["parse", "--format", "xmll", "-"],
            "error: unknown format 'xmll'. Did you mean 'xml'? "
            "Available: claude-xml, deepseek, harmony, kimi-k2, llama3-json, mistral, native, "
            "nl-tools, prompt-json, prompt-xml, pythonic, qwen3-coder, react, reason-then-call, "
            "xml",
        ),
        (["parse", "--format", "xml", "{dir}/nope.txt"], "error: {dir}/nope.txt: no such file"),
        (
            [
                "parse",
                "--format",
                "xml",
                "-",
                "--scenario",
                "weather-olso",
                "--scenarios-dir",
                "{dir}",
            ],
            "error: unknown scenario 'weather-olso'. Did you mean 'weather-oslo'? "
            "Available: weather-oslo",
        ),
    ],
)
def test_parse_errors(
    tmp_path: Path, args: list[str], error: str, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "s.yaml").write_text(SCENARIOS)
    assert run_cli([a.format(dir=tmp_path) for a in args]) == 2
    captured = capsys.readouterr()
    assert captured.err.strip() == error.format(dir=tmp_path)
    assert captured.out == ""
