"""``native``'s knobs end to end: a fake server checks the request field by field (the
strict schema, ``tool_choice``, ``parallel_tool_calls``), the trials are scored honestly
(a forced call on an irrelevance scenario is a wrong call), and the run replays offline.
A knob the provider does not take is dropped and recorded (build_request)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.runner.conftest import run_fake
from toolbench.formats.base import RenderedRequest
from toolbench.formats.format_registry import get_format
from toolbench.providers.fake import FakeServer, Reply, turn_of
from toolbench.providers.model_api import Endpoint
from toolbench.providers.turn_request import build_request
from toolbench.store import load_results
from toolbench.tools import ToolDef

pytestmark = pytest.mark.usefixtures("openai_key")

KNOBS = "native:parallel=false,strict,tool_choice=required"
CALL = {"name": "get_weather", "arguments": {"city": "Paris"}}


def respond(request: dict[str, Any]) -> Reply:
    """A call on the first turn when forced, text otherwise (and after a result)."""
    if turn_of(request) == 0 and request.get("tool_choice") == "required":
        return {"tool_calls": [CALL]}
    return "No call needed."


def test_knobs_reach_the_server_and_scoring_stays_honest(
    tmp_path: Path, scenario_file: Path
) -> None:
    formats = f"native,{KNOBS}"
    with FakeServer(respond) as fake:
        assert run_fake(fake, tmp_path, scenario_file, formats=formats) == 0
        bodies = [r.body for r in fake.received]
    plain = [b for b in bodies if b.get("tool_choice") == "auto"]
    forced = [b for b in bodies if b.get("tool_choice") == "required"]
    assert len(plain) == 2 and len(forced) == 2  # one turn per scenario, per format
    for b in plain:
        assert "parallel_tool_calls" not in b and "strict" not in b["tools"][0]["function"]
    for b in forced:
        fn = b["tools"][0]["function"]
        assert b["parallel_tool_calls"] is False
        assert fn["strict"] is True
        assert fn["parameters"] == {
            "type": "object", "properties": {"city": {"type": "string"}},
            "required": ["city"], "additionalProperties": False,
        }  # fmt: skip
    results = {(r.format, r.scenario_id): r for r in load_results(tmp_path / "run")}
    weather, chat = results[(KNOBS, "weather")], results[(KNOBS, "chat")]
    assert weather.scores is not None and weather.scores.get("call_accuracy") is True
    # Forced to call where no call was wanted: a wrong call, not a pass.
    assert chat.scores is not None and chat.scores.get("no_call_correct") is False
    assert results[("native", "chat")].scores.get("no_call_correct") is True  # type: ignore[union-attr]
    assert weather.params is not None
    assert weather.params.asked["tool_choice"] == "required"
    assert weather.params.asked["parallel_tool_calls"] is False
    assert weather.params.dropped == {}
    assert "native:strict: tool 'get_weather': parameters: additionalProperties set to false" in (
        weather.notes
    )
    assert Path(weather.cassette).parts[-2] == "native_parallel_false_strict_tool_choice_required"
    # Offline: the same results from the cassettes.
    rc = run_fake(fake, tmp_path, scenario_file, "--record", "none", formats=formats,
                  out="replay", api_base="http://127.0.0.1:9/v1")  # fmt: skip
    assert rc == 0
    again = {(r.format, r.scenario_id): r for r in load_results(tmp_path / "replay")}
    for key, r in results.items():
        assert again[key].scores == r.scores


TOOL = ToolDef(name="get_weather", parameters={"type": "object", "properties": {}})


@pytest.mark.parametrize(
    ("model", "dropped"),
    [
        ("openai/gpt-4o", set()),
        ("ollama/qwen3", {"tool_choice", "parallel_tool_calls"}),
        ("bedrock/anthropic.claude-3-sonnet-20240229-v1:0", {"tool_choice"}),
    ],
)
def test_a_knob_the_provider_does_not_take_is_dropped_and_recorded(
    model: str, dropped: set[str]
) -> None:
    rendered = get_format("native:parallel=false,tool_choice=get_weather").render(
        [TOOL], [{"role": "user", "content": "hi"}]
    )
    req, record = build_request(Endpoint(model), rendered, 1)
    assert set(record.dropped) - {"seed"} == dropped  # Bedrock takes no seed either
    for knob in ("tool_choice", "parallel_tool_calls"):
        assert knob in record.asked
        if knob in dropped:
            assert "does not take" in record.dropped[knob]
    forced = {"type": "function", "function": {"name": "get_weather"}}
    assert req["tool_choice"] == ("auto" if "tool_choice" in dropped else forced)
    assert ("parallel_tool_calls" in req) == ("parallel_tool_calls" not in dropped)


def test_no_knob_no_change() -> None:
    plain = RenderedRequest(messages=[{"role": "user", "content": "hi"}], tools=[TOOL.openai()],
                            tool_choice="auto")  # fmt: skip
    req, record = build_request(Endpoint("openai/gpt-4o"), plain, 1)
    assert req["tool_choice"] == "auto" and "parallel_tool_calls" not in req
    assert json.dumps(record.asked, sort_keys=True) == '{"seed": 1, "temperature": 0}'


def constrained(request: dict[str, Any]) -> Reply:
    """A constrained server: JSON of one call or of an answer."""
    if "response_format" not in request:
        return "Unconstrained."
    if "Paris" in json.dumps(request["messages"][-1]):
        return '{"tool": "get_weather", "arguments": {"city": "Paris"}}'
    return '{"answer": "A joke."}'


def test_constrained_prompt_json_sends_its_schema_and_replays(
    tmp_path: Path, scenario_file: Path
) -> None:
    with FakeServer(constrained) as fake:
        assert run_fake(fake, tmp_path, scenario_file, formats="prompt-json:constrained") == 0
        bodies = [r.body for r in fake.received]
    assert len(bodies) == 2
    for b in bodies:
        schema = b["response_format"]["json_schema"]["schema"]
        assert [s["properties"].get("tool") for s in schema["anyOf"]] == [
            {"type": "string", "enum": ["get_weather"]}, None,
        ]  # fmt: skip
    got = {r.scenario_id: r for r in load_results(tmp_path / "run")}
    assert got["weather"].scores is not None and got["weather"].scores.get("call_accuracy") is True
    assert got["chat"].scores is not None and got["chat"].scores.get("no_call_correct") is True
    assert got["chat"].turns[0].parsed.content == "A joke."
    rc = run_fake(fake, tmp_path, scenario_file, "--record", "none", out="replay",
                  formats="prompt-json:constrained", api_base="http://127.0.0.1:9/v1")  # fmt: skip
    assert rc == 0
    again = {r.scenario_id: r for r in load_results(tmp_path / "replay")}
    assert {k: r.scores for k, r in again.items()} == {k: r.scores for k, r in got.items()}
