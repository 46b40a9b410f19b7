"""Streamed faults are classified, retried and bounded like plain ones (issue 21).

A fake OpenAI server streams byte for byte (OpenAI's documented ``chat.completion.chunk``
SSE, platform.openai.com/docs/api-reference/chat-streaming) and scripts the weather
question's answers in order (a broken stream, then a good one), whatever order the
concurrent trials reach it in.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.runner.conftest import run_fake, trials_by_id
from toolbench import codes
from toolbench.cassettes.recording import load
from toolbench.providers.fake import FakeServer, Reply, SseScript, in_order

pytestmark = pytest.mark.usefixtures("openai_key")
CASSETTE = Path("cas") / "openai_fake" / "xml_stream" / "weather.json"


@pytest.fixture
def fake() -> Iterator[FakeServer]:
    with FakeServer() as server:
        yield server


def _event(delta: dict[str, object], finish: str | None = None) -> bytes:
    chunk = {"id": "c", "object": "chat.completion.chunk", "created": 0, "model": "fake",
             "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}  # fmt: skip
    return b"data: " + json.dumps(chunk).encode() + b"\n\n"


HELLO = _event({"role": "assistant", "content": "Hel"})
DONE = b"data: [DONE]\n\n"
USAGE_ONLY = b'data: {"id": "c", "object": "chat.completion.chunk", "created": 0, "model": "f",'
USAGE_ONLY += b' "choices": [], "usage": {"prompt_tokens": 3, "completion_tokens": 0}}\n\n'
GOOD = SseScript([_event({"role": "assistant", "content": "Sunny."}), _event({}, "stop"), DONE])

BROKEN = [
    ("truncated", SseScript([HELLO, b'data: {"id": "c", "choi'], end=False),
     codes.INFRA_STREAM_TRUNCATED, 5),
    ("data line not JSON", SseScript([HELLO, b"data: {not json}\n\n", DONE]),
     codes.INFRA_STREAM_BAD_EVENT, 5),
    ("event over 1 MB", SseScript([HELLO, b"data: " + b"x" * 1_100_000 + b"\n\n"]),
     codes.INFRA_STREAM_EVENT_TOO_LARGE, 5),
    ("never ends", SseScript([HELLO], end=False, hang_s=3.0), codes.INFRA_STREAM_STALLED, 2),
]  # fmt: skip


def _weather(fake: FakeServer, replies: list[Reply]) -> None:
    fake.respond = in_order({"Weather in Paris": replies}, default="A joke.")


@pytest.mark.parametrize(("case", "script", "code", "attempts"), BROKEN,
                         ids=[b[0] for b in BROKEN])  # fmt: skip
def test_a_broken_stream_is_asked_again_as_often_as_a_plain_fault(
    fake: FakeServer, tmp_path: Path, scenario_file: Path,
    case: str, script: SseScript, code: str, attempts: int,
) -> None:  # fmt: skip
    """Five attempts, as a plain 5xx gets; a stall counts as a timeout (two)."""
    _weather(fake, [script] * attempts)
    assert run_fake(fake, tmp_path, scenario_file, "--timeout", "1", formats="xml:stream") == 0
    got = trials_by_id(tmp_path / "run")
    bad = got["weather"]
    assert (bad.status, bad.error_code) == ("infra_error", code), bad.infra_error
    assert [a.outcome for a in bad.attempts] == ["retry"] * (attempts - 1) + ["fail"]
    assert {a.error_code for a in bad.attempts} == {code}
    assert bad.infra_error is not None and "'Hel'" in bad.infra_error  # what arrived is kept
    assert got["chat"].status == "ok"
    assert not (tmp_path / CASSETTE).exists()  # nothing recorded: --record new asks again


@pytest.mark.parametrize(("case", "script", "code", "attempts"), BROKEN,
                         ids=[b[0] for b in BROKEN])  # fmt: skip
def test_a_broken_stream_then_a_good_one_is_the_good_one_recorded(
    fake: FakeServer, tmp_path: Path, scenario_file: Path,
    case: str, script: SseScript, code: str, attempts: int,
) -> None:  # fmt: skip
    _weather(fake, [script, GOOD])
    assert run_fake(fake, tmp_path, scenario_file, "--timeout", "1", formats="xml:stream") == 0
    weather = trials_by_id(tmp_path / "run")["weather"]
    assert weather.status == "ok" and weather.turns[0].reply.text == "Sunny."
    assert [(a.outcome, a.error_code) for a in weather.attempts] == [
        ("retry", code), ("ok", None),
    ]  # fmt: skip
    (exchange,) = load(tmp_path / CASSETTE).exchanges
    assert "Sunny." in "".join(c.text or "" for c in exchange.response.chunks)


EMPTY = [
    ("no event at all", SseScript([])),
    ("[DONE] alone", SseScript([DONE])),
    ("choices: [] only", SseScript([USAGE_ONLY, DONE])),
]


@pytest.mark.parametrize(("case", "script"), EMPTY, ids=[e[0] for e in EMPTY])
def test_a_stream_that_carried_nothing_is_a_bad_reply_never_the_models_silence(
    fake: FakeServer, tmp_path: Path, scenario_file: Path, case: str, script: SseScript
) -> None:
    """Never ``ok`` with ``call.missing``, never recorded; retried like a plain body that
    is no reply (a live retry may get a reply)."""
    _weather(fake, [script] * 5)
    assert run_fake(fake, tmp_path, scenario_file, formats="xml:stream") == 0
    weather = trials_by_id(tmp_path / "run")["weather"]
    assert (weather.status, weather.error_code) == ("infra_error", codes.INFRA_BAD_REPLY)
    assert len(weather.attempts) == 5
    assert {a.http_status for a in weather.attempts} == {200}
    assert not (tmp_path / CASSETTE).exists()
    _weather(fake, [script, GOOD])
    assert run_fake(fake, tmp_path, scenario_file, formats="xml:stream", out="again") == 0
    again = trials_by_id(tmp_path / "again")["weather"]
    assert again.status == "ok" and again.turns[0].reply.text == "Sunny."
    assert [a.error_code for a in again.attempts] == [codes.INFRA_BAD_REPLY, None]


def test_the_timeout_bounds_the_whole_stream_not_each_event(
    fake: FakeServer, tmp_path: Path, scenario_file: Path
) -> None:
    """A delta every 0.2 s for 8 s under ``--timeout 1``: each event comes in time, the
    response does not; the attempt ends at the deadline (twice: a stall is a timeout)."""
    drip: list[bytes | float] = [_event({"role": "assistant", "content": ""})]
    for _ in range(40):
        drip += [0.2, _event({"content": "."})]
    _weather(fake, [SseScript([*drip, _event({}, "stop"), DONE])] * 2)
    t0 = time.monotonic()
    assert run_fake(fake, tmp_path, scenario_file, "--timeout", "1", formats="xml:stream") == 0
    took = time.monotonic() - t0
    weather = trials_by_id(tmp_path / "run")["weather"]
    assert weather.error_code == codes.INFRA_STREAM_STALLED
    assert len(weather.attempts) == 2
    assert took < 7.0, took  # two deadlines and start-up, not 16 s of drip


UNREADABLE = SseScript([
    b'data: {"id": "c", "object": "chat.completion.chunk", "created": 0, "model": "f",'
    b' "choices": "none"}\n\n', DONE,
])  # fmt: skip
"""Valid JSON that is no chunk: LiteLLM's stream wrapper raises on it (an
``APIConnectionError`` inside a ``MidStreamFallbackError``, status 500)."""


def test_a_stream_litellm_cannot_decode_is_a_bad_reply_with_the_servers_200(
    fake: FakeServer, tmp_path: Path, scenario_file: Path
) -> None:
    _weather(fake, [UNREADABLE, GOOD])
    assert run_fake(fake, tmp_path, scenario_file, formats="xml:stream") == 0
    weather = trials_by_id(tmp_path / "run")["weather"]
    assert weather.status == "ok" and weather.turns[0].reply.text == "Sunny."
    first = weather.attempts[0]
    assert (first.error_code, first.http_status) == (codes.INFRA_BAD_REPLY, 200)
    assert first.error is not None and "could not read" in first.error
    (exchange,) = load(tmp_path / CASSETTE).exchanges  # the good one only
    assert "Sunny." in "".join(c.text or "" for c in exchange.response.chunks)


def test_a_gemini_stream_that_blocked_the_prompt_is_the_providers_filter(
    fake: FakeServer, tmp_path: Path, scenario_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A blocked prompt streamed (ai.google.dev/api/generate-content: ``promptFeedback``
    with ``blockReason`` and no ``candidates``, ``streamGenerateContent?alt=sse``):
    LiteLLM reads it as an empty answer with finish ``content_filter``; nothing the model
    said is in it, as in the plain reply without candidates: the provider's filter
    (``provider.filtered``, issue 34), never recorded."""
    monkeypatch.setenv("GEMINI_API_KEY", "gemini-test-key-not-secret")
    blocked = b'data: {"promptFeedback": {"blockReason": "SAFETY"}, "usageMetadata": '
    blocked += b'{"promptTokenCount": 3, "totalTokenCount": 3}}\r\n\r\n'
    fake.respond = lambda body: SseScript([blocked])
    assert run_fake(fake, tmp_path, scenario_file, models="gemini/gemini-2.0-flash",
                    formats="xml:stream") == 3  # fmt: skip
    assert fake.received[0].path.endswith(":streamGenerateContent?alt=sse")
    for trial in trials_by_id(tmp_path / "run").values():
        assert (trial.status, trial.error_code) == ("infra_error", codes.PROVIDER_FILTERED)
        assert trial.infra_error is not None and "blockReason SAFETY" in trial.infra_error
    assert not list((tmp_path / "cas").rglob("*.json"))
