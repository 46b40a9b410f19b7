"""A loop scenario on an MCP server, judged through its declared ``state_tool``: a pair of
scenarios (one whose model leaves the ground truth's state, one that does not) run
against the real demo inventory server process, plain and streamed, recorded (state
reads and the ground truth's own server included) then replayed with no server process
to identical turns and scores, and rescored the same with no process either."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.environments.mcp_support import all_stopped, started
from tests.runner.conftest import run_fake, trials_by_id
from toolbench.cli.app import run_cli
from toolbench.providers.fake import FakeServer, by_last_user

MODULE = "toolbench.environments.demo_mcp_server"

SCENARIOS = """\
scenarios:
  - id: stock-pass
    messages: [{role: user, content: "We sold 3 hammers: take them out of the stock."}]
    turns:
      - messages: [{role: user, content: "Now add 5 wrenches."}]
    environment: {name: inventory}
    expect:
      max_turns: 3
      turns:
        - calls: [{name: remove_item, arguments: {name: hammer, quantity: 3}}]
        - calls: [{name: add_item, arguments: {name: wrench, quantity: 5}}]
  - id: stock-fail
    messages: [{role: user, content: "We sold 3 hammers: take them out of the stock."}]
    turns:
      - messages: [{role: user, content: "Now add 6 screwdrivers."}]
    environment: {name: inventory}
    expect:
      max_turns: 3
      turns:
        - calls: [{name: remove_item, arguments: {name: hammer, quantity: 3}}]
        - calls: [{name: add_item, arguments: {name: screwdriver, quantity: 6}}]
"""

SOLD = """\
scenarios:
  - id: sold
    messages: [{role: user, content: "We sold 3 hammers: take them out of the stock."}]
    environment: {name: inventory}
    expect:
      turns: [{calls: [{name: remove_item, arguments: {name: hammer, quantity: 3}}]}]
"""


def call(tool: str, **arguments: object) -> str:
    return json.dumps({"tool": tool, "arguments": arguments})


REPLIES = {
    "sold 3 hammers": call("remove_item", name="hammer", quantity=3),
    "add 5 wrenches": call("add_item", name="wrench", quantity=5),
    # the model adds one screwdriver too few: the state after turn 1 differs
    "add 6 screwdrivers": call("add_item", name="screwdriver", quantity=5),
}


def counting(pids: Path) -> list[str]:
    """The shipped server's command, its process id appended to ``pids`` first."""
    code = (
        f"import os, runpy; open({str(pids)!r}, 'a').write(f'{{os.getpid()}}\\n'); "
        f"runpy.run_module({MODULE!r}, run_name='__main__')"
    )
    return [sys.executable, "-c", code]


def configure(tmp: Path, pids: Path, state_tool: str = "state", env: str = "") -> None:
    lines = ["[mcp.inventory]", f"command = {json.dumps(counting(pids))}",
             f'state_tool = "{state_tool}"', env]  # fmt: skip
    (tmp / "toolbench.toml").write_text("\n".join(lines) + "\n")


