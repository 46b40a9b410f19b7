"""A server's ``state_tool``: what its answer is read as, the tools the model is offered
without it, and the user's configuration through the console script (a loop on a
server without one, or one on a server toolbench neither starts nor resets: one line,
exit 2; with one, a loop on the server validates)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from toolbench.codes import ENV_MCP_STATE_NOT_JSON
from toolbench.environments.env_faults import EnvironmentFault
from toolbench.environments.mcp_config import McpServer
from toolbench.environments.mcp_listing import without_state_tool
from toolbench.environments.mcp_state import STATE_KEY, state_value

HARNESS = Path(__file__).resolve().parents[2] / "harness"
SCRIPT = Path(sys.executable).parent / "toolbench"

LOOP = """\
scenarios:
  - id: loop
    messages: [{role: user, content: "Sell 3 hammers."}]
    environment: {name: inventory}
    expect: {turns: [{calls: [{name: remove_item, arguments: {name: hammer, quantity: 3}}]}]}
"""


def toolbench(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(HARNESS), "NO_COLOR": "1", "COLUMNS": "200"}
    env.pop("TOOLBENCH_SCENARIOS", None)
    return subprocess.run(
        [str(SCRIPT), *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120
    )


def one_line_exit_2(done: subprocess.CompletedProcess[str], line: str) -> None:
    assert "Traceback" not in done.stderr + done.stdout
    assert (done.stderr, done.returncode) == (line + "\n", 2)


@pytest.mark.parametrize(
    ("answer", "state"),
    [
        ('{"hammer": 4}', {"hammer": 4}),  # the text content, read as JSON
        ({"hammer": 4}, {"hammer": 4}),  # structured content, as it is
        ("[1, 2]", {STATE_KEY: [1, 2]}),  # JSON that is not an object, kept under a key
        ("3", {STATE_KEY: 3}),
    ],
)
def test_a_state_answer_is_its_json(answer: object, state: dict[str, object]) -> None:
    assert state_value("inv", "state", answer) == state


@pytest.mark.parametrize("text", ["token abc", "", '{"a": NaN}', '{"a": 1'])
def test_a_state_answer_that_is_not_json_is_a_typed_fault(text: str) -> None:
    with pytest.raises(EnvironmentFault, match="MCP server 'inv': its state_tool 'st'") as got:
        state_value("inv", "st", text)
    assert got.value.code == ENV_MCP_STATE_NOT_JSON


def test_the_model_is_offered_every_listed_tool_but_the_state_tool() -> None:
    listed = [{"name": "list_items"}, {"name": "state"}, {"name": "add_item"}]
    server = McpServer(command=["x"], state_tool="state")
    assert [t["name"] for t in without_state_tool(server, listed)] == ["list_items", "add_item"]
    assert without_state_tool(McpServer(command=["x"]), listed) == listed
    assert without_state_tool(None, listed) == listed


def test_a_loop_on_a_server_without_a_state_tool_is_refused_naming_the_key(
    tmp_path: Path,
) -> None:
    (tmp_path / "loop.yaml").write_text(LOOP.replace("inventory", "shop"))
    (tmp_path / "toolbench.toml").write_text('[mcp.shop]\ncommand = ["never-started"]\n')
    line = (
        "error: loop.yaml: loop: environment[0].name: MCP server 'shop' has no state to "
        'judge a loop (expect.turns) by: add state_tool = "TOOL" under [mcp.shop] in '
        "toolbench.toml (a tool answering its state as JSON)"
    )
    one_line_exit_2(toolbench(["scenarios", "validate", "loop.yaml"], tmp_path), line)
    run = ["run", "--models", "openai/x", "--formats", "prompt-json", "--scenarios", "loop.yaml"]
    one_line_exit_2(toolbench(run, tmp_path), line)  # at plan time, before any trial
    (tmp_path / "toolbench.toml").write_text(
        '[mcp.shop]\ncommand = ["never-started"]\nstate_tool = "state"\n'
    )
    done = toolbench(["scenarios", "validate", "loop.yaml"], tmp_path)
    assert (done.returncode, done.stdout) == (0, "ok: 1 scenarios in 1 files\n")


def test_the_shipped_inventory_server_takes_a_loop(tmp_path: Path) -> None:
    """The built-in ``inventory`` (no toolbench.toml) declares its state tool."""
    (tmp_path / "loop.yaml").write_text(LOOP)
    done = toolbench(["scenarios", "validate", "loop.yaml"], tmp_path)
    assert (done.returncode, done.stdout) == (0, "ok: 1 scenarios in 1 files\n")


@pytest.mark.parametrize(
    ("table", "line"),
    [
        (
            '[mcp.shared]\nurl = "http://127.0.0.1:8931/mcp"\nstate_tool = "state"\n',
            "error: toolbench.toml: mcp.shared: state_tool: a server toolbench does not start "
            "needs 'reset' too (the ground truth runs on it first)",
        ),
        (
            '[mcp.shared]\ncommand = ["x"]\nstate_tool = ""\n',
            "error: toolbench.toml: mcp.shared.state_tool: String should have at least 1 character",
        ),
    ],
)
def test_a_bad_state_tool_is_one_line_naming_the_field(
    table: str, line: str, tmp_path: Path
) -> None:
    (tmp_path / "toolbench.toml").write_text(table)
    (tmp_path / "loop.yaml").write_text(LOOP)
    one_line_exit_2(toolbench(["scenarios", "validate", "loop.yaml"], tmp_path), line)
