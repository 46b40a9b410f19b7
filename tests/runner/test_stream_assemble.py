"""Native streamed replies: tool-call deltas assembled into calls, broken sequences typed."""

from __future__ import annotations

from typing import Any

import pytest

from toolbench import codes
from toolbench.cassettes.recording import Chunk as RawChunk
from toolbench.cassettes.stream_framing import Clock, EventGuard, StreamFault
from toolbench.formats.base import ModelReply
from toolbench.formats.format_registry import get_format
from toolbench.formats.stream_spec import split_stream, with_stream
from toolbench.framings import FRAMINGS
from toolbench.providers.wire.chat.reader import Assembler


def _chunk(delta: dict[str, Any] | None = None, finish: str | None = None) -> dict[str, Any]:
    return {"choices": [{"index": 0, "delta": delta or {}, "finish_reason": finish}]}


def _tc(index: int | None, id: str | None = None, name: str | None = None,
        args: str | None = None) -> dict[str, Any]:  # fmt: skip
    fn: dict[str, Any] = {}
    if name is not None:
        fn["name"] = name
    if args is not None:
        fn["arguments"] = args
    out: dict[str, Any] = {"function": fn}
    if index is not None:
        out["index"] = index
    if id is not None:
        out["id"] = id
    return out


def _calls(*tcs: dict[str, Any]) -> dict[str, Any]:
    return _chunk({"tool_calls": list(tcs)})


GOOD = [
    _chunk({"role": "assistant", "content": ""}),
    _calls(_tc(0, "c0", "get_weather", "")),
    _calls(_tc(0, args='{"ci')),
    _calls(_tc(0, args='ty": "Paris"}')),
    _calls(_tc(1, "c1", "get_time", '{"tz": "CET"}')),
    _chunk(finish="tool_calls"),
]

# (case, chunks, expected codes, expected call names)
CASES: list[tuple[str, list[dict[str, Any]], list[str], list[str]]] = [
    ("two calls in fragments", GOOD, [], ["get_weather", "get_time"]),
    ("call without id", [_calls(_tc(0, None, "f", "{}")), _chunk(finish="tool_calls")],
     [codes.STREAM_CALL_NO_ID], ["f"]),
    ("call without name", [_calls(_tc(0, "c0", None, "{}")), _chunk(finish="tool_calls")],
     [codes.STREAM_CALL_NO_NAME], []),
    ("index gap", [_calls(_tc(0, "a", "f", "{}")), _calls(_tc(2, "b", "g", "{}")),
                   _chunk(finish="tool_calls")], [codes.STREAM_INDEX_GAP], ["f", "g"]),
    ("arguments never JSON", [_calls(_tc(0, "a", "f", '{"x": ')), _chunk(finish="tool_calls")],
     [codes.STREAM_ARGS_INVALID], ["f"]),
    ("content inside a call", [_calls(_tc(0, "a", "f", '{"x"')), _chunk({"content": "hm"}),
                               _calls(_tc(0, args=": 1}")), _chunk(finish="tool_calls")],
     [codes.STREAM_CONTENT_IN_CALL], ["f"]),
    ("no finish_reason", [_chunk({"content": "Hi"})], [codes.STREAM_NO_FINISH], []),
    # Anthropic's OpenAI-compatible endpoint numbers its first streamed call 1 (after the
    # text block 0): the call is whole, no index was skipped.
    ("first call numbered 1", [_chunk({"content": "Let me check."}),
                               _calls(_tc(1, "toolu_1", "f", "{}")), _chunk(finish="tool_calls")],
     [], ["f"]),
    ("a gap after a first call numbered 1", [_calls(_tc(1, "a", "f", "{}")),
                                             _calls(_tc(3, "b", "g", "{}")),
                                             _chunk(finish="tool_calls")],
     [codes.STREAM_INDEX_GAP], ["f", "g"]),
    ("content after a finished call is no interleaving",
     [_calls(_tc(0, "a", "f", "{}")), _chunk({"content": " done"}), _chunk(finish="stop")], [],
     ["f"]),
    ("garbage chunks are ignored", [{"choices": "x"}, {"nothing": 1}, _chunk({"tool_calls": [5]}),
                                    _chunk({"content": "ok"}, "stop")], [], []),
]  # fmt: skip


