"""A request-aware fake OpenAI-compatible server: a public module, for your own tests.

toolbench's tests and benchmarks run on it, and an application (or a plugin: a format, a
scorer, a provider kind) may use it in its own tests the same way: start a
:class:`FakeServer` with a responder, point a run's ``--api-base`` (or any OpenAI client)
at its ``base_url``, and read what it received. It ships in the package on purpose and keeps its
names (docs/guide.md, "Testing with the fake server").

The reply is a function of the request (:data:`Responder`), so a test's outcome does not
depend on the order in which concurrent trials reach the server: ``by_last_user`` answers
by the last user message, ``in_order`` by the last user message and how often it was
asked (retries), ``by_turn`` by the number of tool results fed back so far, and
any callable may look at the whole request body. A reply is a text, a dict (``content``,
``tool_calls``, ``finish_reason``, ``extra`` message fields), an HTTP :class:`Fault`
(status, headers, raw body), a :class:`Hang` (a server that does not answer in time) or
an :class:`SseScript` (a stream written byte for byte). A request with ``stream: true``
is answered as OpenAI streams (:meth:`FakeServer.sse_parts`).

It speaks the chat completions wire format as OpenAI documents it
(https://platform.openai.com/docs/api-reference/chat/object: ``id``, ``object``,
``created``, ``model``, ``choices[].message`` with ``tool_calls[].function.arguments`` as
a JSON string, ``finish_reason``, ``usage``), over real HTTP on 127.0.0.1, so requests
go through LiteLLM, the OpenAI SDK, httpx and the cassettes exactly as a real server's.
Every request received is kept (:attr:`FakeServer.received`).

``python -m toolbench.providers.fake --delay 0.1 --reply TEXT`` serves in its own
process and prints its base URL (the concurrency benchmark uses it).
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self


@dataclass
class Fault:
    """An HTTP answer that is not a reply (a status, its body and headers)."""

    status: int
    body: bytes = b'{"error": {"message": "fault"}}'
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class Hang:
    """Answer nothing for ``seconds`` (then a plain reply, if the client still waits)."""

    seconds: float
    then: str = "Late."


@dataclass
class SseScript:
    """A streamed answer written byte for byte: each part is bytes sent as one chunk, or
    a float (seconds to pause). ``end=False`` closes the connection without ending the
    chunked body (a stream cut off); ``hang_s`` pauses before ending (a stream that
    does not end within the client's wait)."""

    parts: list[bytes | float]
    end: bool = True
    hang_s: float = 0.0
    content_type: str = "text/event-stream"
    """``application/vnd.amazon.eventstream`` for Bedrock's binary frames."""


Reply = str | dict[str, Any] | Fault | Hang | SseScript
Responder = Callable[[dict[str, Any]], Reply]
"""The reply to a request, from its decoded JSON body."""


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: dict[str, Any]


def _text(content: Any) -> str:
    """A message's text (a string, or the text parts of a content list)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return ""


def last_user(request: Mapping[str, Any]) -> str:
    """The text of the request's last user message ("" when it has none)."""
    for m in reversed(request.get("messages") or []):
        if isinstance(m, dict) and m.get("role") == "user":
            return _text(m.get("content"))
    return ""


def first_user(request: Mapping[str, Any]) -> str:
    """The text of the request's first user message: which scenario is asking."""
    for m in request.get("messages") or []:
        if isinstance(m, dict) and m.get("role") == "user":
            return _text(m.get("content"))
    return ""


def turn_of(request: Mapping[str, Any]) -> int:
    """How many assistant replies the request carries: 0 for a conversation's first turn."""
    msgs = request.get("messages") or []
    return sum(1 for m in msgs if isinstance(m, dict) and m.get("role") == "assistant")


def by_last_user(table: Mapping[str, Reply], default: Reply = "Hello.") -> Responder:
    """Answer by the last user message: the entry of the first key it contains."""

    def respond(request: dict[str, Any]) -> Reply:
        text = last_user(request)
        return next((v for k, v in table.items() if k in text), default)

    return respond


def in_order(table: Mapping[str, list[Reply]], default: Reply = "Hello.") -> Responder:
    """Answer by the last user message, in order per key: the n-th request whose last
    user message contains a key gets that key's n-th reply (then ``default``). Retries of
    one request (a fault, then a reply) stay ordered whatever other trials do meanwhile."""
    seen: dict[str, int] = {}

    def respond(request: dict[str, Any]) -> Reply:
        text = last_user(request)
        key = next((k for k in table if k in text), None)
        if key is None:
            return default
        n = seen[key] = seen.get(key, -1) + 1
        replies = table[key]
        return replies[n] if n < len(replies) else default

    return respond


def by_turn(turns: Mapping[str, list[Reply]] | list[Reply], default: Reply = "Hello.") -> Responder:
    """Answer by the conversation's turn (:func:`turn_of`): a list of replies, or a table
    of lists keyed by a text the first user message contains (one per scenario)."""

    def respond(request: dict[str, Any]) -> Reply:
        if isinstance(turns, list):
            script = turns
        else:
            text = first_user(request)
            script = next((v for k, v in turns.items() if k in text), [])
        n = turn_of(request)
        return script[n] if n < len(script) else default

    return respond


def completion(request: Mapping[str, Any], item: str | dict[str, Any]) -> dict[str, Any]:
    """The chat completion body answering ``request`` with ``item``."""
    msg: dict[str, Any] = {"role": "assistant", "content": item if isinstance(item, str) else None}
    finish = "stop"
    if isinstance(item, dict):
        msg["content"] = item.get("content")
        if item.get("tool_calls"):
            msg["tool_calls"] = [
                {"id": f"call_{i}", "type": "function", "function": _function(c)}
                for i, c in enumerate(item["tool_calls"])
            ]
            finish = "tool_calls"
        finish = item.get("finish_reason", finish)
        msg.update(item.get("extra", {}))  # other message fields a server may send
    return {
        "id": "chatcmpl-fake", "object": "chat.completion", "created": 0,
        "model": request.get("model", "fake"),
        "choices": [{"index": 0, "message": msg, "logprobs": None, "finish_reason": finish}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    }  # fmt: skip


def _function(call: Mapping[str, Any]) -> dict[str, str]:
    args = call["arguments"]
    return {"name": call["name"], "arguments": args if isinstance(args, str) else json.dumps(args)}


class LocalServer:
    """A threaded HTTP server on 127.0.0.1 and its lifecycle, shared by every fake
    (this one and the per-protocol fakes of the provider tests):
    ``with server: ... server.base_url ...``. A subclass builds its request handler and
    calls :meth:`serve` from its ``__init__``."""

    url_prefix = ""
    """The path the base URL ends with (``/v1`` for OpenAI's)."""

    def serve(self, handler: type[BaseHTTPRequestHandler], port: int = 0) -> None:
        """Bind ``handler`` to ``port`` (0: a free one); the thread starts on ``with``."""
        self.server = ThreadingHTTPServer(("127.0.0.1", port), handler)
        self.server.daemon_threads = True
        # A client that timed out and left is expected here, not an error to print.
        self.server.handle_error = lambda *_: None  # type: ignore[method-assign]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def port(self) -> int:
        return int(self.server.server_address[1])

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}{self.url_prefix}"

    def __enter__(self) -> Self:
        self.thread.start()
        return self

    def __exit__(self, *_: Any) -> None:
        self.server.shutdown()
        self.server.server_close()


class FakeServer(LocalServer):
    """The server: ``with FakeServer(respond) as s: ... s.base_url ...``."""

    url_prefix = "/v1"

    def __init__(
        self, respond: Responder | None = None, delay_s: float = 0.0, default: Reply = "Hello."
    ) -> None:
        self.respond: Responder = respond or (lambda _request: default)
        self.delay_s = delay_s
        self.received: list[Received] = []
        self.reply_headers: Callable[[dict[str, str]], dict[str, str]] | None = None
        """Extra headers for every reply, from the request's headers (a server that echoes)."""
        self.chunk_chars = 4
        """Characters of content (and of tool-call arguments) per streamed delta."""
        self.props: dict[str, Any] | None = None
        """What ``GET /props`` answers (llama-server's template and capabilities), if set."""
        self._lock = threading.Lock()
        self.serve(self._handler())

    def reply_for(self, body: dict[str, Any]) -> Reply:
        """The reply to one request (called once per request, under a lock)."""
        return self.respond(body)

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *_: Any) -> None:
                pass

            def do_GET(self) -> None:  # /v1/models, or llama-server's /props when set
                if self.path == "/props" and fake.props is not None:
                    self._send(200, json.dumps(fake.props).encode())
                    return
                self._send(200, json.dumps({"object": "list", "data": [{"id": "fake"}]}).encode())

            def do_POST(self) -> None:
                n = int(self.headers.get("content-length", "0"))
                body = json.loads(self.rfile.read(n) or b"{}")
                with fake._lock:
                    fake.received.append(Received(self.path, dict(self.headers), body))
                    item = fake.reply_for(body)
                if fake.delay_s:
                    time.sleep(fake.delay_s)
                if isinstance(item, Hang):
                    time.sleep(item.seconds)
                    item = item.then
                if isinstance(item, Fault):
                    self._send(item.status, item.body, item.headers)
                    return
                if isinstance(item, SseScript):
                    self._stream(item)
                    return
                if body.get("stream"):
                    self._stream(SseScript(fake.sse_parts(body, item)))
                    return
                self._send(200, json.dumps(completion(body, item)).encode())

            def _stream(self, script: SseScript) -> None:
                """OpenAI's documented streaming answer: ``text/event-stream``, chunked."""
                self.send_response(200)
                self.send_header("content-type", script.content_type)
                self.send_header("transfer-encoding", "chunked")
                self.end_headers()
                for part in script.parts:
                    if isinstance(part, float):
                        time.sleep(part)
                        continue
                    self.wfile.write(f"{len(part):x}\r\n".encode() + part + b"\r\n")
                    self.wfile.flush()
                if script.hang_s:
                    time.sleep(script.hang_s)
                if script.end:
                    self.wfile.write(b"0\r\n\r\n")
                self.wfile.flush()
                self.close_connection = True

            def _send(
                self, status: int, data: bytes, headers: dict[str, str] | None = None
            ) -> None:
                self.send_response(status)
                extra = {k.lower(): v for k, v in (headers or {}).items()}
                self.send_header("content-type", extra.pop("content-type", "application/json"))
                self.send_header("content-length", str(len(data)))
                echoed = fake.reply_headers(dict(self.headers)) if fake.reply_headers else {}
                for k, v in {**echoed, **extra}.items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(data)

        return Handler

    def sse_parts(self, request: dict[str, Any], item: str | dict[str, Any]) -> list[bytes | float]:
        """The reply as OpenAI streams it (``chat.completion.chunk`` objects, one
        ``data:`` event each, then ``data: [DONE]``): a role delta, the content in
        pieces of :attr:`chunk_chars`, each tool call as a delta with index, id, type and
        name and then argument fragments, a last chunk with ``finish_reason``, and a
        usage chunk with empty ``choices`` when ``stream_options.include_usage`` is
        asked. Source: platform.openai.com/docs/api-reference/chat-streaming."""
        whole = completion(request, item)
        msg, n = whole["choices"][0]["message"], self.chunk_chars
        base = {"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": 0,
                "model": whole["model"]}  # fmt: skip

        def event(delta: dict[str, Any], finish: str | None = None) -> bytes:
            choice = {"index": 0, "delta": delta, "finish_reason": finish}
            return b"data: " + json.dumps({**base, "choices": [choice]}).encode() + b"\n\n"

        parts: list[bytes | float] = [event({"role": "assistant", "content": ""})]
        text = msg.get("content") or ""
        parts += [event({"content": text[i : i + n]}) for i in range(0, len(text), n)]
        for i, tc in enumerate(msg.get("tool_calls") or ()):
            fn = tc["function"]
            parts.append(event({"tool_calls": [{"index": i, "id": tc["id"], "type": "function",
                                "function": {"name": fn["name"], "arguments": ""}}]}))  # fmt: skip
            args = fn["arguments"]
            parts += [
                event({"tool_calls": [{"index": i, "function": {"arguments": args[j : j + n]}}]})
                for j in range(0, len(args), n)
            ]
        parts.append(event({}, whole["choices"][0]["finish_reason"]))
        if (request.get("stream_options") or {}).get("include_usage"):
            usage = {**base, "choices": [], "usage": whole["usage"]}
            parts.append(b"data: " + json.dumps(usage).encode() + b"\n\n")
        parts.append(b"data: [DONE]\n\n")
        return parts


def serve_forever(delay_s: float, default: str) -> None:
    """Serve in this process (``python -m toolbench.providers.fake``): prints the base URL."""
    fake = FakeServer(delay_s=delay_s, default=default)
    print(fake.base_url, flush=True)
    fake.server.serve_forever()


if __name__ == "__main__":
    import argparse

    ap = argparse.ArgumentParser()
    ap.add_argument("--delay", type=float, default=0.0)
    ap.add_argument("--reply", default="Hello.")
    ns = ap.parse_args()
    serve_forever(ns.delay, ns.reply)
