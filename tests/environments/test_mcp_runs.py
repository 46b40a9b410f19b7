"""MCP servers as environments through ``toolbench run``: a real server process with
state (``mcp_notes_server.py``), over stdio and streamable HTTP, plain and streamed
trials, recorded then replayed to identical results with no server process started;
a server's secret never written; no server outliving its run."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.environments.mcp_support import (
    NOTES,
    REPLIES,
    SECRET,
    SERVER,
    all_stopped,
    configure,
    notes_scenario,
    runs,
    started,
)
from tests.runner.conftest import run_fake, trials_by_id
from toolbench.providers.fake import FakeServer, by_last_user
from toolbench.store import load_results


@pytest.mark.parametrize(
    ("how", "formats"),
    [
        ("stdio", "prompt-json"),
        ("stdio", "prompt-json:stream"),
        ("http", "prompt-json"),
    ],
)
def test_server_recorded_then_replayed_without_a_process(
    how: str, formats: str, fake: FakeServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    scen = tmp_path / "notes.yaml"
    scen.write_text(NOTES)
    if how == "http":
        pids = configure(tmp_path, "--http", "{port}", url="http://127.0.0.1:{port}/mcp")
    else:
        pids = configure(tmp_path)
    assert run_fake(fake, tmp_path, scen, out="first", formats=formats) == 0
    first = trials_by_id(tmp_path / "first")["notes"]
    assert first.status == "ok" and first.scores is not None
    assert first.scores.get("call_accuracy") is True
    assert [(r.name, r.result, r.error) for r in runs(first.turns)] == [
        ("add_note", '{\n  "id": 1\n}', None),
        ("list_notes", "milk", None),  # the state the first call left
        ("whoami", "token <redacted>", None),
    ]
    assert len(started(pids)) == 1 and all_stopped(pids)
    cassette = next((tmp_path / "cas").rglob("notes.json"))
    recorded = json.loads(cassette.read_text())["tools"]
    assert [x["method"] for x in recorded] == [
        "initialize", "tools/list", "tools/call", "tools/call", "tools/call"
    ]  # fmt: skip
    for written in (cassette, tmp_path / "first" / "results.jsonl"):
        assert SECRET not in written.read_text()

    served = len(fake.received)
    assert run_fake(fake, tmp_path, scen, "--record", "none", out="again", formats=formats) == 0
    assert len(fake.received) == served and len(started(pids)) == 1  # no server started
    again = trials_by_id(tmp_path / "again")["notes"]
    assert again.turns == first.turns and again.scores == first.scores


def test_record_new_runs_the_played_calls_again_on_a_server_when_one_is_not_recorded(
    fake: FakeServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    scen = tmp_path / "notes.yaml"
    scen.write_text(NOTES)
    pids = configure(tmp_path)
    assert run_fake(fake, tmp_path, scen, out="first") == 0
    first = trials_by_id(tmp_path / "first")["notes"]
    cassette = next((tmp_path / "cas").rglob("notes.json"))
    data = json.loads(cassette.read_text())
    del data["tools"][4]  # the whoami call, not recorded
    cassette.write_text(json.dumps(data))
    assert run_fake(fake, tmp_path, scen, "--record", "new", out="again") == 0
    again = trials_by_id(tmp_path / "again")["notes"]
    # a server started for the call not recorded, add_note and list_notes run on it
    # again first: whoami answered as live, the trial as it was
    assert len(started(pids)) == 2 and again.turns == first.turns
    recorded = json.loads(cassette.read_text())["tools"]
    assert [x["params"]["name"] for x in recorded[2:]] == ["add_note", "list_notes", "whoami"]


def test_replay_only_with_a_call_not_recorded_starts_no_server(
    fake: FakeServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    scen = tmp_path / "notes.yaml"
    scen.write_text(NOTES)
    pids = configure(tmp_path)
    assert run_fake(fake, tmp_path, scen, out="first") == 0
    cassette = next((tmp_path / "cas").rglob("notes.json"))
    data = json.loads(cassette.read_text())
    data["tools"][3]["params"]["name"] = "delete_note"  # the recorded list_notes is gone
    cassette.write_text(json.dumps(data))
    run_fake(fake, tmp_path, scen, "--record", "none", out="again")
    trial = trials_by_id(tmp_path / "again")["notes"]
    # the model was told the call is not recorded: its next request is not either
    assert trial.status == "cassette_missing" and len(started(pids)) == 1


@pytest.fixture
def shared_server(tmp_path: Path) -> Iterator[str]:
    """A notes server the user runs (streamable HTTP), shared by the trials; its URL."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen([sys.executable, str(SERVER), "--http", str(port)])
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.1)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.terminate()
        proc.wait(10)


