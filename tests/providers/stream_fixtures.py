"""Provider replies as the wire carries them (``tests/data/provider_streams.yaml``), each
sent by a fake server to the shared call and judged against what toolbench must make of
it: the reply (calls, text, finish reason, provider-executed tools shown and not scored,
a failed call attempt) kept in the cassette, or a typed code never recorded as the
model's reply.

``python -m tests.providers.stream_fixtures`` prints each verdict and how many are read
right (the measurement of issue 34's "streamed provider fixtures");
``tests/providers/test_stream_fixtures.py`` asserts every one.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import struct
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from tests.providers.servers.base import FakeServer, Response
from toolbench.cassettes import RecordOption, use_cassette
from toolbench.cassettes.route import router
from toolbench.errors import InfraError, UnsupportedError
from toolbench.eventstream import Frame
from toolbench.formats.base import RenderedRequest
from toolbench.formats.format_registry import get_format
from toolbench.providers.call import call
from toolbench.providers.litellm_api import LiteLLMAPI, litellm
from toolbench.providers.model_api import CompletionRequest, ProviderSettings

FILE = Path(__file__).parents[1] / "data" / "provider_streams.yaml"
TOOLS = [
    {"type": "function", "function": {"name": name, "description": name, "parameters": params}}
    for name, params in (
        ("get_weather", {"type": "object", "properties": {"city": {"type": "string"}}}),
        ("get_time", {"type": "object", "properties": {}}),
        ("plan_trip", {"type": "object", "properties": {"stops": {"type": "array"}}}),
    )
]
USER = {"role": "user", "content": "What is the weather in Lisbon?"}
ENV = {
    "openai": (("OPENAI_API_KEY", "sk-dummy"),),
    "anthropic": (("ANTHROPIC_API_KEY", "sk-ant-dummy"),),
    "gemini": (("GEMINI_API_KEY", "AIza-dummy"),),
    "cohere_chat": (("COHERE_API_KEY", "dummy"),),
    "bedrock": (("AWS_ACCESS_KEY_ID", "AKIAFAKEFAKEFAKE0000"),
                ("AWS_SECRET_ACCESS_KEY", "not-a-secret-at-all-just-a-test-value"),
                ("AWS_REGION_NAME", "us-east-1")),
}  # fmt: skip


@dataclass(frozen=True)
class Fixture:
    id: str
    model: str
    stream: bool
    body: bytes
    content_type: str | None
    expect: dict[str, Any]
    source: str


def _es_header(name: str, value: str) -> bytes:
    n, v = name.encode(), value.encode()
    return bytes([len(n)]) + n + bytes([7]) + struct.pack(">H", len(v)) + v


def _body(entry: dict[str, Any]) -> tuple[bytes, str | None]:
    framing = entry["framing"]
    events = entry.get("events") or []
    default = {
        "sse": "text/event-stream",
        "sse-named": "text/event-stream",
        "raw": "text/event-stream",
        "ndjson": "application/x-ndjson",
        "eventstream": "application/vnd.amazon.eventstream",
        "json": "application/json",
    }
    ctype = entry["content_type"] if "content_type" in entry else default[framing]
    if framing in ("sse", "sse-named"):
        out = []
        for e in events:
            head = f"event: {e['type']}\n" if framing == "sse-named" else ""
            out.append(f"{head}data: {json.dumps(e)}\n\n")
        if entry.get("done"):
            out.append("data: [DONE]\n\n")
        return "".join(out).encode(), ctype
    if framing == "ndjson":
        return "".join(json.dumps(e) + "\n" for e in events).encode(), ctype
    if framing == "eventstream":
        raw = b""
        for kind, payload in events:
            headers = _es_header(":event-type", kind)
            headers += _es_header(":content-type", "application/json")
            headers += _es_header(":message-type", "event")
            raw += Frame({}, headers, b"").encode(json.dumps(payload).encode())
        return raw, ctype
    if framing == "json":
        return json.dumps(entry["body_json"]).encode(), ctype
    return str(entry["body"]).encode(), ctype


def load() -> list[Fixture]:
    entries = yaml.safe_load(FILE.read_text(encoding="utf-8"))
    out = []
    for entry in entries:
        body, ctype = _body(entry)
        out.append(Fixture(entry["id"], entry["model"], entry.get("stream", True), body, ctype,
                           dict(entry["expect"]), entry["source"]))  # fmt: skip
    return out


async def run(fx: Fixture, cassette: Path, record: RecordOption = "all") -> dict[str, Any]:
    """What the shared call made of the fixture: the reply, or the typed code. With
    ``record="none"`` no server runs: the trial's cassette answers."""
    # The fake server sends application/json unless told otherwise; "no content type" is
    # an empty one.
    headers = {"content-type": fx.content_type or ""}
    server = FakeServer(lambda req: Response(200, fx.body, headers))
    with contextlib.ExitStack() as stack:
        stack.enter_context(_fresh_client())
        base = "http://127.0.0.1:9"  # nothing answers there: a replay is offline
        if record != "none":
            base = stack.enter_context(server).base_url
        api = LiteLLMAPI(ProviderSettings(api_base=base))
        endpoint = await api.endpoint(fx.model, get_format("native"), live=record != "none")
        rendered = RenderedRequest(messages=[USER], tools=TOOLS)
        # The trial's cassette, as a run opens it: streamed, or the plain one (which
        # judges a whole body before it records it).
        try:
            with router(), use_cassette(cassette, record, streamed=fx.stream) as tc:
                req = CompletionRequest(endpoint, rendered, 7, tc, [], 0)
                got = await call(api, req, stream=fx.stream)
        except (InfraError, UnsupportedError) as exc:
            return {"code": exc.code, "message": str(exc)}
    reply = got.reply
    parsed = get_format("native").parse_reply(reply)
    shown = [
        tc["function"]["name"]
        for tc in reply.raw_message.get("tool_calls") or []
        if tc not in reply.tool_calls
    ]
    return {
        "text": reply.text,
        "calls": [[c.name, c.arguments] for c in parsed.calls],
        "finish": reply.finish_reason,
        "parse": parsed.status,
        "shown": shown,
    }


