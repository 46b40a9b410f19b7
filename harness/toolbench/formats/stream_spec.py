"""Streaming as a dimension of the matrix: the ``stream`` option of any format spec.

``xml:stream``, ``prompt-json:shots=2,stream``, ``native:stream``: the same format, asked
with ``stream=True``. The spec keeps the option, so the streamed trial and its cassette
are keyed apart from the non-streamed one and both sit side by side in one run. In a
fallback composition the option is written on the primary (``native:stream|xml``) and
applies to the whole composition (a request is streamed or not). ``run --stream
on|both`` adds it to every format.

:class:`Streamed` wraps the format and changes nothing in what it renders or parses:
a streamed reply is assembled into the same :class:`~toolbench.formats.base.ModelReply`
and scored by the same scorers. Only the provider call (``stream=True``) and the
stream measurements (timing, what a streaming user saw) differ.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from toolbench.formats.base import (
    Format,
    Message,
    ModelReply,
    ParseResult,
    RenderedRequest,
    ToolCall,
)
from toolbench.formats.stream_syntax import StreamSyntax
from toolbench.stream_option import STREAM_OPTION, split_stream, with_stream
from toolbench.tools import ToolDef

if TYPE_CHECKING:
    from toolbench.formats.reader_events import IncrementalReader

__all__ = [
    "STREAM_OPTION", "Streamed", "expand_stream", "is_streamed", "split_stream", "with_stream",
]  # fmt: skip
"""The spec text's helpers are :mod:`toolbench.stream_option`'s, named here too."""


def is_streamed(fmt: Format) -> bool:
    return isinstance(fmt, Streamed)


class Streamed(Format):
    """A format asked with ``stream=True``: everything else is the inner format's."""

    name = "streamed"
    description = "FORMAT:stream: the format, asked with stream=True"

    def __init__(self, inner: Format) -> None:
        super().__init__()
        self.inner = inner
        self.options = inner.options
        self.requirements = inner.requirements  # type: ignore[misc]
        self.markers = inner.markers  # type: ignore[misc]
        self.visible_markup = inner.visible_markup  # type: ignore[misc]
        self.native = inner.native  # type: ignore[misc]

    @property
    def spec(self) -> str:
        return with_stream(self.inner.spec)

    def refuses(self, tools: Sequence[ToolDef]) -> str | None:
        return self.inner.refuses(tools)

    def notes(self, tools: Sequence[ToolDef]) -> list[str]:
        return self.inner.notes(tools)

    def render(self, tools: Sequence[ToolDef], messages: Sequence[Message]) -> RenderedRequest:
        return self.inner.render(tools, messages)

    def parse(self, text: str, tools: Sequence[ToolDef] | None = None) -> ParseResult:
        return self.inner.parse(text, tools)

    def parse_reply(self, reply: ModelReply, tools: Sequence[ToolDef] | None = None) -> ParseResult:
        return self.inner.parse_reply(reply, tools)

    def continue_conversation(
        self,
        messages: Sequence[Message],
        reply: ModelReply,
        results: Sequence[tuple[ToolCall, str]],
    ) -> list[Message]:
        return self.inner.continue_conversation(messages, reply, results)

    def retry_message(self, parsed: ParseResult) -> Message:
        return self.inner.retry_message(parsed)

    def sanitize(self, text: str) -> str:
        return self.inner.sanitize(text)

    def stream_syntax(self) -> StreamSyntax:
        return self.inner.stream_syntax()

    def reader(
        self, tools: Sequence[ToolDef] | None = None, *, early_calls: bool = True
    ) -> IncrementalReader:
        return self.inner.reader(tools, early_calls=early_calls)


def expand_stream(specs: Sequence[str], stream: str) -> list[str]:
    """The specs under ``--stream``: ``on`` streams each, ``both`` adds a streamed twin."""
    if stream == "off":
        return list(specs)
    out: list[str] = []
    for spec in specs:
        base = split_stream(spec)[0]
        out.extend([with_stream(base)] if stream == "on" else [base, with_stream(base)])
    return list(dict.fromkeys(out))
