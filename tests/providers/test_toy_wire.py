"""A new wire protocol is a module, an entry point and a kind that speaks it: the toy
protocol of :mod:`tests.providers.toy_wire`, registered in ``toolbench.wires`` through an
entry point installed for the test, makes two turns (a tool call, then the answer) against
a fake server, plain and streamed, recorded and then replayed offline to the same
replies, through the shared call and the trial cassettes as a run uses them; nothing in
``runner/``, ``cassettes/`` or the engine knows it."""

from __future__ import annotations

import asyncio
import json
from importlib.metadata import EntryPoint
from pathlib import Path
from typing import Any

import pytest

from tests.providers.servers.base import FakeServer, Request, Response
from tests.providers.toy_wire import ToyAPI
from toolbench.cassettes import RecordOption, use_cassette
from toolbench.cassettes.route import router
from toolbench.formats.base import RenderedRequest
from toolbench.providers.call import call
from toolbench.providers.model_api import Completion, CompletionRequest, Endpoint
from toolbench.providers.wire.wire_registry import WIRES
from toolbench.results import Attempt

TOOLS = [{"type": "function", "function": {
    "name": "get_weather", "description": "The weather in a city.",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
}}]  # fmt: skip
USER = {"role": "user", "content": "What is the weather in Lisbon?"}
TURNS: tuple[list[dict[str, Any]], list[dict[str, Any]]] = (
    [{"toy": "say", "text": "Let me look."},
     {"toy": "call", "id": "t1", "name": "get_weather", "args": '{"city": "Lis'},
     {"toy": "call", "id": None, "name": None, "args": 'bon"}'},
     {"toy": "end", "why": "calls", "used": [20, 9]}],
    [{"toy": "say", "text": "It is 18 C "}, {"toy": "say", "text": "in Lisbon."},
     {"toy": "end", "why": "done", "used": [40, 7]}],
)  # fmt: skip
ENTRY = EntryPoint("toy", "tests.providers.toy_wire", "toolbench.wires")


def _answer(server: FakeServer, streamed: bool) -> Any:
    def answer(req: Request) -> Response:
        events = TURNS[min(len(server.received), 2) - 1]
        if not streamed:
            return Response(200, {"toy_events": events})
        body = "".join(f"data: {json.dumps(e)}\n\n" for e in events).encode()
        return Response(200, body, {"content-type": "text/event-stream"})

    return answer


async def _two_turns(
    base: str, path: Path, streamed: bool, record: RecordOption
) -> list[Completion]:
    api, attempts = ToyAPI(), list[Attempt]()
    endpoint = Endpoint("toy/m", base, timeout_s=10.0)
    messages: list[dict[str, Any]] = [USER]
    done: list[Completion] = []
    opened = use_cassette(path, record, streamed=streamed)
    with router(), opened as tc:
        for turn in (0, 1):
            rendered = RenderedRequest(messages=list(messages), tools=TOOLS)
            got = await call(api, CompletionRequest(endpoint, rendered, 7, tc, attempts, turn),
                             stream=streamed)  # fmt: skip
            done.append(got)
            if turn == 0:
                messages += [got.reply.raw_message,
                             {"role": "tool", "tool_call_id": "t1", "content": "18 C"}]  # fmt: skip
    return done


@pytest.mark.parametrize("streamed", [False, True], ids=["plain", "streamed"])
def test_a_toy_wire_round_trips_recorded_then_replayed(tmp_path: Path, streamed: bool) -> None:
    path = tmp_path / "trial.json"
    with WIRES.installing(ENTRY):
        assert "toy" in WIRES.names()
        server = FakeServer(lambda r: Response(500, {}))
        server.handler = _answer(server, streamed)
        with server:
            base = server.base_url
            live = asyncio.run(_two_turns(base, path, streamed, "all"))
        assert len(server.received) == 2
        # Offline: the server is gone, the cassette answers.
        replayed = asyncio.run(_two_turns(base, path, streamed, "none"))
    assert "toy" not in WIRES.names()
    first, second = live
    (tool_call,) = first.reply.tool_calls
    assert tool_call["function"] == {"name": "get_weather", "arguments": '{"city": "Lisbon"}'}
    assert first.reply.finish_reason == "tool_calls"
    assert second.reply.text == "It is 18 C in Lisbon."
    assert (first.prompt_tokens, second.completion_tokens) == (20, 7)
    assert (first.stream is not None) == streamed
    if streamed:
        assert second.stream is not None
        assert "".join(d.text for d in second.stream.deltas) == "It is 18 C in Lisbon."
    assert not any(c.replayed for c in live)
    assert all(c.replayed for c in replayed)
    for was, again in zip(live, replayed, strict=True):
        assert again.reply == was.reply
        assert again.request == was.request
        assert (again.prompt_tokens, again.completion_tokens) == (
            was.prompt_tokens, was.completion_tokens)  # fmt: skip


def test_without_its_entry_point_no_wire_reads_a_toy_stream(tmp_path: Path) -> None:
    """The toy reader is what read the stream above: not installed, no protocol speaks
    the toy events and the sender yields no chat chunk, so the turn holds nothing."""
    server = FakeServer(lambda r: Response(500, {}))
    server.handler = _answer(server, True)

    async def one_turn() -> Completion:
        endpoint = Endpoint("toy/m", server.base_url, timeout_s=10.0)
        rendered = RenderedRequest(messages=[USER], tools=TOOLS)
        with router(), use_cassette(tmp_path / "t.json", "all", streamed=True) as tc:
            return await call(ToyAPI(), CompletionRequest(endpoint, rendered, 7, tc, [], 0), True)

    assert "toy" not in WIRES.names()
    with server:
        got = asyncio.run(one_turn())
    assert (got.reply.text, got.reply.tool_calls) == ("", [])
