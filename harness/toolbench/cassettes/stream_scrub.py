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

from toolbench.eventstream import FrameError, FrameReader
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
    frame: Any = None
    """The eventstream frame the record came from (its headers are kept as they are)."""


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


def stream_texts(chunks: list[tuple[bytes, float]], binary: bool = False) -> list[str]:
    """What a reader of the stream sees, to be searched for secrets: the joined body and,
    per JSON path, the decoded strings of every record joined. ``binary``: an AWS
    eventstream, whose records are its frames' payloads."""
    if binary:
        lines = _frame_lines(chunks)
        texts = ["".join(line.text for line in lines)]
    else:
        decoded = decode_chunks(chunks)
        lines = _lines(decoded)
        texts = ["".join(t for t, _ in decoded)]
    for items in _channels(lines).values():
        texts.append("".join(v for *_, v in items))
    return texts


def _chunk_of(text: str) -> dict[str, Any]:
    """A content-only chat chunk kept as its text, at its place among the others."""
    return {"choices": [{"delta": {"content": text}}]}


def event_texts(events: list[Any]) -> list[str]:
    """What a reader of a cassette's decoded ``events`` (``[offset_ms, data]`` pairs) sees:
    per JSON path, the strings of every event joined (a key split over two events), for
    ``cassettes audit``; the events are derived from the chunks, but a file is audited as
    it is, not as it should be."""
    lines = [
        _Line("", 0.0, record=_chunk_of(e[1]) if isinstance(e[1], str) else e[1])
        for e in events
        if isinstance(e, list) and len(e) == 2 and isinstance(e[1], dict | list | str)
    ]
    return ["".join(v for *_, v in items) for items in _channels(lines).values()]


def _frame_lines(chunks: list[tuple[bytes, float]]) -> list[_Line]:
    """An eventstream's frames as records (payload text, JSON, offset); a body that does
    not decode yields what decoded before it."""
    reader = FrameReader(1 << 31)
    out: list[_Line] = []
    for data, offset in chunks:
        try:
            frames = reader.feed(data)
        except FrameError:
            break
        for f in frames:
            text = f.payload.decode("utf-8", "replace")
            line = _Line(text, offset)
            line.frame = f
            try:
                line.record = json.loads(text)
            except ValueError:
                line.record = None
            out.append(line)
    return out


def redact_frames(
    chunks: list[tuple[bytes, float]], values: list[str] | None = None
) -> list[tuple[bytes, float]] | None:
    """:func:`redact_stream` for an AWS eventstream: payloads redacted as records (a key
    split over frames too), each changed frame re-encoded with its CRCs, one chunk per
    arrival offset; None when it held no secret."""
    vals = secret_values() if values is None else values
    if not vals or not chunks:
        return None
    lines = _frame_lines(chunks)
    if not _redact_channels(lines, vals):
        texts = [line.text for line in lines]
        if all(redact(t, vals) == t for t in texts):
            return None
    out: list[tuple[bytes, float]] = []
    for line in lines:
        payload = line.text
        if line.changed:
            payload = json.dumps(line.record, ensure_ascii=False)
        data = line.frame.encode(redact(payload, vals).encode("utf-8"))
        if out and out[-1][1] == line.offset_ms:
            out[-1] = (out[-1][0] + data, line.offset_ms)
        else:
            out.append((data, line.offset_ms))
    return out


def _redact_channels(lines: list[_Line], vals: list[str]) -> bool:
    """Redact each JSON path's joined strings in place; whether anything changed."""
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
    return changed


def redact_stream(
    chunks: list[tuple[bytes, float]], values: list[str] | None = None
) -> list[tuple[str, float]] | None:
    """The stream with every known secret removed, as ``(text, offset_ms)`` chunks (one
    per arrival offset), or None when it held none (keep the chunks as they came)."""
    vals = secret_values() if values is None else values
    if not vals or not chunks:
        return None
    lines = _lines(decode_chunks(chunks))
    changed = _redact_channels(lines, vals)
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
