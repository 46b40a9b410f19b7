"""Faults are retried, not recorded; one bad trial never ends a run.

Each case here ended a run, or was saved into a cassette as the model's reply, before
the runner was hardened (issue 7). The fake server scripts the weather question's
replies in order (a fault, then the reply) and answers the joke at once, whatever order
the concurrent trials reach it in.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from tests.runner.conftest import GOOD_CALL
from tests.support.fake_openai import EMPTY_200, EMPTY_OBJECT, HTML_200, NO_CHOICES
from toolbench.cli.app import run_cli
from toolbench.providers.fake import FakeServer, Fault, Hang, Reply, in_order
from toolbench.results import TrialResult, load_results

MODEL_DIR = Path("openai_fake") / "prompt-json"


@pytest.fixture
def fake() -> Iterator[FakeServer]:
    with FakeServer() as server:
        yield server


def _script(fake: FakeServer, weather: list[Reply], joke: Reply = "A joke.") -> None:
    """The weather question's replies in order (then ``joke``); the joke's at once."""
    fake.respond = in_order({"Weather in Paris": weather}, default=joke)


def _run(fake: FakeServer, tmp: Path, scen: Path, *extra: str) -> int:
    return run_cli([
        "run", "--models", "openai/fake", "--formats", "prompt-json",
        "--scenarios", str(scen), "--api-base", fake.base_url,
        "--out", str(tmp / "run"), "--cassettes", str(tmp / "cas"),
        "--quiet", "--no-report", *extra,
    ])  # fmt: skip


def _by_id(run: Path) -> dict[str, TrialResult]:
    return {r.scenario_id: r for r in load_results(run)}


def _interactions(cassette: Path) -> list[dict[str, object]]:
    data = yaml.safe_load(cassette.read_text(encoding="utf-8"))
    return list(data["interactions"])


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "test-key-not-secret-0000")


@pytest.mark.parametrize(
    "fault",
    [NO_CHOICES, HTML_200, EMPTY_200, EMPTY_OBJECT, Fault(503)],
    ids=["choices-empty", "html-200", "empty-200", "empty-object", "503"],
)
def test_a_malformed_reply_is_retried_and_never_recorded(
    fake: FakeServer, tmp_path: Path, scenario_file: Path, fault: Fault
) -> None:
    _script(fake, [fault, GOOD_CALL])
    assert _run(fake, tmp_path, scenario_file) == 0
    weather = _by_id(tmp_path / "run")["weather"]
    assert weather.status == "ok", weather.infra_error
    assert weather.scores is not None and weather.scores.call_accuracy is True
    first, second = weather.attempts
    assert (first.n, first.outcome, second.n, second.outcome) == (1, "retry", 2, "ok")
    assert first.error_code in ("infra.bad_reply", "infra.server_error")
    assert first.wait_s > 0
    # Only the complete reply is in the cassette: the replay is the live result.
    cas = tmp_path / "cas" / MODEL_DIR / "weather.yaml"
    (only,) = _interactions(cas)
    assert "choices" in str(only["response"])
    replay = tmp_path / "replay"
    rc = run_cli([
        "run", "--models", "openai/fake", "--formats", "prompt-json", "--record", "none",
        "--scenarios", str(scenario_file), "--out", str(replay), "--api-base", fake.base_url,
        "--cassettes", str(tmp_path / "cas"), "--quiet", "--no-report",
    ])  # fmt: skip
    assert rc == 0
    again = _by_id(replay)["weather"]
    assert again.status == "ok" and again.scores == weather.scores


def test_a_persistent_empty_choices_fails_its_trial_only(
    fake: FakeServer, tmp_path: Path, scenario_file: Path
) -> None:
    """``choices: []`` raised IndexError in provider.py and ended the whole run."""
    _script(fake, [NO_CHOICES] * 5)
    assert _run(fake, tmp_path, scenario_file) == 0
    by_id = _by_id(tmp_path / "run")
    weather = by_id["weather"]
    assert weather.status == "infra_error"
    assert weather.error_code == "infra.bad_reply"
    assert weather.infra_error == "chat completion without choices"
    assert [a.outcome for a in weather.attempts] == ["retry"] * 4 + ["fail"]
    assert by_id["chat"].status == "ok"
    # Nothing was recorded for it, so --record new asks the server again.
    assert not (tmp_path / "cas" / MODEL_DIR / "weather.yaml").exists()
    (tmp_path / "run" / "results.jsonl").unlink()
    _script(fake, [GOOD_CALL])
    n = len(fake.received)
    assert _run(fake, tmp_path, scenario_file, "--resume") == 0
    assert len(fake.received) == n + 1  # weather asked again; chat replayed
    assert _by_id(tmp_path / "run")["weather"].status == "ok"


def test_a_client_error_is_not_recorded_and_record_new_asks_again(
    fake: FakeServer, tmp_path: Path, scenario_file: Path
) -> None:
    _script(fake, [Fault(404)])
    assert _run(fake, tmp_path, scenario_file) == 0
    weather = _by_id(tmp_path / "run")["weather"]
    assert (weather.status, weather.error_code) == ("infra_error", "infra.client_error")
    assert [(a.outcome, a.http_status) for a in weather.attempts] == [("fail", 404)]
    assert not (tmp_path / "cas" / MODEL_DIR / "weather.yaml").exists()
    _script(fake, [GOOD_CALL])
    rc = run_cli([
        "run", "--models", "openai/fake", "--formats", "prompt-json",
        "--scenarios", str(scenario_file), "--api-base", fake.base_url,
        "--out", str(tmp_path / "again"), "--cassettes", str(tmp_path / "cas"),
        "--quiet", "--no-report",
    ])  # fmt: skip
    assert rc == 0
    assert _by_id(tmp_path / "again")["weather"].status == "ok"


def test_retry_after_is_honoured(fake: FakeServer, tmp_path: Path, scenario_file: Path) -> None:
    _script(fake, [Fault(429, headers={"retry-after": "1"}), GOOD_CALL])
    t0 = time.monotonic()
    assert _run(fake, tmp_path, scenario_file) == 0
    assert time.monotonic() - t0 >= 1.0
    first, second = _by_id(tmp_path / "run")["weather"].attempts
    assert (first.error_code, first.http_status, first.wait_s) == ("infra.rate_limited", 429, 1.0)
    assert second.outcome == "ok"


def test_a_retry_after_past_the_cap_fails_at_once(
    fake: FakeServer, tmp_path: Path, scenario_file: Path
) -> None:
    _script(fake, [Fault(429, headers={"retry-after": "3600"})])
    t0 = time.monotonic()
    assert _run(fake, tmp_path, scenario_file) == 0
    assert time.monotonic() - t0 < 20
    weather = _by_id(tmp_path / "run")["weather"]
    assert weather.error_code == "infra.rate_limited"
    assert "server asked to wait 3600s; cap 60s" in (weather.infra_error or "")
    assert len(weather.attempts) == 1


def test_a_hung_server_costs_two_timeouts_not_five_long_ones(
    fake: FakeServer, tmp_path: Path, scenario_file: Path
) -> None:
    _script(fake, [Hang(3), Hang(3)])
    t0 = time.monotonic()
    assert _run(fake, tmp_path, scenario_file, "--timeout", "0.5") == 0
    assert time.monotonic() - t0 < 8
    weather = _by_id(tmp_path / "run")["weather"]
    assert (weather.status, weather.error_code) == ("infra_error", "infra.timeout")
    assert [a.outcome for a in weather.attempts] == ["retry", "fail"]
    assert (weather.infra_error or "").startswith("timed out after 0s")


@pytest.mark.parametrize(
    "damage",
    [
        lambda text: text[: len(text) // 2],  # truncated mid-write
        lambda text: "interactions: [{request: 1}]\n",  # valid YAML, wrong shape
        lambda text: "interactions:\n  - request: {body: [\n",  # malformed YAML
        None,  # binary
    ],
    ids=["truncated", "wrong-shape", "malformed", "binary"],
)
def test_an_unreadable_cassette_fails_its_trial_and_is_recorded_again(
    fake: FakeServer, tmp_path: Path, scenario_file: Path, damage: object
) -> None:
    _script(fake, [GOOD_CALL])
    assert _run(fake, tmp_path, scenario_file) == 0
    cas = tmp_path / "cas" / MODEL_DIR / "weather.yaml"
    if damage is None:
        cas.write_bytes(b"\xff\xfe\x00binary\x80\x81")
    else:
        cas.write_text(damage(cas.read_text()))  # type: ignore[operator]
    replay = tmp_path / "replay"
    rc = run_cli([
        "run", "--models", "openai/fake", "--formats", "prompt-json", "--record", "none",
        "--scenarios", str(scenario_file), "--out", str(replay), "--api-base", fake.base_url,
        "--cassettes", str(tmp_path / "cas"), "--quiet", "--no-report",
    ])  # fmt: skip
    assert rc == 0
    by_id = _by_id(replay)
    weather = by_id["weather"]
    assert (weather.status, weather.error_code) == ("cassette_unreadable", "cassette.unreadable")
    assert (weather.infra_error or "").startswith(f"cassette {cas} is unreadable: ")
    assert by_id["chat"].status == "ok"
    # --record new moves it aside and records the trial again.
    _script(fake, [GOOD_CALL])
    assert _run(fake, tmp_path, scenario_file, "--out", str(tmp_path / "new")) == 0
    fresh = _by_id(tmp_path / "new")["weather"]
    assert fresh.status == "ok" and fresh.scores is not None
    assert fresh.scores.call_accuracy is True
    assert "moved to weather.yaml.unreadable-" in fresh.notes[0]
    assert len(_interactions(cas)) == 1
    assert list(cas.parent.glob("weather.yaml.unreadable-*"))


def test_a_failed_save_keeps_the_old_cassette_whole(
    fake: FakeServer, tmp_path: Path, scenario_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--record all`` deleted the cassette first, and vcrpy wrote it in place."""
    _script(fake, [GOOD_CALL])
    assert _run(fake, tmp_path, scenario_file) == 0
    cas = tmp_path / "cas" / MODEL_DIR / "weather.yaml"
    before = cas.read_bytes()

    def no_replace(src: str, dst: str) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr("toolbench.runner.cassettes.os.replace", no_replace)
    _script(fake, ['{"tool": "get_weather", "arguments": {"city": "Rome"}}'], "Another joke.")
    out = str(tmp_path / "all")
    assert _run(fake, tmp_path, scenario_file, "--record", "all", "--out", out) == 3
    assert cas.read_bytes() == before
    assert sorted(p.name for p in cas.parent.iterdir()) == ["chat.yaml", "weather.yaml"]
    weather = _by_id(tmp_path / "all")["weather"]
    assert (weather.status, weather.error_code) == ("harness_error", "harness.cassette_write")
    assert weather.infra_error == (
        f"CassetteWriteError: cannot write cassette {cas}: No space left on device"
    )
