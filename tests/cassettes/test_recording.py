"""The one recording format: a JSON cassette per trial, its schema checked on read, the
old layout converted by ``toolbench cassettes migrate`` and, unconverted, a typed error
on its trial alone."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.runner.conftest import GOOD_CALL, run_fake, trials_by_id
from tests.support.fake_openai import FakeOpenAI
from toolbench.cassettes import recording as rec
from toolbench.cassettes.chunk_list import ChunkList
from toolbench.cassettes.legacy_yaml import LATENCY_KEY, REQUEST_KEYS, recording_of
from toolbench.cassettes.migrate import target_of
from toolbench.cli.app import run_cli
from toolbench.errors import CassetteLayoutError, CassetteUnreadableError
from toolbench.results import TrialResult
from toolbench.runner.audit import audit

pytestmark = pytest.mark.usefixtures("openai_key")


@pytest.fixture
def openai_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "test-key-not-secret-0000")


# ------------------------------------------------------------------ the old layout, made


def _old_yaml(new: dict[str, Any]) -> str:
    """A plain trial's recording written as the layout before it wrote it: vcrpy's YAML,
    JSON bodies decoded under ``json``, keys and latencies in the metadata by index."""
    interactions = []
    for ex in new["exchanges"]:
        req, resp = ex["request"], ex["response"]
        interactions.append({
            "request": {"method": req["method"], "uri": req["uri"],
                        "body": {"json": req["body"]}, "headers": req.get("headers", {})},
            "response": {"status": {"code": resp["status"], "message": resp.get("reason", "")},
                         "headers": resp.get("headers", {}), "body": {"json": resp["body"]}},
        })  # fmt: skip
    meta = {
        REQUEST_KEYS: [ex.get("key") for ex in new["exchanges"]],
        LATENCY_KEY: [ex.get("latency_s") for ex in new["exchanges"]],
    }
    return yaml.safe_dump({"version": 1, "interactions": interactions, "metadata": meta})


def _old_sse(new: dict[str, Any]) -> str:
    """A streamed trial's recording as the SSE cassette of the layout before."""
    exchanges = [{k: v for k, v in ex.items() if k != "key"} for ex in new["exchanges"]]
    return json.dumps({"kind": "toolbench-sse", "version": 1, "exchanges": exchanges})


def _as_old_layout_held(new: dict[str, Any]) -> dict[str, Any]:
    """A recording without what the layout before kept nowhere: the replies kept as read,
    the model's capabilities (optional fields, added within version 3) and a stream's
    request key (the SSE cassette kept none)."""
    exchanges = [
        {k: v for k, v in ex.items()
         if k != "read" and not (k == "key" and "chunks" in ex["response"])}
        for ex in new["exchanges"]
    ]  # fmt: skip
    return {**{k: v for k, v in new.items() if k != "capabilities"}, "exchanges": exchanges}


def _comparable(results: list[TrialResult]) -> dict[str, Any]:
    out = {}
    for r in results:
        d = r.model_dump(mode="json")
        for k in ("run_id", "started_at", "finished_at", "harness_s", "cassette"):
            d.pop(k, None)
        out[r.scenario_id] = d
    return out


def _replayed(fake: FakeOpenAI, tmp: Path, scen: Path, out: str, fmt: str) -> dict[str, Any]:
    assert run_fake(fake, tmp, scen, "--record", "none", out=out, formats=fmt) == 0
    return _comparable(list(trials_by_id(tmp / out).values()))


