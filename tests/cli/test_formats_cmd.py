"""``toolbench formats list|show`` through run_cli: output, exit codes, exact error lines."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from toolbench.cli.app import run_cli
from toolbench.formats.format_registry import format_names

SCENARIOS = """\
scenarios:
  - id: weather-one
    tools:
      - name: get_weather
        description: Weather for a city.
        parameters:
          type: object
          properties:
            city: {type: string, description: City name}
            unit: {type: string, enum: [c, f], default: c}
          required: [city]
    messages:
      - {role: system, content: You are terse.}
      - {role: user, content: "Weather in Oslo?"}
    expect: {calls: [{name: get_weather, arguments: {city: Oslo}}]}
  - id: chat-only
    messages: [{role: user, content: hi}]
    expect: {no_call: true}
"""


@pytest.fixture
def sdir(tmp_path: Path) -> Path:
    (tmp_path / "s.yaml").write_text(SCENARIOS)
    return tmp_path


def test_list(capsys: pytest.CaptureFixture[str]) -> None:
    assert run_cli(["formats", "list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in lines] == format_names()  # the registry's, in order
    assert len(lines) >= 12 and "xml" in format_names()
    assert all(len(line.split(None, 1)) == 2 for line in lines)


def test_show_text(sdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = run_cli(
        ["formats", "show", "react", "--scenario", "weather-one", "--scenarios-dir", str(sdir)]
    )
    out = capsys.readouterr().out
    assert code == 0
    assert out.startswith("format: react\nscenario: weather-one\n")
    assert 'stop: ["\\nObservation:"]' in out
    assert "--- message 0: system ---\nYou are terse.\n\nYou have access to" in out
    assert "city (string, required): City name" in out
    assert 'unit (string, optional, one of: "c", "f", default: "c")' in out
    assert out.rstrip().endswith("--- message 1: user ---\nWeather in Oslo?")


def test_show_json_native(sdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = ["formats", "show", "native", "--scenario", "weather-one", "--scenarios-dir", str(sdir)]
    assert run_cli([*args, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["tool_choice"] == "auto"
    assert data["tools"][0]["function"]["name"] == "get_weather"
    assert data["messages"] == [
        {"role": "system", "content": "You are terse."},
        {"role": "user", "content": "Weather in Oslo?"},
    ]


@pytest.mark.parametrize("as_json", [True, False], ids=["json", "text"])
def test_show_the_responses_api_request(
    as_json: bool, sdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``native:api=responses`` is shown as it is sent: instructions, input items, flat
    strict tools and a flat forced tool_choice, not as chat messages."""
    spec = "native:api=responses,strict,tool_choice=get_weather"
    args = ["formats", "show", spec, "--scenario", "weather-one", "--scenarios-dir", str(sdir)]
    assert run_cli([*args, "--json"] if as_json else args) == 0
    out = capsys.readouterr().out
    head = f"format: {spec}\nscenario: weather-one\napi: responses"
    assert out.startswith(head) is not as_json
    data = json.loads(out[out.index("{") :])
    assert data["instructions"] == "You are terse."
    assert data["input"] == [{"role": "user", "content": "Weather in Oslo?"}]
    assert data["tool_choice"] == {"type": "function", "name": "get_weather"}
    (tool,) = data["tools"]
    assert (tool["type"], tool["name"], tool["strict"]) == ("function", "get_weather", True)
    assert "messages" not in data and "function" not in tool


def test_show_with_options(sdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = ["formats", "show", "prompt-json:shots=2", "--scenario", "chat-only"]
    assert run_cli([*args, "--scenarios-dir", str(sdir)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("format: prompt-json:shots=2\n")
    assert "Example 2:" in out and "(no tools are available)" in out


@pytest.mark.parametrize(
    ("args", "error"),
    [
        (
            ["formats", "show", "xmll", "--scenario", "weather-one"],
            "error: unknown format 'xmll'. Did you mean 'xml'? "
            "Available: claude-xml, deepseek, harmony, kimi-k2, llama3-json, mistral, native, "
            "nl-tools, prompt-json, prompt-xml, pythonic, qwen3-coder, react, reason-then-call, "
            "xml",
        ),
        (
            ["formats", "show", "xml", "--scenario", "weather-on"],
            "error: unknown scenario 'weather-on'. Did you mean 'weather-one'? "
            "Available: chat-only, weather-one",
        ),
        (
            ["formats", "show", "prompt-json:shots=9", "--scenario", "weather-one"],
            "error: format 'prompt-json:shots=9': option shots: "
            "Input should be less than or equal to 8",
        ),
    ],
)
def test_show_errors(
    sdir: Path, args: list[str], error: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run_cli([*args, "--scenarios-dir", str(sdir)]) == 2
    captured = capsys.readouterr()
    assert captured.err.strip() == error
    assert captured.out == ""


def test_detect_prints_choice_and_reason_per_model(capsys: pytest.CaptureFixture[str]) -> None:
    assert run_cli(["formats", "detect", "ollama/qwen3-coder:30b", "gpt-oss-20b", "mystery"]) == 0
    assert capsys.readouterr().out.splitlines() == [
        "ollama/qwen3-coder:30b  qwen3-coder  "
        "(name matches 'qwen3-coder': Qwen3-Coder/3.5 write XML calls)",
        "gpt-oss-20b             harmony  "
        "(name matches 'gpt-oss': gpt-oss speaks the harmony channel format)",
        "mystery                 prompt-json  "
        "(no known model family in the name; using the default prompt-json)",
    ]


def test_show_renders_a_fallback_as_its_primary(
    sdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["--scenario", "weather-one", "--scenarios-dir", str(sdir), "--json"]
    assert run_cli(["formats", "show", "native|xml", *args]) == 0
    composed = capsys.readouterr().out
    assert run_cli(["formats", "show", "native", *args]) == 0
    assert composed == capsys.readouterr().out
