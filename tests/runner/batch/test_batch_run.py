"""``run --batch`` against a fake server speaking the documented batch endpoints
(:mod:`tests.support.fake_batch`): single-turn trials answered by a batch, their
cassettes written as if recorded live (a replay without the server gives the same
trials), multi-turn trials live, and each way a batch falls short a typed code on the
trials concerned while the run goes on."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.runner.conftest import GOOD_CALL, MT_SCENARIO, run_fake, trials_by_id
from tests.support.fake_batch import FakeBatchServer
from toolbench import codes
from toolbench.cli.app import run_cli
from toolbench.errors import EXIT_STORAGE
from toolbench.formats.base import ModelReply
from toolbench.providers.fake import Fault, by_last_user
from toolbench.providers.model_api import Completion, Endpoint
from toolbench.runner.batch import answer_cassette, batch_apis, batch_wait
from toolbench.store import load_results

pytestmark = pytest.mark.usefixtures("openai_key")

REPLIES = by_last_user({"Paris": GOOD_CALL, "joke": "Why did the chicken cross the road?"})


@pytest.fixture(autouse=True)
def _fast_polls(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(batch_wait, "POLL_S", 0.05)
    monkeypatch.setattr(batch_wait, "CANCEL_GRACE_S", 1.0)


def _scores(run: Path) -> dict[str, tuple[str, object]]:
    return {
        r.scenario_id: (r.status, r.scores.model_dump() if r.scores else None)
        for r in load_results(run)
    }


def test_a_batch_run_scores_as_a_live_run_and_replays_without_the_server(
    tmp_path: Path, scenario_file: Path
) -> None:
    with FakeBatchServer(REPLIES) as server:
        assert run_fake(server, tmp_path, scenario_file, "--batch", out="batch") == 0
        assert server.live == []  # nothing went live: both trials were in the batch
        assert len(server.batches) == 1
        batched = next(iter(server.batches.values()))
        assert len(batched["_requests"]) == 2
        live_tmp = tmp_path / "live"
        live_tmp.mkdir()
        assert run_fake(server, live_tmp, scenario_file, out="live") == 0
        assert len(server.live) == 2
    # The batch's requests are the live run's, byte for byte as data.
    assert sorted(json.dumps(b, sort_keys=True) for _c, b in batched["_requests"]) == sorted(
        json.dumps(b, sort_keys=True) for b in server.live
    )
    assert _scores(tmp_path / "batch") == _scores(live_tmp / "live")
    assert all(s == "ok" for s, _ in _scores(tmp_path / "batch").values())
    # The server is gone: the batch's cassettes replay to the same trials.
    rc = run_fake(server, tmp_path, scenario_file, "--record", "none", out="replay",
                  api_base="http://127.0.0.1:9/v1")  # fmt: skip
    assert rc == 0
    assert _scores(tmp_path / "replay") == _scores(tmp_path / "batch")


def test_batch_cost_is_the_cost_maps_batch_price(tmp_path: Path, scenario_file: Path) -> None:
    from toolbench.providers.lazy_litellm import litellm

    info = litellm().model_cost["gpt-4o-mini"]
    (tmp_path / "b").mkdir()
    (tmp_path / "l").mkdir()
    with FakeBatchServer(REPLIES) as server:
        model = "openai/gpt-4o-mini"
        assert run_fake(server, tmp_path / "b", scenario_file, "--batch", models=model) == 0
        assert run_fake(server, tmp_path / "l", scenario_file, models=model) == 0
    batch = trials_by_id(tmp_path / "b" / "run")["weather"]
    live = trials_by_id(tmp_path / "l" / "run")["weather"]
    want = 10 * info["input_cost_per_token_batches"] + 5 * info["output_cost_per_token_batches"]
    assert batch.cost == pytest.approx(want)
    assert live.cost is not None and batch.cost == pytest.approx(live.cost / 2)


def test_errors_for_some_requests_fail_those_trials_only(
    tmp_path: Path, scenario_file: Path
) -> None:
    refusal = Fault(400, b'{"error": {"message": "no jokes"}}')
    replies = by_last_user({"Paris": GOOD_CALL, "joke": refusal})
    with FakeBatchServer(replies) as server:
        run_fake(server, tmp_path, scenario_file, "--batch")
    trials = trials_by_id(tmp_path / "run")
    assert trials["weather"].status == "ok"
    assert trials["chat"].status == "infra_error"
    assert trials["chat"].error_code == codes.INFRA_BATCH_FAILED
    assert trials["chat"].infra_error == "the batch answered HTTP 400: no jokes"


def test_a_batch_refused_at_creation_fails_its_trials_typed(
    tmp_path: Path, scenario_file: Path
) -> None:
    with FakeBatchServer(REPLIES) as server:
        server.reject = True
        run_fake(server, tmp_path, scenario_file, "--batch")
        assert server.live == []
    trials = trials_by_id(tmp_path / "run")
    assert {t.error_code for t in trials.values()} == {codes.INFRA_BATCH_REJECTED}
    assert trials["chat"].infra_error == (
        "the provider refused the batch: the batch: HTTP 400: the batch's input is invalid"
        " (a fake's refusal)"
    )


def test_a_batch_that_never_ends_is_cancelled_at_the_timeout_and_keeps_its_answers(
    tmp_path: Path, scenario_file: Path
) -> None:
    with FakeBatchServer(REPLIES) as server:
        server.never_end = True
        server.answer_before = lambda body: "Paris" in json.dumps(body)
        run_fake(server, tmp_path, scenario_file, "--batch", "--timeout", "0.3")
        assert server.cancelled == ["batch_0"]
    trials = trials_by_id(tmp_path / "run")
    assert trials["weather"].status == "ok"  # answered before the cancel: not lost
    assert trials["chat"].error_code == codes.INFRA_BATCH_EXPIRED


def test_an_expired_batch_and_missing_results_are_typed(
    tmp_path: Path, scenario_file: Path
) -> None:
    with FakeBatchServer(REPLIES) as server:
        server.expire = True
        run_fake(server, tmp_path, scenario_file, "--batch", out="expired")
        server.expire = False
        server.missing = lambda body: "joke" in json.dumps(body)
        (tmp_path / "m").mkdir()
        run_fake(server, tmp_path / "m", scenario_file, "--batch")
    expired = trials_by_id(tmp_path / "expired")
    assert {t.error_code for t in expired.values()} == {codes.INFRA_BATCH_EXPIRED}
    missing = trials_by_id(tmp_path / "m" / "run")
    assert missing["weather"].status == "ok"
    assert missing["chat"].error_code == codes.INFRA_BATCH_MISSING
    assert missing["chat"].infra_error == "the batch ended without a result for it"


def test_multi_turn_trials_stay_live(tmp_path: Path) -> None:
    scen = tmp_path / "mt.yaml"
    scen.write_text(MT_SCENARIO, encoding="utf-8")
    call = '{"tool": "get_weather", "arguments": {"city": "Lisbon"}}'
    replies = by_last_user({"Lisbon": call}, default="It is 23 degrees.")
    with FakeBatchServer(replies) as server:
        assert run_fake(server, tmp_path, scen, "--batch") == 0
        assert server.batches == {}
        assert len(server.live) == 2
    assert trials_by_id(tmp_path / "run")["mt"].status == "ok"


def test_anthropic_message_batches(
    tmp_path: Path, scenario_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key-not-secret-1111")
    model = "anthropic/claude-haiku-4-5-20251001"
    replies = by_last_user({"Paris": {"tool_calls": [
        {"name": "get_weather", "arguments": {"city": "Paris"}}]}}, default="No.")  # fmt: skip
    with FakeBatchServer(replies) as server:
        base = server.base_url.removesuffix("/v1")
        assert run_fake(server, tmp_path, scenario_file, "--batch", models=model,
                        formats="native", api_base=base) == 0  # fmt: skip
        assert server.live == []
        batch = next(iter(server.batches.values()))
        assert batch["_anthropic"] and len(batch["_requests"]) == 2
        (tmp_path / "l").mkdir()
        assert run_fake(server, tmp_path / "l", scenario_file, models=model,
                        formats="native", api_base=base) == 0  # fmt: skip
        assert len(server.live) == 2
    assert _scores(tmp_path / "run") == _scores(tmp_path / "l" / "run")
    batched, live = trials_by_id(tmp_path / "run"), trials_by_id(tmp_path / "l" / "run")
    assert batched["weather"].status == "ok"
    # LiteLLM's cost map's batch price for this model: half the live one.
    assert live["weather"].cost
    assert batched["weather"].cost == pytest.approx(live["weather"].cost / 2)
    rc = run_fake(server, tmp_path, scenario_file, "--record", "none", out="replay",
                  models=model, formats="native", api_base="http://127.0.0.1:9")  # fmt: skip
    assert rc == 0
    assert _scores(tmp_path / "replay") == _scores(tmp_path / "run")


def test_without_a_batch_price_the_cost_is_the_documented_share_of_the_live_one() -> None:
    done = Completion(ModelReply(text="x"), {}, 0.0, 10, 5, 0.004, 1)
    cost = answer_cassette.batch_cost(Endpoint("openai/no-such-model-priced"), done)
    assert cost == pytest.approx(0.004 * answer_cassette.BATCH_FACTOR)
    assert answer_cassette.BATCH_FACTOR == 0.5


def test_progress_lines_a_batch_per_limit_and_no_key_on_disk(
    tmp_path: Path, scenario_file: Path, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    monkeypatch.setitem(batch_apis.MAX_REQUESTS, "openai", 1)
    with FakeBatchServer(REPLIES) as server:
        server.polls = 2
        rc = run_cli(["run", "--models", "openai/fake", "--formats", "prompt-json",
                      "--scenarios", str(scenario_file), "--api-base", server.base_url,
                      "--out", str(tmp_path / "run"), "--cassettes", str(tmp_path / "cas"),
                      "--no-report", "--batch"])  # fmt: skip
        assert rc == 0
        assert sorted(server.batches) == ["batch_0", "batch_1"]  # one request a batch
    err = capsys.readouterr().err
    assert "batch openai (1 requests): batch_0 in_progress, 0/1 answered, 0s\n" in err
    assert "batch openai (1 requests): batch_1 completed, 1/1 answered, " in err
    # The key went to the server with each batch call, never to disk.
    for path in [*(tmp_path / "cas").rglob("*.json"), tmp_path / "run" / "results.jsonl"]:
        text = path.read_text(encoding="utf-8")
        assert "test-key-not-secret-0000" not in text
    cassette = json.loads(next((tmp_path / "cas").rglob("weather.json")).read_text())
    (exchange,) = cassette["exchanges"]
    assert "authorization" not in {k.lower() for k in exchange["request"]["headers"]}
    assert exchange["request"]["uri"] == "http://api-base.toolbench/v1/chat/completions"
    assert exchange["read"]["reply"]["text"] == GOOD_CALL


def test_results_that_cannot_be_fetched_are_typed_on_their_trials(
    tmp_path: Path, scenario_file: Path
) -> None:
    with FakeBatchServer(REPLIES) as server:
        server.files_fail = True
        run_fake(server, tmp_path, scenario_file, "--batch")
    trials = trials_by_id(tmp_path / "run")
    assert {t.error_code for t in trials.values()} == {codes.INFRA_BATCH_MISSING}
    assert trials["chat"].infra_error is not None
    assert trials["chat"].infra_error.startswith("the batch's results could not be fetched: ")
    assert "500" in trials["chat"].infra_error


def test_a_cassette_that_cannot_be_written_stops_the_run_for_resume(
    tmp_path: Path, scenario_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "cas").mkdir()
    (tmp_path / "cas" / "openai_fake").write_text("in the way", encoding="utf-8")
    with FakeBatchServer(REPLIES) as server:
        rc = run_fake(server, tmp_path, scenario_file, "--batch")
    assert rc == EXIT_STORAGE
    err = capsys.readouterr().err
    assert "cannot write cassette" in err
    assert f"complete it with: toolbench run --resume --out {tmp_path / 'run'}" in err


def test_a_batch_that_fails_validation_fails_its_trials_typed(
    tmp_path: Path, scenario_file: Path
) -> None:
    with FakeBatchServer(REPLIES) as server:
        server.invalid = True
        run_fake(server, tmp_path, scenario_file, "--batch")
    trials = trials_by_id(tmp_path / "run")
    assert {t.error_code for t in trials.values()} == {codes.INFRA_BATCH_REJECTED}
    assert trials["weather"].infra_error == (
        "the provider failed the batch: line 1: model not found"
    )
