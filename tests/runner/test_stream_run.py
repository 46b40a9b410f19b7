"""Streamed trials end to end: ``toolbench run`` against a fake OpenAI server that speaks
OpenAI's documented SSE chunk format over real HTTP; record, then replay offline."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.runner.conftest import GOOD_CALL, MT_SCENARIO
from tests.support.fake_openai import FakeOpenAI, Fault, SseScript
from toolbench import codes
from toolbench.cassettes.recording import load
from toolbench.cli.app import run_cli
from toolbench.report.metrics import aggregate, cell_map, load_table
from toolbench.results import TrialResult
from toolbench.store import load_results

NATIVE_CALL = {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}}]}
SECRET = "sk-live-0123456789abcdefABCDEF0123456789"


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)


def _run(fake: FakeOpenAI, tmp: Path, scen: Path, out: str, *extra: str) -> int:
    return run_cli([
        "run", "--models", "openai/fake", "--scenarios", str(scen),
        "--api-base", fake.base_url, "--out", str(tmp / out), "--cassettes", str(tmp / "cas"),
        "--quiet", "--no-report", "--concurrency", "1", *extra,
    ])  # fmt: skip


def _by_key(run: Path) -> dict[tuple[str, str], TrialResult]:
    return {(r.format, r.scenario_id): r for r in load_results(run)}


def test_record_then_replay_is_equal(fake: FakeOpenAI, tmp_path: Path, scenario_file: Path) -> None:
    fake.enqueue(GOOD_CALL, "A joke.", NATIVE_CALL, "No call.")
    rc = _run(fake, tmp_path, scenario_file, "rec", "--formats", "prompt-json:stream,native:stream")
    assert rc == 0
    assert len(fake.received) == 4
    assert all(r.body["stream"] is True for r in fake.received)
    assert all(r.body["stream_options"] == {"include_usage": True} for r in fake.received)
    rec = _by_key(tmp_path / "rec")
    native = rec[("native:stream", "weather")]
    assert native.scores is not None and native.scores.get("call_accuracy") is True
    assert native.turns[0].reply.tool_calls[0]["function"]["name"] == "get_weather"
    assert native.scores.get("stream_error") is False
    first_byte, complete = (
        native.scores.get(k) for k in ("first_call_byte_ms", "call_complete_ms")
    )
    assert isinstance(first_byte, float) and isinstance(complete, float)
    assert complete >= first_byte
    text = rec[("prompt-json:stream", "weather")]
    assert text.scores is not None and text.scores.get("call_accuracy") is True
    assert text.turns[0].stream is not None
    assert "".join(d.text for d in text.turns[0].stream.deltas) == GOOD_CALL
    assert len(text.turns[0].stream.deltas) > 5  # small pieces, each with its offset
    assert text.completion_tokens == 5
    assert isinstance(text.scores.get("tokens_per_s"), float)
    cas = tmp_path / "cas" / "openai_fake" / "native_stream" / "weather.json"
    assert cas.is_file()
    assert SECRET not in cas.read_text(encoding="utf-8")
    assert load(cas).exchanges[0].response.chunks[-1].text == "data: [DONE]\n\n"

    rc = _run(fake, tmp_path, scenario_file, "rep", "--formats", "prompt-json:stream,native:stream",
              "--record", "none")  # fmt: skip
    assert rc == 0
    assert len(fake.received) == 4  # offline
    rep = _by_key(tmp_path / "rep")
    for key, first in rec.items():
        again = rep[key]
        assert again.scores == first.scores  # with the recorded timings, not the replay's
        assert [t.stream for t in again.turns] == [t.stream for t in first.turns]
        assert [t.reply for t in again.turns] == [t.reply for t in first.turns]
        assert again.latency_s == first.latency_s


def test_streamed_turns_go_through_the_provider_kinds_send(
    fake: FakeOpenAI, tmp_path: Path, scenario_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every turn, plain or streamed, is sent by ``ModelAPI.send`` of the kind that
    ``endpoint_for`` returned (the shared call, not the LiteLLM module directly); a
    streamed one with ``stream`` and the usage asked."""
    from toolbench.providers.litellm_api import LiteLLMAPI
    from toolbench.providers.model_api import Endpoint

    seen: list[tuple[bool, Any, Any]] = []
    real = LiteLLMAPI.send

    async def spy(self: LiteLLMAPI, endpoint: Endpoint, request: dict[str, Any]) -> Any:
        seen.append((endpoint.api_base == fake.base_url, request.get("stream"),
                     request.get("stream_options")))  # fmt: skip
        return await real(self, endpoint, request)

    monkeypatch.setattr(LiteLLMAPI, "send", spy)
    fake.enqueue(NATIVE_CALL, "No call.", NATIVE_CALL, "No call.")
    rc = _run(fake, tmp_path, scenario_file, "run", "--formats", "native", "--stream", "both")
    assert rc == 0
    usage = {"include_usage": True}
    assert sorted(seen, key=str) == sorted(
        [(True, None, None)] * 2 + [(True, True, usage)] * 2, key=str
    )  # two plain trials and two streamed ones, one turn each
    rec = _by_key(tmp_path / "run")
    measured = rec[("native:stream", "weather")].scores
    assert measured is not None and measured.get("ttft_ms") is not None


