"""Scorers as registered objects: each gives a trial named values (number, boolean,
label), each with an optional reason, and may add error codes.

A trial's :class:`~toolbench.results.TrialScores` holds, in ``values``, what every
registered scorer gave it, keyed by value name: the core checks that decide pass/fail
(``parse_ok``, ``call_accuracy``, ... from the built-in scorers of
:mod:`toolbench.scoring.builtin_scorers`), the streaming measurements and plugins' values alike.
Metrics, pass/fail and the reports read them by name
(:meth:`~toolbench.results.TrialScores.get`; a metric's ``flag``), so a new per-trial
value and a metric over it are one module: the scorer, the metric, two entry points.

Built-in scorers and plugins come through one door, the entry-point group
``toolbench.scorers``; the built-ins are one entry point (``builtin``, declared in
``pyproject.toml`` only), loaded first and run first, in their declared order. An entry
point names a :class:`Scorer` or a sequence of them. A plugin that fails to import, or
whose value names clash with a value already given, is named in one warning line on
stderr and left out; the other scorers still run. A scorer that raises fails its own
trial (``harness.scoring``), never the run. Scorers are pure: they see the scenario, the
format, the turns and the values the scorers before them gave (a stored run is rescored
anywhere), never a provider.

**Replacing a scorer.** A scorer that declares ``replaces="calls"`` takes the registered
scorer ``calls``'s place: it runs where ``calls`` ran (so the scorers after it read its
values) and ``calls`` no longer runs. It must declare every value the scorer it replaces
declared, each of the same kind, so that every metric, pass/fail and report over those
names keeps working, and it may add values of its own. The replacement is deliberate, so
it is explicit: a scorer that merely reuses a taken name or value name is refused (one
warning line) as before; a replacement is said once on stderr, so a run's numbers are
never changed silently. A replacing scorer usually wraps the one it replaces (read
:func:`get_scorer` at import time, call its ``score`` and change one value).
"""

from __future__ import annotations

import dataclasses
import re
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from importlib.metadata import EntryPoint
from typing import Literal, NoReturn

from toolbench.formats.base import Format
from toolbench.registry import DuplicateNameError, RegistrationError, Registry, instances_of
from toolbench.results import (
    ScoreValue,
    TrialSettings,
    TurnRecord,
    Value,
    ValueKind,
)
from toolbench.scenarios.model import Scenario

ENTRY_POINT_GROUP = "toolbench.scorers"

DisplayPolicy = Literal["careful", "naive"]

_NAME = re.compile(r"[a-z][a-z0-9_]*\Z")


def effective_turns(turns: Sequence[TurnRecord]) -> list[TurnRecord]:
    """The turns that count: each retry turn replaces the turn before it."""
    out: list[TurnRecord] = []
    for turn in turns:
        if turn.retry and out:
            out[-1] = turn
        else:
            out.append(turn)
    return out


@dataclass(frozen=True)
class TrialInput:
    """Everything a scorer may look at for one trial."""

    scenario: Scenario
    fmt: Format
    turns: Sequence[TurnRecord]
    """Every turn, retry turns included (:attr:`effective` gives the ones that count)."""
    settings: TrialSettings | None = None
    markers: Sequence[re.Pattern[str]] | None = None
    given: Mapping[str, ScoreValue] = field(default_factory=dict)
    """The values the scorers that ran before this one gave the trial (the built-ins run
    first, in their declared order): a scorer that depends on another's value reads it
    here, so a replacement of that scorer is seen by it too."""

    def earlier(self, name: str) -> Value:
        """The value ``name`` a scorer that ran before gave (None when none did)."""
        entry = self.given.get(name)
        return entry.value if entry is not None else None

    @cached_property
    def effective(self) -> list[TurnRecord]:
        """The turns that count (:func:`effective_turns`)."""
        return effective_turns(self.turns)

    @property
    def display(self) -> DisplayPolicy:
        """The display policy a streamed trial is measured under (default ``careful``)."""
        return (self.settings.display if self.settings else None) or "careful"


@dataclass
class Scored:
    """What one scorer gave a trial: named values, and problems (code, reason) that are
    added to the trial's ``errors``/``reasons`` in the order the scorers run."""

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
    replaces: str | None = None
    """The name of a registered scorer this one takes the place of (see the module
    docstring); None for a scorer that only adds values."""

    def __post_init__(self) -> None:
        names = (self.name, *self.values, *([self.replaces] if self.replaces else []))
        bad = [n for n in names if not _NAME.match(n)]
        if bad:
            raise ValueError(f"scorer {self.name!r}: names must match [a-z][a-z0-9_]*: {bad}")


def named(**values: Value) -> dict[str, ScoreValue]:
    """Values without reasons: the built-in checks' reasons are their problems, which
    the trial lists in ``errors``/``reasons`` (and runs migrated from schema 5 have the
    same values, so rescoring them changes nothing)."""
    return {name: ScoreValue(value=v) for name, v in values.items()}


# --------------------------------------------------------------------------- the registry

