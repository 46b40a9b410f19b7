"""Bedrock's ``converse-stream`` answers in AWS eventstream frames, not lines (issue 21:
every Bedrock stream was ``infra.stream_truncated``). Frames as documented in "Event
stream encoding" (AWS developer guides; the format botocore's ``EventStreamBuffer``
reads for LiteLLM): prelude with CRC32, string headers ``:event-type``,
``:content-type``, ``:message-type``, a JSON payload (the ConverseStream event bodies of
the Bedrock API reference: ``messageStart``, ``contentBlockDelta``, ``messageStop``,
``metadata``), and a message CRC32.
"""

from __future__ import annotations

import json
import struct
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.runner.conftest import run_fake, trials_by_id
from toolbench import codes
from toolbench.cassettes.recording import load
from toolbench.cli.app import run_cli
from toolbench.eventstream import Frame, FrameError, FrameReader, FrameTooLarge
from toolbench.providers.fake import FakeServer, SseScript

MODEL = "bedrock/converse/anthropic.claude-3-haiku-20240307-v1:0"
ES = "application/vnd.amazon.eventstream"


def _header(name: str, value: str) -> bytes:
    n, v = name.encode(), value.encode()
    return bytes([len(n)]) + n + bytes([7]) + struct.pack(">H", len(v)) + v


def frame(event: str, body: object) -> bytes:
    raw = _header(":event-type", event) + _header(":content-type", "application/json")
    raw += _header(":message-type", "event")
    return Frame({}, raw, b"").encode(json.dumps(body).encode())


def reply(text: str) -> list[bytes]:
    words = text.split(" ")
    pieces = [w + (" " if i < len(words) - 1 else "") for i, w in enumerate(words)]
    return [
        frame("messageStart", {"role": "assistant"}),
        *(frame("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": p}})
          for p in pieces),
        frame("contentBlockStop", {"contentBlockIndex": 0}),
        frame("messageStop", {"stopReason": "end_turn"}),
        frame("metadata", {"usage": {"inputTokens": 9, "outputTokens": 4, "totalTokens": 13},
                           "metrics": {"latencyMs": 12}}),
    ]  # fmt: skip


def test_frames_are_read_from_any_split() -> None:
    body = b"".join(reply("Sunny and warm."))
    for step in (1, 7, 64, len(body)):
        reader = FrameReader(1_000_000)
        frames = [f for i in range(0, len(body), step) for f in reader.feed(body[i : i + step])]
        assert reader.pending == 0
        assert [f.headers[":event-type"] for f in frames][:2] == [
            "messageStart",
            "contentBlockDelta",
        ]
        texts = [json.loads(f.payload).get("delta", {}).get("text", "") for f in frames]
        assert "".join(texts) == "Sunny and warm."


def test_bad_frames_are_typed_errors() -> None:
    good = frame("messageStop", {"stopReason": "end_turn"})
    bad_prelude = good[:8] + b"\x00\x00\x00\x00" + good[12:]
    with pytest.raises(FrameError, match="prelude CRC"):
        FrameReader(1_000_000).feed(bad_prelude)
    bad_message = good[:-1] + bytes([good[-1] ^ 1])
    with pytest.raises(FrameError, match="message CRC"):
        FrameReader(1_000_000).feed(bad_message)
    with pytest.raises(FrameTooLarge):
        FrameReader(len(good) - 1).feed(good)
    cut = FrameReader(1_000_000)
    assert cut.feed(good[:20]) == [] and cut.pending == 20


