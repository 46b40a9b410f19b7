"""Scoring: pure functions from a scenario, a format and a trial's turns to its scores.

Nothing here talks to a model, so a stored run can be rescored anywhere. The value
definitions live in the module docstrings: :mod:`.core` (:func:`score_trial`),
:mod:`.scorer` (registered scorers, their named values, replacing one), :mod:`.builtin`
(the built-in scorers, in order): :mod:`.parsing`, :mod:`.accuracy` (with :mod:`.calls`,
:mod:`.matchers` and :mod:`.answer`), :mod:`.schema`, :mod:`.stop`, :mod:`.leakage`,
:mod:`.retry`, :mod:`.fallback` and :mod:`.stream` (the streaming measurements);
:mod:`.quick` says which trials score quickly enough for the runner's event loop.
"""

from toolbench.scoring.core import effective_turns, score_trial
from toolbench.scoring.scorer import (
    Scored,
    Scorer,
    TrialInput,
    all_scorers,
    get_scorer,
    register_scorer,
    unregister_scorer,
)

__all__ = [
    "Scored",
    "Scorer",
    "TrialInput",
    "all_scorers",
    "effective_turns",
    "get_scorer",
    "register_scorer",
    "score_trial",
    "unregister_scorer",
]
