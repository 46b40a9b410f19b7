"""Faults are retried, not recorded; one bad trial never ends a run.

Each case here ended a run, or was saved into a cassette as the model's reply, before
the runner was hardened (issue 7). The fake server scripts the weather question's
replies in order (a fault, then the reply) and answers the joke at once, whatever order
the concurrent trials reach it in.
"""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.runner.conftest import GOOD_CALL, run_fake, trials_by_id
from tests.support.fake_openai import EMPTY_200, EMPTY_OBJECT, HTML_200, NO_CHOICES
from toolbench.cassettes.recording import VERSION
from toolbench.providers.fake import FakeServer, Fault, Hang, Reply, in_order

MODEL_DIR = Path("openai_fake") / "prompt-json"


@pytest.fixture
def fake() -> Iterator[FakeServer]:
    with FakeServer() as server:
        yield server


def _script(fake: FakeServer, weather: list[Reply], joke: Reply = "A joke.") -> None:
    """The weather question's replies in order (then ``joke``); the joke's at once."""
    fake.respond = in_order({"Weather in Paris": weather}, default=joke)


def _interactions(cassette: Path) -> list[dict[str, object]]:
    data = json.loads(cassette.read_text(encoding="utf-8"))
    return list(data["exchanges"])


pytestmark = pytest.mark.usefixtures("openai_key")


@pytest.mark.parametrize(
    "fault",
    [NO_CHOICES, HTML_200, EMPTY_200, EMPTY_OBJECT, Fault(503)],
    ids=["choices-empty", "html-200", "empty-200", "empty-object", "503"],
)
def test_a_malformed_reply_is_retried_and_never_recorded(
    fake: FakeServer, tmp_path: Path, scenario_file: Path, fault: Fault
) -> None:
    _script(fake, [fault, GOOD_CALL])
    assert run_fake(fake, tmp_path, scenario_file) == 0
    weather = trials_by_id(tmp_path / "run")["weather"]
    assert weather.status == "ok", weather.infra_error
    assert weather.scores is not None and weather.scores.get("call_accuracy") is True
    first, second = weather.attempts
    assert (first.n, first.outcome, second.n, second.outcome) == (1, "retry", 2, "ok")
    assert first.error_code in ("infra.bad_reply", "infra.server_error")
    assert first.wait_s > 0
    # Only the complete reply is in the cassette: the replay is the live result.
    cas = tmp_path / "cas" / MODEL_DIR / "weather.json"
    (only,) = _interactions(cas)
    assert "choices" in str(only["response"])
    replay = tmp_path / "replay"
    assert run_fake(fake, tmp_path, scenario_file, "--record", "none", out="replay") == 0
    again = trials_by_id(replay)["weather"]
    assert again.status == "ok" and again.scores == weather.scores


def test_retry_after_is_honoured(fake: FakeServer, tmp_path: Path, scenario_file: Path) -> None:
    _script(fake, [Fault(429, headers={"retry-after": "1"}), GOOD_CALL])
    t0 = time.monotonic()
    assert run_fake(fake, tmp_path, scenario_file) == 0
    assert time.monotonic() - t0 >= 1.0
    first, second = trials_by_id(tmp_path / "run")["weather"].attempts
    assert (first.error_code, first.http_status, first.wait_s) == ("infra.rate_limited", 429, 1.0)
    assert second.outcome == "ok"


