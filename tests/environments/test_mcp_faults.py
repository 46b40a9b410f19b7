"""What goes wrong with an MCP server fails its own trial with a typed code, or is a tool
error the model is told; the run goes on, and no server outlives it."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.environments.mcp_support import (
    SERVER,
    alive,
    all_stopped,
    runs,
    started,
)
from tests.runner.conftest import run_fake, trials_by_id
from toolbench.providers.fake import FakeServer

HARNESS = Path(__file__).resolve().parents[2] / "harness"
TOOLS = """\
    tools:
      - name: delete_note
        parameters: {type: object, properties: {id: {type: integer}}, required: [id]}
      - name: slow
        parameters: {type: object, properties: {seconds: {type: number}}, required: [seconds]}
      - name: crash
        parameters: {type: object, properties: {}}
      - name: big
        parameters: {type: object, properties: {chars: {type: integer}}, required: [chars]}
"""


def scenario(sid: str, server: str, prompt: str, call: str) -> str:
    return (
        f"  - id: {sid}\n{TOOLS}    messages: [{{role: user, content: {json.dumps(prompt)}}}]\n"
        f"    environment: {{name: {server}}}\n"
        f"    expect: {{rounds: [{{calls: [{call}]}}], max_turns: 3}}\n"
    )


SCENARIOS = "scenarios:\n" + "".join([
    scenario("tool-error", "notes", "Delete note 7.", "{name: delete_note, arguments: {id: 7}}"),
    scenario("too-slow", "notes", "Take a nap.", "{name: slow, arguments: {seconds: 8}}"),
    scenario("dies", "notes", "Crash now.", "{name: crash, arguments: {}}"),
    scenario("too-large", "notes", "Say a lot.", "{name: big, arguments: {chars: 1200000}}"),
    scenario("missing", "missing", "Delete note 1.", "{name: delete_note, arguments: {id: 1}}"),
    scenario("broken", "broken", "Delete note 2.", "{name: delete_note, arguments: {id: 2}}"),
])  # fmt: skip

REPLIES = {
    "Tool Result": "Sorry, that did not work.",
    "Delete note 7": '{"tool": "delete_note", "arguments": {"id": 7}}',
    "Take a nap": '{"tool": "slow", "arguments": {"seconds": 8}}',
    "Crash now": '{"tool": "crash", "arguments": {}}',
    "Say a lot": '{"tool": "big", "arguments": {"chars": 1200000}}',
    "Delete note": '{"tool": "delete_note", "arguments": {"id": 1}}',
}


def test_faults_fail_their_own_trial_typed_or_are_told_to_the_model(
    fake: FakeServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    pids = tmp_path / "pids.txt"
    command = json.dumps([sys.executable, str(SERVER)])
    env = f'env = {{NOTES_PIDS = "{pids}"}}'
    (tmp_path / "toolbench.toml").write_text(
        f"[mcp.notes]\ncommand = {command}\ncall_timeout_s = 3\n{env}\n"
        '[mcp.missing]\ncommand = ["/nonexistent/notes-server"]\n'
        f"[mcp.broken]\ncommand = {command}\n"
        f'env = {{NOTES_START = "crash", NOTES_PIDS = "{pids}"}}\n'
    )
    scen = tmp_path / "faults.yaml"
    scen.write_text(SCENARIOS)
    run_fake(fake, tmp_path, scen, "--concurrency", "1", out="first")
    trials = trials_by_id(tmp_path / "first")

    told = trials["tool-error"]
    assert told.status == "ok"
    [run] = runs(told.turns)
    assert run.error == "tool.raised" and "Error executing tool delete_note" in run.result

    slow = trials["too-slow"]
    [run] = runs(slow.turns)
    assert (slow.status, run.error) == ("ok", "tool.raised")
    assert "no result within 3 s" in run.result

    large = trials["too-large"]
    [run] = runs(large.turns)
    assert (large.status, run.error) == ("ok", "tool.raised")
    assert "over the 1000000 kept" in run.result
    assert max(p.stat().st_size for p in (tmp_path / "cas").rglob("*.json")) < 100_000

    dies = trials["dies"]
    assert (dies.status, dies.error_code) == ("harness_error", "environment.mcp_died")

    missing = trials["missing"]
    assert (missing.status, missing.error_code) == ("harness_error", "environment.mcp_start")
    assert "FileNotFoundError" in (missing.infra_error or "")

    broken = trials["broken"]
    assert (broken.status, broken.error_code) == ("harness_error", "environment.mcp_start")
    assert "refusing to start" in (broken.infra_error or "")

    assert len(started(pids)) == 5
    assert all_stopped(pids)  # none outlives its trial


def test_an_environment_named_in_toolbench_toml_runs(
    fake: FakeServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "toolbench.toml").write_text(
        '[environments.tasks]\nclass = "toolbench.environments.todo:Todo"\n'
    )
    scen = tmp_path / "tasks.yaml"
    scen.write_text(
        "scenarios:\n  - id: tasks\n    tools:\n      - name: delete_note\n"
        "        parameters: {type: object, properties: {id: {type: integer}}}\n"
        "    messages: [{role: user, content: Delete note 7.}]\n"
        "    environment: {name: tasks, state: {tasks: []}}\n"
        "    expect: {rounds: [{calls: [{name: delete_note, arguments: {id: 7}}]}]}\n"
    )
    assert run_fake(fake, tmp_path, scen, out="first") == 0
    trial = trials_by_id(tmp_path / "first")["tasks"]
    last = [t.environment.state for t in trial.turns if t.environment and t.environment.state]
    assert last == [{"tasks": {"tasks": []}}]
    assert os.environ.get("NOTES_PIDS") is None


@pytest.mark.parametrize("pooled", ["", 'pool = true\nreset = "reset"\n'])
def test_ctrl_c_leaves_no_server_running(fake: FakeServer, tmp_path: Path, pooled: str) -> None:
    pids = tmp_path / "pids.txt"
    # streamable HTTP: a server that, unlike a stdio one, does not stop when its stdin ends
    command = json.dumps([sys.executable, str(SERVER), "--http", "{port}"])
    (tmp_path / "toolbench.toml").write_text(
        f'[mcp.notes]\ncommand = {command}\nurl = "http://127.0.0.1:{{port}}/mcp"\n'
        f'call_timeout_s = 9\nenv = {{NOTES_PIDS = "{pids}"}}\n{pooled}'
    )
    (tmp_path / "nap.yaml").write_text(
        "scenarios:\n"
        + scenario("nap", "notes", "Take a nap.", "{name: slow, arguments: {seconds: 8}}")
    )
    env = {**os.environ, "PYTHONPATH": str(HARNESS), "OPENAI_API_KEY": "test-key-not-secret-0"}
    argv = [
        str(Path(sys.executable).parent / "toolbench"), "run", "--models", "openai/fake",
        "--formats", "prompt-json", "--scenarios", "nap.yaml", "--api-base", fake.base_url,
        "--quiet", "--no-report", "--out", "out", "--cassettes", "cas",
    ]  # fmt: skip
    proc = subprocess.Popen(argv, cwd=tmp_path, env=env)
    try:
        deadline = time.monotonic() + 60
        while not started(pids) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert started(pids), "the server never started"
        time.sleep(1.0)  # the slow call under way
        proc.send_signal(signal.SIGINT)
        proc.wait(30)
    finally:
        if proc.poll() is None:
            proc.kill()
    [pid] = started(pids)
    # stopped, not left to finish its 8 s call and find its stdin closed
    deadline = time.monotonic() + 3
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not alive(pid)