@contextlib.contextmanager
def _fresh_client() -> Iterator[None]:
    """LiteLLM's module-level HTTP client made anew for this run's event loop (Gemini is
    sent by it; one pooled under an earlier loop, or swapped by another test, would not
    pass through the cassette layer), the previous one put back after."""
    lm = litellm()
    from litellm.llms.custom_httpx.http_handler import AsyncHTTPHandler

    before = lm.module_level_aclient
    lm.module_level_aclient = AsyncHTTPHandler()
    try:
        yield
    finally:
        lm.module_level_aclient = before


@contextlib.contextmanager
def provider_env(fx: Fixture) -> Iterator[None]:
    """The provider's key variables set (dummies), as they were after."""
    pairs = ENV.get(fx.model.split("/", 1)[0], ())
    saved = {k: os.environ.get(k) for k, _ in pairs}
    os.environ.update(dict(pairs))
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def judge(fx: Fixture, got: dict[str, Any], recorded: bool) -> list[str]:
    """What differs from the fixture's expectation (nothing: read right)."""
    want = fx.expect
    wrong = []
    if "code" in want:
        if got.get("code") != want["code"]:
            wrong.append(f"code {got.get('code')!r}, expected {want['code']!r}")
        if recorded != want.get("recorded", False):
            wrong.append(f"recorded {recorded}, expected {want.get('recorded', False)}")
        return wrong
    if "code" in got:
        return [f"failed {got['code']}: {got['message'][:200]}"]
    for key in ("calls", "text", "finish", "parse", "shown"):
        if key in want and got[key] != want[key]:
            wrong.append(f"{key} {got[key]!r}, expected {want[key]!r}")
    if not recorded:
        wrong.append("the reply was not recorded")
    return wrong


def check(fx: Fixture) -> list[str]:
    """Run one fixture in its own cassette folder; what it read wrong."""
    with provider_env(fx), tempfile.TemporaryDirectory() as tmp:
        cassette = Path(tmp) / "trial.json"
        got = asyncio.run(run(fx, cassette))
        return judge(fx, got, cassette.is_file())


def main() -> int:
    from toolbench.providers import attempts as call_module

    call_module.BACKOFF_S = 0.001
    fixtures = load()
    right = 0
    for fx in fixtures:
        wrong = check(fx)
        right += not wrong
        said = f": {'; '.join(wrong)}" if wrong else ""
        print(f"{'MISS' if wrong else 'ok  '} {fx.id}{said}")
    print(f"{right} of {len(fixtures)} read right")
    return 0


if __name__ == "__main__":
    sys.exit(main())
