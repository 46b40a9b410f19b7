"""A fake OpenAI-compatible chat server for unit tests and benchmarks only.

Replies are queued with :meth:`FakeOpenAI.enqueue` (as simonw/llm's fake models do); an
entry can also be an HTTP fault (status, headers, raw body) to exercise retries, or a
:class:`Hang` (a server that does not answer in time). The module's constants are the
faults real servers were seen to send: ``NO_CHOICES``, ``HTML_200``, ``EMPTY_200``,
``EMPTY_OBJECT``. Every request received is kept for assertions. It listens on
127.0.0.1 only.
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Fault:
    status: int
    body: bytes = b'{"error": {"message": "fault"}}'
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class Hang:
    """Answer nothing for ``seconds`` (then a plain reply, if the client still waits)."""

    seconds: float
    then: str = "Late."


NO_CHOICES = Fault(200, body=json.dumps({
    "id": "chatcmpl-fake", "object": "chat.completion", "created": 0, "model": "fake",
    "choices": [], "usage": {"prompt_tokens": 1, "completion_tokens": 0, "total_tokens": 1},
}).encode())  # fmt: skip
HTML_200 = Fault(200, body=b"<html><body>502 Bad Gateway</body></html>",
                 headers={"content-type": "text/html"})  # fmt: skip
EMPTY_200 = Fault(200, body=b"")
EMPTY_OBJECT = Fault(200, body=b"{}")


@dataclass
class SseScript:
    """A streamed answer written byte for byte: each part is bytes sent as one chunk, or
    a float (seconds to pause). ``end=False`` closes the connection without ending the
    chunked body (a stream cut off); ``hang_s`` pauses before ending (a stream that
    does not end within the client's wait)."""

    parts: list[bytes | float]
    end: bool = True
    hang_s: float = 0.0


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: dict[str, Any]


class FakeOpenAI:
    def __init__(self, delay_s: float = 0.0, default: str = "Hello.") -> None:
        self.delay_s = delay_s
        self.default = default
        self.queue: deque[str | dict[str, Any] | Fault | Hang | SseScript] = deque()
        self.chunk_chars = 4
        """Characters of content (and of tool-call arguments) per streamed delta."""
        self.received: list[Received] = []
        self.reply_headers: Callable[[dict[str, str]], dict[str, str]] | None = None
        """Extra headers for every reply, from the request's headers (a server that echoes)."""
        self._lock = threading.Lock()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *_: Any) -> None:
                pass

            def do_GET(self) -> None:  # /v1/models
                self._send(200, json.dumps({"object": "list", "data": [{"id": "fake"}]}).encode())

            def do_POST(self) -> None:
                n = int(self.headers.get("content-length", "0"))
                body = json.loads(self.rfile.read(n) or b"{}")
                with fake._lock:
                    fake.received.append(Received(self.path, dict(self.headers), body))
                    item = fake.queue.popleft() if fake.queue else fake.default
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
                self._send(200, json.dumps(fake.completion(body, item)).encode())

            def _stream(self, script: SseScript) -> None:
                """OpenAI's documented streaming answer: ``text/event-stream``, chunked."""
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
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

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        # A client that timed out and left is expected here, not an error to print.
        self.server.handle_error = lambda *_: None  # type: ignore[method-assign]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def enqueue(self, *items: str | dict[str, Any] | Fault | Hang | SseScript) -> None:
        with self._lock:
            self.queue.extend(items)

    @staticmethod
    def completion(request: dict[str, Any], item: str | dict[str, Any]) -> dict[str, Any]:
        msg: dict[str, Any] = {
            "role": "assistant",
            "content": item if isinstance(item, str) else None,
        }
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
            "choices": [{"index": 0, "message": msg, "finish_reason": finish}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
        }  # fmt: skip

    def sse_parts(self, request: dict[str, Any], item: str | dict[str, Any]) -> list[bytes | float]:
        """The reply as OpenAI streams it (``chat.completion.chunk`` objects, one
        ``data:`` event each, then ``data: [DONE]``): a role delta, the content in
        pieces of :attr:`chunk_chars`, each tool call as a delta with index, id, type and
        name and then argument fragments, a last chunk with ``finish_reason``, and a
        usage chunk with empty ``choices`` when ``stream_options.include_usage`` is
        asked. Source: platform.openai.com/docs/api-reference/chat-streaming."""
        whole = self.completion(request, item)
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

    def __enter__(self) -> FakeOpenAI:
        self.thread.start()
        return self

    def __exit__(self, *_: Any) -> None:
        self.server.shutdown()
        self.server.server_close()


def _function(call: dict[str, Any]) -> dict[str, str]:
    args = call["arguments"]
    return {"name": call["name"], "arguments": args if isinstance(args, str) else json.dumps(args)}


def serve_forever(delay_s: float, default: str) -> None:
    """Run in its own process (``python -m tests.support.fake_openai``): prints the base URL."""
    fake = FakeOpenAI(delay_s=delay_s, default=default)
    print(fake.base_url, flush=True)
    fake.server.serve_forever()


if __name__ == "__main__":
    import argparse

    ap = argparse.ArgumentParser()
    ap.add_argument("--delay", type=float, default=0.0)
    ap.add_argument("--reply", default="Hello.")
    ns = ap.parse_args()
    serve_forever(ns.delay, ns.reply)
