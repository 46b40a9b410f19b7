"""Capabilities decide what is sent: a parameter LiteLLM says a model does not take is
left out of the request, and the trial records what was asked, sent and dropped."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.fake_openai import FakeOpenAI
from toolbench.cli.app import run_cli
from toolbench.providers.capabilities import filter_params
from toolbench.store import load_results

ASKED = {"stop": ["a", "b", "c", "d", "e"], "temperature": 0, "seed": 7}


@pytest.mark.parametrize(
    ("model", "dropped"),
    [
        ("anthropic/claude-3-5-haiku-latest", {"seed"}),
        ("bedrock/anthropic.claude-3-5-sonnet-20240620-v1:0", {"seed"}),
        ("openai/o1", {"temperature"}),
        ("openai/o3-mini", {"temperature"}),
        ("openai/gpt-5", {"temperature", "stop"}),
        ("openai/gpt-5-mini", {"temperature", "stop"}),
        ("openai/gpt-4o-mini", set()),
        ("openai/smollm2-135m", set()),  # the embedded models' string: nothing dropped
        ("gemini/gemini-2.0-flash", set()),
        ("ollama_chat/llama3", set()),
        ("mistral/mistral-small-latest", set()),
    ],
)
def test_parameters_a_model_does_not_take_are_not_sent(model: str, dropped: set[str]) -> None:
    sent, record = filter_params(model, dict(ASKED))
    assert set(ASKED) - set(sent) == dropped
    assert record.asked == ASKED
    assert set(record.sent) == set(sent)
    # A stop list beyond LiteLLM's limit of 4 is cut (and the cut recorded) when sent.
    if "stop" in sent:
        assert sent["stop"] == ["a", "b", "c", "d"]
        assert record.dropped.pop("stop") == "1 of 5 entries cut (limit 4)"
    assert set(record.dropped) == dropped


def test_the_reason_names_the_model_and_the_parameter() -> None:
    _, record = filter_params("anthropic/claude-3-5-haiku-latest", {"seed": 1})
    assert record.dropped == {
        "seed": "anthropic model claude-3-5-haiku-latest does not take seed "
        "(LiteLLM's supported parameters)"
    }
    _, record = filter_params("openai/o1", {"temperature": 0})
    assert record.dropped == {
        "temperature": "openai model o1 does not take temperature=0 (LiteLLM drops it)"
    }


def test_a_reasoning_model_is_measured_without_temperature(
    fake: FakeOpenAI, tmp_path: Path, scenario_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before: LiteLLM refused ``temperature=0`` for o3-mini, every trial ``unsupported``."""
    monkeypatch.setenv("OPENAI_API_KEY", "test-key-not-secret-0000")
    fake.enqueue('{"tool": "get_weather", "arguments": {"city": "Paris"}}', "A joke.")
    rc = run_cli([
        "run", "--models", "openai/o3-mini", "--formats", "prompt-json",
        "--scenarios", str(scenario_file), "--api-base", fake.base_url,
        "--out", str(tmp_path / "run"), "--cassettes", str(tmp_path / "cas"),
        "--quiet", "--no-report", "--concurrency", "1",
    ])  # fmt: skip
    assert rc == 0
    results = load_results(tmp_path / "run")
    assert {r.status for r in results} == {"ok"}
    body = fake.received[0].body
    assert "temperature" not in body and body["seed"] == 1234
    for r in results:
        assert r.params is not None
        assert r.params.asked["temperature"] == 0
        assert "temperature" not in r.params.sent and "seed" in r.params.sent
        assert set(r.params.dropped) == {"temperature"}
        assert "temperature" not in r.turns[0].request


ECHOED = [
    {"role": "user", "content": "q"},
    {"role": "assistant", "content": "", "tool_calls": [],
     "provider_specific_fields": {"thought_signatures": ["sig=="]}},
    {"role": "tool", "tool_call_id": "c", "content": "r"},
]  # fmt: skip


@pytest.mark.parametrize(
    ("model", "kept"),
    [
        ("mistral/mistral-small-latest", False),  # 422 on unknown assistant fields
        ("openai/x", False),
        ("gemini/gemini-2.0-flash", True),  # LiteLLM sends the thought signatures back
        ("vertex_ai/gemini-2.0-flash", True),
        ("anthropic/claude-3-5-haiku-latest", True),
    ],
)
def test_echoed_extras_go_only_to_providers_whose_litellm_reads_them(
    model: str, kept: bool
) -> None:
    from toolbench.formats.base import RenderedRequest
    from toolbench.providers.model_api import Endpoint
    from toolbench.providers.turn_request import build_request

    req, _ = build_request(Endpoint(model), RenderedRequest(messages=ECHOED), seed=1)
    assert ("provider_specific_fields" in req["messages"][1]) is kept
    assert req["messages"][1]["role"] == "assistant" and req["messages"][2] == ECHOED[2]


def test_replay_ignores_only_an_empty_echoed_extras_field() -> None:
    """Cassettes recorded before hold ``{"refusal": null}``; a thought signature counts."""
    from toolbench.cassettes import same_body

    def body(extras: dict[str, object] | None) -> dict[str, object]:
        msg: dict[str, object] = {"role": "assistant", "content": ""}
        if extras is not None:
            msg["provider_specific_fields"] = extras
        return {"messages": [msg]}

    assert same_body(body({"refusal": None}), body(None))  # matches
    assert not same_body(body({"thought_signatures": ["sig=="]}), body(None))
