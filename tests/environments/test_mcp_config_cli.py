"""A bad ``[mcp]`` or ``[environments]`` table in toolbench.toml, or a bad ``--mcp``: one
line naming the file, the field or the option, exit 2, through the console script."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

HARNESS = Path(__file__).resolve().parents[2] / "harness"
SCRIPT = Path(sys.executable).parent / "toolbench"

SCENARIO = """\
scenarios:
  - id: s
    tools: [{name: f, parameters: {type: object, properties: {}}}]
    messages: [{role: user, content: hi}]
    environment: {name: notes}
    expect: {calls: [{name: f, arguments: {}}]}
"""
LOOP = """\
scenarios:
  - id: loop
    tools: [{name: f, parameters: {type: object, properties: {}}}]
    messages: [{role: user, content: hi}]
    environment: {name: notes}
    expect: {turns: [{calls: [{name: f, arguments: {}}]}]}
"""

T = "error: toolbench.toml: "
TOML_CASES = {
    "not-local": (
        '[mcp.notes]\nurl = "http://example.com/mcp"\n',
        T + "mcp.notes: url: 'http://example.com/mcp' is not http:// on localhost",
    ),
    "command-text": (
        '[mcp.notes]\ncommand = "python x"\n',
        T + "mcp.notes.command: Input should be a valid list",
    ),
    "neither": (
        "[mcp.notes]\n",
        T + "mcp.notes: give 'command' (stdio) or 'url' (streamable HTTP on localhost)",
    ),
    "unknown-field": (
        '[mcp.notes]\ncommand = ["x"]\ntimeout = 3\n',
        T + "mcp.notes.timeout: Extra inputs are not permitted",
    ),
    "port-without-command-port": (
        '[mcp.notes]\ncommand = ["x"]\nurl = "http://127.0.0.1:{port}/mcp"\n',
        T + "mcp.notes: url: '{port}' in the url needs '{port}' in the command too",
    ),
    "pool-without-reset": (
        '[mcp.notes]\ncommand = ["x"]\npool = true\n',
        T + "mcp.notes: pool: a pooled server needs 'reset' (a tool that puts its first "
        "state back) or 'stateless = true'",
    ),
    "pool-of-a-url": (
        '[mcp.notes]\nurl = "http://127.0.0.1:8931/mcp"\npool = true\nreset = "reset"\n',
        T + "mcp.notes: pool: only a server toolbench starts ('command') is pooled",
    ),
    "mcp-not-table": ("mcp = 3\n", T + "mcp: expected a table of servers ([mcp.NAME])"),
    "bad-name": (
        '[mcp."a b"]\ncommand = ["x"]\n',
        T + "mcp.a b: a server name is letters, digits, '_', '.', '-'",
    ),
    "class-missing-module": (
        '[environments.notes]\nclass = "nosuch.module:X"\n',
        T + "environments.notes.class: cannot import 'nosuch.module' "
        "(ModuleNotFoundError: No module named 'nosuch')",
    ),
    "class-not-environment": (
        '[environments.notes]\nclass = "toolbench.environments.todo:KIND"\n',
        T + "environments.notes.class: 'toolbench.environments.todo:KIND' is not an "
        "Environment subclass",
    ),
    "class-spec": (
        '[environments.notes]\nclass = "toolbench"\n',
        T + "environments.notes.class: expected \"pkg.module:Class\", got 'toolbench'",
    ),
}

OPT = "error: --mcp"
OPTION_CASES = {
    "no-equals": (
        "notes",
        OPT + ": 'notes' is not NAME=COMMAND (or NAME=http://127.0.0.1:PORT/mcp)",
    ),
    "bad-name": ("a b=x", OPT + ": 'a b': a server name is letters, digits, '_', '.', '-'"),
    "not-local": (
        "notes=http://example.com/mcp",
        OPT + " notes: url: 'http://example.com/mcp' is not http:// on localhost",
    ),
    "unclosed": ("notes='x", OPT + ": 'notes': cannot split the command (No closing quotation)"),
    "empty": ("notes=", OPT + ": 'notes=' gives no command"),
}


def toolbench(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(HARNESS), "NO_COLOR": "1", "COLUMNS": "200"}
    env.pop("TOOLBENCH_SCENARIOS", None)
    return subprocess.run(
        [str(SCRIPT), *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120
    )


def one_line_exit_2(done: subprocess.CompletedProcess[str], line: str) -> None:
    assert "Traceback" not in done.stderr + done.stdout
    assert (done.stderr, done.returncode) == (line + "\n", 2)


@pytest.mark.parametrize("case", sorted(TOML_CASES))
def test_a_bad_table_is_one_line_naming_file_and_field(case: str, tmp_path: Path) -> None:
    table, line = TOML_CASES[case]
    (tmp_path / "toolbench.toml").write_text(table)
    (tmp_path / "s.yaml").write_text(SCENARIO)
    one_line_exit_2(toolbench(["scenarios", "validate", "s.yaml"], tmp_path), line)
    run = ["run", "--models", "openai/x", "--formats", "prompt-json", "--scenarios", "s.yaml"]
    one_line_exit_2(toolbench(run, tmp_path), line)  # at plan time, before any trial


@pytest.mark.parametrize("case", sorted(OPTION_CASES))
def test_a_bad_mcp_option_is_one_line(case: str, tmp_path: Path) -> None:
    value, line = OPTION_CASES[case]
    one_line_exit_2(toolbench(["run", "--mcp", value], tmp_path), line)


def test_a_configured_server_or_class_validates_and_a_loop_on_a_server_is_refused(
    tmp_path: Path,
) -> None:
    (tmp_path / "s.yaml").write_text(SCENARIO)
    (tmp_path / "loop.yaml").write_text(LOOP)
    (tmp_path / "toolbench.toml").write_text('[mcp.notes]\ncommand = ["never-started"]\n')
    done = toolbench(["scenarios", "validate", "s.yaml"], tmp_path)
    assert (done.returncode, done.stdout) == (0, "ok: 1 scenarios in 1 files\n")
    one_line_exit_2(
        toolbench(["scenarios", "validate", "loop.yaml"], tmp_path),
        "error: loop.yaml: loop: environment[0].name: MCP server 'notes' has no state to judge "
        'a loop (expect.turns) by: add state_tool = "TOOL" under [mcp.notes] in toolbench.toml '
        "(a tool answering its state as JSON)",
    )
    (tmp_path / "toolbench.toml").write_text(
        '[environments.notes]\nclass = "toolbench.environments.todo:Todo"\n'
    )
    done = toolbench(["scenarios", "validate", "s.yaml", "loop.yaml"], tmp_path)
    assert (done.returncode, done.stdout) == (0, "ok: 2 scenarios in 2 files\n")


def test_a_configured_server_replaces_a_built_in_of_its_name_without_a_warning(
    tmp_path: Path,
) -> None:
    """``[mcp.inventory]`` (the name of the shipped demo server, as the checkout's own
    toolbench.toml has it) is the user's word: no plugin warning on any command."""
    (tmp_path / "s.yaml").write_text(SCENARIO.replace("notes", "inventory"))
    (tmp_path / "toolbench.toml").write_text('[mcp.inventory]\ncommand = ["never-started"]\n')
    done = toolbench(["scenarios", "validate", "s.yaml"], tmp_path)
    assert (done.returncode, done.stdout, done.stderr) == (0, "ok: 1 scenarios in 1 files\n", "")
