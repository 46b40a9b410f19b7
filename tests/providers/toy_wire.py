"""A toy wire protocol, written only for the tests: proof that a new protocol is a new
module, an entry point (``toolbench.wires``) and a kind that speaks it, touching nothing
in ``runner/``, ``cassettes/`` or the engine.

Its stream is server-sent events ``{"toy": "say", "text": ...}``, ``{"toy": "call", "id",
"name", "args"}`` and ``{"toy": "end", "why": ..., "used": [prompt, completion]}``; a plain
body is the same events in one object (``{"toy_events": [...]}``): a stream of one event.
:class:`ToyAPI` is the kind that sends it over httpx (so the trial's cassette records and
replays it), reading a plain body with the same reader as a stream.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx

from toolbench.plugin import (
    Assembler,
    Capabilities,
    Endpoint,
    Fault,
    Format,
    as_completion,
    codes,
)

name = "toy"
FINISH = {"done": "stop", "calls": "tool_calls"}


def speaks(events: list[tuple[Any, float | None]]) -> bool:
    """Whether these events are the toy protocol's (the first one has a ``toy`` field)."""
    first = events[0][0] if events else None
    return isinstance(first, dict) and "toy" in first


def _chunk(event: dict[str, Any]) -> dict[str, Any] | None:
    kind, delta, finish = event.get("toy"), {}, None
    if kind == "say":
        delta = {"content": event.get("text")}
    elif kind == "call":
        fn = {"name": event.get("name"), "arguments": event.get("args")}
        delta = {"tool_calls": [{"index": 0, "id": event.get("id"), "type": "function",
                                 "function": fn}]}  # fmt: skip
    elif kind == "end":
        finish = FINISH.get(str(event.get("why")), "stop")
    else:
        return None
    out: dict[str, Any] = {"choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
    used = event.get("used")
    if isinstance(used, list) and len(used) == 2:
        out["usage"] = {"prompt_tokens": used[0], "completion_tokens": used[1]}
    return out


def assemble(events: list[tuple[Any, float | None]]) -> Assembler:
    """Every toy event fed, as the chat chunk it means, to a chat :class:`Assembler`."""
    asm = Assembler()
    for data, offset in events:
        translated = _chunk(data) if isinstance(data, dict) else None
        if translated is not None:
            asm.feed(translated, offset)
    return asm


class ToyAPI:
    """A provider kind speaking the toy protocol at ``{api_base}/toy``."""

    name = "toy"
    prefixes: tuple[str, ...] = ("toy/",)
    width: int | None = None

    def preflight(self, model: str, record: str) -> None:
        return None

    def ready(self, models: list[str]) -> None:
        return None

    def run_params(self) -> dict[str, Any]:
        return {}

    async def endpoint(self, model: str, fmt: Format, live: bool) -> Endpoint:
        raise NotImplementedError  # the test makes its endpoint itself

    async def send(self, endpoint: Endpoint, request: dict[str, Any]) -> Any:
        url = f"{endpoint.api_base}/toy"
        if request.get("stream"):
            return _stream(url, request, endpoint.timeout_s)
        async with httpx.AsyncClient(timeout=endpoint.timeout_s) as client:
            resp = await client.post(url, json=request)
        if resp.status_code != 200:
            raise Fault(
                codes.INFRA_SERVER_ERROR, f"HTTP {resp.status_code}", True, resp.status_code
            )
        events: list[tuple[Any, float | None]] = [(e, None) for e in resp.json()["toy_events"]]
        return as_completion(assemble(events).close(), str(request.get("model")))

    def cost(self, response: Any) -> float | None:
        return None

    def capabilities(self, model: str) -> Capabilities:
        return Capabilities(params=frozenset({"temperature", "seed"}), own_server=True)

    def classify(self, error: BaseException, request: dict[str, Any] | None = None) -> Fault:
        return Fault(codes.INFRA_ERROR, str(error), False)

    def close(self) -> None:
        return None


async def _stream(url: str, request: dict[str, Any], timeout_s: float) -> AsyncIterator[Any]:
    """The stream's bytes read to the end; the events are the cassette clock's, and the
    toy reader assembles them (registered in ``toolbench.wires``), so nothing is yielded."""
    async with (
        httpx.AsyncClient(timeout=timeout_s) as client,
        client.stream("POST", url, json=request) as resp,
    ):
        async for _ in resp.aiter_bytes():
            pass
    return
    yield
