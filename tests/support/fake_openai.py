"""The FIFO fake OpenAI-compatible server: replies in the order they were queued.

Kept for tests whose point is an order (retries of one request: a fault, then a reply).
Where trials run concurrently, use the request-aware :class:`toolbench.providers.fake.FakeServer`
instead: its reply is a function of the request, so the order requests arrive in does not
matter. Replies are queued with :meth:`FakeOpenAI.enqueue` (as simonw/llm's fake models
do); an entry can be an HTTP :class:`Fault`, a :class:`Hang` or a byte-for-byte
streamed answer (:class:`SseScript`). The module's constants are
the faults real servers were seen to send: ``NO_CHOICES``, ``HTML_200``, ``EMPTY_200``,
``EMPTY_OBJECT``.
"""

from __future__ import annotations

import json
from collections import deque
from typing import Any

from toolbench.providers.fake import (
    FakeServer,
    Fault,
    Hang,
    Received,
    Reply,
    SseScript,
)

__all__ = ["EMPTY_200", "EMPTY_OBJECT", "HTML_200", "NO_CHOICES", "FakeOpenAI", "Fault", "Hang",
           "Received", "SseScript"]  # fmt: skip

NO_CHOICES = Fault(200, body=json.dumps({
    "id": "chatcmpl-fake", "object": "chat.completion", "created": 0, "model": "fake",
    "choices": [], "usage": {"prompt_tokens": 1, "completion_tokens": 0, "total_tokens": 1},
}).encode())  # fmt: skip
HTML_200 = Fault(200, body=b"<html><body>502 Bad Gateway</body></html>",
                 headers={"content-type": "text/html"})  # fmt: skip
EMPTY_200 = Fault(200, body=b"")
EMPTY_OBJECT = Fault(200, body=b"{}")


class FakeOpenAI(FakeServer):
    def __init__(self, delay_s: float = 0.0, default: str = "Hello.") -> None:
        super().__init__(delay_s=delay_s, default=default)
        self.default = default
        self.queue: deque[Reply] = deque()

    def reply_for(self, body: dict[str, Any]) -> Reply:
        return self.queue.popleft() if self.queue else self.default

    def enqueue(self, *items: Reply) -> None:
        with self._lock:
            self.queue.extend(items)

    def __enter__(self) -> FakeOpenAI:
        super().__enter__()
        return self
