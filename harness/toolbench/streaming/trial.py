"""What a streamed trial measured: its :class:`~toolbench.results.StreamStats` and its
``stream.*`` codes, from the stream records of its turns.

:mod:`toolbench.runner.trial` drives a streamed trial (``xml:stream``) through its SSE
cassette (:mod:`toolbench.streaming.sse`) and calls :func:`measure` after scoring;
``rescore`` calls it after re-scoring. Driving a trial is the runner's (its spec, seed
and parameter record live there); this layer only knows streams, so it imports nothing
from the runner.
"""

from __future__ import annotations

from collections.abc import Sequence

from toolbench.formats.base import Format
from toolbench.results import TrialResult
from toolbench.streaming.stats import DisplayPolicy, summarize
from toolbench.tools import ToolDef


def measure(
    fmt: Format, base: TrialResult, tools: Sequence[ToolDef], display: DisplayPolicy | None = None
) -> None:
    """Set the trial's :class:`~toolbench.results.StreamStats` from its turns (under
    ``display``, else the policy it ran with) and add its ``stream.*`` codes to its
    scores. ``run`` calls it after scoring; ``rescore`` after re-scoring (``--display``)."""
    if base.settings is not None and display is not None:
        base.settings = base.settings.model_copy(update={"display": display})
    policy: DisplayPolicy = (
        display or (base.settings.display if base.settings else None) or "careful"
    )
    base.stream = summarize(fmt, base.turns, policy, tools)
    if base.scores is not None:
        for t in base.turns:
            for issue in t.stream.issues if t.stream else ():
                base.scores.errors.append(issue.code)
                base.scores.reasons.append(issue.message)
