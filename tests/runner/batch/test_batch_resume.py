"""A batch run's ``--resume`` (``--batch`` recorded in run.json, so not repeated)
submits again exactly the trials a batch failed in a way a live call would have asked
again after (:mod:`toolbench.runner.batch.batch_retry`), and ``--budget`` bounds a batch
run: nothing submitted after it, a running batch cancelled at it, the unstarted trials
left for ``--resume``. Against the fake batch server."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.runner.conftest import run_fake, trials_by_id
from tests.support.fake_batch import FakeBatchServer
from toolbench import codes
from toolbench.providers.fake import Fault, Reply, by_last_user
from toolbench.results import Attempt, TrialResult
from toolbench.runner.batch import batch_wait
from toolbench.runner.batch.anthropic_batch import AnthropicBatch
from toolbench.runner.batch.batch_api import BatchRefused, Failed, failed_status, transport_code
from toolbench.runner.batch.batch_retry import failed_attempt, submit_again
from toolbench.store import results_path

pytestmark = pytest.mark.usefixtures("openai_key")

WORDS = ("alpha", "beta", "gamma", "delta", "epsilon")
SCENARIOS = "scenarios:\n" + "".join(
    f"""  - id: {w}
    tools:
      - name: get_weather
        description: Get the weather for a city.
        parameters: {{type: object, properties: {{city: {{type: string}}}}, required: [city]}}
    messages:
      - {{role: user, content: "Say {w}."}}
    expect:
      no_call: true
"""
    for w in WORDS
)


@pytest.fixture(autouse=True)
def _fast_polls(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(batch_wait, "POLL_S", 0.05)
    monkeypatch.setattr(batch_wait, "CANCEL_GRACE_S", 1.0)


@pytest.fixture
def five(tmp_path: Path) -> Path:
    path = tmp_path / "five.yaml"
    path.write_text(SCENARIOS, encoding="utf-8")
    return path


def _lines(run: Path) -> dict[str, str]:
    """Each trial's line in results.jsonl, by scenario id (each must stand once)."""
    out: dict[str, str] = {}
    for line in results_path(run).read_text(encoding="utf-8").splitlines():
        sid = json.loads(line)["scenario_id"]
        assert sid not in out, f"{sid} written twice"
        out[sid] = line
    return out


def _asked(server: FakeBatchServer, batch_id: str) -> list[str]:
    """The words of the requests a batch held."""
    return sorted(
        w for _cid, body in server.batches[batch_id]["_requests"] for w in WORDS
        if f"Say {w}." in json.dumps(body)
    )  # fmt: skip


def test_resume_submits_again_only_what_a_live_call_would_have_asked_again(
    tmp_path: Path, five: Path
) -> None:
    first: dict[str, Reply] = {
        "beta": Fault(429, b'{"error": {"message": "slow down"}}'),
        "gamma": Fault(400, b'{"error": {"message": "bad request"}}'),
        "epsilon": Fault(503, b'{"error": {"message": "overloaded"}}'),
    }
    table: dict[str, Reply] = dict(first)
    respond = by_last_user(table, default="Fine.")
    with FakeBatchServer(lambda body: respond(body)) as server:
        server.missing = lambda body: "Say delta." in json.dumps(body)
        assert run_fake(server, tmp_path, five, "--batch") == 0
        before = _lines(tmp_path / "run")
        trials = trials_by_id(tmp_path / "run")
        assert {s: t.error_code for s, t in trials.items()} == {
            "alpha": None, "beta": codes.INFRA_BATCH_FAILED, "gamma": codes.INFRA_BATCH_FAILED,
            "delta": codes.INFRA_BATCH_MISSING, "epsilon": codes.INFRA_BATCH_FAILED,
        }  # fmt: skip
        # The provider answers everything now.
        table.clear()
        server.missing = lambda _body: False
        # A plain --resume (run.json says batch): the 429, the 503 and the missing one
        # in a new batch, nothing else, nothing live.
        assert run_fake(server, tmp_path, five, "--resume", models=None, formats=None) == 0
        assert sorted(server.batches) == ["batch_0", "batch_1"]
        assert _asked(server, "batch_1") == ["beta", "delta", "epsilon"]
        assert server.live == []
    after = _lines(tmp_path / "run")
    assert sorted(after) == sorted(WORDS)  # each trial once: the latest line won
    assert after["alpha"] == before["alpha"]  # untouched
    assert after["gamma"] == before["gamma"]  # a 400: the same request is refused again
    trials = trials_by_id(tmp_path / "run")
    assert {s for s, t in trials.items() if t.status == "ok"} == {
        "alpha",
        "beta",
        "delta",
        "epsilon",
    }
    assert trials["gamma"].infra_error == "the batch answered HTTP 400: bad request"


def test_an_expired_batch_is_submitted_again_on_resume(tmp_path: Path, five: Path) -> None:
    with FakeBatchServer(by_last_user({}, default="Fine.")) as server:
        server.expire = True
        server.answer_before = lambda body: "Say alpha." in json.dumps(body)
        run_fake(server, tmp_path, five, "--batch")
        expired = {s for s, t in trials_by_id(tmp_path / "run").items()
                   if t.error_code == codes.INFRA_BATCH_EXPIRED}  # fmt: skip
        assert expired == set(WORDS) - {"alpha"}
        server.expire = False
        assert run_fake(server, tmp_path, five, "--resume", "--batch",
                        models=None, formats=None) == 0  # fmt: skip
        assert _asked(server, "batch_1") == sorted(expired)
    assert {t.status for t in trials_by_id(tmp_path / "run").values()} == {"ok"}
    assert sorted(_lines(tmp_path / "run")) == sorted(WORDS)


