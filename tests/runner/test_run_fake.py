"""``toolbench run`` end to end against a fake OpenAI-compatible server over real HTTP.

The server answers by the request (:mod:`toolbench.providers.fake`), so these runs keep
the default concurrency: which trial reaches it first does not change any reply."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.runner.conftest import GOOD_CALL, MT_SCENARIO, run_fake, trials_by_id
from tests.support.fake_openai import FakeOpenAI
from toolbench.providers.fake import FakeServer, Fault, by_last_user, in_order
from toolbench.results import RESULTS_SCHEMA_VERSION
from toolbench.store import load_results

WEATHER, JOKE = "Weather in Paris?", "Tell me a joke."


pytestmark = pytest.mark.usefixtures("openai_key")


def test_run_records_scores_and_replays(tmp_path: Path, scenario_file: Path) -> None:
    replies = {WEATHER: GOOD_CALL, JOKE: "Why did the chicken cross the road?"}
    with FakeServer(by_last_user(replies)) as fake:
        _records_scores_and_replays(fake, tmp_path, scenario_file)


def _records_scores_and_replays(fake: FakeServer, tmp_path: Path, scenario_file: Path) -> None:
    assert run_fake(fake, tmp_path, scenario_file) == 0
    first = trials_by_id(tmp_path / "run")
    assert (
        first["weather"].scores is not None and first["weather"].scores.get("call_accuracy") is True
    )
    assert first["chat"].scores is not None and first["chat"].scores.get("no_call_correct") is True
    assert (tmp_path / "cas" / "openai_fake" / "prompt-json" / "weather.json").is_file()
    assert len(fake.received) == 2

    # Replay: no request reaches the server, results are identical.
    assert run_fake(fake, tmp_path, scenario_file, "--record", "none", out="replay") == 0
    assert len(fake.received) == 2
    again = trials_by_id(tmp_path / "replay")
    for sid in first:
        assert again[sid].scores == first[sid].scores
        assert again[sid].turns[0].reply == first[sid].turns[0].reply
        # A replay reports the latency recorded with the cassette, not its own.
        assert again[sid].turns[0].latency_s == first[sid].turns[0].latency_s
        assert again[sid].latency_s == first[sid].latency_s


def test_missing_cassette_names_file_and_command(
    fake: FakeOpenAI, tmp_path: Path, scenario_file: Path
) -> None:
    assert run_fake(fake, tmp_path, scenario_file, "--record", "none") == 3
    results = load_results(tmp_path / "run")
    assert {r.status for r in results} == {"cassette_missing"}
    weather = next(r for r in results if r.scenario_id == "weather")
    cas = tmp_path / "cas" / "openai_fake" / "prompt-json" / "weather.json"
    # The command records where this run replays from: its --api-base and --cassettes.
    assert weather.infra_error == (
        f"no cassette {cas}; record it with: toolbench run --models openai/fake "
        f"--formats prompt-json --scenarios weather --api-base {fake.base_url} "
        f"--cassettes {tmp_path / 'cas'} --record new"
    )
    assert fake.received == []


def test_transient_faults_are_retried(tmp_path: Path, scenario_file: Path) -> None:
    faults = [Fault(429, headers={"retry-after": "0"}), Fault(503),
              Fault(200, body=b'{"choices": [tr'), GOOD_CALL]  # fmt: skip
    with FakeServer(in_order({WEATHER: faults}, default="A joke.")) as fake:
        assert run_fake(fake, tmp_path, scenario_file) == 0
    (result,) = [r for r in load_results(tmp_path / "run") if r.scenario_id == "weather"]
    assert result.status == "ok"
    assert result.scores is not None and result.scores.get("call_accuracy") is True
    assert [a.outcome for a in result.attempts] == ["retry", "retry", "retry", "ok"]
    assert sum(WEATHER in str(r.body) for r in fake.received) == 4


def test_persistent_fault_is_an_infra_error_and_run_goes_on(
    tmp_path: Path, scenario_file: Path
) -> None:
    with FakeServer(in_order({WEATHER: [Fault(500)] * 5}, default="No call here.")) as fake:
        assert run_fake(fake, tmp_path, scenario_file) == 0
    by_id = trials_by_id(tmp_path / "run")
    assert by_id["weather"].status == "infra_error"
    assert by_id["weather"].scores is None
    assert "InternalServerError" in (by_id["weather"].infra_error or "")
    assert by_id["chat"].status == "ok"


def test_resume_completes_without_duplicates(tmp_path: Path, scenario_file: Path) -> None:
    with FakeServer(by_last_user({WEATHER: GOOD_CALL, JOKE: "A joke."})) as fake:
        _resume_completes_without_duplicates(fake, tmp_path, scenario_file)


def _resume_completes_without_duplicates(
    fake: FakeServer, tmp_path: Path, scenario_file: Path
) -> None:
    assert run_fake(fake, tmp_path, scenario_file) == 0
    res = tmp_path / "run" / "results.jsonl"
    lines = res.read_text().splitlines()
    # Simulate a kill: one finished trial kept, the next torn mid-write.
    res.write_text(lines[0] + "\n" + lines[1][: len(lines[1]) // 2])
    assert run_fake(fake, tmp_path, scenario_file) == 2  # exists: needs --resume
    assert run_fake(fake, tmp_path, scenario_file, "--resume") == 0
    results = load_results(tmp_path / "run")
    keys = [r.key for r in results]
    assert len(keys) == len(set(keys)) == 2


def test_run_dir_exists_without_resume_is_a_user_error(
    fake: FakeOpenAI, tmp_path: Path, scenario_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fake.enqueue(GOOD_CALL, "A joke.")
    assert run_fake(fake, tmp_path, scenario_file) == 0
    capsys.readouterr()
    assert run_fake(fake, tmp_path, scenario_file) == 2
    err = capsys.readouterr().err
    assert (
        err
        == f"error: --out: {tmp_path / 'run'} already holds a run; pass --resume to complete it\n"
    )


def test_run_json_records_matrix(fake: FakeOpenAI, tmp_path: Path, scenario_file: Path) -> None:
    fake.enqueue(GOOD_CALL, "A joke.")
    assert run_fake(fake, tmp_path, scenario_file) == 0
    info = json.loads((tmp_path / "run" / "run.json").read_text())
    assert info["models"] == ["openai/fake"]
    assert info["formats"] == ["prompt-json"]
    assert sorted(info["scenarios"]) == ["chat", "weather"]
    assert info["schema_version"] == RESULTS_SCHEMA_VERSION == 8
    assert "scenario_hashes" not in info  # schema 4: merge reads scenario_files


def test_retry_on_parse_error_feeds_the_error_back_once(
    tmp_path: Path, scenario_file: Path
) -> None:
    broken = '{"tool": "get_weather", "arguments": {"city": "Paris"'  # truncated
    replies = {WEATHER: broken, "could not be parsed": GOOD_CALL, JOKE: "A joke."}
    with FakeServer(by_last_user(replies)) as fake:
        assert run_fake(fake, tmp_path, scenario_file, "--retry-on-parse-error") == 0
    by_id = trials_by_id(tmp_path / "run")
    weather = by_id["weather"]
    assert [t.retry for t in weather.turns] == [False, True]
    assert weather.turns[0].parsed.status == "failed"
    # The second request carried the failed reply and the parse error back.
    (second,) = [r.body["messages"] for r in fake.received if len(r.body["messages"]) > 2]
    assert second[-2] == {"role": "assistant", "content": broken}
    assert second[-1]["role"] == "user" and "could not be parsed" in second[-1]["content"]
    assert weather.scores is not None
    assert weather.scores.get("retried") is True
    assert weather.scores.get("first_try_ok") is False
    assert weather.scores.get("retry_recovered") is True
    assert by_id["chat"].turns and len(by_id["chat"].turns) == 1


def test_native_tool_calls_round_trip(tmp_path: Path, scenario_file: Path) -> None:
    """Passing ``tools`` makes LiteLLM 1.106.2 import ``mcp`` (undeclared by it): the
    native path must work with the project's own dependencies."""
    call = {
        "content": None,
        "tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}}],
    }
    with FakeServer(by_last_user({WEATHER: call, JOKE: "A joke."})) as fake:
        rc = run_fake(fake, tmp_path, scenario_file, formats="native")
    assert rc == 0
    by_id = trials_by_id(tmp_path / "run")
    weather = by_id["weather"]
    assert weather.status == "ok", weather.infra_error
    (sent,) = [r.body for r in fake.received if WEATHER in str(r.body)]
    assert sent["tool_choice"] == "auto"
    assert sent["tools"][0]["function"]["name"] == "get_weather"
    assert weather.turns[0].parsed.calls[0].arguments == {"city": "Paris"}
    assert weather.scores is not None and weather.scores.get("call_accuracy") is True


