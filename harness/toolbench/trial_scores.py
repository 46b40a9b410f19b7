"""A trial's scores: the named values the registered scorers gave it, and why.

Stored in every ``results.jsonl`` line (:class:`toolbench.results.TrialResult.scores`)
and read by the metrics and reports by name; kept in a module of its own so scorers,
metrics and plugins hold these values without the rest of the stored run's shapes.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from toolbench.named_values import Value as Value
from toolbench.named_values import named_value as named_value

ValueKind = Literal["number", "boolean", "label"]
"""What a named value holds: a number (a measurement), a boolean (a check) or a label."""


class ScoreValue(BaseModel):
    """One named value a registered scorer gave a trial, and why."""

    model_config = ConfigDict(extra="forbid")

    value: Value
    reason: str | None = Field(default=None, exclude_if=lambda r: r is None)
    """One human line for the drill-down (None, and left out, when the value says it all).
    Left out by pydantic's own ``exclude_if`` rather than :class:`SparseModel`'s
    serializer: a trial stores a dozen of these, and the Python serializer tripled the
    cost of writing them."""


class TrialScores(BaseModel):
    """Scores of one trial: pure functions of its requests, replies and scenario.

    ``values`` holds what every registered scorer (:mod:`toolbench.scoring.scorer`) gave
    the trial, by value name: the built-in checks that decide whether it passes
    (``parse``, ``parse_ok``, ``call_accuracy``, ``stop``, ``leak_raw``, ...,
    :mod:`toolbench.scoring.builtin_scorers`), the streaming measurements and plugins' values
    alike. :meth:`get` reads one by name, which is how metrics and reports read them.

    A value of ``None`` means "not applicable" (e.g. ``call_accuracy`` on a no-call
    scenario) and is left out of that metric's denominator, as is a value no scorer gave.
    """

    model_config = ConfigDict(extra="forbid")

    values: dict[str, ScoreValue] = Field(default_factory=dict)
    """The registered scorers' named values, in the order the scorers ran."""
    errors: list[str] = Field(default_factory=list)
    reasons: list[str] = Field(default_factory=list)
    """Human-readable reasons, one per error, for the drill-down."""

    @classmethod
    def of(
        cls, errors: Sequence[str] = (), reasons: Sequence[str] = (), **values: Value
    ) -> TrialScores:
        """Scores holding ``values`` without reasons (synthetic trials: tests, benchmarks)."""
        named = {name: ScoreValue(value=v) for name, v in values.items()}
        return cls(values=named, errors=list(errors), reasons=list(reasons))

    def get(self, name: str) -> Value:
        """The value called ``name`` (None when no scorer gave this trial one)."""
        entry = self.values.get(name)
        return entry.value if entry is not None else None
