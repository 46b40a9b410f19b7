"""Replay at the provider boundary: a request the cassette holds is answered without
LiteLLM's request machinery, exactly as the full path would answer it, and a request it
does not hold is still refused."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.runner.conftest import GOOD_CALL, MT_SCENARIO
from tests.runner.replay_summary import EXPECTED, summarize
from toolbench.cli.app import run_cli
from toolbench.providers import call, litellm_api, replay
from toolbench.providers.fake import FakeServer, by_turn
from toolbench.store import load_results

ROOT = Path(__file__).resolve().parents[2]
WEATHER, JOKE = "Weather in Paris?", "Tell me a joke."
CALL = {"content": None, "tool_calls": [{"name": "get_weather", "arguments": {"city": "Lisbon"}}]}


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "test-key-not-secret-0000")


@pytest.fixture
def no_litellm_calls(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[dict[str, Any]]]:
    """Every call that reached LiteLLM's ``acompletion`` (the full path)."""
    calls: list[dict[str, Any]] = []
    lm = litellm_api.litellm()
    real = lm.acompletion

    async def counted(**kw: Any) -> Any:
        calls.append(kw)
        return await real(**kw)

    monkeypatch.setattr(lm, "acompletion", counted)
    yield calls


def _run(tmp: Path, out: str, scen: Path, fmt: str, base: str, *extra: str) -> int:
    return run_cli([
        "run", "--models", "openai/fake", "--formats", fmt, "--scenarios", str(scen),
        "--api-base", base, "--out", str(tmp / out), "--cassettes", str(tmp / "cas"),
        "--quiet", "--no-report", *extra,
    ])  # fmt: skip


def _lines(run: Path) -> dict[tuple[str, int], dict[str, Any]]:
    """results.jsonl as data, without what differs between any two runs."""
    rows = {}
    for line in (run / "results.jsonl").read_text().splitlines():
        d = json.loads(line)
        for k in ("run_id", "started_at", "finished_at", "harness_s"):
            d.pop(k)
        rows[(d["scenario_id"], d["sample"])] = d
    return rows


def _record(tmp: Path, scen: Path, fmt: str) -> tuple[Path, dict[str, Any], str]:
    """Record the two-turn scenario live; the cassette, its data and the server's address
    (requests match on the address recorded: the server is gone, the replay calls none)."""
    with FakeServer(by_turn({"Lisbon": [CALL, "It is 23 degrees."]},
                            default="x")) as fake:  # fmt: skip
        assert _run(tmp, "live", scen, fmt, fake.base_url) == 0
    cas = tmp / "cas" / "openai_fake" / fmt / "mt.json"
    return cas, json.loads(cas.read_text()), fake.base_url


def _without_keys(cas: Path, data: dict[str, Any]) -> None:
    """The cassette as recorded before request keys existed (migrated: no ``key``)."""
    for exchange in data["exchanges"]:
        del exchange["key"]
    cas.write_text(json.dumps(data))


def test_a_recorded_exchange_carries_toolbenchs_request_key(tmp_path: Path) -> None:
    scen = tmp_path / "mt.yaml"
    scen.write_text(MT_SCENARIO)
    _cas, data, _base = _record(tmp_path, scen, "native")
    keys = [exchange["key"] for exchange in data["exchanges"]]
    assert len(keys) == 2
    (live,) = load_results(tmp_path / "live")
    assert keys == [replay.replay_key(t.request) for t in live.turns]


@pytest.mark.parametrize("keys", [True, False], ids=["by-key", "older-cassette-by-wire"])
def test_replay_answers_without_litellm_and_equals_the_live_run(
    tmp_path: Path, no_litellm_calls: list[dict[str, Any]], keys: bool
) -> None:
    scen = tmp_path / "mt.yaml"
    scen.write_text(MT_SCENARIO)
    cas, data, base = _record(tmp_path, scen, "native")
    if not keys:  # a cassette recorded before request keys existed
        _without_keys(cas, data)
    live_calls = len(no_litellm_calls)
    assert _run(tmp_path, "replay", scen, "native", base, "--record", "none") == 0
    assert len(no_litellm_calls) == live_calls  # both turns answered at the boundary
    live, replay = _lines(tmp_path / "live"), _lines(tmp_path / "replay")
    for key in live:
        for a in live[key]["attempts"]:
            a["provider_s"] = None
        for a in replay[key]["attempts"]:
            a["provider_s"] = None
        live[key]["provider_s"] = replay[key]["provider_s"] = None
    assert replay == live