def test_a_loop_on_the_demo_server_is_judged_by_its_state_then_replayed_without_a_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    pids = tmp_path / "pids"
    configure(tmp_path, pids)
    scen = tmp_path / "stock.yaml"
    scen.write_text(SCENARIOS)
    with FakeServer(by_last_user(REPLIES, default="Done.")) as fake:
        for formats in ("prompt-json", "prompt-json:stream"):
            out = f"first-{formats}"
            assert run_fake(fake, tmp_path, scen, out=out, formats=formats) == 0
            trials = trials_by_id(tmp_path / out)
            good, bad = trials["stock-pass"], trials["stock-fail"]
            assert good.status == bad.status == "ok"
            assert good.scores is not None and bad.scores is not None
            assert good.scores.get("loop_success") is True
            assert good.scores.get("state_match") is True
            assert good.scores.get("turn_verdicts") == "pass,pass"
            assert bad.scores.get("loop_success") is False
            assert bad.scores.get("state_match") is False
            assert bad.scores.get("turn_verdicts") == "pass,fail"
            assert "loop.state_mismatch" in bad.scores.errors
            # the state read after each user turn: the server's whole stock
            states = [t.environment.state for t in bad.turns if t.environment and
                      t.environment.state is not None]  # fmt: skip
            assert states == [
                {"inventory": {"hammer": 1, "screwdriver": 7, "nails": 120}},
                {"inventory": {"hammer": 1, "screwdriver": 12, "nails": 120}},
            ]
            # the state tool is not offered to the model
            first_request = json.dumps(good.turns[0].request)
            assert "Every item in stock" in first_request and "whole stock" not in first_request
        cassettes = sorted((tmp_path / "cas").rglob("stock-pass.json"))
        assert len(cassettes) == 2  # plain and streamed
        for cassette in cassettes:  # the ground truth on a server of its own, both read
            tools = json.loads(cassette.read_text())["tools"]
            for server in ("inventory#truth", "inventory"):
                called = [x["params"]["name"] for x in tools
                          if x["server"] == server and x["method"] == "tools/call"]  # fmt: skip
                assert called == ["remove_item", "state", "add_item", "state"]
        served, starts = len(fake.received), len(started(pids))
        # one to list the tools (the second run finds them in the first's cassettes), then
        # per trial the ground truth's server and the model's (none when scoring)
        assert starts == 1 + 2 * 2 * 2
        assert all_stopped(pids)  # none outlives its trial
        for formats in ("prompt-json", "prompt-json:stream"):
            out = f"again-{formats}"
            assert run_fake(fake, tmp_path, scen, "--record", "none", out=out, formats=formats) == 0
            first, again = trials_by_id(tmp_path / f"first-{formats}"), trials_by_id(tmp_path / out)
            for sid in ("stock-pass", "stock-fail"):
                assert again[sid].turns == first[sid].turns
                assert again[sid].scores == first[sid].scores
        assert len(fake.received) == served and len(started(pids)) == starts  # no process
    # a rescore replays each trial's ground truth from its cassette: the same scores
    assert (
        run_cli(["rescore", str(tmp_path / "first-prompt-json"), "-o", str(tmp_path / "re")]) == 0
    )
    rescored, first = trials_by_id(tmp_path / "re"), trials_by_id(tmp_path / "first-prompt-json")
    for sid in ("stock-pass", "stock-fail"):
        assert rescored[sid].scores == first[sid].scores
    assert len(started(pids)) == starts


@pytest.mark.parametrize(
    ("state_tool", "env", "code"),
    [
        ("inventory_dump", "", "environment.mcp_state_missing"),
        ("add_item", "", "environment.mcp_state_raised"),  # no arguments: isError
        ("whoami", 'env = {DEMO_MCP_TOKEN = "tok-Xq2"}', "environment.mcp_state_not_json"),
    ],
)
def test_a_state_tool_that_cannot_be_read_is_a_typed_code_on_the_trial(
    state_tool: str, env: str, code: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    pids = tmp_path / "pids"
    configure(tmp_path, pids, state_tool, env)
    scen = tmp_path / "sold.yaml"
    scen.write_text(SOLD)
    with FakeServer(by_last_user(REPLIES, default="Done.")) as fake:
        assert run_fake(fake, tmp_path, scen) == 3  # no trial ok
    for trial in trials_by_id(tmp_path / "run").values():
        assert (trial.status, trial.error_code) == ("harness_error", code)
        assert state_tool in (trial.infra_error or "")
    assert all_stopped(pids)


def test_a_replay_whose_cassette_lacks_the_truth_starts_no_server(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    pids = tmp_path / "pids"
    configure(tmp_path, pids)
    scen = tmp_path / "sold.yaml"
    scen.write_text(SOLD)
    with FakeServer(by_last_user(REPLIES, default="Done.")) as fake:
        assert run_fake(fake, tmp_path, scen, out="first") == 0
        assert trials_by_id(tmp_path / "first")["sold"].scores.get("loop_success") is True  # type: ignore[union-attr]
        cassette = next((tmp_path / "cas").rglob("sold.json"))
        data = json.loads(cassette.read_text())
        data["tools"] = [x for x in data["tools"] if x["server"] != "inventory#truth"]
        cassette.write_text(json.dumps(data))
        starts = len(started(pids))
        assert run_fake(fake, tmp_path, scen, "--record", "none", out="again") == 3
    trial = trials_by_id(tmp_path / "again")["sold"]
    assert (trial.status, trial.error_code) == ("harness_error", "environment.mcp_unrecorded")
    assert len(started(pids)) == starts
