"""A plugin that replaces a built-in check, as a third party would write it: one module,
one entry point (``strict_calls = "tests.scoring.strict_calls:SCORER"`` in
``toolbench.scorers``), nothing else edited. Its ``call_accuracy`` is the built-in one,
except that a call the parser had to repair is not an accurate call."""

from __future__ import annotations

from toolbench.plugin import Scored, Scorer, ScoreValue, TrialInput, get_scorer

BUILTIN = get_scorer("calls")


def _score(inp: TrialInput) -> Scored:
    got = BUILTIN.score(inp)
    if inp.earlier("parse") == "repaired" and got.values["call_accuracy"].value is True:
        got.values["call_accuracy"] = ScoreValue(value=False, reason="the call was repaired")
    return got


SCORER = Scorer(
    "strict_calls",
    {**BUILTIN.values},
    _score,
    "call accuracy that does not accept a repaired call",
    replaces="calls",
)
