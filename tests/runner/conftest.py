"""Fixtures for runner tests: a fake OpenAI-compatible server and a tiny scenario dir."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.fake_openai import FakeOpenAI

SCENARIO = """\
scenarios:
  - id: weather
    tags: [single]
    tools:
      - name: get_weather
        description: Get the weather for a city.
        parameters:
          type: object
          properties:
            city: {type: string}
          required: [city]
    messages:
      - {role: user, content: "Weather in Paris?"}
    expect:
      calls:
        - name: get_weather
          arguments: {city: Paris}
  - id: chat
    tags: [irrelevance]
    tools:
      - name: get_weather
        description: Get the weather for a city.
        parameters: {type: object, properties: {city: {type: string}}, required: [city]}
    messages:
      - {role: user, content: "Tell me a joke."}
    expect:
      no_call: true
"""

GOOD_CALL = '{"tool": "get_weather", "arguments": {"city": "Paris"}}'

# A two-turn conversation: one scripted weather call, then a final answer holding "23".
MT_SCENARIO = """\
id: mt
tools:
  - name: get_weather
    description: Get the weather for a city.
    parameters: {type: object, properties: {city: {type: string}}, required: [city]}
messages:
  - {role: user, content: "Temperature in Lisbon?"}
expect:
  max_turns: 3
  rounds:
    - calls:
        - name: get_weather
          arguments: {city: Lisbon}
          result: {temperature: 23}
  final_answer: {contains: ["23"]}
"""


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as server:
        yield server


@pytest.fixture
def scenario_file(tmp_path: Path) -> Path:
    path = tmp_path / "scen" / "mini.yaml"
    path.parent.mkdir()
    path.write_text(SCENARIO, encoding="utf-8")
    return path


@pytest.fixture(autouse=True)
def _fast_backoff(monkeypatch: pytest.MonkeyPatch) -> None:
    from toolbench.providers import litellm_api as provider

    monkeypatch.setattr(provider, "BACKOFF_S", 0.01)
