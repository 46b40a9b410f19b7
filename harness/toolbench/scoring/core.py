""":func:`score_trial`: every registered scorer over one trial's turns, a pure function
of the scenario, the format and the turn records.

The checks that decide whether a trial passes are built-in scorers like any other
(:mod:`.builtin`, run first and in this order): ``parse`` (:mod:`.parsing`), ``calls``
(:mod:`.accuracy`), ``schema`` (:mod:`.schema`), ``stop`` (:mod:`.stop`), ``leakage``
(:mod:`.leakage`), ``retry`` (:mod:`.retry`), ``fallback`` (:mod:`.fallback`) and
``stream`` (:mod:`.stream`); plugins run after them, or in the place of the one they
replace (:mod:`.scorer`). The trial stores every value by name in ``scores.values``, and
every problem found (the parser's own codes first) in ``errors`` with one human reason
each in ``reasons``.

**Effective turns.** A turn with ``retry=True`` answered the parse-error retry message
and replaces the turn before it; every accuracy check reads the effective turns only.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from toolbench.formats.base import Format, ParseResult
from toolbench.results import TrialSettings, TurnRecord
from toolbench.scenarios.model import Scenario
from toolbench.scoring.scorer import TrialInput, effective_turns, run_scorers
from toolbench.trial_scores import TrialScores

__all__ = ["abstained", "attempted", "effective_turns", "label", "score_trial"]


def attempted(parsed: ParseResult) -> bool:
    return bool(parsed.calls) or parsed.attempted or parsed.status == "failed"


def abstained(parsed: ParseResult) -> bool:
    """The one definition of a correct no-call reply (``no_call_correct``, and the BFCL
    irrelevance verdict): no call, and no attempt at one. A reply that tried to call and
    did not parse is not an abstention (``nocall.decode_failure``), although BFCL's own
    irrelevance check counts a reply it cannot decode as no call."""
    return not attempted(parsed)


def label(n: int, total: int) -> str:
    """The prefix of a problem found in turn ``n`` of ``total`` (none for one turn)."""
    return f"turn {n}: " if total > 1 else ""


def score_trial(
    scenario: Scenario,
    fmt: Format,
    turns: Sequence[TurnRecord],
    settings: TrialSettings | None = None,
    markers: Sequence[re.Pattern[str]] | None = None,
) -> TrialScores:
    """Score one trial's turns against its scenario (see the module docstring).

    ``settings`` are the ones the conversation ran with (its turn limit decides
    ``turns.exhausted``, its display policy the stream measurements; default: the
    scenario's), ``markers`` the run's leakage marker set (default: the formats installed
    now). A registered scorer that raises raises here (the runner makes the trial a
    ``harness.scoring`` error).
    """
    scored = run_scorers(TrialInput(scenario, fmt, turns, settings, markers))
    return TrialScores(
        values=scored.values,
        errors=[code for code, _ in scored.problems],
        reasons=[why for _, why in scored.problems],
    )
