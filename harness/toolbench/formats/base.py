"""The format plugin interface and the data every format produces.

A format owns both halves of a tool-calling exchange: how tools, messages and tool
results are rendered into a request, and how the model's reply is read back. Keeping
both halves in one object is what lets toolbench measure a format as a unit, and what
lets an application reuse exactly the renderer and parser that were measured.
"""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from typing import ClassVar, NamedTuple

from pydantic import BaseModel, ConfigDict, Field

from toolbench.formats.exchange import (
    Message,
    ModelReply,
    ParseIssue,
    ParseResult,
    ParseStatus,
    RenderedRequest,
    ToolCall,
)
from toolbench.formats.marker_reader import MarkerReader
from toolbench.formats.reader_events import IncrementalReader
from toolbench.formats.stream_syntax import EMPTY, StreamSyntax, literal_tokens, tokens
from toolbench.tools import ToolDef

__all__ = [
    "Format",
    "FormatOptions",
    "Message",
    "ModelReply",
    "NamePattern",
    "NoOptions",
    "ParseIssue",
    "ParseResult",
    "ParseStatus",
    "RenderedRequest",
    "Requirements",
    "ShotsOptions",
    "ToolCall",
]
"""The format's base class and what goes with it; the data it exchanges (defined in
:mod:`toolbench.formats.exchange`) is importable from here too, as plugins import it."""


class NoOptions(BaseModel):
    """The options of a format that takes none: any option given is refused."""

    model_config = ConfigDict(extra="forbid")


class ShotsOptions(BaseModel):
    """The options of a prompted format: ``shots`` worked examples in the system prompt.

    Given on the command line as ``name:shots=2``.
    """

    model_config = ConfigDict(extra="forbid")

    shots: int = Field(default=0, ge=0, le=8)


FormatOptions = ShotsOptions
"""The options model that every format shared before formats declared their own
(kept as a name: ``FormatOptions(shots=2)`` still builds a prompted format's options)."""


@dataclass(frozen=True)
class Requirements:
    """What a format needs from the provider that serves it.

    Declared by the format, read by whoever serves it: the runner starts the local
    server's function-calling handler for ``native_tools``; a provider layer can refuse
    (or route) a format a provider cannot serve instead of sending a request whose
    meaning silently changes. ``raw_completion`` is declared for formats to come; no
    built-in needs it.
    """

    native_tools: bool = False
    """The provider's own tool-calling API (``tools=`` and structured ``tool_calls``)."""
    stop_sequences: bool = False
    """Request ``stop`` sequences: the format stops the model before it invents results."""
    raw_completion: bool = False
    """A raw text completion (no chat template): the format writes the whole prompt."""


@cache
def _class_syntax(cls: type[Format]) -> StreamSyntax:
    """Worked out once per class: a reader is made per reply."""
    toks = () if cls.visible_markup else literal_tokens(cls.markers)
    return cls.stream + StreamSyntax((tokens(*toks),)) if toks else cls.stream


class NamePattern(NamedTuple):
    """One model-name pattern of a format's detection (see ``Format.name_patterns``)."""

    rank: int
    pattern: str
    why: str


