"""A replay of a LiteLLM kind's cassette answers from the reply kept as read, without
LiteLLM (:mod:`toolbench.providers.replay.replay_kept`), and agrees with ``--replay full``, which
re-derives every reply from the recorded bytes through LiteLLM: on every committed
provider cassette (tests/data/provider_rt: plain, and streamed for the OpenAI-compatible
family), on a streamed two-turn recording of every wire of the round trips
(``test_call_round_trips.py``), and in a fresh process that never imports LiteLLM. A
cassette recorded before replies were kept, or whose record does not hold together,
replays through the full path into the same results."""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.providers.record import ROOT, run_args, summary
from tests.providers.test_call_round_trips import WIRES, Scripted, Wire, _two_turns
from tests.providers.test_call_round_trips import _quiet_env as _quiet_env  # autouse here too
from tests.runner.conftest import SCENARIO, run_fake
from tests.runner.test_decoded_secrets import KEYS, _assert_nowhere, _chat_body, _escaped
from toolbench.cli.app import run_cli
from toolbench.providers import call, litellm_api
from toolbench.providers.fake import FakeServer, Fault, by_last_user
from toolbench.providers.model_api import Completion
from toolbench.providers.replay import replay_kept
from toolbench.redaction import REDACTED
from toolbench.store import load_results

MANIFEST: dict[str, Any] = json.loads((ROOT / "manifest.json").read_text(encoding="utf-8"))
SKIP = ("run_id", "started_at", "finished_at", "harness_s")
REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, int]]:
    """How many requests were sent through LiteLLM (the full path), and how many turns
    were answered from a reply kept as read."""
    seen = {"sent": 0, "kept": 0}
    real_send, real_replay = litellm_api.send, replay_kept

    async def send(*a: Any, **kw: Any) -> Any:
        seen["sent"] += 1
        return await real_send(*a, **kw)

    def replay(*a: Any, **kw: Any) -> Any:
        got = real_replay(*a, **kw)
        seen["kept"] += got is not None
        return got

    monkeypatch.setattr(litellm_api, "send", send)
    monkeypatch.setattr(call, "replay_kept", replay)
    # The full path's price cache is per process: a name an earlier test's reply could not
    # be priced for (a stream without usage) would be left unpriced here, as no run is.
    monkeypatch.setattr(litellm_api, "_UNPRICED", set())
    yield seen


def _rows(out: Path) -> dict[tuple[str, str, str, int], dict[str, Any]]:
    rows = {}
    for r in load_results(out):
        d = r.model_dump(mode="json")
        for k in SKIP:
            d.pop(k, None)
        rows[(r.model, r.format, r.scenario_id, r.sample)] = d
    return rows


def _replay(
    case_id: str, out: Path, mode: str, cassettes: Path | None = None, stream: str = "off"
) -> int:
    entry = MANIFEST[case_id]
    argv = [*run_args(entry["model"], entry["api_base"], out, "none", stream), "--replay", mode]
    if cassettes is not None:
        argv[argv.index("--cassettes") + 1] = str(cassettes)
    return run_cli(argv)


RUNS = [(c, "off") for c in sorted(MANIFEST)]
RUNS += [(c, "on") for c in sorted(MANIFEST) if "expected_stream" in MANIFEST[c]]


@pytest.mark.usefixtures("no_keys")
@pytest.mark.parametrize(("case_id", "stream"), RUNS, ids=[f"{c}-{s}" for c, s in RUNS])
def test_boundary_answers_every_turn_from_what_was_kept_and_agrees_with_full(
    case_id: str, stream: str, tmp_path: Path, counted: dict[str, int]
) -> None:
    assert _replay(case_id, tmp_path / "b", "boundary", stream=stream) == 0
    boundary = _rows(tmp_path / "b")
    turns = sum(len(row["turns"]) for row in boundary.values())
    assert counted == {"sent": 0, "kept": turns}  # nothing reached LiteLLM
    assert _replay(case_id, tmp_path / "f", "full", stream=stream) == 0
    assert counted["sent"] == turns and counted["kept"] == turns  # full: every turn sent
    full = _rows(tmp_path / "f")
    assert boundary == full
    expected = MANIFEST[case_id]["expected" if stream == "off" else "expected_stream"]
    assert summary(load_results(tmp_path / "b")) == expected
    if stream == "on":
        assert all(t["stream"] for row in boundary.values() for t in row["turns"])


def _without_kept(src: Path, dst: Path) -> int:
    """A copy of the cassettes ``src`` as recorded before replies were kept."""
    n = 0
    for path in src.rglob("*.json"):
        data = json.loads(path.read_text(encoding="utf-8"))
        data.pop("capabilities", None)
        for ex in data["exchanges"]:
            n += ex.pop("read", None) is not None
        out = dst / path.relative_to(src)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(data, indent=1), encoding="utf-8")
    return n


