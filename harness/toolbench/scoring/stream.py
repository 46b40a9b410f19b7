"""The streaming scorer: a streamed trial's measurements, from its turns' recorded deltas
and offsets, as named values.

Timing: time to first token (``ttft_ms``, first exchange), time to the first call byte
and to that call's completion (``first_call_byte_ms``, ``call_complete_ms``, in the
exchange that made the first call), output tokens per second after the first token
(``tokens_per_s``). Text formats: the deltas go through the format's incremental reader
and display policy (:func:`toolbench.formats.observe.observe_stream`), which says
whether raw markup reached the displayed text (``stream_leak``), how much
(``leaked_chars``) and how long text was held back (``holdback_ms``); native trials have
None for these. ``stream_error``: some exchange's delta sequence was broken (its
``stream.*`` codes are added to the trial's errors); ``display``: the policy measured
under. Pure: rescoring a stored run under another ``--display`` policy recomputes them
from the stored deltas. A trial that was not streamed gets none of these values.
"""

from __future__ import annotations

from collections.abc import Sequence

from toolbench.formats.base import Format
from toolbench.formats.observe import DisplayPolicy, StreamView, observe_stream
from toolbench.formats.stream_spec import Streamed, is_streamed
from toolbench.results import TurnRecord
from toolbench.scoring.scorer import Scored, Scorer, TrialInput
from toolbench.tools import ToolDef
from toolbench.trial_scores import ScoreValue, Value, ValueKind

__all__ = ["SCORER", "DisplayPolicy", "measure"]

VALUES: dict[str, ValueKind] = {
    "display": "label",
    "ttft_ms": "number",
    "first_call_byte_ms": "number",
    "call_complete_ms": "number",
    "tokens_per_s": "number",
    "stream_leak": "boolean",
    "leaked_chars": "number",
    "holdback_ms": "number",
    "stream_error": "boolean",
}
"""The values, in the order they are stored."""


def _observe(
    fmt: Format, turn: TurnRecord, policy: DisplayPolicy, tools: Sequence[ToolDef] | None
) -> StreamView | None:
    """The format's streamed view of this turn (None when its reader failed)."""
    assert turn.stream is not None
    try:  # the stored deltas read as they are: no copy of each
        return observe_stream(fmt, turn.stream.deltas, policy=policy, tools=tools)
    except Exception:  # a reader's bug must not cost the trial its other figures
        return None


def measure(
    fmt: Format,
    turns: Sequence[TurnRecord],
    policy: DisplayPolicy = "careful",
    tools: Sequence[ToolDef] | None = None,
) -> dict[str, Value]:
    """The trial's measurements by value name (``fmt`` is the streamed format or its
    inner one); None where not applicable."""
    inner = fmt.inner if isinstance(fmt, Streamed) else fmt
    native = inner.requirements.native_tools
    out: dict[str, Value] = dict.fromkeys(VALUES)
    out["display"] = policy
    out["stream_error"] = False
    streamed = [t for t in turns if t.stream is not None]
    if not streamed:
        return out
    first = streamed[0].stream
    assert first is not None
    out["ttft_ms"] = first.first_token_ms
    leaks: list[bool] = []
    leaked = 0
    held = 0.0
    tokens = 0
    seconds = 0.0
    for t in streamed:
        st = t.stream
        assert st is not None
        if st.issues:
            out["stream_error"] = True
        call_at, done_at = st.first_call_ms, st.call_complete_ms
        if not native:
            view = _observe(inner, t, policy, tools)
            call_at = done_at = None
            if view is not None:
                leaks.append(bool(view.stream_leak))
                leaked += int(view.leaked_chars or 0)
                held += float(view.holdback_ms or 0.0)
                call_at, done_at = view.first_call_byte_ms, view.call_complete_ms
        if out["first_call_byte_ms"] is None and call_at is not None:
            out["first_call_byte_ms"], out["call_complete_ms"] = call_at, done_at
        if t.completion_tokens and st.first_token_ms is not None and st.last_ms is not None:
            span = (st.last_ms - st.first_token_ms) / 1000
            if span > 0:
                tokens += t.completion_tokens
                seconds += span
    if seconds > 0:
        out["tokens_per_s"] = round(tokens / seconds, 3)
    if leaks:
        out["stream_leak"], out["leaked_chars"], out["holdback_ms"] = (
            any(leaks),
            leaked,
            round(held, 3),
        )
    return out


def _score(inp: TrialInput) -> Scored:
    if not is_streamed(inp.fmt):
        return Scored()
    got = measure(inp.fmt, inp.turns, inp.display, inp.scenario.all_tools())
    problems = [
        (issue.code, issue.message)
        for t in inp.turns
        for issue in (t.stream.issues if t.stream else ())
    ]
    reasons = {"stream_error": "; ".join(code for code, _ in problems) or None}
    values = {name: ScoreValue(value=v, reason=reasons.get(name)) for name, v in got.items()}
    return Scored(values, problems)


SCORER = Scorer(
    "stream",
    VALUES,
    _score,
    "a streamed trial's timings from the recorded chunk offsets, and what its user saw",
)
