"""What the model said goes back to it unaltered (issue 21): a call-only turn's
``content: null`` stays null (LiteLLM's Anthropic conversion turned the "" toolbench
used to send into a text block the model never wrote), streamed ``reasoning_content`` is
echoed with the calls, and the one server that needs "" (llama.cpp's llama-server) gets
it by its endpoint's adaptation, recorded on the trial."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.runner.conftest import MT_SCENARIO, run_fake
from tests.support.fake_openai import FakeOpenAI, SseScript
from toolbench.formats.base import RenderedRequest
from toolbench.providers.model_api import Endpoint, ProviderSettings
from toolbench.providers.turn_request import NULL_CONTENT_ADAPTATION, adaptations, build_request
from toolbench.store import load_results

pytestmark = pytest.mark.usefixtures("openai_key")
LISBON = {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Lisbon"}}]}


def _mt(tmp_path: Path) -> Path:
    scen = tmp_path / "mt.yaml"
    scen.write_text(MT_SCENARIO, encoding="utf-8")
    return scen


def _echoed(fake: FakeOpenAI) -> dict[str, object]:
    (msg,) = [m for m in fake.received[1].body["messages"] if m["role"] == "assistant"]
    return dict(msg)


@pytest.mark.parametrize("fmt", ["native", "native:stream"])
def test_a_call_only_turn_goes_back_with_content_null(
    fake: FakeOpenAI, tmp_path: Path, fmt: str
) -> None:
    fake.enqueue(LISBON, "It is 23 degrees.")
    assert run_fake(fake, tmp_path, _mt(tmp_path), formats=fmt) == 0
    echoed = _echoed(fake)
    # Null, never "": LiteLLM 1.106.2 then leaves the null key out of an OpenAI-compatible
    # request (the API takes an assistant message with tool_calls and no content).
    assert echoed.get("content") is None, echoed
    (trial,) = load_results(tmp_path / "run")
    assert trial.scores is not None and trial.scores.get("final_answer_ok") is True
    assert not any(n.startswith("adaptation:") for n in trial.notes)
    # Replayed offline, the same request finds its recording.
    assert run_fake(fake, tmp_path, _mt(tmp_path), "--record", "none", formats=fmt,
                    out="rep") == 0  # fmt: skip
    (again,) = load_results(tmp_path / "rep")
    assert again.status == "ok" and len(fake.received) == 2


def _event(delta: dict[str, object], finish: str | None = None) -> bytes:
    chunk = {"id": "c", "object": "chat.completion.chunk", "created": 0, "model": "fake",
             "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}  # fmt: skip
    return b"data: " + json.dumps(chunk).encode() + b"\n\n"


def test_streamed_reasoning_goes_back_with_the_calls(fake: FakeOpenAI, tmp_path: Path) -> None:
    """DeepSeek's reasoner streams ``reasoning_content`` and refuses a tool-call turn
    echoed without it (api-docs.deepseek.com/guides/reasoning_model, "tool calls")."""
    call = {"index": 0, "id": "call_0", "type": "function",
            "function": {"name": "get_weather", "arguments": '{"city": "Lisbon"}'}}  # fmt: skip
    fake.enqueue(
        SseScript([
            _event({"role": "assistant", "content": None, "reasoning_content": "Need the "}),
            _event({"reasoning_content": "weather."}),
            _event({"tool_calls": [call]}),
            _event({}, "tool_calls"), b"data: [DONE]\n\n",
        ]),
        "It is 23 degrees.",
    )  # fmt: skip
    assert run_fake(fake, tmp_path, _mt(tmp_path), formats="native:stream") == 0
    echoed = _echoed(fake)
    assert echoed["reasoning_content"] == "Need the weather."
    assert echoed.get("content") is None


def test_llama_server_gets_empty_content_as_its_adaptation_and_the_trial_says_so() -> None:
    rendered = RenderedRequest(messages=[
        {"role": "user", "content": "Weather?"},
        {"role": "assistant", "content": None, "tool_calls": [{"id": "a", "type": "function",
         "function": {"name": "f", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "a", "content": "{}"},
    ])  # fmt: skip
    plain = Endpoint("openai/x", "http://h/v1", "k")
    req, _ = build_request(plain, rendered, 0)
    assert req["messages"][1]["content"] is None
    assert adaptations(plain, req, rendered) == []
    llama = Endpoint("openai/x", "http://h/v1", "k", null_content_as_empty=True)
    req, _ = build_request(llama, rendered, 0)
    assert req["messages"][1]["content"] == ""
    assert rendered.messages[1]["content"] is None  # the conversation itself is unchanged
    assert adaptations(llama, req, rendered) == [NULL_CONTENT_ADAPTATION]


def test_only_the_local_kind_adapts() -> None:
    import asyncio

    from toolbench.formats.format_registry import get_format
    from toolbench.providers.litellm_api import LiteLLMAPI
    from toolbench.providers.local_api import LocalAPI

    settings = ProviderSettings(log_dir="/tmp")
    fmt = get_format("native")
    local = asyncio.run(LocalAPI(settings).endpoint("local/smollm2-135m", fmt, live=False))
    remote = asyncio.run(LiteLLMAPI(settings).endpoint("openai/x", fmt, live=False))
    assert (local.null_content_as_empty, remote.null_content_as_empty) == (True, False)