def test_a_shared_server_is_reset_before_each_trial(
    fake: FakeServer, shared_server: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    scen = tmp_path / "notes.yaml"
    scen.write_text(NOTES)
    (tmp_path / "toolbench.toml").write_text(
        f'[mcp.notes]\nurl = "{shared_server}"\nreset = "reset"\n'
    )
    assert run_fake(fake, tmp_path, scen, "--samples", "2", "--concurrency", "1") == 0
    trials = load_results(tmp_path / "run")
    assert len(trials) == 2
    for trial in trials:  # the second sample starts from the same empty list
        assert [(r.name, r.result) for r in runs(trial.turns)][:2] == [
            ("add_note", '{\n  "id": 1\n}'), ("list_notes", "milk")
        ]  # fmt: skip
    recorded = json.loads(next((tmp_path / "cas").rglob("notes__s1.json")).read_text())["tools"]
    assert recorded[2]["params"] == {"name": "reset", "arguments": {}}
    # replayed, the recorded reset is played first, then the calls (the server not asked)
    again = ["--samples", "2", "--record", "none"]
    assert run_fake(fake, tmp_path, scen, *again, out="again") == 0
    replayed = {t.sample: t for t in load_results(tmp_path / "again")}
    assert all(replayed[t.sample].turns == t.turns for t in trials)


SLOW_AND_QUICK = (
    "scenarios:\n"
    + notes_scenario("a-slow-start")
    + """\
  - id: b-quick
    tools:
      - name: tick
        parameters: {type: object, properties: {n: {type: integer}}, required: [n]}
    messages:
      - {role: user, content: "Count to three."}
    expect:
      max_turns: 4
      rounds:
        - calls: [{name: tick, arguments: {n: 1}, result: tick-one}]
        - calls: [{name: tick, arguments: {n: 2}, result: tick-two}]
        - calls: [{name: tick, arguments: {n: 3}, result: tick-three}]
"""
)


def test_a_slow_server_start_does_not_hold_another_trials_exchanges(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    scen = tmp_path / "two.yaml"
    scen.write_text(SLOW_AND_QUICK)
    pids = configure(tmp_path, NOTES_DELAY="2")
    replies = {
        **REPLIES,
        "tick-three": "Three.",
        "tick-two": '{"tool": "tick", "arguments": {"n": 3}}',
        "tick-one": '{"tool": "tick", "arguments": {"n": 2}}',
        "Count to three": '{"tool": "tick", "arguments": {"n": 1}}',
    }
    with FakeServer(by_last_user(replies)) as fake:
        assert run_fake(fake, tmp_path, scen, "--concurrency", "2") == 0
        asked = [json.dumps(r.body) for r in fake.received]
    trials = trials_by_id(tmp_path / "run")
    assert trials["a-slow-start"].status == trials["b-quick"].status == "ok"
    assert len(trials["b-quick"].turns) == 4 and len(started(pids)) == 1
    quick = [i for i, text in enumerate(asked) if "Count to three" in text]
    slow = [i for i, text in enumerate(asked) if "Add milk" in text]
    # the quick trial's four exchanges all went while the slow server was starting
    # (its trial's first request waits for the start), not after it
    assert len(quick) == 4 and max(quick) < min(slow)
