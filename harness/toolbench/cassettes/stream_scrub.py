"""Secrets out of a recorded stream, found where a reader would find them.

A streamed body is written to its cassette as the chunks arrived, so a search of each
chunk, or even of the joined bytes, misses a key that a reader of the stream sees: one
split over two events (``"sk-live-01"`` then ``"23..."`` in consecutive ``delta.content``
fields), one written with JSON escapes (``\\u0073k-``), one inside a chunk kept as
base64 because it cut a UTF-8 character. Here every line of the joined body that is a
JSON record (an SSE ``data:`` line, an NDJSON line) is decoded; the strings found at the
same place in consecutive records (the same JSON path: ``choices.0.delta.content``) are
one text, searched whole. :func:`redact_stream` rewrites the records that held a piece of
a secret and keeps each line at the arrival offset of the chunk that completed it;
:func:`stream_texts` gives ``cassettes audit`` the same texts to scan.
"""

from __future__ import annotations

import codecs
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from toolbench.redaction import redact, redact_pieces, secret_values

_DATA = re.compile(r"(data:[ ]?)?(.*)", re.DOTALL)


@dataclass
class _Line:
    text: str
    """The line with its newline, if it had one."""
    offset_ms: float
    """Arrival offset of the chunk holding the line's last character."""
    prefix: str = ""
    record: Any = None
    """The decoded JSON of the line (None: not a JSON record)."""
    changed: bool = False


def decode_chunks(chunks: list[tuple[bytes, float]]) -> list[tuple[str, float]]:
    """Chunks of bytes as text (a character split between chunks goes to the later one)."""
    dec = codecs.getincrementaldecoder("utf-8")("replace")
    out = [(dec.decode(data), offset) for data, offset in chunks]
    tail = dec.decode(b"", final=True)
    if tail and out:
        out[-1] = (out[-1][0] + tail, out[-1][1])
    return out


def _lines(chunks: list[tuple[str, float]]) -> list[_Line]:
    lines: list[_Line] = []
    current: list[str] = []
    for text, offset in chunks:
        start = 0
        while True:
            nl = text.find("\n", start)
            if nl < 0:
                current.append(text[start:])
                break
            current.append(text[start : nl + 1])
            lines.append(_Line("".join(current), offset))
            current = []
            start = nl + 1
    rest = "".join(current)
    if rest:
        lines.append(_Line(rest, chunks[-1][1] if chunks else 0.0))
    for line in lines:
        body = line.text.rstrip("\r\n")
        m = _DATA.fullmatch(body)
        payload = m.group(2) if m else body
        if payload[:1] not in ("{", "["):
            continue
        try:
            line.record = json.loads(payload)
        except ValueError:
            continue
        line.prefix = (m.group(1) or "") if m else ""
    return lines


Path_ = tuple[str | int, ...]


def _leaves(data: Any, path: Path_ = ()) -> Iterator[tuple[Path_, Any, str | int, str]]:
    """(path, container, key, string) for every string value in ``data``."""
    if isinstance(data, dict):
        for k, v in data.items():
            if isinstance(v, str):
                yield (*path, k), data, k, v
            else:
                yield from _leaves(v, (*path, k))
    elif isinstance(data, list):
        for i, v in enumerate(data):
            if isinstance(v, str):
                yield (*path, i), data, i, v
            else:
                yield from _leaves(v, (*path, i))


def _channels(lines: list[_Line]) -> dict[Path_, list[tuple[_Line, Any, str | int, str]]]:
    """The strings at each JSON path, in stream order: one text per path."""
    channels: dict[Path_, list[tuple[_Line, Any, str | int, str]]] = {}
    for line in lines:
        if line.record is None:
            continue
        for path, container, key, value in _leaves(line.record):
            channels.setdefault(path, []).append((line, container, key, value))
    return channels


def stream_texts(chunks: list[tuple[bytes, float]]) -> list[str]:
    """What a reader of the stream sees, to be searched for secrets: the joined body and,
    per JSON path, the decoded strings of every record joined."""
    decoded = decode_chunks(chunks)
    texts = ["".join(t for t, _ in decoded)]
    for items in _channels(_lines(decoded)).values():
        texts.append("".join(v for *_, v in items))
    return texts


def redact_stream(
    chunks: list[tuple[bytes, float]], values: list[str] | None = None
) -> list[tuple[str, float]] | None:
    """The stream with every known secret removed, as ``(text, offset_ms)`` chunks (one
    per arrival offset), or None when it held none (keep the chunks as they came)."""
    vals = secret_values() if values is None else values
    if not vals or not chunks:
        return None
    lines = _lines(decode_chunks(chunks))
    changed = False
    for items in _channels(lines).values():
        pieces = [v for *_, v in items]
        clean = redact_pieces(pieces, vals)
        if clean is pieces:
            continue
        for (line, container, key, old), new in zip(items, clean, strict=True):
            if new != old:
                container[key] = new
                line.changed = changed = True
    out: list[tuple[str, float]] = []
    for line in lines:
        text = line.text
        if line.changed:
            ending = text[len(text.rstrip("\r\n")) :]
            body = json.dumps(line.record, ensure_ascii=False)
            text = line.prefix + body + ending
        cleaned = redact(text, vals)  # keys, non-JSON lines, escaped forms left over
        changed = changed or cleaned != text
        if out and out[-1][1] == line.offset_ms:
            out[-1] = (out[-1][0] + cleaned, line.offset_ms)
        else:
            out.append((cleaned, line.offset_ms))
    return out if changed else None
