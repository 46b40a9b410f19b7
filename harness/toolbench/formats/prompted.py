"""The half that the prompt formats (``prompt-json``, ``react``, ``xml``) share.

Each of them describes the tools in the system prompt (plus optional worked examples),
reads calls out of the reply text, echoes the reply as an assistant message and feeds the
results back as one user message. Only the wording differs, so one base class keeps the
request layout identical across them: committed cassettes match on the exact request body.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Sequence
from typing import Any, ClassVar

from toolbench.formats.base import (
    Format,
    Message,
    ModelReply,
    ParseResult,
    RenderedRequest,
    Requirements,
    ShotsOptions,
    ToolCall,
)
from toolbench.formats.call_objects import failed_result
from toolbench.formats.describe import merge_system
from toolbench.formats.shots import render_shots
from toolbench.formats.text import drop_think_tags
from toolbench.tools import ToolDef


class PromptedFormat(Format):
    """A format whose tools live in the system prompt and whose calls live in the text.

    Its options are :class:`ShotsOptions`; it requires stop sequences exactly when it
    declares some (set per subclass, unless the subclass declares ``requirements``).
    """

    Options = ShotsOptions
    options: ShotsOptions
    stop_sequences: ClassVar[tuple[str, ...]] = ()
    """Sent as the request's ``stop`` (none when empty)."""
    result_separator: ClassVar[str] = "\n"
    """What joins the result blocks of one turn in the user message."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "requirements" not in cls.__dict__:
            cls.requirements = Requirements(stop_sequences=bool(cls.stop_sequences))

    @abstractmethod
    def instructions(self, tools: Sequence[ToolDef]) -> str:
        """The system-prompt text that describes the tools and the call syntax."""

    @staticmethod
    @abstractmethod
    def call_text(name: str, arguments: dict[str, Any]) -> str:
        """A call exactly as this format expects the model to write it."""

    @staticmethod
    @abstractmethod
    def result_text(name: str, result: str) -> str:
        """One tool result as this format feeds it back."""

    @staticmethod
    def answer_text(answer: str) -> str:
        """A final answer as the examples show it (plain text unless the format says so)."""
        return answer

    @abstractmethod
    def _parse(self, text: str, tools: Sequence[ToolDef] | None) -> ParseResult:
        """The parser proper; :meth:`parse` turns anything it raises into a failed result."""

    @abstractmethod
    def _clean(self, text: str) -> str:
        """Remove this format's markers from text (think tags already gone)."""

    def system_section(self, tools: Sequence[ToolDef]) -> str:
        shots = render_shots(self.options.shots, self.call_text, self.result_text, self.answer_text)
        return self.instructions(tools) + ("\n\n" + shots if shots else "")

    def render(self, tools: Sequence[ToolDef], messages: Sequence[Message]) -> RenderedRequest:
        return RenderedRequest(
            messages=merge_system(messages, self.system_section(tools)),
            stop=list(self.stop_sequences) if self.stop_sequences else None,
        )

    def parse(self, text: str, tools: Sequence[ToolDef] | None = None) -> ParseResult:
        try:
            return self._parse(text, tools)
        except Exception as exc:  # a parser bug must not abort a run
            return failed_result(text, exc)

    def sanitize(self, text: str) -> str:
        return self._clean(drop_think_tags(text))

    def continue_conversation(
        self,
        messages: Sequence[Message],
        reply: ModelReply,
        results: Sequence[tuple[ToolCall, str]],
    ) -> list[Message]:
        out = [*messages, {"role": "assistant", "content": reply.text}]
        if results:
            blocks = (self.result_text(call.name, result) for call, result in results)
            out.append({"role": "user", "content": self.result_separator.join(blocks)})
        return out
