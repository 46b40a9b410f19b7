"""Fixtures for runner tests: a fake OpenAI-compatible server and a tiny scenario dir."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.fake_openai import FakeOpenAI
from toolbench.cli.app import run_cli
from toolbench.providers.fake import LocalServer
from toolbench.results import TrialResult
from toolbench.store import load_results

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
    from toolbench.providers import attempts as provider

    monkeypatch.setattr(provider, "BACKOFF_S", 0.01)


@pytest.fixture
def openai_key(monkeypatch: pytest.MonkeyPatch) -> None:
    """A key for ``openai/fake`` (LiteLLM asks for one; the fakes ignore it). Files whose
    every test runs ``openai/...`` use it with ``pytestmark``."""
    monkeypatch.setenv("OPENAI_API_KEY", "test-key-not-secret-0000")


def run_fake(
    fake: LocalServer, tmp: Path, scen: Path, *extra: str, out: str = "run",
    models: str | None = "openai/fake", formats: str | None = "prompt-json",
    api_base: str | None = None,
) -> int:  # fmt: skip
    """``toolbench run`` of ``scen`` against ``fake`` (or ``api_base``) into ``tmp/out``,
    cassettes in ``tmp/cas``, quiet and without a report; ``extra`` options last.
    ``models`` / ``formats`` None: given in ``extra`` (or taken from the run)."""
    argv = ["run"]
    if models is not None:
        argv += ["--models", models]
    if formats is not None:
        argv += ["--formats", formats]
    return run_cli([
        *argv, "--scenarios", str(scen), "--api-base", api_base or fake.base_url,
        "--out", str(tmp / out), "--cassettes", str(tmp / "cas"),
        "--quiet", "--no-report", *extra,
    ])  # fmt: skip


def trials_by_id(run: Path) -> dict[str, TrialResult]:
    """A run's trials by scenario id (one sample, one model and format)."""
    return {r.scenario_id: r for r in load_results(run)}
