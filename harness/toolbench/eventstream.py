"""AWS ``application/vnd.amazon.eventstream`` framing (Bedrock's ``converse-stream``).

A binary framing, not lines: each message is a 12-byte prelude (total length, headers
length, both big-endian uint32, then the CRC32 of those 8 bytes), the headers, the
payload, and the CRC32 of everything before it. Headers are ``name length (1 byte),
name, value type (1 byte), value``; ``:event-type``, ``:message-type`` and
``:content-type`` are strings (type 7). Source: "Event stream encoding" in the Amazon
Transcribe and S3 SelectObjectContent developer guides (the same format botocore's
``EventStreamBuffer`` decodes for LiteLLM's Bedrock handler).

Reading the lines of such a body found no newline and called every Bedrock stream
truncated. :class:`FrameReader` decodes frames as bytes arrive, in linear time; a bad
CRC or an impossible length is a :class:`FrameError`, a frame over the event-size limit
is refused before it is buffered whole, and :attr:`FrameReader.pending` says whether
the body ended inside a frame.
"""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass

CONTENT_TYPE = "application/vnd.amazon.eventstream"
PRELUDE = 12
MIN_FRAME = PRELUDE + 4
_FIXED = {0: 0, 1: 0, 2: 1, 3: 2, 4: 4, 5: 8, 8: 8, 9: 16}
"""Value sizes of the fixed-width header types (bool true/false, byte, short, int,
long, timestamp, uuid); 6 (bytes) and 7 (string) carry a 2-byte length."""


class FrameError(ValueError):
    """A frame that is not one: a bad CRC, an impossible length, broken headers."""


class FrameTooLarge(FrameError):
    """A frame longer than the reader's limit (refused from its prelude)."""


@dataclass(frozen=True)
class Frame:
    headers: dict[str, str]
    """The string-valued headers (``:event-type``, ``:message-type``, ...)."""
    raw_headers: bytes
    payload: bytes

    def encode(self, payload: bytes | None = None) -> bytes:
        """The frame's bytes (with ``payload`` instead of its own), CRCs computed."""
        body = self.payload if payload is None else payload
        total = PRELUDE + len(self.raw_headers) + len(body) + 4
        prelude = struct.pack(">II", total, len(self.raw_headers))
        head = prelude + struct.pack(">I", zlib.crc32(prelude)) + self.raw_headers + body
        return head + struct.pack(">I", zlib.crc32(head))


def parse_headers(raw: bytes) -> dict[str, str]:
    out: dict[str, str] = {}
    at = 0
    while at < len(raw):
        n = raw[at]
        name = raw[at + 1 : at + 1 + n].decode("utf-8", "replace")
        at += 1 + n
        if at >= len(raw):
            raise FrameError("an eventstream header without a value type")
        kind = raw[at]
        at += 1
        if kind in (6, 7):
            if at + 2 > len(raw):
                raise FrameError("an eventstream header cut inside its length")
            (size,) = struct.unpack(">H", raw[at : at + 2])
            value = raw[at + 2 : at + 2 + size]
            if len(value) != size:
                raise FrameError("an eventstream header value longer than its frame")
            if kind == 7:
                out[name] = value.decode("utf-8", "replace")
            at += 2 + size
        elif kind in _FIXED:
            at += _FIXED[kind]
        else:
            raise FrameError(f"an eventstream header of unknown type {kind}")
    if at != len(raw):
        raise FrameError("eventstream headers longer than declared")
    return out


class FrameReader:
    """Frames from bytes fed in any pieces."""

    def __init__(self, max_frame: int) -> None:
        self.max_frame = max_frame
        self.buf = bytearray()

    @property
    def pending(self) -> int:
        """Bytes of a frame begun and not finished."""
        return len(self.buf)

    def feed(self, data: bytes) -> list[Frame]:
        self.buf += data
        frames: list[Frame] = []
        while len(self.buf) >= PRELUDE:
            total, hlen, crc = struct.unpack(">III", self.buf[:PRELUDE])
            if zlib.crc32(bytes(self.buf[:8])) != crc:
                raise FrameError("an eventstream frame whose prelude CRC does not match")
            if total > self.max_frame:
                raise FrameTooLarge(f"an eventstream frame of {total} bytes")
            if total < MIN_FRAME or hlen > total - MIN_FRAME:
                raise FrameError(f"an eventstream frame of impossible length {total}/{hlen}")
            if len(self.buf) < total:
                break
            frame = bytes(self.buf[:total])
            del self.buf[:total]
            (msg_crc,) = struct.unpack(">I", frame[-4:])
            if zlib.crc32(frame[:-4]) != msg_crc:
                raise FrameError("an eventstream frame whose message CRC does not match")
            raw_headers = frame[PRELUDE : PRELUDE + hlen]
            frames.append(
                Frame(parse_headers(raw_headers), raw_headers, frame[PRELUDE + hlen : -4])
            )
        return frames
