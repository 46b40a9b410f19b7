"""A scorer plugin as a third party would write it: one module giving every trial two
named values and two metrics over them, registered through two entry points
(``terse = "tests.scoring.toy_scorer:SCORER"`` in ``toolbench.scorers``,
``terse = "tests.scoring.toy_scorer:METRICS"`` in ``toolbench.metrics``); nothing else
edited."""

from __future__ import annotations

import pandas as pd

from toolbench.plugin import (
    Metric,
    Scored,
    Scorer,
    ScoreValue,
    TrialInput,
    effective_turns,
    flag_rate,
)

LIMIT = 200
"""A reply is terse when its text has at most this many characters."""


def _score(inp: TrialInput) -> Scored:
    chars = [len(t.reply.text) for t in effective_turns(inp.turns)]
    longest = max(chars, default=0)
    terse = longest <= LIMIT
    why = None if terse else f"a reply of {longest} characters (limit {LIMIT})"
    return Scored(
        values={
            "terse": ScoreValue(value=terse, reason=why),
            "reply_chars": ScoreValue(value=sum(chars)),
        }
    )


SCORER = Scorer(
    "terse",
    {"terse": "boolean", "reply_chars": "number"},
    _score,
    "whether every reply stayed short, and how long the replies were",
)


def _mean(s: pd.Series[float]) -> float | None:
    return None if s.dropna().empty else float(s.mean())


def _reply_chars(df: pd.DataFrame) -> pd.Series[float]:
    return df["reply_chars"].astype("float64").where(df["status"] == "ok")


METRICS: tuple[Metric, ...] = (
    flag_rate(
        "terse_rate", "terse", "share of trials whose every reply had at most 200 characters",
        paired=40,
    ),
    Metric(
        "reply_chars_mean", "mean characters of reply text per trial", _reply_chars,
        "value `reply_chars`, `ok` trials, mean", kind="value", reduce=_mean,
        direction="none", unit="number", flag="reply_chars",
    ),
)  # fmt: skip
