"""The three redaction gaps of ``tests/test_redaction_gaps.py`` through a recorded run: a
fake server whose reply echoes a JWT, a URL's password after a lost slash and a
``password=...)`` value; the written cassettes and results hold no byte of them.

Known secrets (in the environment) are redacted by value, split over a stream's events
too; secrets nobody told toolbench about are redacted by shape in an error reply (where
a server echoes what it was sent), escaped in its JSON or not."""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.runner.conftest import run_fake
from toolbench.providers.fake import FakeServer, Fault, SseScript, by_last_user
from toolbench.redaction import REDACTED

HEADER = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9"
PAYLOAD = "eyJzdWIiOiJyZWNvcmRlZCIsIm5hbWUiOiJIMTAifQ"
SIGNATURE = "Zm9vYmFyYmF6cXV4X3JlY29yZGVkX3NpZ25hdHVyZQ"
JWT = f"{HEADER}.{PAYLOAD}.{SIGNATURE}"
PASSWORD = "hunter2recorded"
LOST_SLASH = f"https:/someone:{PASSWORD}@db.example/x"


@pytest.fixture
def fake() -> Iterator[FakeServer]:
    with FakeServer() as server:
        yield server


def _event(delta: dict[str, object], finish: str | None = None) -> bytes:
    chunk = {"id": "c", "object": "chat.completion.chunk", "created": 0, "model": "fake",
             "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}  # fmt: skip
    return b"data: " + json.dumps(chunk).encode() + b"\n\n"


def _written(root: Path) -> str:
    return "".join(
        p.read_text(encoding="utf-8", errors="replace")
        for p in sorted(root.rglob("*"))
        if p.is_file()
    )


def _assert_no_byte(text: str, *secrets: str) -> None:
    for secret in secrets:
        assert secret not in text, secret


def test_known_secrets_echoed_in_a_stream_split_over_events_reach_no_file(
    fake: FakeServer, tmp_path: Path, scenario_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ACME_TOKEN", JWT)
    monkeypatch.setenv("ACME_DB_URL", LOST_SLASH.replace(":/", "://", 1))
    reply = f"Token {JWT} for {LOST_SLASH} and f(password={PASSWORD}) done"
    cuts = [0, 8, 30, 61, 90, 120, 140, 150, len(reply)]
    parts: list[bytes | float] = [_event({"role": "assistant", "content": ""})]
    for a, b in itertools.pairwise(cuts):
        parts += [_event({"content": reply[a:b]}), 0.01]
    parts += [_event({}, "stop"), b"data: [DONE]\n\n"]
    fake.respond = by_last_user({"Weather in Paris": SseScript(parts)})
    assert run_fake(fake, tmp_path, scenario_file, formats="xml:stream") == 0
    written = _written(tmp_path / "cas") + _written(tmp_path / "run")
    _assert_no_byte(written, HEADER, PAYLOAD, SIGNATURE, PASSWORD)
    (line,) = [
        json.loads(x)
        for x in (tmp_path / "run" / "results.jsonl").read_text(encoding="utf-8").splitlines()
        if '"weather"' in x
    ]
    text = "".join(d["text"] for d in line["turns"][0]["stream"]["deltas"])
    assert text == (
        f"Token {REDACTED} for https:/{REDACTED}:{REDACTED}@db.example/x"  # the user too
        f" and f(password={REDACTED}) done"
    )


@pytest.mark.parametrize("escaped", [False, True])
def test_unknown_secrets_echoed_in_an_error_reply_reach_no_file(
    fake: FakeServer, tmp_path: Path, scenario_file: Path, escaped: bool
) -> None:
    jwt = "".join(f"\\u{ord(c):04x}" for c in JWT[:4]) + JWT[4:] if escaped else JWT
    message = f"bad token {jwt} for {LOST_SLASH} (sent f(password={PASSWORD}))"
    body = ('{"error": {"message": "' + message + '", "type": "invalid_request"}}').encode()
    fake.respond = by_last_user(
        {"Weather in Paris": Fault(400, body=body, headers={"content-type": "application/json"})}
    )
    run_fake(fake, tmp_path, scenario_file)
    written = _written(tmp_path / "cas") + _written(tmp_path / "run")
    _assert_no_byte(written, HEADER, PAYLOAD, SIGNATURE, PASSWORD)
    results = (tmp_path / "run" / "results.jsonl").read_text(encoding="utf-8")
    (error,) = [json.loads(x)["infra_error"] for x in results.splitlines() if "bad token" in x]
    assert f"bad token {REDACTED} for https:/someone:{REDACTED}@db.example/x" in error
    assert f"f(password={REDACTED}))" in error  # the brackets after it survive
