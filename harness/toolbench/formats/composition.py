"""Fallback as a format composition: ``native|xml``, ``mistral|prompt-json``, ...

Agents in the wild fall back from native tools to prompt-based parsing, and from a
model-specific parser to a generic one, when the first finds nothing. A composition
``PRIMARY|FALLBACK`` measures exactly that: the request is the primary's (``native|xml``
sends the provider's ``tools`` parameter; the fallback is never described to the model),
and a reply is read by the primary first; when the primary found no call but the
fallback's parser reads calls from the reply's text, the fallback's result is used.
Every parse of a composition says which path produced it (``ParseResult.via``:
``primary`` or ``fallback``), so scoring can count how often the fallback rescued a reply
(``fallback_rescue_rate``). The tool results of a rescued turn go back the fallback's
way (its calls exist only as text, so there is no native call id to answer).

Both parts must be known formats; a chain ``a|b|c`` is ``a|(b|c)``. The spec is the
parts' specs joined by ``|``, so it round-trips through ``run.json``, resume and
rescore like any spec.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from toolbench.formats.base import (
    Format,
    Message,
    ModelReply,
    ParseResult,
    RenderedRequest,
    ToolCall,
)
from toolbench.formats.stream_syntax import StreamSyntax
from toolbench.tools import ToolDef

SEPARATOR = "|"


class Fallback(Format):
    """``primary|fallback``: the primary's request, its parse, else the fallback's calls."""

    name = "fallback"
    description = (
        "PRIMARY|FALLBACK: the fallback parses a reply in which the primary finds no call."
    )
    primary: Format
    fallback: Format
    _classes: ClassVar[dict[tuple[type[Format], type[Format]], type[Fallback]]] = {}

    def __init__(self, primary: Format, fallback: Format) -> None:
        super().__init__()
        self.primary, self.fallback = primary, fallback
        self._syntax: StreamSyntax | None = None
        self._last: tuple[ModelReply, str | None] | None = None
        """The last reply parsed and its path: the conversation continues the way its
        parse (with the scenario's tools) went, without parsing it again."""

    @property
    def spec(self) -> str:
        return f"{self.primary.spec}{SEPARATOR}{self.fallback.spec}"

    def refuses(self, tools: Sequence[ToolDef]) -> str | None:
        return self.primary.refuses(tools)

    def notes(self, tools: Sequence[ToolDef]) -> list[str]:
        return self.primary.notes(tools)

    def render(self, tools: Sequence[ToolDef], messages: Sequence[Message]) -> RenderedRequest:
        return self.primary.render(tools, messages)

    def parse_reply(self, reply: ModelReply, tools: Sequence[ToolDef] | None = None) -> ParseResult:
        got = self._parse_reply(reply, tools)
        self._last = (reply, got.via)
        return got

    def _parse_reply(self, reply: ModelReply, tools: Sequence[ToolDef] | None) -> ParseResult:
        first = self.primary.parse_reply(reply, tools)
        if first.calls or not (reply.text or "").strip():
            return first.model_copy(update={"via": "primary"})
        second = self.fallback.parse(reply.text or "", tools)
        if second.calls:
            return second.model_copy(update={"via": "fallback"})
        return first.model_copy(update={"via": "primary"})

    def parse(self, text: str, tools: Sequence[ToolDef] | None = None) -> ParseResult:
        return self.parse_reply(ModelReply(text=text), tools)

    def continue_conversation(
        self,
        messages: Sequence[Message],
        reply: ModelReply,
        results: Sequence[tuple[ToolCall, str]],
    ) -> list[Message]:
        last = self._last
        via = (
            last[1] if last is not None and last[0] is reply else self._parse_reply(reply, None).via
        )
        if via == "fallback":
            return self.fallback.continue_conversation(messages, reply, results)
        return self.primary.continue_conversation(messages, reply, results)

    def retry_message(self, parsed: ParseResult) -> Message:
        return self.primary.retry_message(parsed)

    def stream_syntax(self) -> StreamSyntax:
        """Both parts' regions: a streaming app shows neither part's call syntax."""
        if self._syntax is None:
            self._syntax = self.primary.stream_syntax() + self.fallback.stream_syntax()
        return self._syntax

    def sanitize(self, text: str) -> str:
        return self.fallback.sanitize(self.primary.sanitize(text))


def compose(primary: Format, fallback: Format) -> Fallback:
    """The composition of two formats, as an instance of a class that carries both parts'
    markers, visible markup and the primary's requirements (leakage reads them from the
    class, as it does for every format)."""
    key = (type(primary), type(fallback))
    cls = Fallback._classes.get(key)
    if cls is None:
        p, f = key
        cls = type(
            f"Fallback_{p.__name__}_{f.__name__}",
            (Fallback,),
            {
                "name": f"{p.name}{SEPARATOR}{f.name}",
                "markers": (*p.markers, *f.markers),
                "visible_markup": (*p.visible_markup, *f.visible_markup),
                "requirements": p.requirements,
                "native": p.native,
            },
        )
        Fallback._classes[key] = cls
    return cls(primary, fallback)