class Format(ABC):
    """Base class for a tool-calling format.

    A format declares, as class attributes, its ``Options`` model (what ``name:k=v``
    may set; a format that takes none keeps :class:`NoOptions`), its ``requirements``
    and its ``markers``. Built-in formats and plugins alike register through the
    ``toolbench.formats`` entry-point group (see :mod:`toolbench.formats.format_registry`).
    """

    name: ClassVar[str]
    description: ClassVar[str] = ""
    Options: ClassVar[type[BaseModel]] = NoOptions
    """This format's options model (pydantic, ``extra="forbid"``)."""
    requirements: ClassVar[Requirements] = Requirements()
    markers: ClassVar[Sequence[re.Pattern[str]]] = ()
    """Patterns of this format's raw markers, used to detect leakage and to sanitize."""
    visible_markup: ClassVar[Sequence[re.Pattern[str]]] = ()
    """Markup this format allows in its visible text (ReAct's ``Thought:`` and ``Final
    Answer:``). Raw leakage is a marker outside it: a marker match that one of these
    patterns also matches, from the same position to at least the same end, is no leak."""
    stream: ClassVar[StreamSyntax] = EMPTY
    """What the incremental reader needs: the regions (calls, hidden markup) and how each
    opens and ends (:mod:`toolbench.formats.stream_syntax`). Empty: text is shown at once
    and calls are known at the end of the reply."""
    native: ClassVar[bool] = False
    """True when the format uses the provider's own tool-calling API
    (``requirements.native_tools``; kept as its own flag for the runner)."""
    name_patterns: ClassVar[Sequence[NamePattern]] = ()
    """Model names that speak this format (:mod:`toolbench.formats.detect`): patterns over
    a name's tokens, each with its rank (lower is tried first: a fine-tune's own marker
    before its base family) and the reason detection gives."""
    template_tokens: ClassVar[Sequence[tuple[str, ...]]] = ()
    """Token sets a chat template renders this format's calls with (all of one set must
    occur), tried in ``template_rank`` order across formats."""
    template_rank: ClassVar[int] = 100
    conformance_family: ClassVar[str | None] = None
    """The family of the conformance corpus (``hermes``, ``qwen3_xml``...) whose vectors
    this format must read as the reference parsers do."""
    leak_rank: ClassVar[int | None] = None
    """Set for a dialect whose call syntax, left in a native reply's content, is a call
    the server failed to parse; the rank orders the dialects tried (lower first)."""
    test_cases: ClassVar[str | None] = None
    """The module holding this format's test cases, imported by the shared tests only
    (never at run time, so a large table costs a run nothing): its ``CONTRACT`` row,
    ``(options model, requirements)``, which the contract test holds the class to, and
    its parse tables, every ``*CASES`` list of ``(id, reply, ...)`` rows, which the
    stream corpus feeds through the incremental reader at every split. A built-in's is
    its test module under ``tests/formats``; a plugin names a module of its own."""

    options: BaseModel

    def __init__(self, options: BaseModel | None = None) -> None:
        if options is None:
            options = self.Options()
        elif not isinstance(options, self.Options):
            # Options built for another format (e.g. ShotsOptions for native) are
            # re-validated against this format's model, so a meaningless one is refused.
            options = self.Options.model_validate(options.model_dump(exclude_defaults=True))
        self.options = options

    @property
    def spec(self) -> str:
        """The format with its non-default options, as written on the command line."""
        opts = self.options.model_dump(exclude_defaults=True)
        if not opts:
            return self.name
        return self.name + ":" + ",".join(f"{k}={v}" for k, v in sorted(opts.items()))

    def refuses(self, tools: Sequence[ToolDef]) -> str | None:
        """Why this format, with its options, cannot run a scenario offering ``tools``
        (checked at plan time, before any call: a user's bad input); None: it can."""
        return None

    def notes(self, tools: Sequence[ToolDef]) -> list[str]:
        """What this format changes in what it sends for ``tools`` (``native:strict``'s
        schema transformation): recorded on each trial."""
        return []

    @abstractmethod
    def render(self, tools: Sequence[ToolDef], messages: Sequence[Message]) -> RenderedRequest:
        """Build the first request: tool description, scenario messages, stop sequences."""

    @abstractmethod
    def parse(self, text: str, tools: Sequence[ToolDef] | None = None) -> ParseResult:
        """Read calls and visible text from reply text. Never raises; linear time."""

    def parse_reply(self, reply: ModelReply, tools: Sequence[ToolDef] | None = None) -> ParseResult:
        """Read a provider reply. Text formats parse the text; ``native`` overrides this."""
        return self.parse(reply.text or "", tools)

    def stream_syntax(self) -> StreamSyntax:
        """The syntax this instance streams with: its ``stream``, plus its literal
        ``markers`` as hidden tokens (what sanitizing removes, a careful application does
        not show either), except for a format with visible markup, which lists what it
        hides itself. A composition joins its parts' syntaxes."""
        return _class_syntax(type(self))

    def reader(
        self, tools: Sequence[ToolDef] | None = None, *, early_calls: bool = True
    ) -> IncrementalReader:
        """A fresh incremental reader of one reply (:mod:`toolbench.formats.marker_reader`);
        its result after ``close()`` is exactly ``self.parse(whole text, tools)``.
        ``early_calls``: each ``call_complete`` event carries its block's calls (one more
        parse of each call block; a measurement that only needs positions turns it off)."""
        return MarkerReader(self, tools, self.stream_syntax(), early_calls=early_calls)

    @abstractmethod
    def continue_conversation(
        self,
        messages: Sequence[Message],
        reply: ModelReply,
        results: Sequence[tuple[ToolCall, str]],
    ) -> list[Message]:
        """Append the assistant turn and the tool results, written the format's own way."""

    def retry_message(self, parsed: ParseResult) -> Message:
        """The message fed back once after a parse error (``--retry-on-parse-error``)."""
        detail = "; ".join(e.message for e in parsed.errors) or "no valid tool call found"
        return {
            "role": "user",
            "content": f"Your last reply could not be parsed: {detail}. "
            "Reply again using exactly the tool-call format described above.",
        }

    @abstractmethod
    def sanitize(self, text: str) -> str:
        """The text a user would see: every raw marker of this format removed."""
