"""toolbench's own scorers, listed once, in the order they run (and their problems are
listed): one entry point (``builtin`` in the ``toolbench.scorers`` group) names this
tuple, and plugins run after it or replace one of its scorers by name
(:mod:`toolbench.scoring.scorer`). ``retry`` reads the values of ``calls``, so it comes
after it."""

from __future__ import annotations

from toolbench.scoring import (
    accuracy,
    fallback,
    leakage,
    loop,
    parsing,
    retry,
    stop,
    stream,
)
from toolbench.scoring import (
    arg_schema as schema,
)
from toolbench.scoring.scorer import Scorer

SCORERS: tuple[Scorer, ...] = (
    parsing.SCORER,
    accuracy.SCORER,
    schema.SCORER,
    stop.SCORER,
    leakage.SCORER,
    retry.SCORER,
    fallback.SCORER,
    stream.SCORER,
    loop.SCORER,
)
