"""The data a format exchanges: the request it renders and what it reads back from a reply.

Kept apart from the format's base class (:mod:`toolbench.formats.base`) so the readers,
the providers and the scorers can hold these values without importing the class that
renders and parses them.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from toolbench.sparse import SparseModel

Message = dict[str, Any]
"""An OpenAI-style chat message (``role``, ``content``, and for native ``tool_calls``...)."""

ParseStatus = Literal["strict", "repaired", "failed", "no_call"]


class ToolCall(SparseModel):
    """A call read back from a reply."""

    model_config = ConfigDict(extra="forbid")
    omit_when_empty = ("notes",)

    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    id: str | None = None
    repaired: bool = False
    """True when the call only decoded through the lenient path (JSON repair, or a block
    that held more than one JSON value, see ``call.lenient``)."""
    notes: list[str] = Field(default_factory=list)
    """Codes of what was normalised on the way without being an error (``args.null``:
    arguments sent as null or as the string ``"null"`` were read as ``{}``). Left out of
    the serialized call when empty, so stored results only change where a note applies."""


class ParseIssue(BaseModel):
    """A typed parse error: parse failures are data, never exceptions."""

    model_config = ConfigDict(extra="forbid")

    code: str
    message: str


class ParseResult(SparseModel):
    """What a format read from one reply.

    ``status`` keeps strict and lenient outcomes apart: ``strict`` means every call the reply
    attempted decoded without repair or leniency, ``repaired`` that calls came out but at
    least one needed the repair layer or a lenient reading, or that another attempted call
    of the same reply was dropped (a block that failed to decode), ``failed`` that the reply
    tried to call and nothing usable came out, ``no_call`` that it did not try.
    """

    model_config = ConfigDict(extra="forbid")
    omit_when_empty = ("via",)

    calls: list[ToolCall] = Field(default_factory=list)
    content: str = ""
    """User-visible text: outside the calls, think blocks removed, sanitized."""
    raw_content: str = ""
    """Text outside the calls with think blocks removed, before sanitizing."""
    reasoning: str | None = None
    errors: list[ParseIssue] = Field(default_factory=list)
    status: ParseStatus = "no_call"
    attempted: bool = False
    """Whether the reply tried to call a tool (even if that failed to parse)."""
    stop_signals: list[str] = Field(default_factory=list)
    """Stop-compliance codes seen while parsing (``stop.text_after_call`` ...)."""
    final_answer: str | None = None
    """The answer when the reply is a final answer (ReAct's ``Final Answer:``, else content)."""
    via: Literal["primary", "fallback"] | None = None
    """Which part of a fallback composition (``native|xml``) produced this result:
    ``fallback`` when the primary found no call and the fallback's parser read calls.
    None for a plain format; left out of the serialized result then, so stored results
    only change where a composition ran."""

    def codes(self) -> list[str]:
        return [e.code for e in self.errors]


class ModelReply(BaseModel):
    """One assistant turn as the provider returned it."""

    model_config = ConfigDict(extra="forbid")

    text: str = ""
    tool_calls: list[dict[str, Any]] = Field(default_factory=list)
    """Provider-native tool calls (OpenAI shape: id, type, function.name/arguments)."""
    finish_reason: str | None = None
    raw_message: dict[str, Any] = Field(default_factory=dict)
    """The assistant message exactly as returned, echoed back unchanged by ``native``."""


class RenderedRequest(BaseModel):
    """Exactly what a format sends for one turn (besides model and sampling parameters)."""

    model_config = ConfigDict(extra="forbid")

    messages: list[Message]
    stop: list[str] | None = None
    tools: list[dict[str, Any]] | None = None
    tool_choice: Any = None
    params: dict[str, Any] = Field(default_factory=dict)
    """Request parameters a format option asks for (``native:parallel=false``:
    ``parallel_tool_calls``; ``native:tool_choice=required``: ``tool_choice``, over the
    field above). Filtered by the model's capabilities like the harness's own: one the
    provider does not take is dropped and recorded, so the cell says "not applied"."""
    api: Literal["chat", "responses"] = "chat"
    """The provider API the request is sent to: chat completions, or OpenAI's Responses API
    (``native:api=responses``; the provider layer shapes the request for it)."""
