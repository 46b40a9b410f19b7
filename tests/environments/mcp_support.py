"""What the MCP tests share: the notes server (``mcp_notes_server.py``) configured in a
``toolbench.toml``, its scenario, the fake model answering it, and how to tell which
server processes were started and whether they stopped.

The fixtures are imported by the test modules that use them (``openai_key`` is autouse
there); ``fake`` answers by the ``REPLIES`` of the module that asks for it.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from toolbench.providers.fake import FakeServer, by_last_user
from toolbench.results import TurnRecord
from toolbench.tool_runs import ToolRun

SERVER = Path(__file__).with_name("mcp_notes_server.py")
SECRET = "notes-secret-Zq81xWv0pL"

NOTE_TOOLS = """\
    tools:
      - name: add_note
        description: Keep a line of text.
        parameters: {type: object, properties: {text: {type: string}}, required: [text]}
      - name: list_notes
        parameters: {type: object, properties: {}}
      - name: whoami
        parameters: {type: object, properties: {}}
"""

NOTES_BODY = """\
    messages:
      - {role: user, content: "Add milk to my notes, then read them back."}
    environment: {name: notes}
    expect:
      rounds:
        - calls: [{name: add_note, arguments: {text: milk}}]
        - calls: [{name: list_notes, arguments: {}}]
        - calls: [{name: whoami, arguments: {}}]
      max_turns: 5
"""


def notes_scenario(sid: str, tools: bool = True) -> str:
    """One scenario on the notes server (an item of a file's ``scenarios``): add milk,
    list, whoami; ``tools`` False: it lists none (the server's ``tools/list``)."""
    return f"  - id: {sid}\n" + (NOTE_TOOLS if tools else "") + NOTES_BODY


NOTES = "scenarios:\n" + notes_scenario("notes")

REPLIES = {
    "(whoami)": "Your notes hold milk.",
    "(list_notes)": '{"tool": "whoami", "arguments": {}}',
    "(add_note)": '{"tool": "list_notes", "arguments": {}}',
    "Add milk": '{"tool": "add_note", "arguments": {"text": "milk"}}',
}
"""The fake model's replies to :data:`NOTES`, by the last message."""


@pytest.fixture(autouse=True)
def openai_key(monkeypatch: pytest.MonkeyPatch) -> None:
    """A key for ``openai/fake`` (LiteLLM asks for one; the fake ignores it)."""
    monkeypatch.setenv("OPENAI_API_KEY", "test-key-not-secret-0000")


@pytest.fixture
def fake(request: pytest.FixtureRequest) -> Iterator[FakeServer]:
    """The fake model, answering by the asking test module's ``REPLIES`` (by
    :data:`REPLIES` when it has none)."""
    with FakeServer(by_last_user(getattr(request.module, "REPLIES", REPLIES))) as server:
        yield server


def configure(tmp: Path, *command: str, url: str | None = None, **extra: str) -> Path:
    """``toolbench.toml`` with the notes server, its pids written to a file; the file.
    ``extra`` are variables of its environment, except ``pool``, ``reset`` and
    ``stateless``, which are its table's."""
    pids = tmp / "pids.txt"
    table = {k: extra.pop(k) for k in ("pool", "reset", "stateless") if k in extra}
    env = {"NOTES_SECRET": SECRET, "NOTES_PIDS": str(pids), **extra}
    lines = ["[mcp.notes]", f"command = {json.dumps([sys.executable, str(SERVER), *command])}"]
    if url is not None:
        lines.append(f'url = "{url}"')
    lines += [f"{k} = {v}" for k, v in table.items()]
    lines.append("env = {" + ", ".join(f'{k} = "{v}"' for k, v in env.items()) + "}")
    (tmp / "toolbench.toml").write_text("\n".join(lines) + "\n")
    return pids


def started(pids: Path) -> list[int]:
    return [int(x) for x in pids.read_text().split()] if pids.exists() else []


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def all_stopped(pids: Path, within_s: float = 10.0) -> bool:
    """Every server started has stopped, or does within ``within_s``: a trial's server
    is stopped off the run's event loop (a thread the process waits for at its end),
    so it may still be stopping when an in-process run returns."""
    deadline = time.monotonic() + within_s
    while any(alive(p) for p in started(pids)) and time.monotonic() < deadline:
        time.sleep(0.05)
    return not any(alive(p) for p in started(pids))


def runs(turns: list[TurnRecord]) -> list[ToolRun]:
    return [r for t in turns if t.environment for r in t.environment.runs]
