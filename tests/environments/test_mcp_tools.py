"""A scenario that lists no tools offers its MCP server's ``tools/list``: listed once per
run before the trials (a real server process with state), recorded with the trials,
replayed from the cassettes with no server process; a scenario's own tools win; a server
that cannot list fails its scenario's trials typed and the run goes on; a scenario with
no tools and no server is one line, exit 2."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.environments.mcp_support import (
    SERVER,
    all_stopped,
    configure,
    notes_scenario,
    runs,
    started,
)
from tests.runner.conftest import run_fake, trials_by_id
from toolbench.cli.app import run_cli
from toolbench.environments.env_faults import EnvironmentFault
from toolbench.environments.mcp_tools import listed_tools, tool_def
from toolbench.providers.fake import FakeServer

LISTED = "scenarios:\n" + notes_scenario("listed", tools=False)
OWN = notes_scenario("own")

SERVER_TOOLS = ["add_note", "list_notes", "delete_note", "reset", "whoami", "slow", "big", "crash"]


def prompt_of(request: dict[str, object]) -> str:
    return json.dumps(request.get("messages"))


@pytest.mark.parametrize(
    ("how", "formats"),
    [("stdio", "prompt-json"), ("stdio", "prompt-json:stream"), ("http", "prompt-json")],
)
def test_the_servers_tools_are_the_scenarios_recorded_then_replayed_without_a_process(
    how: str, formats: str, fake: FakeServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    scen = tmp_path / "listed.yaml"
    scen.write_text(LISTED + OWN)
    if how == "http":
        pids = configure(tmp_path, "--http", "{port}", url="http://127.0.0.1:{port}/mcp")
    else:
        pids = configure(tmp_path)
    assert run_fake(fake, tmp_path, scen, out="first", formats=formats) == 0
    # one server listed the tools before the trials, one served each trial
    assert len(started(pids)) == 3 and all_stopped(pids)
    first = trials_by_id(tmp_path / "first")
    listed, own = first["listed"], first["own"]
    assert listed.status == "ok" and listed.scores is not None
    assert listed.scores.get("call_accuracy") is True
    assert [(r.name, r.result) for r in runs(listed.turns)][:2] == [
        ("add_note", '{\n  "id": 1\n}'), ("list_notes", "milk")
    ]  # fmt: skip
    prompt = prompt_of(listed.turns[0].request)
    for name in SERVER_TOOLS:
        assert name in prompt  # every listed tool offered, with the server's description
    assert "Add a note; its id." in prompt
    own_prompt = prompt_of(own.turns[0].request)  # its own tools win
    assert "Keep a line of text." in own_prompt and "delete_note" not in own_prompt

    served = len(fake.received)
    again_out = "again"
    assert run_fake(fake, tmp_path, scen, "--record", "none", out=again_out, formats=formats) == 0
    assert len(fake.received) == served and len(started(pids)) == 3  # no server started
    again = trials_by_id(tmp_path / again_out)
    for sid in ("listed", "own"):
        assert again[sid].turns == first[sid].turns and again[sid].scores == first[sid].scores


def test_a_server_that_cannot_list_fails_its_scenarios_trials_typed_and_the_run_goes_on(
    fake: FakeServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    scen = tmp_path / "listed.yaml"
    scen.write_text(LISTED + OWN.replace("environment: {name: notes}", "environment: {name: ok}"))
    pids = configure(tmp_path, NOTES_START="crash")
    ok = json.dumps([sys.executable, str(SERVER)])
    with (tmp_path / "toolbench.toml").open("a") as f:
        f.write(f"[mcp.ok]\ncommand = {ok}\n")
    assert run_fake(fake, tmp_path, scen, out="first") == 0
    trials = trials_by_id(tmp_path / "first")
    assert (trials["listed"].status, trials["listed"].error_code) == (
        "harness_error", "environment.mcp_start"
    )  # fmt: skip
    assert "refusing to start" in (trials["listed"].infra_error or "")
    assert len(started(pids)) == 1  # tried once for the run, not again per trial
    assert trials["own"].status == "ok"  # the other scenario ran


def test_a_replay_with_no_listing_recorded_fails_typed_and_starts_no_server(
    fake: FakeServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    scen = tmp_path / "listed.yaml"
    scen.write_text(LISTED)
    pids = configure(tmp_path)
    assert run_fake(fake, tmp_path, scen, out="first") == 0
    cassette = next((tmp_path / "cas").rglob("listed.json"))
    data = json.loads(cassette.read_text())
    data["tools"] = [x for x in data["tools"] if x["method"] != "tools/list"]
    cassette.write_text(json.dumps(data))
    run_fake(fake, tmp_path, scen, "--record", "none", out="again")
    trial = trials_by_id(tmp_path / "again")["listed"]
    assert (trial.status, trial.error_code) == ("harness_error", "environment.mcp_unrecorded")
    assert len(started(pids)) == 2  # those of the first run only


def test_a_scenario_with_no_tools_and_no_server_is_one_line(
    fake: FakeServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.chdir(tmp_path)
    scen = tmp_path / "listed.yaml"
    scen.write_text(LISTED.replace("{name: notes}", "{name: todo}"))
    assert run_fake(fake, tmp_path, scen) == 2
    assert capsys.readouterr().err == (
        f"error: {scen}: listed: tools: none given, and no environment it names ('todo') "
        "is an MCP server to list them\n"
    )


def test_an_expected_call_the_server_does_not_list_is_one_line(
    fake: FakeServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.chdir(tmp_path)
    scen = tmp_path / "listed.yaml"
    scen.write_text(LISTED.replace("name: whoami", "name: who"))
    configure(tmp_path)
    assert run_fake(fake, tmp_path, scen) == 2
    assert capsys.readouterr().err == (
        f"error: {scen}: listed: with the tools its MCP servers list (notes): "
        "expected call 'who' is not among the tools\n"
    )


def test_mcp_tool_definitions_become_tooldefs() -> None:
    tool = {"name": "add", "description": "Add.", "inputSchema": {
        "type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}}  # fmt: skip
    assert tool_def(tool).model_dump() == {
        "name": "add", "description": "Add.", "parameters": tool["inputSchema"]
    }  # fmt: skip
    assert tool_def({"name": "x", "inputSchema": {"type": "object"}}).description == ""
    bad = {"name": "y", "inputSchema": {"type": "object", "properties": {"a": 3}}}
    with pytest.raises(EnvironmentFault) as caught:
        listed_tools("s", [tool, bad])
    assert caught.value.code == "environment.mcp_protocol"


def test_a_rescore_scores_against_the_tools_the_cassettes_recorded(
    fake: FakeServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    scen = tmp_path / "listed.yaml"
    scen.write_text(LISTED)
    pids = configure(tmp_path)
    assert run_fake(fake, tmp_path, scen, "--cassettes", "cas", out="first") == 0
    assert run_cli(["rescore", str(tmp_path / "first"), "-o", str(tmp_path / "again")]) == 0
    first = trials_by_id(tmp_path / "first")["listed"]
    again = trials_by_id(tmp_path / "again")["listed"]
    assert again.scores == first.scores and again.turns == first.turns
    assert len(started(pids)) == 2  # the run's two; the rescore started none
