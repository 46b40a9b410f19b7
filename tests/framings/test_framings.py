"""Framings are chosen through their registry by content type (and confirmed by a
line-cut body's first line); a new one is a module and an entry point."""

from __future__ import annotations

import ast
import struct
import zlib
from importlib.metadata import EntryPoint
from pathlib import Path

import pytest

import toolbench.cassettes.recording as rec
import toolbench.framings
from toolbench import codes, eventstream
from toolbench.cassettes.stream_framing import Clock, EventGuard, StreamFault, events_of
from toolbench.framings import FALLBACK, FRAMINGS, framing_of

ENTRY = EntryPoint("json-seq", "tests.framings.toy_json_seq:JSON_SEQ", "toolbench.framings")
SEQ_BODY = [b'\x1e{"a": 1}\n\x1e{"a"', b": 2}\n"]


@pytest.mark.parametrize(("ctype", "name"), [
    ("text/event-stream; charset=utf-8", "sse"),
    ("application/x-ndjson", "ndjson"),
    ("application/jsonl", "ndjson"),
    (eventstream.CONTENT_TYPE, "eventstream"),
    ("application/json", FALLBACK),
    ("", FALLBACK),
])  # fmt: skip
def test_the_framing_of_a_content_type(ctype: str, name: str) -> None:
    assert framing_of({"content-type": ctype}).name == name


def _response(ctype: str, parts: list[bytes]) -> rec.RecordedResponse:
    chunks = [rec.Chunk.of(p, float(i)) for i, p in enumerate(parts)]
    return rec.RecordedResponse(status=200, headers={"content-type": ctype}, chunks=chunks)


def test_a_framing_installed_through_its_entry_point_reads_its_content_type() -> None:
    response = _response("application/json-seq", SEQ_BODY)
    assert framing_of(response.headers).name == FALLBACK  # unknown: lines, nothing read
    assert events_of(response) == []
    with FRAMINGS.installing(ENTRY):
        assert framing_of(response.headers).name == "json-seq"
        assert events_of(response) == [(0.0, {"a": 1}), (1.0, {"a": 2})]
    assert framing_of(response.headers).name == FALLBACK


def test_a_broken_record_of_the_toy_framing_is_a_bad_event() -> None:
    with FRAMINGS.installing(ENTRY):
        clock = Clock()
        guard = EventGuard(clock, framing_of({"content-type": "application/json-seq"}))
        guard.feed(b"\x1e{oops\n")
        guard.close()
    assert clock.fault is not None and clock.fault.code == codes.INFRA_STREAM_BAD_EVENT
    assert "a JSON text sequence record is not JSON" in str(clock.fault)


def test_server_sent_events_read_under_any_label() -> None:
    for label in ("application/x-ndjson", "application/json", ""):
        clock = Clock()
        guard = EventGuard(clock, framing_of({"content-type": label}))
        guard.feed(b'event: x\ndata: {"x": 1}\n\n')
        guard.close()
        assert (clock.framing, clock.decoded, clock.fault) == ("sse", [(0.0, {"x": 1})], None)


def test_an_oversized_frame_is_refused() -> None:
    clock = Clock()
    guard = EventGuard(clock, FRAMINGS.get("eventstream"))
    head = struct.pack(">II", 10_000_000, 0)
    too_big = head + struct.pack(">I", zlib.crc32(head))
    with pytest.raises(StreamFault):
        guard.feed(too_big)
    assert clock.fault is not None


def test_the_framings_import_only_the_ground() -> None:
    ground = ("toolbench.framings", "toolbench.registry", "toolbench.errors",
              "toolbench.eventstream")  # fmt: skip
    root = Path(toolbench.framings.__file__).parent
    for path in root.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names: list[str] = []
            if isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
                names = names[:1] if node.module != "toolbench" else names[1:]
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            for name in names:
                if name.startswith("toolbench"):
                    assert name.startswith(ground), (path.name, name)
