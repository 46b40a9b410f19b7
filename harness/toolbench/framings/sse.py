"""Server-sent events (``text/event-stream``): a ``data:`` line carries one JSON event,
a blank line ends it, ``[DONE]`` ends the stream (OpenAI) and carries nothing."""

from __future__ import annotations

from toolbench.framings import Framing

_FIELDS = (b"data:", b"event:", b"id:", b"retry:", b":")


def _payload(line: bytes) -> bytes | None:
    if not line.startswith(b"data:"):
        return None
    payload = line[5:].strip()
    return None if payload == b"[DONE]" else payload


def _sniff(line: bytes) -> bool:
    """A first line that starts a server-sent event field (or a ``:`` comment)."""
    return line.startswith(_FIELDS)


SSE = Framing("sse", ("event-stream",), "a data: line", line=_payload, sniff=_sniff)