def test_native_multi_turn_echoes_assistant_and_tool_messages(
    fake: FakeOpenAI, tmp_path: Path
) -> None:
    scen = tmp_path / "mt.yaml"
    scen.write_text(MT_SCENARIO)
    call = {"name": "get_weather", "arguments": {"city": "Lisbon"}}
    fake.enqueue({"content": None, "tool_calls": [call]}, "It is 23 degrees.")
    rc = run_fake(fake, tmp_path, scen, formats="native")
    assert rc == 0
    (result,) = load_results(tmp_path / "run")
    assert result.scores is not None and result.scores.get("final_answer_ok") is True
    assistant, tool = fake.received[1].body["messages"][-2:]
    # The call-only reply goes back with its tool calls and the model's null content
    # (never ""), which LiteLLM 1.106.2 leaves out of an OpenAI-compatible request; only
    # the embedded llama-server kind sends "" (tests/runner/test_echo_unaltered.py).
    assert assistant["role"] == "assistant" and assistant.get("content") is None
    assert assistant["tool_calls"][0]["function"]["name"] == "get_weather"
    assert tool == {"role": "tool", "tool_call_id": "call_0", "content": '{"temperature": 23}'}


def test_a_model_that_rejects_stop_is_asked_again_without_it(
    tmp_path: Path, scenario_file: Path
) -> None:
    message = "Unsupported parameter: 'stop' is not supported with this model."
    body = {"error": {"message": message, "type": "invalid_request_error", "param": "stop"}}
    rejects = Fault(400, body=json.dumps(body).encode())

    def respond(request: dict[str, object]) -> str | Fault:
        if "stop" in request:
            return rejects  # a model that takes no stop sequences, for every request
        return by_last_user({WEATHER: "Thought: none\nFinal Answer: sunny"}, "A joke.")(request)

    with FakeServer(respond) as fake:
        rc = run_fake(fake, tmp_path, scenario_file, formats="react")
    assert rc == 0
    weather = next(r for r in load_results(tmp_path / "run") if r.scenario_id == "weather")
    assert weather.status == "ok", weather.infra_error
    first, second = [r.body for r in fake.received if WEATHER in str(r.body)]
    assert first["stop"] == ["\nObservation:"]
    assert "stop" not in second
    assert "stop" not in weather.turns[0].request  # the record says what was really sent