def _written(failed: Failed) -> TrialResult:
    """The trial line a batch's failure is written with, read back as resume reads it."""
    line = TrialResult(
        run_id="r", toolbench_version="0", model="openai/fake", format="prompt-json",
        scenario_id="s", status="infra_error", error_code=failed.code, infra_error=failed.message,
        attempts=[failed_attempt(failed)],
    ).model_dump_json()  # fmt: skip
    return TrialResult.model_validate_json(line)


@pytest.mark.parametrize(
    ("failed", "again"),
    [
        (Failed(codes.INFRA_BATCH_EXPIRED, "expired"), True),
        (Failed(codes.INFRA_BATCH_MISSING, "no line"), True),
        (failed_status(429, "slow down"), True),
        (failed_status(500, "oops"), True),
        (failed_status(408, "timeout"), True),
        (failed_status(400, "bad"), False),
        (failed_status(401, "key"), False),
        (failed_status(None, "an error without a status"), False),
        (Failed(codes.INFRA_BATCH_FAILED, "no reply", codes.INFRA_BAD_REPLY), True),
        (Failed(codes.INFRA_BATCH_REJECTED, "validation failed"), False),
        (Failed(codes.INFRA_BATCH_REJECTED, "HTTP 503", codes.INFRA_SERVER_ERROR), True),
        (Failed(codes.HARNESS_ERROR, "a bug"), False),
    ],
)
def test_which_written_batch_faults_are_submitted_again(failed: Failed, again: bool) -> None:
    assert submit_again(_written(failed)) is again


@pytest.mark.parametrize("code", [codes.INFRA_RATE_LIMITED, codes.INFRA_BAD_REPLY])
def test_a_live_trials_transient_fault_is_not_submitted_again(code: str) -> None:
    live = TrialResult(
        run_id="r", toolbench_version="0", model="openai/fake", format="prompt-json",
        scenario_id="s", status="infra_error", error_code=code,
        attempts=[Attempt(outcome="retry", error_code=code), Attempt(n=2, outcome="fail",
                                                                     error_code=code)],
    )  # fmt: skip
    assert submit_again(live) is False


@pytest.mark.parametrize(
    ("kind", "again"),
    [("rate_limit_error", True), ("overloaded_error", True), ("api_error", True),
     ("invalid_request_error", False), ("authentication_error", False)],
)  # fmt: skip
def test_anthropic_errored_results_are_classified_by_their_error_type(
    kind: str, again: bool
) -> None:
    import httpx

    wire = AnthropicBatch(httpx.AsyncClient(), "https://api.anthropic.com/v1/messages", {})
    error = {"type": "error", "error": {"type": kind, "message": "no"}}
    line = json.dumps({"custom_id": "t0", "result": {"type": "errored", "error": error}})
    found = wire.outcome(line)
    assert found is not None and isinstance(found[1], Failed)
    assert found[1].code == codes.INFRA_BATCH_FAILED
    assert submit_again(_written(found[1])) is again


def test_a_refusal_on_the_way_is_classified_as_live() -> None:
    import httpx

    request = httpx.Request("POST", "https://api.openai.com/v1/batches")
    assert transport_code(httpx.ConnectError("refused", request=request)) == codes.INFRA_CONNECTION
    assert transport_code(httpx.ReadTimeout("slow", request=request)) == codes.INFRA_TIMEOUT
    assert transport_code(BatchRefused("HTTP 400", codes.INFRA_CLIENT_ERROR)) == (
        codes.INFRA_CLIENT_ERROR
    )
    assert transport_code(ValueError("not JSON")) is None


def test_budget_used_up_before_submission_leaves_every_trial_for_resume(
    tmp_path: Path, five: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with FakeBatchServer(by_last_user({}, default="Fine.")) as server:
        assert run_fake(server, tmp_path, five, "--batch", "--budget", "0.000001") == 0
        assert server.batches == {} and server.live == []  # nothing sent after the budget
        assert _lines(tmp_path / "run") == {}
        assert "--budget of 1e-06s used up: 5 trial(s) not run" in capsys.readouterr().err
        assert run_fake(server, tmp_path, five, "--resume", "--batch",
                        models=None, formats=None) == 0  # fmt: skip
        assert _asked(server, "batch_0") == sorted(WORDS)
    assert {t.status for t in trials_by_id(tmp_path / "run").values()} == {"ok"}


def test_a_batch_running_when_the_budget_ends_is_cancelled_and_resumed(
    tmp_path: Path, five: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with FakeBatchServer(by_last_user({}, default="Fine.")) as server:
        server.never_end = True
        server.answer_before = lambda body: "Say alpha." in json.dumps(body)
        rc = run_fake(server, tmp_path, five, "--batch", "--budget", "0.5")
        assert rc == 3  # no trial ok: alpha's answer is kept but its replay left unstarted
        assert server.cancelled == ["batch_0"]  # cancelled at the provider
        err = capsys.readouterr().err
        assert "--budget of 0.5s used up: 1 trial(s) not run" in err  # alpha: replay left
        trials = trials_by_id(tmp_path / "run")
        assert sorted(trials) == ["beta", "delta", "epsilon", "gamma"]
        assert {t.error_code for t in trials.values()} == {codes.INFRA_BATCH_EXPIRED}
        assert trials["beta"].infra_error == (
            "the batch was cancelled at --budget before answering it"
        )
        server.never_end = False
        assert run_fake(server, tmp_path, five, "--resume", "--batch",
                        models=None, formats=None) == 0  # fmt: skip
        # alpha's answer is in its cassette: replayed, never asked again.
        assert _asked(server, "batch_1") == ["beta", "delta", "epsilon", "gamma"]
        assert server.live == []
    assert {t.status for t in trials_by_id(tmp_path / "run").values()} == {"ok"}
    assert sorted(_lines(tmp_path / "run")) == sorted(WORDS)
