"""Scenario files: the schema and the loader."""

from toolbench.scenarios.loader import load_file, load_scenarios, select_scenarios, validate_paths
from toolbench.scenarios.model import (
    AnswerCheck,
    ArgMatcher,
    ChatMessage,
    Expect,
    ExpectedCall,
    Round,
    Scenario,
)

__all__ = [
    "AnswerCheck",
    "ArgMatcher",
    "ChatMessage",
    "Expect",
    "ExpectedCall",
    "Round",
    "Scenario",
    "load_file",
    "load_scenarios",
    "select_scenarios",
    "validate_paths",
]