@pytest.mark.parametrize(("case", "chunks", "want", "names"), CASES, ids=[c[0] for c in CASES])
def test_delta_sequences(
    case: str, chunks: list[dict[str, Any]], want: list[str], names: list[str]
) -> None:
    asm = Assembler()
    for i, c in enumerate(chunks):
        asm.feed(c, float(10 * i))
    done = asm.close()
    assert [code for code, _ in done.issues] == want
    assert [c["function"]["name"] for c in done.tool_calls] == names


def test_assembled_reply_parses_as_a_native_reply() -> None:
    asm = Assembler()
    for i, c in enumerate(GOOD):
        asm.feed(c, float(10 * i))
    done = asm.close()
    assert done.tool_calls[0] == {
        "id": "c0", "type": "function",
        "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
    }  # fmt: skip
    assert (done.first_token_ms, done.first_call_ms, done.call_complete_ms) == (10.0, 10.0, 30.0)
    reply = ModelReply(text=done.text, tool_calls=done.tool_calls, finish_reason="tool_calls")
    parsed = get_format("native:stream").parse_reply(reply)
    assert [(c.name, c.arguments) for c in parsed.calls] == [
        ("get_weather", {"city": "Paris"}), ("get_time", {"tz": "CET"}),
    ]  # fmt: skip


def test_text_deltas_keep_their_offsets() -> None:
    asm = Assembler()
    asm.feed(_chunk({"content": "I'll "}), 5.0)
    asm.feed(_chunk({"content": "check."}), 7.5)
    asm.feed(_chunk(finish="stop"), 9.0)
    done = asm.close()
    assert [(d.offset_ms, d.text) for d in done.deltas] == [(5.0, "I'll "), (7.5, "check.")]
    assert done.text == "I'll check." and done.last_ms == 9.0


SPECS = [
    ("xml", "xml", False, "xml:stream"),
    ("xml:stream", "xml", True, "xml:stream"),
    ("prompt-json:shots=2,stream", "prompt-json:shots=2", True, "prompt-json:shots=2,stream"),
    ("prompt-json:stream,shots=2", "prompt-json:shots=2", True, "prompt-json:stream,shots=2"),
    ("native:stream|xml", "native|xml", True, "native:stream|xml"),
    ("native|xml", "native|xml", False, "native:stream|xml"),
]  # fmt: skip


@pytest.mark.parametrize(("spec", "base", "streamed", "added"), SPECS)
def test_stream_option_in_specs(spec: str, base: str, streamed: bool, added: str) -> None:
    assert split_stream(spec) == (base, streamed)
    assert with_stream(spec) == added
    fmt = get_format(spec)
    assert get_format(fmt.spec).spec == fmt.spec  # round-trips through run.json
    assert fmt.spec.endswith("stream") or "stream|" in fmt.spec or not streamed


def test_a_chunk_that_splits_a_character_is_kept_as_bytes() -> None:
    data = "\u2615".encode()[:2]
    chunk = RawChunk.of(data, 1.0)
    assert chunk.text is None and chunk.data() == data
    assert RawChunk.of(b"plain", 2.0).text == "plain"


