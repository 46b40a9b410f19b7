"""What a trial's environments did, as a results line stores it on each turn.

Apart from :mod:`toolbench.results` (which holds it on :class:`~toolbench.results.TurnRecord`)
only so that each module stays one concept; the environments themselves are
:mod:`toolbench.environments`.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class ToolRun(BaseModel):
    """One call an environment executed: the text fed back, and its typed error if any."""

    model_config = ConfigDict(extra="forbid")

    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    result: str
    """Exactly what the model was told (a tool error written the environment's way)."""
    error: str | None = Field(default=None, exclude_if=lambda e: e is None)
    """``tool.raised``, ``tool.timeout``, ... (None, and left out, when the tool answered)."""


class EnvironmentStep(BaseModel):
    """What a turn did to the trial's environments (:mod:`toolbench.environments`)."""

    model_config = ConfigDict(extra="forbid")

    user_turn: int = 0
    """Which of the scenario's user turns this exchange belongs to (0-based)."""
    runs: list[ToolRun] = Field(default_factory=list)
    """The reply's calls as executed, in the order the model made them."""
    state: dict[str, Any] | None = Field(default=None, exclude_if=lambda s: s is None)
    """Every environment's snapshot, by environment name, on the last turn of a user turn
    (None, and left out, on the turns before it)."""
