"""Ollama streams ``/api/chat`` as NDJSON (``application/x-ndjson``: one JSON object per
line, ``done: true`` on the last; github.com/ollama/ollama docs/api.md, "Generate a chat
completion", streaming): each line is an event, a line that is not JSON is a typed
stream fault, and a body without any line is no reply."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.runner.conftest import run_fake, trials_by_id
from toolbench import codes
from toolbench.providers.fake import FakeServer, SseScript

MODEL = "ollama_chat/llama3"
NDJSON = "application/x-ndjson"


def line(obj: object) -> bytes:
    return json.dumps(obj).encode() + b"\n"


def chat(text: str) -> list[bytes | float]:
    parts: list[bytes | float] = [
        line({"model": "llama3", "created_at": "2024-01-01T00:00:00Z",
              "message": {"role": "assistant", "content": w + " "}, "done": False})
        for w in text.split(" ")
    ]  # fmt: skip
    last = {"model": "llama3", "created_at": "2024-01-01T00:00:01Z",
            "message": {"role": "assistant", "content": ""}, "done": True,
            "done_reason": "stop", "prompt_eval_count": 9, "eval_count": 3}  # fmt: skip
    parts.append(line(last))
    return parts


@pytest.fixture
def fake() -> Iterator[FakeServer]:
    with FakeServer() as server:
        yield server


def test_an_ollama_stream_is_read_and_replayed(
    fake: FakeServer, tmp_path: Path, scenario_file: Path
) -> None:
    fake.respond = lambda body: SseScript(chat("No tool needed."), content_type=NDJSON)
    assert run_fake(fake, tmp_path, scenario_file, models=MODEL, formats="xml:stream") == 0
    for trial in trials_by_id(tmp_path / "run").values():
        assert trial.status == "ok", trial.infra_error
        assert trial.turns[0].reply.text.strip() == "No tool needed."
    assert fake.received[0].path.endswith("/api/chat")
    assert run_fake(fake, tmp_path, scenario_file, "--record", "none", models=MODEL,
                    formats="xml:stream", out="rep") == 0  # fmt: skip
    assert all(t.status == "ok" for t in trials_by_id(tmp_path / "rep").values())


@pytest.mark.parametrize(
    ("case", "parts", "code"),
    [("a line that is not JSON", [b"{not json}\n"], codes.INFRA_STREAM_BAD_EVENT),
     ("no line at all", [], codes.INFRA_BAD_REPLY)],
)  # fmt: skip
def test_a_broken_ollama_stream_is_a_typed_fault(
    fake: FakeServer, tmp_path: Path, scenario_file: Path,
    case: str, parts: list[bytes | float], code: str,
) -> None:  # fmt: skip
    good = chat("Fine.")
    script = [good[0], *parts, *good[1:]] if parts else []
    fake.respond = lambda body: SseScript(script, content_type=NDJSON)
    assert run_fake(fake, tmp_path, scenario_file, models=MODEL, formats="xml:stream") == 3
    for trial in trials_by_id(tmp_path / "run").values():
        assert (trial.status, trial.error_code) == ("infra_error", code), trial.infra_error