@pytest.mark.parametrize("keys", [True, False], ids=["by-key", "older-cassette-by-wire"])
def test_a_request_the_cassette_does_not_hold_is_refused(
    tmp_path: Path, no_litellm_calls: list[dict[str, Any]], keys: bool
) -> None:
    scen = tmp_path / "mt.yaml"
    scen.write_text(MT_SCENARIO)
    cas, data, base = _record(tmp_path, scen, "native")
    if not keys:
        _without_keys(cas, data)
    scen.write_text(MT_SCENARIO.replace("Temperature in Lisbon?", "Temperature in Porto?"))
    assert _run(tmp_path, "replay", scen, "native", base, "--record", "none") == 3
    (result,) = load_results(tmp_path / "replay")
    assert result.status == "cassette_missing"
    assert no_litellm_calls  # the full path was asked, and it refused too


def test_the_committed_cassettes_replay_at_the_boundary_into_the_expected_results(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, no_litellm_calls: list[dict[str, Any]]
) -> None:
    """Cassettes recorded by real local models (the older ones without request keys): every
    exchange is answered at the boundary, with the committed expected results."""
    monkeypatch.chdir(ROOT)
    rc = run_cli(["run", "--record", "none", "--scenarios", "recorded", "--quiet",
                  "--no-report", "--models", "local/smollm2-135m", "--formats", "native,xml",
                  "--out", str(tmp_path / "r")])  # fmt: skip
    assert rc == 0
    assert no_litellm_calls == []
    got = summarize(load_results(tmp_path / "r"))
    expected = [
        e for e in json.loads(EXPECTED.read_text(encoding="utf-8"))
        if e["model"] == "local/smollm2-135m" and e["format"] in ("native", "xml")
    ]  # fmt: skip
    assert got == expected


def test_the_boundary_and_the_full_path_write_the_same_results(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)
    args = ["run", "--record", "none", "--scenarios", "recorded", "--quiet",
            "--no-report", "--models", "local/gemma3-270m",
            "--formats", "native,prompt-json"]  # fmt: skip
    assert run_cli([*args, "--out", str(tmp_path / "boundary")]) == 0
    monkeypatch.setattr(call, "replay_plain", lambda *a, **k: None)
    monkeypatch.setattr(call, "kept_capabilities", lambda *a, **k: None)
    assert run_cli([*args, "--out", str(tmp_path / "full")]) == 0
    assert _lines(tmp_path / "boundary") == _lines(tmp_path / "full")


def test_a_live_exchange_is_timed_at_the_provider(tmp_path: Path, scenario_file: Path) -> None:
    """The provider's time is the HTTP exchange's: a 0.3 s server reads at least 0.3 s
    per attempt, a retried trial's provider time covers both attempts, its latency only
    the answer; and the replay reports the recorded times."""
    from toolbench.providers.fake import Fault, in_order

    responder = in_order({WEATHER: [Fault(503), GOOD_CALL]}, default="A joke.")
    with FakeServer(responder, delay_s=0.3) as fake:
        base = fake.base_url
        assert _run(tmp_path, "live", scenario_file, "prompt-json", base) == 0
    by_id = {r.scenario_id: r for r in load_results(tmp_path / "live")}
    weather, chat = by_id["weather"], by_id["chat"]
    first, second = weather.attempts
    assert first.provider_s is not None and first.provider_s >= 0.3
    assert second.provider_s is not None and second.provider_s >= 0.3
    assert weather.provider_s == pytest.approx(first.provider_s + second.provider_s, abs=1e-3)
    assert weather.latency_s == second.provider_s
    assert chat.provider_s == chat.latency_s == chat.attempts[0].provider_s
    assert weather.harness_s is not None and weather.harness_s >= 0.0
    assert _run(tmp_path, "replay", scenario_file, "prompt-json", base, "--record", "none") == 0
    again = {r.scenario_id: r for r in load_results(tmp_path / "replay")}
    assert again["weather"].latency_s == weather.latency_s
    assert again["weather"].provider_s == weather.latency_s  # the recorded answer only
    assert [a.provider_s for a in again["weather"].attempts] == [weather.latency_s]
