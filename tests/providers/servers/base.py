"""The HTTP half every protocol fake shares: a handler that hands each request to a
protocol function and keeps what it received for assertions. The server's lifecycle
(thread, port, base URL, ``with``) is :class:`toolbench.providers.fake.LocalServer`'s."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import parse_qs, urlsplit

from toolbench.providers.fake import LocalServer


@dataclass
class Request:
    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    """Header names lower-cased."""
    body: Any
    """The JSON body (None when it is not JSON)."""


@dataclass
class Response:
    status: int
    body: Any
    """A JSON-able object, or raw bytes sent as they are."""
    headers: dict[str, str] = field(default_factory=dict)


def error(status: int, message: str, kind: str = "invalid_request_error") -> Response:
    return Response(status, {"error": {"message": message, "type": kind, "code": status}})


Handler = Callable[[Request], Response]


class FakeServer(LocalServer):
    """Serve ``handler`` on 127.0.0.1 (a free port, or ``port``) in a daemon thread.

    ``override``, when set, answers a request instead of the protocol whenever it returns
    a response (a provider that has gone wrong: an HTML error page, an unknown block
    type, no candidates); when it returns None the protocol answers.
    """

    def __init__(self, handler: Handler, port: int = 0, prefix: str = "") -> None:
        self.handler = handler
        self.url_prefix = prefix
        self.received: list[Request] = []
        self.override: Callable[[Request], Response | None] | None = None
        self._lock = threading.Lock()
        fake = self

        class _H(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *_: Any) -> None:
                pass

            def _serve(self) -> None:
                n = int(self.headers.get("content-length", "0") or 0)
                raw = self.rfile.read(n) if n else b""
                try:
                    body = json.loads(raw) if raw else None
                except ValueError:
                    body = None
                parts = urlsplit(self.path)
                req = Request(
                    self.command, parts.path, parse_qs(parts.query),
                    {k.lower(): v for k, v in self.headers.items()}, body,
                )  # fmt: skip
                with fake._lock:
                    fake.received.append(req)
                try:
                    resp = fake.override(req) if fake.override is not None else None
                    if resp is None:
                        resp = fake.handler(req)
                except Exception as exc:  # a fake's own bug: say so, as a 500
                    resp = error(500, f"fake server error: {type(exc).__name__}: {exc}")
                data = resp.body if isinstance(resp.body, bytes) else json.dumps(resp.body).encode()
                # Without Date and Server (send_response adds both): a re-recorded
                # cassette then differs from the committed one only where the exchange did.
                self.send_response_only(resp.status)
                headers = {"content-type": "application/json", **resp.headers}
                for k, v in headers.items():
                    self.send_header(k, v)
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = _serve

        self.serve(_H, port)
