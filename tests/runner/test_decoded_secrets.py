"""Secrets are redacted in what is written, not in the bytes received (issue 21).

A server may JSON-escape any character of a string (``\\u0073k-...``, ``\\/``), and a
stream may split a key over two events or over a chunk kept as base64: the planted keys
below must reach no cassette and no ``results.jsonl`` in any of those forms, and
``cassettes audit`` must find each form in an SSE cassette that holds one.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.runner.conftest import run_fake
from toolbench.cassettes.recording import VERSION
from toolbench.cassettes.stream_scrub import redact_stream
from toolbench.cli.app import run_cli
from toolbench.providers.fake import FakeServer, Fault, SseScript, by_last_user
from toolbench.redaction import REDACTED, redact_pieces
from toolbench.runner.audit import audit

KEYS = {
    "OPENAI_API_KEY": "sk-live-0123456789abcdefABCDEF0123456789",
    "ACME_API_KEY": "acme/key+with/slashes-9876543210",
    "ZETA_TOKEN": "zt_QWERTYUIOPasdfghjkl1234567890",
}
"""Planted in the environment: the run must redact each by value, in every form."""


@pytest.fixture(autouse=True)
def _keys(monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in KEYS.items():
        monkeypatch.setenv(name, value)


@pytest.fixture
def fake() -> Iterator[FakeServer]:
    with FakeServer() as server:
        yield server


def _escaped(value: str) -> str:
    """Every character as ``\\uXXXX`` and slashes as ``\\/``: what a JSON encoder may
    write, and what a search of the raw bytes does not recognise."""
    out = "".join(f"\\u{ord(c):04x}" if c.isalpha() else c for c in value)
    return out.replace("/", "\\/")


def _chat_body(content_json: str) -> bytes:
    """An OpenAI chat completion whose content is ``content_json`` (a JSON string,
    written as is, escapes and all)."""
    return (
        '{"id": "chatcmpl-x", "object": "chat.completion", "created": 0, "model": "fake", '
        '"choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", '
        f'"content": "{content_json}"}}}}], '
        '"usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}'
    ).encode()


def _forms(value: str) -> list[str]:
    return [value, _escaped(value), value.replace("/", "\\/")]


def _assert_nowhere(root: Path) -> None:
    for path in root.rglob("*"):
        if path.is_file():
            text = path.read_text(encoding="utf-8", errors="replace")
            for value in KEYS.values():
                for form in _forms(value):
                    assert form not in text, (path, form)


def test_json_escaped_keys_never_reach_a_yaml_cassette(
    fake: FakeServer, tmp_path: Path, scenario_file: Path
) -> None:
    content = " and ".join(_escaped(v) for v in KEYS.values())
    fake.respond = by_last_user({"Weather in Paris": Fault(200, _chat_body(content))})
    assert run_fake(fake, tmp_path, scenario_file) == 0
    cassettes = list((tmp_path / "cas").rglob("*.json"))
    assert len(cassettes) == 2
    weather = next(p for p in cassettes if p.name == "weather.json")
    assert REDACTED in weather.read_text(encoding="utf-8")  # it was recorded, redacted
    _assert_nowhere(tmp_path)
    assert audit(tmp_path / "cas") == []


def _event(delta: dict[str, object], finish: str | None = None) -> bytes:
    chunk = {"id": "c", "object": "chat.completion.chunk", "created": 0, "model": "fake",
             "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}  # fmt: skip
    return b"data: " + json.dumps(chunk).encode() + b"\n\n"


def test_a_key_split_over_two_events_reaches_neither_the_sse_cassette_nor_the_deltas(
    fake: FakeServer, tmp_path: Path, scenario_file: Path
) -> None:
    key = KEYS["OPENAI_API_KEY"]
    zeta = f'" {_escaped(KEYS["ZETA_TOKEN"])}"'.encode()
    escaped = _event({"content": "x"}).replace(b'"x"', zeta)
    parts: list[bytes | float] = [
        _event({"role": "assistant", "content": "Your key is "}),
        0.02, _event({"content": key[:12]}),
        0.02, _event({"content": key[12:] + " ok"}),
        escaped,
        _event({}, "stop"), b"data: [DONE]\n\n",
    ]  # fmt: skip
    fake.respond = by_last_user({"Weather in Paris": SseScript(parts)})
    assert run_fake(fake, tmp_path, scenario_file, formats="xml:stream") == 0
    _assert_nowhere(tmp_path)
    for half in (key[:12], key[12:]):  # neither half survives on its own either
        for path in tmp_path.rglob("*"):
            if path.is_file() and path.suffix in (".json", ".jsonl"):
                assert half not in path.read_text(encoding="utf-8"), path
    (line,) = [
        json.loads(x)
        for x in (tmp_path / "run" / "results.jsonl").read_text(encoding="utf-8").splitlines()
        if '"weather"' in x
    ]
    deltas = [d["text"] for d in line["turns"][0]["stream"]["deltas"]]
    assert deltas[:3] == ["Your key is ", REDACTED, " ok"]  # each delta keeps its place
    assert audit(tmp_path / "cas") == []
    # The decoded events kept beside the chunks are read from the redacted chunks.
    (cas,) = [p for p in (tmp_path / "cas").rglob("weather.json")]
    (stream,) = [e for e in json.loads(cas.read_text())["exchanges"] if "events" in e["response"]]
    contents = [ev[1] if isinstance(ev[1], str) else ev[1]["choices"][0]["delta"].get("content")
                for ev in stream["response"]["events"]]  # fmt: skip
    assert contents[:4] == ["Your key is ", REDACTED, " ok", f" {REDACTED}"]


PLAIN_EXCHANGE = {
    "request": {"method": "POST", "uri": "http://x/v1/chat/completions", "body": {}},
    "response": {"status": 200, "headers": {}, "body": {"choices": []}},
}


def _sse_cassette(path: Path, chunks: list[dict[str, object]], layout: str) -> None:
    """A cassette holding one stream: the one recording format (after a plain exchange,
    which has no chunks), or the SSE cassette of the layout before it."""
    stream = {
        "request": {"method": "POST", "uri": "http://x/v1/chat/completions", "body": {}},
        "response": {"status": 200, "headers": {}, "chunks": chunks},
    }
    data = (
        {"kind": "toolbench-cassette", "version": VERSION, "exchanges": [PLAIN_EXCHANGE, stream]}
        if layout == "one-format"
        else {"kind": "toolbench-sse", "version": 1, "exchanges": [stream]}
    )
    path.write_text(json.dumps(data, indent=1), encoding="utf-8")


SHAPED = "sk-proj-" + "Ab3dEf6hIj9kLm2nOp5qRs8t"
"""A key nobody told toolbench about: found by its shape alone."""


@pytest.mark.parametrize("layout", ["one-format", "old-sse"])
@pytest.mark.parametrize("form", ["split", "escaped", "base64"])
def test_audit_finds_split_escaped_and_base64_keys_in_a_streamed_cassette(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, form: str, layout: str
) -> None:
    for name in KEYS:
        monkeypatch.delenv(name)
    if form == "split":
        texts = [_event({"content": SHAPED[:10]}), _event({"content": SHAPED[10:]})]
        chunks: list[dict[str, object]] = [{"offset_ms": 1, "text": t.decode()} for t in texts]
    elif form == "escaped":
        body = _event({"content": "x"}).replace(b'"x"', f'"{_escaped(SHAPED)}"'.encode())
        chunks = [{"offset_ms": 1, "text": body.decode()}]
    else:
        body = _event({"content": SHAPED})
        chunks = [{"offset_ms": 1, "b64": base64.b64encode(body).decode()}]
    _sse_cassette(tmp_path / "t.json", chunks, layout)
    findings = audit(tmp_path)
    assert findings and {f.kind for f in findings} >= {"openai-style key"}, findings
    assert run_cli(["cassettes", "audit", str(tmp_path)]) == 1


@pytest.mark.parametrize("form", ["split", "escaped"])
def test_audit_finds_keys_in_the_decoded_events_of_a_cassette(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, form: str
) -> None:
    """The decoded events kept beside a stream's chunks are audited as written, even when
    the chunks are clean (a file edited by hand, or written by a defect)."""
    for name in KEYS:
        monkeypatch.delenv(name)
    pieces = [SHAPED[:10], SHAPED[10:]] if form == "split" else [SHAPED]
    events = [[1, {"choices": [{"delta": {"content": p}}]}] for p in pieces]
    clean = _event({"content": "x"}).decode()
    stream = {
        "request": {"method": "POST", "uri": "http://x/v1/chat/completions", "body": {}},
        "response": {"status": 200, "headers": {}, "chunks": [{"offset_ms": 1, "text": clean}],
                     "events": events},
    }  # fmt: skip
    text = json.dumps({"kind": "toolbench-cassette", "version": VERSION, "exchanges": [stream]})
    if form == "escaped":
        text = text.replace(SHAPED, _escaped(SHAPED))
        assert SHAPED not in text
    (tmp_path / "t.json").write_text(text, encoding="utf-8")
    findings = audit(tmp_path)
    assert {f.kind for f in findings} >= {"openai-style key"}, findings


def test_redact_pieces_cuts_a_secret_out_of_every_piece_it_touches() -> None:
    key = "sk-live-0123456789abcdef"
    pieces = ["a ", key[:5], key[5:9], key[9:] + " b", "c"]
    assert redact_pieces(pieces, [key]) == ["a ", REDACTED, "", " b", "c"]
    untouched = ["no", "secret"]
    assert redact_pieces(untouched, [key]) is untouched


def test_redact_stream_keeps_each_line_at_the_offset_of_its_chunk() -> None:
    key = "sk-live-0123456789abcdef"
    chunks = [
        (_event({"content": key[:7]}), 10.0),
        (_event({"content": key[7:]})[:20], 20.0),
        (_event({"content": key[7:]})[20:], 30.0),
        (b"data: [DONE]\n\n", 40.0),
    ]
    out = redact_stream(chunks, [key])
    assert out is not None
    assert [o for _, o in out] == [10.0, 30.0, 40.0]
    joined = "".join(t for t, _ in out)
    assert key[:7] not in joined and key[7:] not in joined and REDACTED in joined
    assert redact_stream(chunks, ["not-in-there-at-all"]) is None
