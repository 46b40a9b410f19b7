"""The half that the prompt formats (``prompt-json``, ``react``, ``xml``) share.

Each of them describes the tools in the system prompt (plus optional worked examples),
reads calls out of the reply text, echoes the reply as an assistant message and feeds the
results back as one user message. Only the wording differs, so one base class keeps the
request layout identical across them: committed cassettes match on the exact request body.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Sequence
from typing import Any, ClassVar, Literal

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
from toolbench.formats.prompt_axes import (
    TAG_CLOSE,
    TAG_OPEN,
    AxisOptions,
    PromptParts,
    StyleOptions,
    bfcl_parts,
    compose,
    read_tagged,
    tool_doc,
    untag,
    wrap,
)
from toolbench.formats.shots import render_shots
from toolbench.formats.stream_syntax import StreamSyntax, tokens
from toolbench.formats.text import drop_think_tags
from toolbench.tools import ToolDef


class PromptedFormat(Format):
    """A format whose tools live in the system prompt and whose calls live in the text.

    Its options are :class:`ShotsOptions`, or a model of the prompt axes
    (:mod:`toolbench.formats.prompt_axes`) for a format that declares its ``call_shape``,
    ``results_note`` and :meth:`own_parts`; it requires stop sequences exactly when it
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

    call_shape: ClassVar[str] = ""
    """The call syntax as the prompt shows it (BFCL's ``output_format``), for a format
    that takes the axes of :mod:`toolbench.formats.prompt_axes`."""
    results_note: ClassVar[str] = ""
    """How results come back and how to answer at the end, in the format's own words."""
    param_types: ClassVar[str] = ""
    """BFCL's sentence on the call's parameter types (``PARAM_TYPE_MAPPING``), if any."""

    @property
    def axes(self) -> StyleOptions | None:
        """This instance's axis options, when its format takes the axes."""
        return self.options if isinstance(self.options, StyleOptions) else None

    @property
    def tag(self) -> Literal["off", "on"]:
        """The ``tag`` axis (``off`` for a format that does not take it)."""
        return self.options.tag if isinstance(self.options, AxisOptions) else "off"

    @property
    def tagged(self) -> bool:
        return self.tag == "on"

    def listing(self, tools: Sequence[ToolDef]) -> str:
        """The tools documented as the ``doc`` axis asks."""
        axes = self.axes
        return tool_doc(tools, axes.doc if axes is not None else "text")

    def output_format(self) -> str:
        """The call shape as the prompt shows it, outside any tag (BFCL's
        ``output_format``): :attr:`call_shape`, unless an option of the format picks it."""
        return self.call_shape

    def shape(self) -> str:
        """The call shape as the prompt shows it, inside the tag when ``tag=on``."""
        return wrap(self.output_format(), self.tag)

    def own_parts(self, tools: Sequence[ToolDef]) -> PromptParts:
        """The format's own wording in BFCL's five parts (``style=own`` under Markdown);
        every format that takes the axes overrides it (this one keeps the instructions
        whole, as the tools part)."""
        return PromptParts("", "", "", "", self.instructions(tools))

    def prompt(self, tools: Sequence[ToolDef]) -> str:
        """The system prompt's instructions as the axes ask: the format's own
        :meth:`instructions` at the defaults, else BFCL's layout of the parts."""
        axes = self.axes
        if axes is None or (axes.style == "own" and axes.markup == "plain"):
            return self.instructions(tools)
        if axes.style == "own":
            return compose(self.own_parts(tools), axes.markup)
        parts = bfcl_parts(axes.style, shape=self.output_format(), tag=self.tag, doc=axes.doc,
                           listing=self.listing(tools), results_note=self.results_note,
                           param_types=self.param_types)  # fmt: skip
        return compose(parts, axes.markup)

    def shot_call_text(self, name: str, arguments: dict[str, Any]) -> str:
        """A call as the worked examples show it (inside the tag when ``tag=on``)."""
        return wrap(self.call_text(name, arguments), self.tag)

    def system_section(self, tools: Sequence[ToolDef]) -> str:
        shots = render_shots(
            self.options.shots, self.shot_call_text, self.result_text, self.answer_text
        )
        return self.prompt(tools) + ("\n\n" + shots if shots else "")

    def render(self, tools: Sequence[ToolDef], messages: Sequence[Message]) -> RenderedRequest:
        return RenderedRequest(
            messages=merge_system(messages, self.system_section(tools)),
            stop=list(self.stop_sequences) if self.stop_sequences else None,
        )

    def parse(self, text: str, tools: Sequence[ToolDef] | None = None) -> ParseResult:
        if self.tagged:
            return read_tagged(text, lambda inner: self._guarded_parse(inner, tools))
        return self._guarded_parse(text, tools)

    def _guarded_parse(self, text: str, tools: Sequence[ToolDef] | None) -> ParseResult:
        try:
            return self._parse(text, tools)
        except Exception as exc:  # a parser bug must not abort a run
            return failed_result(text, exc)

    def sanitize(self, text: str) -> str:
        return self._clean(drop_think_tags(untag(text)[0] if self.tagged else text))

    def stream_syntax(self) -> StreamSyntax:
        """The class's syntax, plus the tool-call tag as a hidden token when ``tag=on``."""
        base = super().stream_syntax()
        return base + StreamSyntax((tokens(TAG_OPEN, TAG_CLOSE),)) if self.tagged else base

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
