"""The MCP server shipped with toolbench (``toolbench.environments.demo_mcp_server``):
its tools and state through toolbench's client, a run against it recorded then replayed
with no server process, the embedded default's MCP scenarios replayed from their
committed cassettes with no server process, and a token given in its environment never
written."""

from __future__ import annotations

import json
import shlex
import sys
import tomllib
from pathlib import Path

import pytest

from tests.runner.conftest import run_fake, trials_by_id
from toolbench.cassettes.recording import ToolExchange
from toolbench.cli.app import run_cli
from toolbench.environments import demo_mcp, demo_mcp_server
from toolbench.environments.mcp_client import McpClient
from toolbench.environments.mcp_config import McpServer
from toolbench.environments.mcp_kind import McpKind
from toolbench.providers.fake import FakeServer, by_last_user
from toolbench.store import load_results

ROOT = Path(__file__).resolve().parents[2]
MODULE = "toolbench.environments.demo_mcp_server"
TOKEN = "demo-token-Kq27vXp0Lw"
EMBEDDED = ("mcp-inventory-add", "mcp-inventory-sell-and-report")

SCENARIO = """\
scenarios:
  - id: stock
    messages:
      - {role: user, content: "We sold 3 hammers. Take them out, then check who I am."}
    environment: {name: inventory}
    expect:
      max_turns: 4
      rounds:
        - calls: [{name: remove_item, arguments: {name: hammer, quantity: 3}}]
        - calls: [{name: whoami, arguments: {}}]
"""

REPLIES = {
    "token": "Done: 1 hammer is left.",
    '"hammer"': '{"tool": "whoami", "arguments": {}}',
    "sold 3 hammers": '{"tool": "remove_item", "arguments": {"name": "hammer", "quantity": 3}}',
}


@pytest.fixture(autouse=True)
def openai_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "test-key-not-secret-0000")


def counting(pids: Path) -> list[str]:
    """The shipped server's command, its process id appended to ``pids`` first."""
    code = (
        f"import os, runpy; open({str(pids)!r}, 'a').write(f'{{os.getpid()}}\\n'); "
        f"runpy.run_module({MODULE!r}, run_name='__main__')"
    )
    return [sys.executable, "-c", code]


def started(pids: Path) -> int:
    return len(pids.read_text().split()) if pids.is_file() else 0


def test_each_process_starts_from_the_same_stock_and_keeps_its_state() -> None:
    kept: list[ToolExchange] = []
    server = McpServer(command=[sys.executable, "-m", MODULE])
    first = McpClient("inventory", server, kept.append)
    first.start()
    try:
        assert [t["name"] for t in first.tools] == [
            "list_items", "add_item", "remove_item", "state"
        ]  # fmt: skip
        assert "wrench" in json.dumps(first.call("add_item", {"name": "wrench", "quantity": 5}))
        assert json.dumps(first.call("remove_item", {"name": "hammer", "quantity": 3}))
        refused = first.call("remove_item", {"name": "hammer", "quantity": 2})
        assert refused["isError"] is True  # a tool error the model is told, with its reason
        assert "cannot remove 2 hammer: 1 in stock" in refused["content"][0]["text"]
        listed = json.dumps(first.call("list_items", {}))
        assert '\\"wrench\\": 5' in listed and '\\"hammer\\": 1' in listed
    finally:
        first.close()
    second = McpClient("inventory", server, kept.append)
    second.start()
    try:  # a fresh process: the stock it started with, none of the first one's changes
        listed = json.dumps(second.call("list_items", {}))
        assert '\\"hammer\\": 4' in listed and "wrench" not in listed
    finally:
        second.close()
    assert demo_mcp_server.START_STOCK == {"hammer": 4, "screwdriver": 7, "nails": 120}


def test_a_token_in_its_environment_is_used_but_never_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The server echoes ``DEMO_MCP_TOKEN`` in a tool result: the model's request and the
    recorded exchange carry ``<redacted>``, and no byte the run writes holds the token;
    the replay starts no server and gives the same trial."""
    monkeypatch.chdir(tmp_path)
    pids = tmp_path / "pids"
    (tmp_path / "toolbench.toml").write_text(
        f"[mcp.inventory]\ncommand = {json.dumps(counting(pids))}\n"
        f'env = {{DEMO_MCP_TOKEN = "{TOKEN}"}}\n'
    )
    scen = tmp_path / "stock.yaml"
    scen.write_text(SCENARIO)
    with FakeServer(by_last_user(REPLIES)) as fake:
        for formats in ("prompt-json", "prompt-json:stream"):
            out = f"first-{formats}"
            assert run_fake(fake, tmp_path, scen, out=out, formats=formats) == 0
            trial = trials_by_id(tmp_path / out)["stock"]
            assert trial.scores is not None and trial.scores.get("call_accuracy") is True
            runs = [r for t in trial.turns if t.environment for r in t.environment.runs]
            assert [(r.name, r.result) for r in runs] == [
                ("remove_item", '{\n  "hammer": 1\n}'),
                ("whoami", "token <redacted>"),
            ]
        served, starts = len(fake.received), started(pids)
        assert starts >= 2  # the listing, then a process per trial
        for formats in ("prompt-json", "prompt-json:stream"):
            out = f"again-{formats}"
            assert run_fake(fake, tmp_path, scen, "--record", "none", out=out, formats=formats) == 0
            first = trials_by_id(tmp_path / f"first-{formats}")["stock"]
            assert trials_by_id(tmp_path / out)["stock"].turns == first.turns
        assert len(fake.received) == served and started(pids) == starts  # no server started
    written = [p for p in tmp_path.rglob("*") if p.is_file() and p.name != "toolbench.toml"]
    assert any(p.suffix == ".json" and "cas" in p.parts for p in written)
    for path in written:
        assert TOKEN not in path.read_text(encoding="utf-8", errors="replace"), path


@pytest.mark.parametrize("stream", ["off", "on"])
def test_the_embedded_mcp_scenarios_replay_with_no_server_process(
    stream: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``toolbench run`` replays the embedded default's MCP scenarios from the committed
    cassettes: the server the repository's ``toolbench.toml`` names is replaced by one
    that writes its process id, and none is started."""
    monkeypatch.chdir(ROOT)
    pids = tmp_path / "pids"
    argv = ["run", "--record", "none", "--quiet", "--no-report", "--stream", stream,
            "--scenarios", ",".join(EMBEDDED), "--out", str(tmp_path / "r"),
            "--mcp", "inventory=" + shlex.join(counting(pids))]  # fmt: skip
    assert run_cli(argv) == 0
    results = load_results(tmp_path / "r")
    assert len(results) == len(EMBEDDED) * 2 * 5
    assert all(r.status == "ok" for r in results)
    assert started(pids) == 0


def test_it_is_a_built_in_environment_started_with_this_interpreter() -> None:
    """Registered through the entry point group (so the embedded default plans without
    the repository's toolbench.toml), started with the interpreter that runs toolbench."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    entry = project["entry-points"]["toolbench.environments"]["inventory"]
    assert entry == "toolbench.environments.demo_mcp:KIND"
    kind = demo_mcp.KIND
    assert isinstance(kind, McpKind) and kind.name == "inventory" and kind.server is not None
    assert kind.server.command == [sys.executable, "-m", MODULE]
    toml = tomllib.loads((ROOT / "toolbench.toml").read_text(encoding="utf-8"))
    assert toml["mcp"]["inventory"]["command"][1:] == ["-m", MODULE]