# A fault that fails the weather trial, and the chat trial still runs: (weather's replies,
# extra options, wall-time bound in s, error code, attempts as (outcome, HTTP status), the
# whole infra_error (a regex), how a second run asks again: nothing was recorded).
FAILS = [
    # ``choices: []`` raised IndexError in provider.py and ended the whole run.
    pytest.param([NO_CHOICES] * 5, (), 20, "infra.bad_reply",
                 [("retry", None)] * 4 + [("fail", None)], r"chat completion without choices",
                 "resume", id="persistent-empty-choices"),
    pytest.param([Fault(404)], (), 20, "infra.client_error", [("fail", 404)], r".+",
                 "new", id="client-error-then-record-new"),
    pytest.param([Fault(429, headers={"retry-after": "3600"})], (), 20, "infra.rate_limited",
                 [("fail", 429)], r".*server asked to wait 3600s; cap 60s.*", None,
                 id="retry-after-past-the-cap-fails-at-once"),
    # Two timeouts, not five long ones (five 3 s hangs would take 15 s; a live run also
    # imports what LiteLLM's first call needs before its first deadline starts).
    pytest.param([Hang(3), Hang(3)], ("--timeout", "0.5"), 10, "infra.timeout",
                 [("retry", 408), ("fail", 408)], r"timed out after 0.5s.*", None,
                 id="hung-server"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("weather_replies", "extra", "seconds", "code", "attempts", "says", "again"), FAILS
)
def test_a_fault_fails_its_trial_only(
    fake: FakeServer, tmp_path: Path, scenario_file: Path, weather_replies: list[Reply],
    extra: tuple[str, ...], seconds: float, code: str, attempts: list[tuple[str, int | None]],
    says: str, again: str | None,
) -> None:  # fmt: skip
    _script(fake, weather_replies)
    t0 = time.monotonic()
    assert run_fake(fake, tmp_path, scenario_file, *extra) == 0
    assert time.monotonic() - t0 < seconds
    by_id = trials_by_id(tmp_path / "run")
    weather = by_id["weather"]
    assert (weather.status, weather.error_code) == ("infra_error", code)
    assert [(a.outcome, a.http_status) for a in weather.attempts] == attempts
    assert re.fullmatch(says, weather.infra_error or "", re.DOTALL), weather.infra_error
    assert by_id["chat"].status == "ok"
    assert not (tmp_path / "cas" / MODEL_DIR / "weather.json").exists()
    if again is None:
        return
    # Nothing was recorded for it, so --resume (or a new run, --record new) asks again.
    _script(fake, [GOOD_CALL])
    n = len(fake.received)
    out = "run" if again == "resume" else "again"
    if again == "resume":
        (tmp_path / "run" / "results.jsonl").unlink()
        assert run_fake(fake, tmp_path, scenario_file, "--resume") == 0
        assert len(fake.received) == n + 1  # weather asked again; chat replayed
    else:
        assert run_fake(fake, tmp_path, scenario_file, out=out) == 0
    assert trials_by_id(tmp_path / out)["weather"].status == "ok"


@pytest.mark.parametrize(
    "damage",
    [
        lambda text: text[: len(text) // 2],  # truncated mid-write
        lambda text: f'{{"kind": "toolbench-cassette", "version": {VERSION}, "exchanges": [{{}}]}}',
        lambda text: '{"kind": "toolbench-cassette", "exchanges": [',  # malformed JSON
        None,  # binary
        lambda text: text.replace(f'"version": {VERSION}', '"version": 99', 1),  # newer
    ],
    ids=["truncated", "wrong-shape", "malformed", "binary", "version-99"],
)
def test_an_unreadable_cassette_fails_its_trial_and_is_recorded_again(
    fake: FakeServer, tmp_path: Path, scenario_file: Path, damage: object
) -> None:
    _script(fake, [GOOD_CALL])
    assert run_fake(fake, tmp_path, scenario_file) == 0
    cas = tmp_path / "cas" / MODEL_DIR / "weather.json"
    if damage is None:
        cas.write_bytes(b"\xff\xfe\x00binary\x80\x81")
    else:
        cas.write_text(damage(cas.read_text()))  # type: ignore[operator]
    replay = tmp_path / "replay"
    assert run_fake(fake, tmp_path, scenario_file, "--record", "none", out="replay") == 0
    by_id = trials_by_id(replay)
    weather = by_id["weather"]
    assert (weather.status, weather.error_code) == ("cassette_unreadable", "cassette.unreadable")
    assert (weather.infra_error or "").startswith(f"cassette {cas} is unreadable: ")
    assert by_id["chat"].status == "ok"
    # --record new moves it aside and records the trial again.
    _script(fake, [GOOD_CALL])
    assert run_fake(fake, tmp_path, scenario_file, "--out", str(tmp_path / "new")) == 0
    fresh = trials_by_id(tmp_path / "new")["weather"]
    assert fresh.status == "ok" and fresh.scores is not None
    assert fresh.scores.get("call_accuracy") is True
    assert "moved to weather.json.unreadable-" in fresh.notes[0]
    assert len(_interactions(cas)) == 1
    assert list(cas.parent.glob("weather.json.unreadable-*"))


def test_a_failed_save_keeps_the_old_cassette_whole(
    fake: FakeServer, tmp_path: Path, scenario_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--record all`` deleted the cassette first, and vcrpy wrote it in place. The
    failed save also stops the run (exit 4: tests/runner/test_disk_faults.py)."""
    _script(fake, [GOOD_CALL])
    assert run_fake(fake, tmp_path, scenario_file) == 0
    cas = tmp_path / "cas" / MODEL_DIR / "weather.json"
    before = cas.read_bytes()
    replace = os.replace

    def no_replace(src: str, dst: str) -> None:
        if str(dst) == str(cas):
            raise OSError(28, "No space left on device")
        replace(src, dst)

    monkeypatch.setattr(os, "replace", no_replace)
    _script(fake, ['{"tool": "get_weather", "arguments": {"city": "Rome"}}'], "Another joke.")
    out = str(tmp_path / "all")
    assert run_fake(fake, tmp_path, scenario_file, "--record", "all", "--out", out) == 4
    assert cas.read_bytes() == before
    assert sorted(p.name for p in cas.parent.iterdir()) == ["chat.json", "weather.json"]
    weather = trials_by_id(tmp_path / "all")["weather"]
    assert (weather.status, weather.error_code) == ("harness_error", "harness.cassette_write")
    assert weather.infra_error == (
        f"CassetteWriteError: cannot write cassette {cas}: No space left on device"
    )
