"""Pooled MCP servers (``pool = true``): started once per run, reset before each trial,
stopped when the run ends; a pooled server that dies is replaced, its trial typed; a
replay starts none."""

from __future__ import annotations

import json
import os
import signal
import sys
from pathlib import Path

import pytest

from tests.environments.mcp_support import (
    NOTES,
    REPLIES,
    SERVER,
    alive,
    all_stopped,
    configure,
    notes_scenario,
    runs,
    started,
)
from tests.runner.conftest import run_fake, trials_by_id
from toolbench.cassettes.recording import ToolExchange
from toolbench.environments.mcp_config import McpServer
from toolbench.environments.mcp_pool import Pool
from toolbench.providers.fake import FakeServer, by_last_user
from toolbench.results import TrialResult
from toolbench.store import load_results

POOLED = {"pool": "true", "reset": '"reset"'}
FIRST_STATE = [("add_note", '{\n  "id": 1\n}', None), ("list_notes", "milk", None)]


@pytest.fixture
def pooled(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """Working in ``tmp_path``: the notes scenario, and the notes server pooled with its
    reset; the scenario file and the file of the servers' pids."""
    monkeypatch.chdir(tmp_path)
    scen = tmp_path / "notes.yaml"
    scen.write_text(NOTES)
    return scen, configure(tmp_path, **POOLED)


def first_two(trial: TrialResult) -> list[tuple[str, str, str | None]]:
    """The trial's first two calls as run: (name, result, error)."""
    return [(r.name, r.result, r.error) for r in runs(trial.turns)][:2]


def test_a_pooled_server_serves_every_trial_from_its_first_state_and_a_replay_starts_none(
    fake: FakeServer, tmp_path: Path, pooled: tuple[Path, Path]
) -> None:
    scen, pids = pooled
    assert run_fake(fake, tmp_path, scen, "--samples", "3", "--concurrency", "1") == 0
    assert len(started(pids)) == 1  # once for the run
    assert all_stopped(pids, within_s=1.0)  # stopped when the run ended
    first = {t.sample: t for t in load_results(tmp_path / "run")}
    assert len(first) == 3
    for trial in first.values():  # the reset put its state back: one note each time
        assert first_two(trial) == FIRST_STATE
    for cassette in (tmp_path / "cas").rglob("notes*.json"):
        methods = [(x["method"], (x.get("params") or {}).get("name")) for x in
                   json.loads(cassette.read_text())["tools"]]  # fmt: skip
        # each trial lists the tools and resets the server before its calls
        assert methods[-5:] == [("tools/list", None), ("tools/call", "reset"),
                                ("tools/call", "add_note"), ("tools/call", "list_notes"),
                                ("tools/call", "whoami")]  # fmt: skip

    again = ["--samples", "3", "--record", "none"]
    assert run_fake(fake, tmp_path, scen, *again, out="again") == 0
    assert len(started(pids)) == 1  # the replay started no server
    replayed = {t.sample: t for t in load_results(tmp_path / "again")}
    for sample, trial in first.items():
        assert replayed[sample].turns == trial.turns
        assert replayed[sample].scores == trial.scores


def test_concurrent_trials_take_a_server_each(
    fake: FakeServer, tmp_path: Path, pooled: tuple[Path, Path]
) -> None:
    scen, pids = pooled
    assert run_fake(fake, tmp_path, scen, "--samples", "4", "--concurrency", "2") == 0
    assert 1 <= len(started(pids)) <= 2 and all_stopped(pids, within_s=1.0)
    for trial in load_results(tmp_path / "run"):
        assert trial.status == "ok"
        assert first_two(trial) == FIRST_STATE


CRASH = """\
  - id: a-dies
    tools:
      - name: crash
        parameters: {type: object, properties: {}}
    messages: [{role: user, content: "Crash now."}]
    environment: {name: notes}
    expect: {rounds: [{calls: [{name: crash, arguments: {}}]}], max_turns: 3}
"""


def test_a_pooled_server_that_dies_fails_its_trial_typed_and_is_replaced(
    tmp_path: Path, pooled: tuple[Path, Path]
) -> None:
    scen, pids = pooled
    scen.write_text("scenarios:\n" + CRASH + notes_scenario("b-notes"))
    replies = {**REPLIES, "Crash now": '{"tool": "crash", "arguments": {}}',
               "Tool Result": "It did not work."}  # fmt: skip
    with FakeServer(by_last_user(replies)) as fake:
        run_fake(fake, tmp_path, scen, "--concurrency", "1")
    trials = trials_by_id(tmp_path / "run")
    dies = trials["a-dies"]
    assert (dies.status, dies.error_code) == ("harness_error", "environment.mcp_died")
    notes = trials["b-notes"]
    assert notes.status == "ok"
    assert first_two(notes) == FIRST_STATE
    assert len(started(pids)) == 2 and all_stopped(pids, within_s=1.0)


def test_a_pooled_server_found_dead_when_taken_is_replaced(tmp_path: Path) -> None:
    pids = tmp_path / "pids.txt"
    server = McpServer(command=[sys.executable, str(SERVER)], env={"NOTES_PIDS": str(pids)},
                       pool=True, reset="reset")  # fmt: skip
    pool = Pool("notes", server)
    kept: list[ToolExchange] = []

    def reset(client: object) -> None:
        client.call("reset", {})  # type: ignore[attr-defined]

    try:
        client = pool.take(kept.append, reset)
        client.call("add_note", {"text": "milk"})
        pool.give_back(client)
        again = pool.take(kept.append, reset)
        assert again is client and len(started(pids)) == 1  # the same server, reset
        assert client.call("list_notes", {})["structuredContent"] == {"result": []}
        pool.give_back(again)
        [pid] = started(pids)
        os.kill(pid, signal.SIGKILL)  # dies idle in the pool
        replaced = pool.take(kept.append, reset)
        assert replaced is not client and replaced.alive and len(started(pids)) == 2
        assert [t["name"] for t in replaced.tools][:2] == ["add_note", "list_notes"]
        pool.give_back(replaced)
    finally:
        pool.close()
    assert not any(alive(p) for p in started(pids))


@pytest.mark.parametrize(
    ("table", "why"),
    [
        ({"command": ["x"], "pool": True},
         "pool: a pooled server needs 'reset' (a tool that puts its first state back) or "
         "'stateless = true'"),
        ({"url": "http://127.0.0.1:9/mcp", "pool": True, "reset": "reset"},
         "pool: only a server toolbench starts ('command') is pooled"),
    ],
)  # fmt: skip
def test_a_pool_that_cannot_put_its_state_back_is_refused(
    table: dict[str, object], why: str
) -> None:
    with pytest.raises(ValueError, match="pool: ") as caught:
        McpServer.model_validate(table)
    assert why in str(caught.value)
    assert McpServer(command=["x"], pool=True, stateless=True).pool


def test_the_server_that_listed_the_tools_serves_the_trials(
    fake: FakeServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    scen = tmp_path / "listed.yaml"
    scen.write_text("scenarios:\n" + notes_scenario("listed", tools=False))
    pids = configure(tmp_path, pool="true", stateless="true")
    assert run_fake(fake, tmp_path, scen, "--samples", "2", "--concurrency", "1") == 0
    assert len(started(pids)) == 1 and all_stopped(pids, within_s=1.0)
    trials = load_results(tmp_path / "run")
    assert [t.status for t in trials] == ["ok", "ok"]
    # stateless: no reset, so the second trial sees the first one's note (what the
    # user declared does not matter to this server)
    assert [r.result for r in runs(trials[1].turns)][1] == "milk\nmilk"
