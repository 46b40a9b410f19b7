"""One JSON object per line (Ollama's ``application/x-ndjson``, ``jsonl``): each line is
one event."""

from __future__ import annotations

from toolbench.framings import Framing


def _payload(line: bytes) -> bytes | None:
    return line.strip()


def _sniff(line: bytes) -> bool:
    """A first line that starts a JSON object."""
    return line.startswith(b"{")


NDJSON = Framing(
    "ndjson",
    ("ndjson", "jsonl"),
    "an NDJSON line",
    line=_payload,
    event_per_line=True,
    sniff=_sniff,
)