def test_stream_both_runs_side_by_side_and_agrees(
    fake: FakeOpenAI, tmp_path: Path, scenario_file: Path
) -> None:
    fake.enqueue(NATIVE_CALL, "No call.", NATIVE_CALL, "No call.")
    rc = _run(fake, tmp_path, scenario_file, "run", "--formats", "native", "--stream", "both")
    assert rc == 0
    info = json.loads((tmp_path / "run" / "run.json").read_text())
    assert info["formats"] == ["native", "native:stream"]
    assert info["display"] == "careful"
    assert [r.body.get("stream") for r in fake.received] == [None, None, True, True]
    cell = cell_map(aggregate(load_table(tmp_path / "run").df))[("openai/fake", "native:stream")]
    assert cell.values["stream_consistency"] == 1.0
    assert cell.counts["stream_consistency"] == (2, 2)


def test_multi_turn_streamed_conversation(fake: FakeOpenAI, tmp_path: Path) -> None:
    scen = tmp_path / "mt.yaml"
    scen.write_text(MT_SCENARIO, encoding="utf-8")
    fake.enqueue(
        {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Lisbon"}}]},
        "It is 23 degrees.",
    )
    assert _run(fake, tmp_path, scen, "run", "--formats", "native:stream") == 0
    (trial,) = load_results(tmp_path / "run")
    assert trial.scores is not None and trial.scores.get("final_answer_ok") is True
    assert len(trial.turns) == 2 and all(t.stream is not None for t in trial.turns)
    # The second request echoes the assembled call and answers it by id.
    messages = fake.received[1].body["messages"]
    assert messages[-2]["tool_calls"][0]["id"] == "call_0"
    assert messages[-1]["tool_call_id"] == "call_0"
    # Both exchanges replay from the one SSE cassette, offline, with their timings.
    rc = _run(fake, tmp_path, scen, "rep", "--formats", "native:stream", "--record", "none")
    assert rc == 0 and len(fake.received) == 2
    (again,) = load_results(tmp_path / "rep")
    assert [t.stream for t in again.turns] == [t.stream for t in trial.turns]
    assert again.scores == trial.scores


def _event(delta: dict[str, object], finish: str | None = None) -> bytes:
    chunk = {"id": "c", "object": "chat.completion.chunk", "created": 0, "model": "fake",
             "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}  # fmt: skip
    return b"data: " + json.dumps(chunk, ensure_ascii=False).encode() + b"\n\n"


def test_chunks_that_split_a_utf8_character(
    fake: FakeOpenAI, tmp_path: Path, scenario_file: Path
) -> None:
    whole = _event({"role": "assistant", "content": "Caf\u00e9 \u2615 ok"}, "stop")
    cut = whole.index("\u2615".encode()) + 1  # inside the three bytes of the cup
    fake.enqueue(SseScript([whole[:cut], 0.05, whole[cut:], b"data: [DONE]\n\n"]), "A joke.")
    assert _run(fake, tmp_path, scenario_file, "rec", "--formats", "xml:stream") == 0
    rec = _by_key(tmp_path / "rec")[("xml:stream", "weather")]
    assert rec.status == "ok" and rec.turns[0].reply.text == "Caf\u00e9 \u2615 ok"
    cas = load(tmp_path / "cas" / "openai_fake" / "xml_stream" / "weather.json")
    assert any(c.b64 is not None for c in cas.exchanges[0].response.chunks)
    assert _run(fake, tmp_path, scenario_file, "rep", "--formats", "xml:stream",
                "--record", "none") == 0  # fmt: skip
    rep = _by_key(tmp_path / "rep")[("xml:stream", "weather")]
    assert rep.turns[0].reply == rec.turns[0].reply and rep.scores == rec.scores


def test_a_secret_in_a_streamed_body_never_reaches_the_cassette(
    fake: FakeOpenAI, tmp_path: Path, scenario_file: Path
) -> None:
    fake.enqueue(f"Your key is {SECRET}.", "A joke.")
    assert _run(fake, tmp_path, scenario_file, "rec", "--formats", "xml:stream") == 0
    for path in (tmp_path / "cas").rglob("*.json"):
        assert SECRET not in path.read_text(encoding="utf-8")
    assert run_cli(["cassettes", "audit", str(tmp_path / "cas")]) == 0
    for path in (tmp_path / "rec").rglob("*"):
        if path.is_file():
            assert SECRET not in path.read_text(encoding="utf-8", errors="replace")


def test_stream_option_errors_are_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert run_cli(["run", "--stream", "maybe", "--record", "none"]) == 2
    assert capsys.readouterr().err.strip() == (
        "error: --stream: must be one of off, on, both (got 'maybe')"
    )
    assert run_cli(["run", "--display", "eager", "--record", "none"]) == 2
    assert capsys.readouterr().err.strip() == (
        "error: --display: must be one of careful, naive (got 'eager')"
    )
    assert run_cli(["run", "--formats", "xml|native:stream", "--record", "none"]) == 2
    assert capsys.readouterr().err.strip() == (
        "error: format 'xml|native:stream': write stream on the first format only"
    )


DEBUG_TURN = Path(__file__).resolve().parents[2] / "scenarios" / "streaming" / "debug-turn.yaml"
DEBUG_REPLIES = {
    "xml": 'I\'ll check.\n<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}'
    "</tool_call>\nDone.",
    "prompt-json": 'I\'ll check.\n{"tool": "get_weather", "arguments": {"city": "Paris"}}\nDone.',
}


@pytest.mark.parametrize("fmt", sorted(DEBUG_REPLIES))
@pytest.mark.parametrize(("display", "leak"), [("careful", False), ("naive", True)])
def test_debug_turn_streamed_in_small_chunks(
    fake: FakeOpenAI, tmp_path: Path, fmt: str, display: str, leak: bool
) -> None:
    """The regression that started toolbench: prose, a call, more prose, streamed. A careful
    app shows no markup; a naive one shows it. Measured through a real streamed run, and
    rescored under the other policy from the stored deltas."""
    fake.enqueue(DEBUG_REPLIES[fmt])
    rc = _run(fake, tmp_path, DEBUG_TURN, "run", "--formats", f"{fmt}:stream", "--display", display)
    assert rc == 0
    (trial,) = load_results(tmp_path / "run")
    assert trial.scores is not None and trial.scores.get("call_accuracy") is True
    assert trial.settings is not None and trial.settings.display == display
    st = trial.scores
    assert st.get("display") == display
    assert st.get("stream_leak") is leak
    chars = st.get("leaked_chars")
    assert isinstance(chars, int) and (chars > 0 if leak else chars == 0)
    assert st.get("first_call_byte_ms") is not None and st.get("call_complete_ms") is not None
    other = "naive" if display == "careful" else "careful"
    assert run_cli(["rescore", str(tmp_path / "run"), "-o", str(tmp_path / "re"),
                    "--scenarios", str(DEBUG_TURN), "--display", other]) == 0  # fmt: skip
    (again,) = load_results(tmp_path / "re")
    assert again.scores is not None and again.scores.get("stream_leak") is (not leak)
    assert again.scores.get("display") == other
    assert again.settings is not None and again.settings.display == other
    unmeasured = {"values": {}}  # the core scores do not depend on the display policy
    assert again.scores.model_copy(update=unmeasured) == st.model_copy(update=unmeasured)


def test_a_stream_without_finish_reason_is_scored_with_its_code(
    fake: FakeOpenAI, tmp_path: Path, scenario_file: Path
) -> None:
    parts: list[bytes | float] = [_event({"content": "A joke."}), b"data: [DONE]\n\n"]
    fake.enqueue(SseScript(parts), "A joke.")
    assert _run(fake, tmp_path, scenario_file, "run", "--formats", "native:stream") == 0
    trial = _by_key(tmp_path / "run")[("native:stream", "weather")]
    assert trial.status == "ok" and trial.scores is not None
    assert codes.STREAM_NO_FINISH in trial.scores.errors
    assert trial.scores.get("stream_error") is True
    assert trial.scores.values["stream_error"].reason == codes.STREAM_NO_FINISH
    assert trial.turns[0].reply.finish_reason is None
    cell = cell_map(aggregate(load_table(tmp_path / "run").df))[("openai/fake", "native:stream")]
    assert cell.counts["stream_error_rate"] == (1, 2)


def _tc(i: int, id: str | None = None, name: str | None = None, args: str | None = None) -> bytes:
    fn = {k: v for k, v in (("name", name), ("arguments", args)) if v is not None}
    delta: dict[str, object] = {"index": i, "function": fn}
    if id is not None:
        delta.update(id=id, type="function")
    return _event({"tool_calls": [delta]})


PARIS = '{"city": "Paris"}'
END = [_event({}, "tool_calls"), b"data: [DONE]\n\n"]
BROKEN_DELTAS = [
    ("no id", [_tc(0, None, "get_weather", PARIS)], codes.STREAM_CALL_NO_ID, ["call_stream_0"]),
    ("index gap", [_tc(0, "a", "get_weather", PARIS), _tc(2, "b", "get_weather", PARIS)],
     codes.STREAM_INDEX_GAP, ["a", "b"]),
    ("arguments never JSON", [_tc(0, "a", "get_weather", '{"city": ')],
     codes.STREAM_ARGS_INVALID, ["a"]),
    ("content inside a call",
     [_tc(0, "a", "get_weather", '{"city"'), _event({"content": "hm"}), _tc(0, args=': "Paris"}')],
     codes.STREAM_CONTENT_IN_CALL, ["a"]),
]  # fmt: skip


@pytest.mark.parametrize(("case", "parts", "code", "ids"), BROKEN_DELTAS,
                         ids=[b[0] for b in BROKEN_DELTAS])  # fmt: skip
def test_broken_delta_sequences_over_http(
    fake: FakeOpenAI, tmp_path: Path, scenario_file: Path,
    case: str, parts: list[bytes], code: str, ids: list[str],
) -> None:  # fmt: skip
    """Read from the bytes as the server sent them: LiteLLM repairs some of these on the
    way (it drops a call without id, renumbers indices), which would hide them."""
    fake.enqueue(SseScript([*parts, *END]), "A joke.")
    assert _run(fake, tmp_path, scenario_file, "run", "--formats", "native:stream") == 0
    trial = _by_key(tmp_path / "run")[("native:stream", "weather")]
    assert trial.status == "ok" and trial.scores is not None
    assert trial.scores.values["stream_error"].reason == code
    assert code in trial.scores.errors
    assert [c["id"] for c in trial.turns[0].reply.tool_calls] == ids
    # Rescoring re-parses and re-scores; the stream's codes stay on the trial.
    assert run_cli(["rescore", str(tmp_path / "run"), "-o", str(tmp_path / "re"),
                    "--scenarios", str(scenario_file)]) == 0  # fmt: skip
    again = _by_key(tmp_path / "re")[("native:stream", "weather")]
    assert again.scores == trial.scores


def test_a_call_that_never_gets_a_name_is_a_typed_fault_never_recorded(
    fake: FakeOpenAI, tmp_path: Path, scenario_file: Path
) -> None:
    """Tool-call deltas that never carry a name (issue 34): the server broke the call, so
    the trial is ``infra.bad_reply`` (asked again, never recorded), never an ``ok`` reply
    whose call went missing."""
    broken = SseScript([_tc(0, "a", None, PARIS), *END])
    fake.enqueue(*[broken] * 5, "A joke.")
    _run(fake, tmp_path, scenario_file, "run", "--formats", "native:stream")
    trial = _by_key(tmp_path / "run")[("native:stream", "weather")]
    assert (trial.status, trial.error_code) == ("infra_error", codes.INFRA_BAD_REPLY)
    assert "never got a name" in (trial.infra_error or "")
    assert not (tmp_path / "cas" / "openai_fake" / "native_stream" / "weather.json").exists()


def test_a_refused_stream_replays_as_the_same_refusal(
    fake: FakeOpenAI, tmp_path: Path, scenario_file: Path
) -> None:
    refusal = b'{"error": {"message": "tools are not supported", "type": "invalid_request_error",'
    refusal += b' "param": "tools", "code": null}}'
    fake.enqueue(Fault(400, body=refusal), Fault(401, body=b'{"error": {"message": "bad key"}}'))
    assert _run(fake, tmp_path, scenario_file, "rec", "--formats", "native:stream") == 3
    rec = _by_key(tmp_path / "rec")
    assert rec[("native:stream", "weather")].status == "unsupported"
    assert rec[("native:stream", "chat")].error_code == codes.INFRA_CLIENT_ERROR
    rc = _run(
        fake, tmp_path, scenario_file, "rep", "--formats", "native:stream", "--record", "none"
    )
    assert rc == 3 and len(fake.received) == 2
    rep = _by_key(tmp_path / "rep")
    assert rep[("native:stream", "weather")].status == "unsupported"  # kept: acted on
    assert rep[("native:stream", "chat")].status == "cassette_missing"  # forgotten