CASSETTES = {c: f"{MANIFEST[c]['model'].replace('/', '_')}" for c in MANIFEST}


@pytest.mark.usefixtures("no_keys")
@pytest.mark.parametrize("case_id", ["anthropic", "gemini"])
def test_a_cassette_recorded_before_replies_were_kept_replays_through_the_full_path(
    case_id: str, tmp_path: Path, counted: dict[str, int]
) -> None:
    src = ROOT / "cassettes" / CASSETTES[case_id]
    assert _without_kept(src, tmp_path / "old" / src.name) > 0
    assert _replay(case_id, tmp_path / "r", "boundary", tmp_path / "old") == 0
    assert counted["kept"] == 0 and counted["sent"] > 0  # every turn through LiteLLM
    assert summary(load_results(tmp_path / "r")) == MANIFEST[case_id]["expected"]


def _seed_claimed_sent(read: dict[str, Any]) -> None:
    """Claims Anthropic was sent a ``seed`` (it was dropped): the request rebuilt from the
    record is not the one recorded."""
    read["params"]["sent"] = sorted({*read["params"]["sent"], "seed"})
    read["params"]["dropped"].pop("seed", None)
    read["reply"]["text"] = "a reply nobody sent"


def _reply_not_a_reply(read: dict[str, Any]) -> None:
    """A reply of the wrong shape (hostile or damaged): it does not validate."""
    read["reply"] = {"text": 5, "tool_calls": "none"}


def _stream_on_a_plain_exchange(read: dict[str, Any]) -> None:
    """A stream record on a plain exchange: not the record of this request."""
    read["stream"] = {"deltas": []}


@pytest.mark.usefixtures("no_keys")
@pytest.mark.parametrize("damage", [_seed_claimed_sent, _reply_not_a_reply,
                                    _stream_on_a_plain_exchange])  # fmt: skip
def test_a_kept_record_that_does_not_hold_together_is_not_trusted(
    damage: Any, tmp_path: Path, counted: dict[str, int]
) -> None:
    """The full path reads the exchange instead, into the recorded results."""
    src = ROOT / "cassettes" / CASSETTES["anthropic"]
    dst = tmp_path / "c" / src.name
    shutil.copytree(src, dst)
    for path in dst.rglob("*.json"):
        data = json.loads(path.read_text(encoding="utf-8"))
        for ex in data["exchanges"]:
            if ex.get("read") is not None:
                damage(ex["read"])
        path.write_text(json.dumps(data, indent=1), encoding="utf-8")
    assert _replay("anthropic", tmp_path / "r", "boundary", tmp_path / "c") == 0
    assert counted["kept"] == 0 and counted["sent"] > 0
    assert summary(load_results(tmp_path / "r")) == MANIFEST["anthropic"]["expected"]


PROBE = """
import sys
from toolbench.cli.app import run_cli
rc = run_cli(sys.argv[1:])
print("litellm" in sys.modules, rc)
"""


FRESH = [("openai", "off"), ("anthropic", "off"), ("gemini", "off"), ("ollama", "off"),
         ("deepseek", "off"), ("openai", "on"), ("deepseek-reasoner", "on")]  # fmt: skip


@pytest.mark.usefixtures("no_keys")
@pytest.mark.parametrize(("case_id", "stream"), FRESH, ids=[f"{c}-{s}" for c, s in FRESH])
def test_a_replay_in_a_fresh_process_never_imports_litellm(
    case_id: str, stream: str, tmp_path: Path
) -> None:
    entry = MANIFEST[case_id]
    argv = run_args(entry["model"], entry["api_base"], tmp_path / "b", "none", stream)
    got = subprocess.run(
        [sys.executable, "-c", PROBE, *argv], capture_output=True, text=True, cwd=REPO,
        check=False, timeout=120,
    )  # fmt: skip
    assert got.stdout.split()[-2:] == ["False", "0"], got.stderr[-2000:]
    assert _replay(case_id, tmp_path / "f", "full", stream=stream) == 0
    assert _rows(tmp_path / "b") == _rows(tmp_path / "f")


