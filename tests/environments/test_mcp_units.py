"""The pieces of an MCP environment on their own: a server's listed tools checked, the
configuration's forms, and a recorded trial played back in order and redacted."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from toolbench.cassettes.recording import Recording, ToolExchange
from toolbench.environments.env_faults import EnvironmentFault
from toolbench.environments.mcp_config import McpServer, parse_option
from toolbench.environments.mcp_env import McpEnvironment
from toolbench.environments.mcp_listing import checked
from toolbench.environments.mcp_tape import Tape
from toolbench.redaction import register_secret


def test_a_listed_tool_without_an_object_schema_is_a_protocol_fault() -> None:
    good = {"name": "a", "inputSchema": {"type": "object"}}
    assert checked("s", [good]) == [good]
    for bad in ({"name": "a", "inputSchema": {"type": "string"}}, {"name": "a"}, {"x": 1}):
        with pytest.raises(EnvironmentFault) as err:
            checked("s", [good, bad])
        assert err.value.code == "environment.mcp_protocol"


def test_option_and_table_forms() -> None:
    name, server = parse_option("notes=python 'my server.py' --flag")
    assert (name, server.command, server.url) == (
        "notes",
        ["python", "my server.py", "--flag"],
        None,
    )
    _, http = parse_option("web=http://localhost:8000/mcp")
    assert (http.url, http.started) == ("http://localhost:8000/mcp", False)
    per_trial = McpServer(command=["srv", "--port", "{port}"], url="http://127.0.0.1:{port}/mcp")
    bound = per_trial.bound(4321)
    assert (bound.command, bound.url) == (["srv", "--port", "4321"], "http://127.0.0.1:4321/mcp")


class FakeCassette:
    """What a tape reads and writes of a trial's cassette."""

    def __init__(self, record: str, tools: list[ToolExchange] | None) -> None:
        self.record, self.dirty = record, False
        self.data = Recording(tools=tools)


def test_a_tape_plays_in_order_and_keeps_redacted() -> None:
    secret = "tape-secret-Hq72vB1xK9"
    register_secret(secret)
    calls = [
        ToolExchange(server="n", method="tools/call", params={"name": "a", "arguments": {}},
                     result={"content": [{"type": "text", "text": "one"}]}),
        ToolExchange(server="n", method="tools/call", params={"name": "b", "arguments": {}},
                     result={"content": []}),
    ]  # fmt: skip
    tape = Tape("n", FakeCassette("none", calls))  # type: ignore[arg-type]
    assert tape.replaying and tape.listed() is None
    assert tape.play("tools/call", {"name": "b", "arguments": {}}) is None  # not next
    assert tape.play("tools/call", {"name": "a", "arguments": {}}) is calls[0]
    assert tape.play("tools/call", {"name": "b", "arguments": {}}) is calls[1]
    assert tape.play("tools/call", {"name": "a", "arguments": {}}) is None  # all played

    live = FakeCassette("all", calls)
    fresh = Tape("n", live)  # type: ignore[arg-type]
    assert not fresh.replaying  # --record all: never played back
    fresh.keep(ToolExchange(server="n", method="tools/call", params={"k": secret}, result=secret))
    kept = (live.data.tools or [])[-1]
    assert live.dirty and secret not in kept.model_dump_json()


def test_a_server_answering_garbage_does_not_start(tmp_path: Path) -> None:
    garbage = tmp_path / "garbage.py"
    garbage.write_text(
        "import sys\nfor line in sys.stdin:\n    print('not json-rpc', flush=True)\n"
    )
    server = McpServer(command=[sys.executable, str(garbage)], start_timeout_s=3)
    with pytest.raises(EnvironmentFault) as err:
        McpEnvironment("garbage", server, {})
    assert err.value.code == "environment.mcp_start" and "no answer within 3 s" in str(err.value)


def test_a_server_takes_no_initial_state() -> None:
    server = McpServer(command=["never-started"])
    with pytest.raises(EnvironmentFault) as err:
        McpEnvironment("notes", server, {"notes": []})
    assert err.value.code == "environment.state_invalid"
