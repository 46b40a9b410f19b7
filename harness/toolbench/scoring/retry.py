"""The ``retry`` scorer: did a parse-error retry happen (``--retry-on-parse-error``), and
did it fix the trial?

``retried``: some turn answered the retry message. ``retry_recovered`` (None without a
retry): every retry reply parsed and the trial's applicable outcome holds: its
``call_accuracy`` and ``no_call_correct``, as the scorers before this one gave them (a
plugin that replaces the ``calls`` scorer is read here too).
"""

from __future__ import annotations

from toolbench.scoring.scorer import Scored, Scorer, TrialInput, named


def _score(inp: TrialInput) -> Scored:
    retry_turns = [t for t in inp.turns if t.retry]
    recovered: bool | None = None
    if retry_turns:
        recovered = (
            all(t.parsed.status != "failed" for t in retry_turns)
            and inp.earlier("call_accuracy") is not False
            and inp.earlier("no_call_correct") is not False
        )
    return Scored(named(retried=bool(retry_turns), retry_recovered=recovered))


SCORER = Scorer(
    "retry",
    {"retried": "boolean", "retry_recovered": "boolean"},
    _score,
    "whether a parse-error retry happened, and whether it fixed the trial",
)