@pytest.mark.parametrize(
    ("fmt", "old_of", "suffix"),
    [("prompt-json", _old_yaml, ".yaml"), ("xml:stream", _old_sse, ".sse.json")],
    ids=["plain-yaml", "streamed-sse"],
)
def test_migrate_converts_the_old_layout_and_the_replay_is_unchanged(
    fake: FakeOpenAI, tmp_path: Path, scenario_file: Path, capsys: pytest.CaptureFixture[str],
    fmt: str, old_of: Any, suffix: str,
) -> None:  # fmt: skip
    fake.enqueue(GOOD_CALL, "A joke.")
    assert run_fake(fake, tmp_path, scenario_file, formats=fmt) == 0
    new_files = sorted((tmp_path / "cas").rglob("*.json"))
    assert [p.name for p in new_files] == ["chat.json", "weather.json"]
    before = _replayed(fake, tmp_path, scenario_file, "before", fmt)
    recorded = {p: _as_old_layout_held(json.loads(p.read_text())) for p in new_files}
    for path, data in recorded.items():  # the same trials, as the old layout held them
        path.with_name(path.stem + suffix).write_text(old_of(data))
        path.unlink()
    asked = len(fake.received)

    # Unconverted: each trial fails alone, typed, naming the command; the run goes on
    # (to its end: exit 3, no cell measured).
    assert run_fake(fake, tmp_path, scenario_file, "--record", "none", out="old",
                    formats=fmt) == 3  # fmt: skip
    for trial in trials_by_id(tmp_path / "old").values():
        assert (trial.status, trial.error_code) == ("cassette_unreadable", "cassette.old_layout")
        old = Path(trial.cassette).with_name(Path(trial.cassette).stem + suffix)
        assert trial.infra_error == (
            f"cassette {old} is unreadable: a cassette of the old layout; "
            "convert it with: toolbench cassettes migrate DIR"
        )
    # --record new neither records over it nor asks the server.
    assert run_fake(fake, tmp_path, scenario_file, out="new", formats=fmt) == 3
    assert {t.error_code for t in trials_by_id(tmp_path / "new").values()} == {
        "cassette.old_layout"
    }
    assert len(fake.received) == asked

    capsys.readouterr()
    assert run_cli(["cassettes", "migrate", str(tmp_path / "cas")]) == 0
    assert capsys.readouterr().out == f"migrated 2 cassette(s) in {tmp_path / 'cas'}\n"
    assert sorted((tmp_path / "cas").rglob("*.*")) == new_files  # the old files are gone
    for path, data in recorded.items():
        assert json.loads(path.read_text()) == data  # nothing lost or re-derived
    assert _replayed(fake, tmp_path, scenario_file, "after", fmt) == before
    assert len(fake.received) == asked


@pytest.mark.parametrize("fmt", ["xml:stream", "prompt-json"])
def test_migrate_adds_the_decoded_events_to_a_version_2_cassette_in_place(
    fake: FakeOpenAI, tmp_path: Path, scenario_file: Path, capsys: pytest.CaptureFixture[str],
    fmt: str,
) -> None:  # fmt: skip
    """Version 2 kept a stream's chunks alone: unconverted it fails its trial typed, and
    converted it holds the events a recording writes now, read from its chunks, and
    replays as before."""
    fake.enqueue(GOOD_CALL, "A joke.")
    assert run_fake(fake, tmp_path, scenario_file, formats=fmt) == 0
    files = sorted((tmp_path / "cas").rglob("*.json"))
    before = _replayed(fake, tmp_path, scenario_file, "before", fmt)
    recorded = {p: json.loads(p.read_text()) for p in files}
    streams = 0
    for path, data in recorded.items():
        old = json.loads(json.dumps(data))
        old["version"] = 2
        for ex in old["exchanges"]:
            streams += ex["response"].pop("events", None) is not None
        path.write_text(json.dumps(old, indent=1))
    assert streams == (2 if fmt.endswith(":stream") else 0)
    asked = len(fake.received)
    assert run_fake(fake, tmp_path, scenario_file, "--record", "none", out="old",
                    formats=fmt) == 3  # fmt: skip
    for trial in trials_by_id(tmp_path / "old").values():
        assert (trial.error_code, trial.infra_error) == ("cassette.old_layout", (
            f"cassette {trial.cassette} is unreadable: cassette version 2; "
            "convert it with: toolbench cassettes migrate DIR"))  # fmt: skip

    capsys.readouterr()
    assert run_cli(["cassettes", "migrate", str(tmp_path / "cas")]) == 0
    assert capsys.readouterr().out == f"migrated 2 cassette(s) in {tmp_path / 'cas'}\n"
    for path, data in recorded.items():
        assert json.loads(path.read_text()) == data  # the events as recorded, nothing lost
    assert _replayed(fake, tmp_path, scenario_file, "after", fmt) == before
    assert len(fake.received) == asked
    capsys.readouterr()
    assert run_cli(["cassettes", "migrate", str(tmp_path / "cas")]) == 0  # once only
    assert capsys.readouterr().out == f"migrated 0 cassette(s) in {tmp_path / 'cas'}\n"


