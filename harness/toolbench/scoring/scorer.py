"""Scorers as registered objects: each gives a trial named values (number, boolean,
label), each with an optional reason, and may add error codes.

A trial's :class:`~toolbench.results.TrialScores` holds the core checks (the fields that
decide pass/fail, :mod:`toolbench.scoring.core`) and, in ``values``, what every
registered scorer gave it, keyed by value name. Metrics read any of them by name
(:meth:`~toolbench.results.TrialScores.get`; a metric's ``flag``), so a new per-trial
value and a metric over it are one module: the scorer, the metric, two entry points.

Built-in scorers and plugins come through one door, the entry-point group
``toolbench.scorers`` (the built-ins are declared in ``pyproject.toml`` only). An entry
point names a :class:`Scorer` or a sequence of them. A plugin that fails to import, or
whose value names clash with a value already given, is named in one warning line on
stderr and left out; the other scorers still run. A scorer that raises fails its own
trial (``harness.scoring``), never the run. Scorers are pure: they see the scenario, the
format and the turns (a stored run is rescored anywhere), never a provider.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from importlib.metadata import EntryPoint, entry_points
from typing import Literal

from toolbench import plugins
from toolbench.formats.base import Format
from toolbench.results import (
    ScoreValue,
    TrialScores,
    TrialSettings,
    TurnRecord,
    Value,
    ValueKind,
)
from toolbench.scenarios.model import Scenario

ENTRY_POINT_GROUP = "toolbench.scorers"

DisplayPolicy = Literal["careful", "naive"]

_NAME = re.compile(r"[a-z][a-z0-9_]*\Z")


@dataclass(frozen=True)
class TrialInput:
    """Everything a scorer may look at for one trial."""

    scenario: Scenario
    fmt: Format
    turns: Sequence[TurnRecord]
    """Every turn, retry turns included (:func:`~toolbench.scoring.core.effective_turns`
    gives the ones that count)."""
    settings: TrialSettings | None = None
    markers: Sequence[re.Pattern[str]] | None = None

    @property
    def display(self) -> DisplayPolicy:
        """The display policy a streamed trial is measured under (default ``careful``)."""
        return (self.settings.display if self.settings else None) or "careful"


@dataclass
class Scored:
    """What one scorer gave a trial: named values, and problems (code, reason) that are
    added to the trial's ``errors``/``reasons`` after the core's."""

    values: dict[str, ScoreValue] = field(default_factory=dict)
    problems: list[tuple[str, str]] = field(default_factory=list)


@dataclass(frozen=True)
class Scorer:
    """One registered scorer.

    ``values`` declares every value name it may give and its kind (the trial table types
    its column by it); ``score`` returns a subset of them, or nothing for a trial it does
    not apply to (a streaming measure of a plain trial).
    """

    name: str
    values: Mapping[str, ValueKind]
    score: Callable[[TrialInput], Scored]
    description: str = ""

    def __post_init__(self) -> None:
        bad = [n for n in (self.name, *self.values) if not _NAME.match(n)]
        if bad:
            raise ValueError(f"scorer {self.name!r}: names must match [a-z][a-z0-9_]*: {bad}")


# --------------------------------------------------------------------------- the registry

_CORE: frozenset[str] = frozenset(
    n for n in TrialScores.model_fields if n not in ("errors", "reasons", "values")
)
_REGISTRY: dict[str, Scorer] = {}
_loaded = False
_LOAD_LOCK = threading.Lock()


class DuplicateScorerError(ValueError):
    """A scorer name, or one of its value names, is taken already."""


def register_scorer(scorer: Scorer, *, replace: bool = False) -> Scorer:
    """Make ``scorer`` run on every trial scored from now on. A scorer name or value name
    already taken (by the core or another scorer) is refused unless ``replace``."""
    old = _REGISTRY.get(scorer.name)
    if old is not None and old is not scorer and not replace:
        raise DuplicateScorerError(f"scorer '{scorer.name}' is already registered")
    taken = _CORE | {v for s in _REGISTRY.values() if s.name != scorer.name for v in s.values}
    clash = sorted(taken & set(scorer.values))
    if clash:
        raise DuplicateScorerError(
            f"scorer '{scorer.name}': value name(s) {', '.join(clash)} already given"
        )
    _REGISTRY[scorer.name] = scorer
    return scorer


def unregister_scorer(name: str) -> None:
    """Forget a scorer (tests that register toy scorers clean up with this)."""
    _REGISTRY.pop(name, None)


def load_entry_points(eps: Iterable[EntryPoint]) -> None:
    """Register the scorers each entry point names; a broken one is one warning line."""
    plugins.load_entry_points(eps, Scorer, "scorer", register_scorer, DuplicateScorerError)


def load_scorers() -> None:
    """Register every installed ``toolbench.scorers`` entry point, by name (once)."""
    global _loaded
    if _loaded:
        return
    with _LOAD_LOCK:  # trials are scored in worker threads: load once, wholly
        if _loaded:
            return
        load_entry_points(plugins.installed(ENTRY_POINT_GROUP, find=entry_points))
        _loaded = True


def all_scorers() -> list[Scorer]:
    """Every registered scorer, in the order they run (and their problems are listed)."""
    load_scorers()
    return list(_REGISTRY.values())


def value_kind(name: str) -> ValueKind | None:
    """The kind of the value called ``name``: ``boolean`` for the core's checks, the
    declared kind for a registered scorer's value, None for a name no scorer gives."""
    if name in _CORE:
        return "label" if name in ("parse", "stop") else "boolean"
    for s in all_scorers():
        if name in s.values:
            return s.values[name]
    return None


def _of_kind(value: Value, kind: ValueKind) -> bool:
    """None (not applicable) is every kind's; a bool is not a number."""
    if value is None:
        return True
    if kind == "boolean":
        return isinstance(value, bool)
    if kind == "number":
        return isinstance(value, int | float) and not isinstance(value, bool)
    return isinstance(value, str)


def run_scorers(inp: TrialInput) -> Scored:
    """Every registered scorer over one trial, their values and problems together.

    A value the scorer did not declare, or not of its declared kind, is the scorer's bug:
    it raises, and the runner fails that trial (``harness.scoring``), not the run."""
    out = Scored()
    for s in all_scorers():
        got = s.score(inp)
        unknown = set(got.values) - set(s.values)
        if unknown:
            raise ValueError(f"scorer '{s.name}' gave undeclared value(s) {sorted(unknown)}")
        wrong = sorted(n for n, v in got.values.items() if not _of_kind(v.value, s.values[n]))
        if wrong:
            raise ValueError(f"scorer '{s.name}': value(s) {wrong} not of their declared kind")
        out.values.update(got.values)
        out.problems.extend(got.problems)
    return out