@pytest.fixture
def aws(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIAFAKEFAKEFAKE0000")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "not-a-secret-at-all-just-a-test-value")
    monkeypatch.setenv("AWS_REGION_NAME", "us-east-1")


@pytest.fixture
def fake() -> Iterator[FakeServer]:
    with FakeServer() as server:
        yield server


@pytest.mark.usefixtures("aws")
def test_a_bedrock_stream_is_read_recorded_and_replayed(
    fake: FakeServer, tmp_path: Path, scenario_file: Path
) -> None:
    parts: list[bytes | float] = []
    for f in reply("I cannot check the weather."):
        parts += [f[:10], 0.01, f[10:]]  # frames cut across chunks
    fake.respond = lambda body: SseScript(parts, content_type=ES)
    assert run_fake(fake, tmp_path, scenario_file, models=MODEL, formats="xml:stream") == 0
    rec = trials_by_id(tmp_path / "run")
    for trial in rec.values():
        assert trial.status == "ok", trial.infra_error
        assert trial.turns[0].reply.text == "I cannot check the weather."
    assert fake.received[0].path.endswith("/converse-stream")
    (cassette,) = [p for p in (tmp_path / "cas").rglob("weather.json")]
    assert any(c.b64 for c in load(cassette).exchanges[0].response.chunks)
    n = len(fake.received)
    assert run_fake(fake, tmp_path, scenario_file, "--record", "none", models=MODEL,
                    formats="xml:stream", out="rep") == 0  # fmt: skip
    assert len(fake.received) == n  # offline
    for key, trial in trials_by_id(tmp_path / "rep").items():
        assert trial.turns[0].reply == rec[key].turns[0].reply
        assert trial.scores == rec[key].scores  # the streaming scorer's values among them


@pytest.mark.usefixtures("aws")
@pytest.mark.parametrize(
    ("case", "code"),
    [
        ("bad CRC", codes.INFRA_STREAM_BAD_EVENT),
        ("cut inside a frame", codes.INFRA_STREAM_TRUNCATED),
    ],
)
def test_a_broken_bedrock_stream_is_a_typed_stream_fault(
    fake: FakeServer, tmp_path: Path, scenario_file: Path, case: str, code: str
) -> None:
    frames = reply("Hello there.")
    if case == "bad CRC":
        broken = frames[1][:-1] + bytes([frames[1][-1] ^ 1])
        parts: list[bytes | float] = [frames[0], broken, *frames[2:]]
    else:
        parts = [frames[0], frames[1][:15]]
    fake.respond = lambda body: SseScript(parts, content_type=ES)
    assert run_fake(fake, tmp_path, scenario_file, models=MODEL, formats="xml:stream") == 3
    for trial in trials_by_id(tmp_path / "run").values():
        assert (trial.status, trial.error_code) == ("infra_error", code), trial.infra_error
        assert len(trial.attempts) == 5


KEY = "sk-live-bedrock-0123456789abcdefABCDEF"


@pytest.mark.usefixtures("aws")
def test_a_key_split_over_two_frames_is_redacted_and_the_frames_stay_valid(
    fake: FakeServer, tmp_path: Path, scenario_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ACME_API_KEY", KEY)
    frames = reply("Your key is " + KEY[:9])
    rest = {"contentBlockIndex": 0, "delta": {"text": KEY[9:] + " ok."}}
    frames.insert(-3, frame("contentBlockDelta", rest))
    fake.respond = lambda body: SseScript(list(frames), content_type=ES)
    assert run_fake(fake, tmp_path, scenario_file, models=MODEL, formats="xml:stream") == 0
    (cassette,) = [p for p in (tmp_path / "cas").rglob("weather.json")]
    body = b"".join(c.data() for c in load(cassette).exchanges[0].response.chunks)
    reader = FrameReader(1_000_000)
    payloads = b"".join(f.payload for f in reader.feed(body))  # every CRC still holds
    assert reader.pending == 0 and b"<redacted>" in payloads
    assert KEY[:9].encode() not in body and KEY[9:].encode() not in body
    assert run_cli(["cassettes", "audit", str(tmp_path / "cas")]) == 0
    rep = tmp_path / "rep"
    assert run_fake(fake, tmp_path, scenario_file, "--record", "none", models=MODEL,
                    formats="xml:stream", out="rep") == 0  # fmt: skip
    for trial in trials_by_id(rep).values():
        assert trial.status == "ok"
    weather = trials_by_id(rep)["weather"]
    assert weather.turns[0].reply.text == "Your key is <redacted> ok."