def test_a_version_3_cassette_replays_as_it_is_and_migrates_to_version_4(
    fake: FakeOpenAI, tmp_path: Path, scenario_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Version 3 wrote a stream's chunks one object each: read as it is (no migration
    needed), it replays as the version 4 file did; ``migrate`` rewrites it as version 4
    (one body and its cuts), the file a recording writes, and the replay is unchanged."""
    fmt = "xml:stream"
    fake.enqueue(GOOD_CALL, "A joke.")
    assert run_fake(fake, tmp_path, scenario_file, formats=fmt) == 0
    before = _replayed(fake, tmp_path, scenario_file, "before", fmt)
    recorded = {p: json.loads(p.read_text()) for p in sorted((tmp_path / "cas").rglob("*.json"))}
    for path, data in recorded.items():
        old = json.loads(json.dumps(data))
        old["version"] = 3
        for ex in old["exchanges"]:
            stored = ex["response"]["chunks"]
            assert set(stored) == {"offsets_ms", "sizes", "text"}
            ex["response"]["chunks"] = [
                {k: v for k, v in c._asdict().items() if v is not None}
                for c in ChunkList.of_stored(stored)
            ]  # fmt: skip
        path.write_text(json.dumps(old, indent=1))
    asked = len(fake.received)
    assert _replayed(fake, tmp_path, scenario_file, "v3", fmt) == before

    capsys.readouterr()
    assert run_cli(["cassettes", "migrate", str(tmp_path / "cas")]) == 0
    assert capsys.readouterr().out == f"migrated 2 cassette(s) in {tmp_path / 'cas'}\n"
    for path, data in recorded.items():
        assert json.loads(path.read_text()) == data
    assert _replayed(fake, tmp_path, scenario_file, "after", fmt) == before
    assert len(fake.received) == asked


def test_migrate_leaves_what_it_cannot_convert_and_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "scenario.yaml").write_text("scenarios: []\n")  # not a cassette
    (tmp_path / "torn.sse.json").write_text('{"kind": "toolbench-sse", "exch')
    (tmp_path / "x.yaml").write_text(yaml.safe_dump({"version": 1, "interactions": []}))
    (tmp_path / "x.json").write_text("{}")  # a converted file is never overwritten
    capsys.readouterr()
    assert run_cli(["cassettes", "migrate", str(tmp_path)]) == 1
    assert capsys.readouterr().out.splitlines() == [
        f"{tmp_path / 'scenario.yaml'}: not converted: ValueError: not a vcrpy cassette"
        " (no interactions)",
        f"{tmp_path / 'torn.sse.json'}: not converted: JSONDecodeError: Unterminated string"
        " starting at: line 1 column 27 (char 26)",
        f"{tmp_path / 'x.yaml'}: not converted: x.json already exists (not overwritten)",
        f"migrated 0 cassette(s) in {tmp_path}; 3 not converted",
    ]
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "scenario.yaml", "torn.sse.json", "x.json", "x.yaml"
    ]  # fmt: skip


def test_migrate_of_a_missing_directory_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run_cli(["cassettes", "migrate", str(tmp_path / "nope")]) == 2
    assert capsys.readouterr().err == (
        f"error: cassettes migrate: {tmp_path / 'nope'}: no such file or directory\n"
    )


@pytest.mark.parametrize(
    ("old", "new"),
    [("a/b/x.yaml", "a/b/x.json"), ("x__s2.sse.json", "x__s2.json"), ("y.sse.json", "y.json")],
)
def test_target_of_an_old_file(old: str, new: str) -> None:
    assert target_of(Path(old)) == Path(new)


# ------------------------------------------------------------------ reading, checked

STREAM = {
    "request": {"method": "POST", "uri": "http://x/v1/chat/completions", "body": {}},
    "response": {"status": 200, "chunks": [{"offset_ms": 1.5, "text": "data: {}\n\n"}]},
}


def _with(**changes: Any) -> str:
    exchange = json.loads(json.dumps(STREAM))
    exchange["response"].update(changes)
    return json.dumps({"kind": "toolbench-cassette", "version": rec.VERSION,
                       "exchanges": [exchange]})  # fmt: skip


# (text, error type, reason after "is unreadable: ")
DEFECTS = [
    pytest.param(_with(chunks=[{"text": "data: {}\n\n"}]), CassetteLayoutError,
                 "exchanges.0.response.chunks.0.offset_ms: a streamed event without its "
                 "offset; convert it with: toolbench cassettes migrate DIR or record it again",
                 id="no-offsets"),
    pytest.param(_with(chunks=[{"offset_ms": 5, "text": "a"}, {"offset_ms": 2, "text": "b"}]),
                 CassetteUnreadableError,
                 "exchanges.0.response.chunks.1.offset_ms: events out of order (an offset "
                 "before the previous event's)", id="out-of-order"),
    pytest.param('{"kind": "toolbench-sse", "version": 1, "exchanges": []}', CassetteLayoutError,
                 "a cassette of the old layout; convert it with: toolbench cassettes migrate DIR",
                 id="old-sse-kind"),
    pytest.param('{"version": 1, "interactions": []}', CassetteLayoutError,
                 "a cassette of the old layout; convert it with: toolbench cassettes migrate DIR",
                 id="vcrpy-json"),
    pytest.param(_with(events=[[1.5, {}], [1.5]]), CassetteLayoutError,
                 "exchanges.0.response.events.1.1: a decoded event that is not [offset_ms, "
                 "data]; convert it with: toolbench cassettes migrate DIR or record it again",
                 id="event-without-offset"),
    pytest.param(_with(events=[[1.5, {}], ["x", {}]]), CassetteLayoutError,
                 "exchanges.0.response.events.1.0: a decoded event that is not [offset_ms, "
                 "data]; convert it with: toolbench cassettes migrate DIR or record it again",
                 id="event-offset-not-a-number"),
    pytest.param(_with(chunks=[{"offset_ms": 1, "text": "a"}, {"offset_ms": 5, "text": "b"}],
                       events=[[5, {}], [1, {}]]),
                 CassetteUnreadableError,
                 "exchanges.0.response.events.1: events out of order (an offset before the "
                 "previous event's or outside the chunks')", id="events-out-of-order"),
    pytest.param(_with(events=[[9.5, {}]]), CassetteUnreadableError,
                 "exchanges.0.response.events.0: events out of order (an offset before the "
                 "previous event's or outside the chunks')", id="event-after-the-chunks"),
    pytest.param(_with(status=400, events=[[1.5, {}]]), CassetteUnreadableError,
                 "exchanges.0.response.events: decoded events without a 2xx stream's chunks",
                 id="events-of-a-refusal"),
    pytest.param(_with().replace(f'"version": {rec.VERSION}', '"version": 2'),
                 CassetteLayoutError,
                 "cassette version 2; convert it with: toolbench cassettes migrate DIR",
                 id="version-2-no-events"),
    pytest.param('{"kind": "toolbench-cassette", "version": 5}', CassetteUnreadableError,
                 "written by a newer toolbench (version 5; this reads 4)", id="newer"),
    pytest.param('{"kind": "other", "version": 2}', CassetteUnreadableError,
                 "not a toolbench cassette (kind 'other')", id="other-kind"),
    pytest.param("[1]", CassetteUnreadableError, "not a cassette (not a JSON object)",
                 id="not-an-object"),
    pytest.param("version: 1\n", CassetteUnreadableError, "not JSON (JSONDecodeError)",
                 id="yaml-text"),
]  # fmt: skip


@pytest.mark.parametrize(("text", "error", "reason"), DEFECTS)
def test_a_defective_cassette_is_a_typed_error(
    text: str, error: type[Exception], reason: str
) -> None:
    with pytest.raises(error) as info:
        rec.parse(text, "c.json")
    assert type(info.value) is error
    assert str(info.value) == f"cassette c.json is unreadable: {reason}"


def test_a_plain_and_a_streamed_exchange_round_trip() -> None:
    plain = {
        "request": {"method": "POST", "uri": "http://x/v1", "body": {"m": "é"}},
        "response": {"status": 200, "body": {"choices": []}},
        "key": "sha256:0", "latency_s": 0.25,
    }  # fmt: skip
    stream = dict(STREAM, response=dict(STREAM["response"], events=[[1.5, {}]]))
    text = json.dumps({"kind": "toolbench-cassette", "version": rec.VERSION,
                       "exchanges": [plain, stream]})  # fmt: skip
    recording = rec.parse(text, "c.json")
    assert [e.response.streamed for e in recording.exchanges] == [False, True]
    assert rec.parse(rec.dump(recording), "c.json") == recording
    assert "é" in rec.dump(recording)  # decoded values, as a reader (and the audit) sees them


def test_headers_are_one_text_a_name_plain_or_streamed() -> None:
    """A plain exchange recorded through vcrpy kept a list a header; read, it is one
    text, as a stream's are, and written so; an old YAML cassette's lists are read so."""
    old_plain = {
        "request": {"method": "POST", "uri": "http://x/v1", "body": {},
                    "headers": {"host": ["local-model.toolbench"]}},
        "response": {"status": 200, "body": {"choices": []},
                     "headers": {"content-type": ["application/json"], "x-many": ["a", "b"]}},
    }  # fmt: skip
    stream = dict(STREAM, response=dict(STREAM["response"], headers={"x-s": "text"}))
    text = json.dumps({"kind": "toolbench-cassette", "version": rec.VERSION,
                       "exchanges": [old_plain, stream]})  # fmt: skip
    for recording in (rec.parse(text, "c.json"), rec.Recording.model_validate_json(text)):
        plain = recording.exchanges[0]
        assert plain.request.headers == {"host": "local-model.toolbench"}
        assert plain.response.headers == {"content-type": "application/json", "x-many": "a, b"}
        assert recording.exchanges[1].response.headers == {"x-s": "text"}
        assert '"application/json"' in rec.dump(recording)
        assert '["application/json"]' not in rec.dump(recording)
    yaml_dict = {"interactions": [{
        "request": {"method": "POST", "uri": "http://x/v1", "body": "{}", "headers": {}},
        "response": {"status": {"code": 200, "message": "OK"}, "body": {"string": "{}"},
                     "headers": {"x-many": ["a", "b"]}},
    }]}  # fmt: skip
    assert recording_of(yaml_dict).exchanges[0].response.headers["x-many"] == "a, b"


# ------------------------------------------------------------------ the audit of JSON


def test_the_audit_reads_a_json_file_that_is_no_object(tmp_path: Path) -> None:
    """A JSON list (a data file beside the cassettes) is scanned for its strings, and
    does not end the audit (it raised AttributeError)."""
    (tmp_path / "list.json").write_text(json.dumps(["ok", {"a": 1}]))
    assert audit(tmp_path) == []
    shaped = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"  # a GitHub token's shape
    (tmp_path / "list.json").write_text(json.dumps([shaped]))
    assert [f.path.name for f in audit(tmp_path)] == ["list.json"]


def test_the_audit_reads_json_headers_as_json(tmp_path: Path) -> None:
    """A secret header is a finding where it is a key of ``headers``; a tool schema's
    ``Authorization`` property (BFCL's REST tools) is not."""
    schema = {"tools": [{"properties": {"Authorization": {"type": "string"}}}]}
    exchange = {"request": {"method": "POST", "uri": "http://x", "body": schema},
                "response": {"status": 200, "body": {}}}  # fmt: skip
    clean = tmp_path / "clean" / "c.json"
    clean.parent.mkdir()
    clean.write_text(json.dumps({"kind": "toolbench-cassette", "version": rec.VERSION,
                                 "exchanges": [exchange]}, indent=1))  # fmt: skip
    assert audit(clean.parent) == []
    exchange["request"]["headers"] = {"Authorization": ["x"]}
    bad = tmp_path / "bad" / "c.json"
    bad.parent.mkdir()
    bad.write_text(json.dumps({"kind": "toolbench-cassette", "version": rec.VERSION,
                               "exchanges": [exchange]}, indent=1))  # fmt: skip
    found = audit(bad.parent)
    assert [f.kind for f in found] == ["secret header"]
    assert '"Authorization": [' in bad.read_text().splitlines()[found[0].line - 1]
