"""Scoring: pure functions from a scenario, a format and a trial's turns to its scores.

Nothing here talks to a model, so a stored run can be rescored anywhere. The metric
definitions live in the module docstrings: :mod:`.trial` (the whole trial), :mod:`.calls`
and :mod:`.matchers` (call matching), :mod:`.schema`, :mod:`.stop`, :mod:`.leakage` and
:mod:`.answer`.
"""

from toolbench.scoring.trial import effective_turns, score_trial

__all__ = ["effective_turns", "score_trial"]