@pytest.mark.parametrize("wire", WIRES, ids=[w.id for w in WIRES])
def test_a_streamed_recording_replays_from_what_was_kept_as_full_reads_it(
    wire: Wire, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, counted: dict[str, int]
) -> None:
    """Every wire's streamed two turns, recorded against its fake, replayed offline: at
    the boundary both turns come from the kept replies (nothing sent through LiteLLM),
    and they are the completions ``--replay full`` reads from the recorded chunks through
    LiteLLM (and toolbench's own stream readers), stream records and all."""
    for name, value in wire.env:
        monkeypatch.setenv(name, value)
    with Scripted(wire, True).server as server:
        live = asyncio.run(_two_turns(wire, server.base_url, True, tmp_path))
    sent = counted["sent"]
    offline = "http://127.0.0.1:9"  # nothing listens: the cassette answers
    got = asyncio.run(_two_turns(wire, offline, True, tmp_path, record="none"))
    assert counted == {"sent": sent, "kept": 2}
    full = asyncio.run(_two_turns(wire, offline, True, tmp_path, record="none", replay="full"))
    assert counted == {"sent": sent + 2, "kept": 2}
    for a, b, c in zip(got, full, live, strict=True):
        assert _same(a) == _same(b) == _same(c)
        assert a.replayed and b.replayed and not c.replayed


def _same(done: Completion) -> dict[str, Any]:
    """What a replayed turn reports (the live one's latency is its own)."""
    return {
        "reply": done.reply.model_dump(), "request": done.request, "params": done.params,
        "tokens": (done.prompt_tokens, done.completion_tokens), "cost": done.cost,
        "stream": None if done.stream is None else done.stream.model_dump(),
        "adaptations": done.adaptations,
    }  # fmt: skip


STREAM_PROBE = """
import asyncio, json, sys
from pathlib import Path
from tests.providers.test_call_round_trips import WIRES, _two_turns
from tests.providers.test_kept_replay import _same
wire = next(w for w in WIRES if w.id == sys.argv[1])
got = asyncio.run(_two_turns(wire, "http://127.0.0.1:9", True, Path(sys.argv[2]),
                             record="none", live=False))
print(json.dumps([_same(d) for d in got], default=str))
print("litellm" in sys.modules)
"""


@pytest.mark.parametrize("wire_id", ["openai", "anthropic", "gemini", "ollama", "bedrock"])
def test_a_streamed_replay_in_a_fresh_process_never_imports_litellm(
    wire_id: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    wire = next(w for w in WIRES if w.id == wire_id)
    for name, value in wire.env:
        monkeypatch.setenv(name, value)
    with Scripted(wire, True).server as server:
        live = asyncio.run(_two_turns(wire, server.base_url, True, tmp_path))
    got = subprocess.run(
        [sys.executable, "-c", STREAM_PROBE, wire_id, str(tmp_path)], capture_output=True,
        text=True, cwd=REPO, check=False, timeout=120,
    )  # fmt: skip
    lines = got.stdout.splitlines()
    assert lines[-1:] == ["False"], got.stderr[-2000:]
    assert json.loads(lines[-2]) == json.loads(json.dumps([_same(d) for d in live], default=str))


@pytest.mark.parametrize("stream", ["off", "on"])
def test_a_reply_that_echoed_a_key_replays_as_full_reads_the_redacted_recording(
    stream: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, counted: dict[str, int]
) -> None:
    """A key the server echoed is redacted in what is recorded. Plain: the reply kept as
    read beside the body is redacted too, and replays as the full path reads the body.
    Streamed: redaction rewrote the chunks (a key split over deltas is blanked in each),
    so no reply is kept for that exchange; its replay reads the chunks, as full does."""
    for name, value in KEYS.items():
        monkeypatch.setenv(name, value)
    scen = tmp_path / "mini.yaml"
    scen.write_text(SCENARIO, encoding="utf-8")
    content = " and ".join(_escaped(v) for v in KEYS.values())
    with FakeServer() as fake:
        if stream == "off":
            fake.respond = by_last_user({"Weather in Paris": Fault(200, _chat_body(content))})
        else:
            fake.respond = by_last_user({"Weather in Paris": " and ".join(KEYS.values())})
        assert run_fake(fake, tmp_path, scen, "--stream", stream) == 0
        rows = {}
        for mode in ("boundary", "full"):
            argv = ("--stream", stream, "--record", "none", "--replay", mode)
            assert run_fake(fake, tmp_path, scen, *argv, out=mode) == 0
            rows[mode] = _rows(tmp_path / mode)
    assert rows["boundary"] == rows["full"]
    _assert_nowhere(tmp_path)
    weather = json.loads(next((tmp_path / "cas").rglob("weather.json")).read_text("utf-8"))
    (exchange,) = weather["exchanges"]
    if stream == "off":
        assert counted["kept"] == 2  # both trials answered from what was kept
        assert REDACTED in json.dumps(exchange["read"])
    else:
        assert counted["kept"] == 1  # the other trial's stream was kept
        assert "read" not in exchange