def test_a_reply_streamed_a_character_at_a_time_is_written_compactly() -> None:
    from toolbench.formats.base import ParseResult
    from toolbench.results import StreamTurn, TimedText, TrialResult, TurnRecord
    from toolbench.runner.compact import DELTA_CAP, compact

    deltas = [TimedText(offset_ms=float(i), text="x") for i in range(3 * DELTA_CAP)]
    turn = TurnRecord(request={}, reply=ModelReply(text="x" * len(deltas)), parsed=ParseResult(),
                      stream=StreamTurn(deltas=deltas))  # fmt: skip
    trial = TrialResult(run_id="r", toolbench_version="0", model="m", format="xml:stream",
                        scenario_id="s", turns=[turn])  # fmt: skip
    kept = compact(trial).turns[0].stream
    assert kept is not None and len(kept.deltas) == DELTA_CAP
    assert "".join(d.text for d in kept.deltas) == "x" * len(deltas)
    assert kept.deltas[-1].offset_ms == len(deltas) - 1


SMALL = b'data: {"x": 1}\n\n'
GUARD_CASES = [
    ("many small events past 1 MB", "sse", [SMALL] * 80_000, None),
    ("one event past 1 MB", "sse", [b"data: " + b"x" * 600_000, b"y" * 600_000],
     codes.INFRA_STREAM_EVENT_TOO_LARGE),
    ("NDJSON lines past 1 MB", "ndjson", [b'{"x": 1}\n'] * 150_000, None),
    ("an NDJSON line that is not JSON", "ndjson", [b'{"x": 1}\n', b"{oops\n"],
     codes.INFRA_STREAM_BAD_EVENT),
    ("a data line that is not JSON", "sse", [b"data: {oops\n\n", b"data: [DONE]\n\n"],
     codes.INFRA_STREAM_BAD_EVENT),
    ("CRLF events", "sse", [b'data: {"x": 1}\r\n\r\n', b"data: [DONE]\r\n\r\n"], None),
    ("cut inside an event", "sse", [SMALL, b'data: {"x"'], codes.INFRA_STREAM_TRUNCATED),
    ("a line split across chunks", "sse", [b'data: {"x"', b': 1}\n\n'], None),
    ("lines of no framing are not parsed", "lines", [b"plain\n", b"{oops\n"], None),
    # A body whose type says nothing is framed by its first line (issue 34).
    ("a first JSON line makes it NDJSON", "lines", [b"{oops\n", b"plain\n"],
     codes.INFRA_STREAM_BAD_EVENT),
    ("an event: line makes it SSE", "lines", [b"event: x\n", b"data: {oops\n\n"],
     codes.INFRA_STREAM_BAD_EVENT),
    ("SSE labelled NDJSON", "ndjson", [b"event: x\n", b'data: {"x": 1}\n\n'], None),
]  # fmt: skip


@pytest.mark.parametrize(("case", "framing", "parts", "fault"), GUARD_CASES,
                         ids=[c[0] for c in GUARD_CASES])  # fmt: skip
def test_event_guard(case: str, framing: str, parts: list[bytes], fault: str | None) -> None:
    clock = Clock()
    guard = EventGuard(clock, FRAMINGS.get(framing))
    try:
        for p in parts:
            guard.feed(p)
        guard.close()
    except StreamFault:
        pass
    got = None if clock.fault is None else clock.fault.code
    assert got == fault


def test_streamed_reasoning_is_assembled_and_goes_back_with_the_calls() -> None:
    """DeepSeek's reasoner streams ``reasoning_content`` before its calls
    (api-docs.deepseek.com/guides/reasoning_model); its API refuses a tool-call turn echoed
    without it, so the assembled message carries it."""
    asm = Assembler()
    for chunk in [
        _chunk({"role": "assistant", "reasoning_content": "The user wants "}),
        _chunk({"reasoning_content": "the weather."}),
        _calls(_tc(0, "c0", "get_weather", '{"city": "Paris"}')),
        _chunk(finish="tool_calls"),
    ]:
        asm.feed(chunk, 1.0)
    msg = asm.close().message()
    assert msg["reasoning_content"] == "The user wants the weather."
    assert msg["content"] is None  # a call-only turn: null, as the model sent it
    assert [c["function"]["name"] for c in msg["tool_calls"]] == ["get_weather"]
