"""A streamed trial's measurements, from its turns' recorded deltas and offsets.

Timing: time to first token (first exchange), time to the first call byte and to that
call's completion (in the exchange that made the first call), output tokens per second
after the first token. Text formats: the deltas go through the format's incremental
reader and display policy (:func:`toolbench.formats.incremental.observe_stream`), which
says whether raw markup reached the displayed text (``stream_leak``), how much
(``leaked_chars``) and how long text was held back (``holdback_ms``). Pure: rescoring a
stored run under another ``--display`` policy recomputes them from the stored deltas.
"""

from __future__ import annotations

from collections.abc import Sequence

from toolbench.formats.base import Format
from toolbench.formats.incremental import DisplayPolicy, StreamView, TimedChunk, observe_stream
from toolbench.formats.streamed import Streamed
from toolbench.results import StreamStats, TurnRecord
from toolbench.tools import ToolDef

__all__ = ["DisplayPolicy", "summarize"]


def _observe(
    fmt: Format, turn: TurnRecord, policy: DisplayPolicy, tools: Sequence[ToolDef] | None
) -> StreamView | None:
    """The format's streamed view of this turn (None when its reader failed)."""
    assert turn.stream is not None
    chunks = [TimedChunk(d.offset_ms, d.text) for d in turn.stream.deltas]
    try:
        return observe_stream(fmt, chunks, policy=policy, tools=tools)
    except Exception:  # a reader's bug must not cost the trial its other figures
        return None


def summarize(
    fmt: Format,
    turns: Sequence[TurnRecord],
    policy: DisplayPolicy = "careful",
    tools: Sequence[ToolDef] | None = None,
) -> StreamStats:
    """The trial's :class:`StreamStats` (``fmt`` is the streamed format or its inner one)."""
    inner = fmt.inner if isinstance(fmt, Streamed) else fmt
    native = inner.requirements.native_tools
    stats = StreamStats(display=policy)
    streamed = [t for t in turns if t.stream is not None]
    if not streamed:
        return stats
    first = streamed[0].stream
    assert first is not None
    stats.ttft_ms = first.first_token_ms
    leaks: list[bool] = []
    leaked = 0
    held = 0.0
    tokens = 0
    seconds = 0.0
    for t in streamed:
        st = t.stream
        assert st is not None
        stats.errors.extend(i.code for i in st.issues)
        call_at, done_at = st.first_call_ms, st.call_complete_ms
        if not native:
            view = _observe(inner, t, policy, tools)
            call_at = done_at = None
            if view is not None:
                leaks.append(bool(view.stream_leak))
                leaked += int(view.leaked_chars or 0)
                held += float(view.holdback_ms or 0.0)
                call_at, done_at = view.first_call_byte_ms, view.call_complete_ms
        if stats.first_call_byte_ms is None and call_at is not None:
            stats.first_call_byte_ms, stats.call_complete_ms = call_at, done_at
        if t.completion_tokens and st.first_token_ms is not None and st.last_ms is not None:
            span = (st.last_ms - st.first_token_ms) / 1000
            if span > 0:
                tokens += t.completion_tokens
                seconds += span
    if seconds > 0:
        stats.tokens_per_s = round(tokens / seconds, 3)
    if leaks:
        stats.stream_leak, stats.leaked_chars, stats.holdback_ms = (
            any(leaks),
            leaked,
            round(held, 3),
        )
    return stats
