"""toolbench: measure how well each tool-calling format works for each model.

The package is a library first (formats, scenarios, scoring) and a CLI second. **This
module is the public API**, in one place: every name an application uses is importable
from here (``from toolbench import get_format, score_trial``), documented with examples in
``docs/library.md``. Everything else (the modules behind these names, the runner, the
providers, the store, the reports, the CLI) is private by convention: it may move or
change between versions without notice.

The names load on first use, so ``import toolbench`` stays cheap, and the formats,
scenarios and scoring import no LiteLLM, pandas, pyarrow or matplotlib (a test holds it).
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from toolbench.version import __version__

_EXPORTS: dict[str, str] = {
    # formats: get one by spec, render a request, parse a reply (whole and incremental)
    "Format": "toolbench.formats",
    "Message": "toolbench.formats",
    "ModelReply": "toolbench.formats",
    "ParseIssue": "toolbench.formats",
    "ParseResult": "toolbench.formats",
    "RenderedRequest": "toolbench.formats",
    "ToolCall": "toolbench.formats",
    "ToolDef": "toolbench.formats",
    "Event": "toolbench.formats",
    "IncrementalReader": "toolbench.formats",
    "TimedChunk": "toolbench.formats",
    "observe_stream": "toolbench.formats",
    "format_names": "toolbench.formats",
    "get_format": "toolbench.formats",
    "register_format": "toolbench.formats",
    # a model's dialect
    "Detection": "toolbench.formats",
    "choose_format": "toolbench.formats",
    "detect_format": "toolbench.formats",
    # scenarios
    "Scenario": "toolbench.scenarios",
    "load_file": "toolbench.scenarios",
    "load_scenarios": "toolbench.scenarios",
    # scoring a trial, and scorers of one's own
    "TurnRecord": "toolbench.results",
    "TrialSettings": "toolbench.results",
    "TrialScores": "toolbench.trial_scores",
    "ScoreValue": "toolbench.trial_scores",
    "score_trial": "toolbench.scoring",
    "effective_turns": "toolbench.scoring",
    "Scorer": "toolbench.scoring",
    "Scored": "toolbench.scoring",
    "TrialInput": "toolbench.scoring",
    "register_scorer": "toolbench.scoring",
    "get_scorer": "toolbench.scoring",
    # errors the library raises on purpose
    "ToolbenchError": "toolbench.errors",
    "UserError": "toolbench.errors",
    "ScenarioError": "toolbench.errors",
    "UnknownNameError": "toolbench.errors",
}
"""Public name -> the module that defines it (loaded on first use)."""

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
    "Scenario",
    "ScenarioError",
    "ScoreValue",
    "Scored",
    "Scorer",
    "TimedChunk",
    "ToolCall",
    "ToolDef",
    "ToolbenchError",
    "TrialInput",
    "TrialScores",
    "TrialSettings",
    "TurnRecord",
    "UnknownNameError",
    "UserError",
    "__version__",
    "choose_format",
    "codes",
    "detect_format",
    "effective_turns",
    "format_names",
    "get_format",
    "get_scorer",
    "load_file",
    "load_scenarios",
    "observe_stream",
    "register_format",
    "register_scorer",
    "score_trial",
]
"""The public names (``_EXPORTS``' keys, ``codes``: the module of typed error codes such as
``codes.CALL_MISSING``, and ``__version__``); a test keeps it equal to ``_EXPORTS``."""

if TYPE_CHECKING:  # pragma: no cover - for type checkers only
    from toolbench import codes
    from toolbench.errors import ScenarioError, ToolbenchError, UnknownNameError, UserError
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
    from toolbench.results import TrialSettings, TurnRecord
    from toolbench.scenarios import Scenario, load_file, load_scenarios
    from toolbench.scoring import (
        Scored,
        Scorer,
        TrialInput,
        effective_turns,
        get_scorer,
        register_scorer,
        score_trial,
    )
    from toolbench.trial_scores import ScoreValue, TrialScores


def __getattr__(name: str) -> Any:
    """Load a public name's module on first use of the name."""
    if name == "codes":
        return import_module("toolbench.codes")
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'toolbench' has no attribute {name!r}")
    return getattr(import_module(module), name)


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
