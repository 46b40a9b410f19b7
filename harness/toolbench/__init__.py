"""toolbench: measure how well each tool-calling format works for each model.

The package is a library first (formats, scenarios, scoring) and a CLI second. The names
an application uses are importable from here (``from toolbench import get_format``) and
from :mod:`toolbench.formats`; they load on first use, so ``import toolbench`` stays cheap
and nothing here imports LiteLLM, and offline commands stay fast.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

__all__ = [
    "Detection",
    "Event",
    "Format",
    "IncrementalReader",
    "Message",
    "ModelReply",
    "ParseIssue",
    "ParseResult",
    "RenderedRequest",
    "TimedChunk",
    "ToolCall",
    "ToolDef",
    "__version__",
    "choose_format",
    "detect_format",
    "format_names",
    "get_format",
    "observe_stream",
    "register_format",
]
"""The public names; :mod:`toolbench.codes` (the typed error codes) is a module beside them."""

if TYPE_CHECKING:  # pragma: no cover - for type checkers only
    from toolbench.formats import (
        Detection,
        Event,
        Format,
        IncrementalReader,
        Message,
        ModelReply,
        ParseIssue,
        ParseResult,
        RenderedRequest,
        TimedChunk,
        ToolCall,
        ToolDef,
        choose_format,
        detect_format,
        format_names,
        get_format,
        observe_stream,
        register_format,
    )


def __getattr__(name: str) -> Any:
    """Load the formats API on first use of one of its names."""
    if name in __all__:
        return getattr(import_module("toolbench.formats"), name)
    raise AttributeError(f"module 'toolbench' has no attribute {name!r}")
