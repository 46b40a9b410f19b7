"""The ``fallback`` scorer: under a fallback composition (``native|xml``) every parse says
which part produced it; ``fallback_rescued`` is true when the fallback's parser produced
the calls of an effective turn. Other formats get no value (it is left out of their
stored scores)."""

from __future__ import annotations

from toolbench.scoring.scorer import Scored, Scorer, TrialInput, named


def _score(inp: TrialInput) -> Scored:
    vias = [t.parsed.via for t in inp.effective if t.parsed.via is not None]
    if not vias:
        return Scored()
    return Scored(named(fallback_rescued="fallback" in vias))


SCORER = Scorer(
    "fallback",
    {"fallback_rescued": "boolean"},
    _score,
    "under a fallback composition, whether the fallback's parser produced the calls",
)
