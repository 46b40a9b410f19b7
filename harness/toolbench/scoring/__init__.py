"""Scoring: pure functions from a scenario, a format and a trial's turns to its scores.

Nothing here talks to a model, so a stored run can be rescored anywhere. The metric
definitions live in the module docstrings: :mod:`.core` (the core checks and
:func:`score_trial`), :mod:`.scorer` (registered scorers and their named values),
:mod:`.stream` (the streaming measurements), :mod:`.calls` and :mod:`.matchers` (call
matching), :mod:`.schema`, :mod:`.stop`, :mod:`.leakage` and :mod:`.answer`.
"""

from toolbench.scoring.core import effective_turns, score_trial
from toolbench.scoring.scorer import (
    Scored,
    Scorer,
    TrialInput,
    all_scorers,
    register_scorer,
    unregister_scorer,
)

__all__ = [
    "Scored",
    "Scorer",
    "TrialInput",
    "all_scorers",
    "effective_turns",
    "register_scorer",
    "score_trial",
    "unregister_scorer",
]
