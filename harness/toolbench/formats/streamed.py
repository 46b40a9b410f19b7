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
from toolbench.formats.streamsyntax import StreamSyntax
from toolbench.tools import ToolDef

if TYPE_CHECKING:
    from toolbench.formats.reader import IncrementalReader

STREAM_OPTION = "stream"
"""The spec option (a bare word, no ``=value``)."""


def split_stream(spec: str) -> tuple[str, bool]:
    """``spec`` without its ``stream`` option, and whether it had one.

    Only the first part of a composition may carry it (``native:stream|xml``).
    """
    head, sep, rest = spec.strip().partition("|")
    name, _, opts = head.partition(":")
    # Empty items kept: the options' parser refuses them (an empty option is a typo).
    items = [p.strip() for p in opts.split(",")] if opts.strip() else []
    kept = [p for p in items if p != STREAM_OPTION]
    if len(kept) == len(items):
        return spec.strip(), False
    base = name.strip() + (":" + ",".join(kept) if kept else "")
    return base + (sep + rest if sep else ""), True


def with_stream(spec: str) -> str:
    """``spec`` with the ``stream`` option (unchanged when it has it)."""
    base, streamed = split_stream(spec)
    if streamed:
        return spec.strip()
    head, sep, rest = base.partition("|")
    joined = f"{head},{STREAM_OPTION}" if ":" in head else f"{head}:{STREAM_OPTION}"
    return joined + (sep + rest if sep else "")


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