ScorerRegistrationError = RegistrationError
"""A scorer cannot be registered (its plugin is left out with one warning line)."""

DuplicateScorerError = DuplicateNameError
"""A scorer name, or one of its value names, is taken already."""


class ScorerRegistry(Registry[Scorer]):
    """The scorers in the order they run; a value name is given by one scorer only, and
    a scorer that ``replaces`` another takes its place (see the module docstring)."""

    def _clash(self, scorer: Scorer, leaving: str | None = None) -> None:
        """Refuse ``scorer`` if one of its value names is given by another registered
        scorer (``leaving``: the scorer it replaces, whose values it takes over)."""
        taken = {
            v
            for s in self._items.values()
            if s.name not in (scorer.name, leaving)
            for v in s.values
        }
        clash = sorted(taken & set(scorer.values))
        if clash:
            raise DuplicateScorerError(
                f"scorer '{scorer.name}': value name(s) {', '.join(clash)} already given"
            )

    def _take_place(self, scorer: Scorer, target: str) -> Scorer:
        """Put ``scorer`` in the place of the registered scorer ``target``."""
        old = self._items.get(target)
        if old is None:
            raise ScorerRegistrationError(
                f"scorer '{scorer.name}' replaces '{target}', which is not registered"
            )
        if scorer.name != target and scorer.name in self._items:
            raise DuplicateScorerError(f"scorer '{scorer.name}' is already registered")
        missing = sorted(n for n, kind in old.values.items() if scorer.values.get(n) != kind)
        if missing:
            raise ScorerRegistrationError(
                f"scorer '{scorer.name}' replaces '{target}' but does not declare its "
                f"value(s) {', '.join(missing)} with the same kind"
            )
        self._clash(scorer, leaving=target)
        self._replace_all(
            (scorer.name, scorer) if n == target else (n, s) for n, s in self._items.items()
        )
        print(f"warning: scorer '{scorer.name}' replaces scorer '{target}'", file=sys.stderr)
        return scorer

    def register(self, item: Scorer, *, replace: bool = False) -> Scorer:
        if item.replaces is not None:
            return self._take_place(item, item.replaces)
        old = self._items.get(item.name)
        if old is not None and old is not item and not replace:
            raise DuplicateScorerError(f"scorer '{item.name}' is already registered")
        self._clash(item)
        self._put(item.name, item)
        return item


SCORERS = ScorerRegistry(ENTRY_POINT_GROUP, instances_of(Scorer), "scorer", lambda s: s.name)
_REGISTRY = SCORERS._items
"""The table itself (tests save and restore it)."""


def register_scorer(scorer: Scorer, *, replace: bool = False) -> Scorer:
    """Make ``scorer`` run on every trial scored from now on, after those registered
    before it, or in the place of the scorer it ``replaces``. A scorer name or value name
    already taken by another scorer is refused unless ``replace`` (re-registering a
    scorer of the same name, which tests do)."""
    return SCORERS.register(scorer, replace=replace)


def unregister_scorer(name: str) -> None:
    """Forget a scorer (tests that register toy scorers clean up with this)."""
    SCORERS.unregister(name)


def load_entry_points(eps: Iterable[EntryPoint]) -> None:
    """Register the scorers each entry point names; a broken one is one warning line."""
    SCORERS.load_entries(eps)


def all_scorers() -> list[Scorer]:
    """Every registered scorer, in the order they run (and their problems are listed)."""
    return SCORERS.values()


def get_scorer(name: str) -> Scorer:
    """The registered scorer called ``name`` (KeyError when there is none); a replacing
    scorer reads the one it replaces through this, to wrap it."""
    found = SCORERS.find_item(name)
    if found is None:
        raise KeyError(name)
    return found


def value_kind(name: str) -> ValueKind | None:
    """The declared kind of the value called ``name``, None for a name no registered
    scorer gives."""
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


def _refuse(s: Scorer, got: Scored) -> NoReturn:
    """Raise for a scorer's values that are undeclared or not of their declared kind."""
    unknown = sorted(set(got.values) - set(s.values))
    if unknown:
        raise ValueError(f"scorer '{s.name}' gave undeclared value(s) {unknown}")
    wrong = sorted(n for n, v in got.values.items() if not _of_kind(v.value, s.values[n]))
    raise ValueError(f"scorer '{s.name}': value(s) {wrong} not of their declared kind")


def run_scorers(inp: TrialInput) -> Scored:
    """Every registered scorer over one trial, their values and problems together.

    A value the scorer did not declare, or not of its declared kind, is the scorer's bug:
    it raises, and the runner fails that trial (``harness.scoring``), not the run. Each
    scorer sees the values of those before it in ``inp.given``."""
    out = Scored()
    inp = dataclasses.replace(inp, given=out.values)  # filled as the scorers run
    for s in all_scorers():
        got = s.score(inp)
        declared = s.values
        for name, v in got.values.items():
            kind = declared.get(name)
            if kind is None or not _of_kind(v.value, kind):
                _refuse(s, got)
        out.values.update(got.values)
        out.problems.extend(got.problems)
    return out
