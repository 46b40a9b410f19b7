"""Every provider teams ask about, end to end: ``toolbench run`` through LiteLLM and the
cassettes against a local fake of the provider's wire protocol (:mod:`.servers`), every
format's multi-turn scenario, then the same run replayed offline with no server."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.providers.cases import CASES, FORMATS, SCENARIOS, Case
from tests.providers.servers import gemini
from tests.providers.servers.base import Request
from toolbench.cli.app import run_cli
from toolbench.results import TrialResult
from toolbench.store import load_results


def run(case: Case, base: str, tmp: Path, out: str, *extra: str) -> int:
    return run_cli([
        "run", "--models", case.model, "--formats", ",".join(FORMATS),
        "--scenarios", str(SCENARIOS), "--api-base", base, "--out", str(tmp / out),
        "--cassettes", str(tmp / "cas"), "--quiet", "--no-report", *extra,
    ])  # fmt: skip


def by_key(results: list[TrialResult]) -> dict[tuple[str, str], TrialResult]:
    return {(r.format, r.scenario_id): r for r in results}


def _second_native_turns(received: list[Request]) -> list[Any]:
    """The native requests that carry a tool result back (the second turns)."""
    return [q.body for q in received if q.body and q.body.get("tools") and _has_result(q.body)]


def _has_result(body: dict[str, Any]) -> bool:
    text = json.dumps(body.get("messages") or body.get("contents"))
    return any(k in text for k in ('"role": "tool"', '"tool_result"', '"function_response"'))


def check_wire(case: Case, received: list[Request]) -> None:
    """What each provider's documentation says the request must (not) hold."""
    bodies = [q.body for q in received]
    assert all(isinstance(b, dict) for b in bodies)
    assert len(_second_native_turns(received)) == 2  # native, Lisbon and Oslo
    if case.id == "anthropic":
        assert {q.path for q in received} == {"/v1/messages"}
        assert not any("seed" in b for b in bodies)  # Anthropic has none: dropped, recorded
        assert all(isinstance(b["system"], list | str) for b in bodies)  # top-level system
        for b in _second_native_turns(received):
            kinds = [blk["type"] for blk in b["messages"][-1]["content"]]
            assert kinds == ["tool_result"]
    elif case.id.startswith("gemini"):
        model = case.model.split("/", 1)[1]
        assert {q.path for q in received} == {f"/v1beta/models/{model}:generateContent"}
        for b in _second_native_turns(received):
            (call,) = [p for c in b["contents"] for p in c["parts"] if "function_call" in p]
            assert call["thoughtSignature"] == gemini.signature(call["function_call"])
            (answer,) = [p for c in b["contents"] for p in c["parts"] if "function_response" in p]
            # Gemini 3 names its calls: the name goes back as it came (not made stable).
            assert answer["function_response"].get("id") == call["function_call"].get("id")
    elif case.id == "ollama":
        assert {q.path for q in received} == {"/api/chat"}
        assert all(b["stream"] is False for b in bodies)
    elif case.id == "mistral":
        for b in bodies:  # the fake refuses them too (422); asserted here to name them
            assert not any("provider_specific_fields" in m for m in b["messages"])
    elif case.id.startswith("deepseek"):
        assert {q.path for q in received} == {"/chat/completions"}  # no /v1 on DeepSeek
        if case.id == "deepseek-reasoner":  # its thinking goes back with its calls
            for b in _second_native_turns(received):
                (echoed,) = [m for m in b["messages"] if m["role"] == "assistant"]
                assert echoed["reasoning_content"]
    elif case.id == "moonshot-k2.5":
        # A reasoning model: LiteLLM drops temperature=0 for it, and toolbench records so.
        assert not any("temperature" in b for b in bodies)
    elif case.id == "openrouter":
        assert {q.path for q in received} == {"/api/v1/chat/completions"}
    if not case.keyed:
        # No key in the environment: none sent, toolbench's placeholder (openai/), or
        # LiteLLM's own (hosted_vllm/, lm_studio/).
        auth = {q.headers.get("authorization") for q in received}
        assert auth <= {None, "Bearer toolbench-no-key", "Bearer fake-api-key"}, auth


def all_bytes(root: Path) -> list[tuple[Path, bytes]]:
    return [(p, p.read_bytes()) for p in sorted(root.rglob("*")) if p.is_file()]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_round_trip_then_offline_replay(
    case: Case, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, keys: str
) -> None:
    if not case.keyed:  # a local server: nothing in the environment, nothing demanded
        for env in ("OPENAI_API_KEY", "HOSTED_VLLM_API_KEY", "LM_STUDIO_API_KEY"):
            monkeypatch.delenv(env, raising=False)
    with case.server() as server:
        base = server.base_url
        assert run(case, base, tmp_path, "live", "--concurrency", "4") == 0
        received = list(server.received)
    live = by_key(load_results(tmp_path / "live"))
    assert len(live) == len(FORMATS) * 2
    for key, r in live.items():
        assert r.status == "ok", (key, r.error_code, r.infra_error)
        assert r.scores is not None
        assert r.scores.get("call_accuracy") is True, (key, r.scores.reasons)
        assert r.scores.get("final_answer_ok") is True, (key, r.scores.reasons)
        assert len(r.turns) == 2
        if case.id == "moonshot-k2.5":
            assert r.params is not None and "temperature" in r.params.dropped
    # Two requests per trial: no fault, no retry, nothing the fake refused.
    assert len(received) == len(live) * 2
    check_wire(case, received)
    if case.keyed:
        # The key reached the server, and no byte toolbench wrote holds it.
        assert any(keys in str(q.headers) for q in received)
        for path, data in all_bytes(tmp_path):
            assert keys.encode() not in data, path

    # The server is gone: the replay is answered by the cassettes alone.
    assert run(case, base, tmp_path, "replay", "--record", "none") == 0
    replay = by_key(load_results(tmp_path / "replay"))
    assert replay.keys() == live.keys()
    for key, r in replay.items():
        assert r.status == "ok"
        assert r.scores == live[key].scores
        assert [t.reply for t in r.turns] == [t.reply for t in live[key].turns]
        assert [t.request for t in r.turns] == [t.request for t in live[key].turns]
