"""A reader fed bytes, for the tests that cut a reply inside a UTF-8 character.

toolbench reads decoded text (a provider's reader decodes a stream before a format's
reader sees it); these tests check that a reply split anywhere in its bytes still reads
the same once decoded incrementally.
"""

from __future__ import annotations

import codecs

from toolbench.formats.exchange import ParseResult
from toolbench.formats.reader_events import Event, IncrementalReader


class ByteReader:
    """A reader fed bytes: UTF-8 decoded incrementally, so a chunk may split a character
    (the decoder keeps the partial sequence for the next chunk; invalid bytes become
    U+FFFD, as a lenient client would show them)."""

    def __init__(self, inner: IncrementalReader) -> None:
        self._inner = inner
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")

    def feed(self, chunk: bytes) -> list[Event]:
        text = self._decoder.decode(chunk)
        return self._inner.feed(text) if text else []

    def close(self) -> list[Event]:
        tail = self._decoder.decode(b"", final=True)
        events = self._inner.feed(tail) if tail else []
        return [*events, *self._inner.close()]

    @property
    def result(self) -> ParseResult:
        return self._inner.result

    @property
    def held(self) -> int:
        return self._inner.held
