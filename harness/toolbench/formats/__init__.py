"""Tool-call formats: renderers and parsers, registered by name, and what an application
needs around them: the tool definition, model-name detection, the incremental (streaming)
reader and its events, and the typed error codes (:mod:`toolbench.codes`).

The public API is :mod:`toolbench` (which re-exports these names, see docs/library.md);
the modules behind them may move.
"""

from toolbench import codes
from toolbench.formats.auto import choose_format
from toolbench.formats.base import (
    Format,
    FormatOptions,
    Message,
    ModelReply,
    NoOptions,
    ParseIssue,
    ParseResult,
    RenderedRequest,
    Requirements,
    ShotsOptions,
    ToolCall,
)
from toolbench.formats.detect import Detection, detect_format
from toolbench.formats.format_registry import format_names, get_format, register_format
from toolbench.formats.observe import TimedChunk, observe_stream
from toolbench.formats.reader_events import Event, IncrementalReader
from toolbench.tools import ToolDef

__all__ = [
    "Detection",
    "Event",
    "Format",
    "FormatOptions",
    "IncrementalReader",
    "Message",
    "ModelReply",
    "NoOptions",
    "ParseIssue",
    "ParseResult",
    "RenderedRequest",
    "Requirements",
    "ShotsOptions",
    "TimedChunk",
    "ToolCall",
    "ToolDef",
    "choose_format",
    "codes",
    "detect_format",
    "format_names",
    "get_format",
    "observe_stream",
    "register_format",
]
