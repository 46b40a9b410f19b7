"""Tool-call formats: renderers and parsers, registered by name."""

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
from toolbench.formats.registry import format_names, get_format, register_format

__all__ = [
    "Format",
    "FormatOptions",
    "Message",
    "ModelReply",
    "NoOptions",
    "ParseIssue",
    "ParseResult",
    "RenderedRequest",
    "Requirements",
    "ShotsOptions",
    "ToolCall",
    "format_names",
    "get_format",
    "register_format",
]
