"""The streamed side of a trial: its SSE cassette, streamed exchanges, measurements.

:mod:`toolbench.runner.trial` hands a trial whose format is streamed (``xml:stream``)
here; the conversation engine, scoring and the trial record are the same as for any
trial. Each turn keeps its stream record (deltas and offsets) and the trial its
:class:`~toolbench.results.StreamStats`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from toolbench.engine import Exchange, converse
from toolbench.formats.base import Format, RenderedRequest
from toolbench.providers.base import CompletionRequest
from toolbench.results import TrialResult, TurnRecord
from toolbench.streaming.sse import use_sse_cassette
from toolbench.streaming.stats import DisplayPolicy, summarize
from toolbench.tools import ToolDef

if TYPE_CHECKING:
    from toolbench.runner.trial import EndpointFor, TrialSpec


async def drive_streamed(
    spec: TrialSpec, endpoint_for: EndpointFor, base: TrialResult, notes: list[str]
) -> list[TurnRecord]:
    """Run a streamed trial's conversation through its SSE cassette, each turn sent by
    the provider kind's :meth:`~toolbench.providers.base.ModelAPI.stream`."""
    from toolbench.runner.trial import BASE_SEED, merge_params, settings_of

    seed = BASE_SEED + spec.sample
    with use_sse_cassette(spec.cassette, spec.record) as tc:
        notes.extend(tc.notes)
        api, endpoint = await endpoint_for(spec.model, spec.fmt)

        async def send(req: RenderedRequest, turn: int) -> Exchange:
            before = tc.played()
            request = CompletionRequest(endpoint, req, seed, tc, base.attempts, turn)
            done, record = await api.stream(request)
            merge_params(base, done.params)
            latency = tc.latency(turn, done.latency_s, replayed=tc.played() > before)
            return Exchange(
                reply=done.reply, request=done.request, latency_s=latency,
                prompt_tokens=done.prompt_tokens, completion_tokens=done.completion_tokens,
                cost=done.cost, stream=record,
            )  # fmt: skip

        try:
            return await converse(spec.fmt, spec.scenario, settings_of(spec), send)
        finally:
            notes.extend(n for n in tc.notes if n not in notes)


def finish_streamed(spec: TrialSpec, base: TrialResult) -> None:
    """Measure a scored streamed trial and add its ``stream.*`` codes to its errors."""
    measure(spec.fmt, base, spec.scenario.tools)


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
