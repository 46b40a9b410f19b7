"""Streaming metrics: timing from recorded chunk offsets, what a streaming user saw, and
whether streaming changes the calls.

Read from each streamed trial's named values of the streaming scorer
(:mod:`toolbench.scoring.stream`, ``scores.values``), projected onto the trial table as
:data:`STREAM_COLUMNS` (NaN / NA for trials that were not streamed, which every streaming
metric leaves out). Times are shown in seconds.

``stream_consistency`` is a run-level comparison: a streamed trial is paired with the
non-streamed trial of the same model, format (without ``stream``), scenario and sample;
the pair agrees when both parsed the same calls (names and arguments, every turn). Its
rate counts the pairs where both trials exist and are ``ok``; a streamed trial without
its twin is left out.
"""

from __future__ import annotations

import json
import math
from typing import TYPE_CHECKING, Any

from toolbench.metrics.latency import quantile
from toolbench.metrics.metric_registry import Metric, PerTrial
from toolbench.named_values import named_value
from toolbench.stream_option import split_stream

if TYPE_CHECKING:
    import pandas as pd

STREAM_COLUMNS: tuple[str, ...] = (
    "ttft_s", "first_call_byte_s", "call_complete_s", "tokens_per_s",
    "stream_leak", "leaked_chars", "holdback_s", "stream_error", "calls_sig",
)  # fmt: skip
"""Trial-table columns of streamed trials (``calls_sig``: the parsed calls, as JSON)."""

_SECONDS = {"ttft_s": "ttft_ms", "first_call_byte_s": "first_call_byte_ms",
            "call_complete_s": "call_complete_ms", "holdback_s": "holdback_ms"}  # fmt: skip


def _seconds(value: Any) -> float:
    return float(value) / 1000 if isinstance(value, int | float) else math.nan


def stream_row(d: dict[str, Any]) -> tuple[Any, ...]:
    """The streaming columns of one raw results line (empty values when not streamed)."""
    scores = d.get("scores")
    values = scores.get("values") if isinstance(scores, dict) else None
    if not isinstance(values, dict) or "ttft_ms" not in values:
        return (math.nan,) * 4 + (None, math.nan, math.nan, None, calls_signature(d))
    assert isinstance(scores, dict)
    tps = named_value(scores, "tokens_per_s")
    chars = named_value(scores, "leaked_chars")
    leak = named_value(scores, "stream_leak")
    return (
        *(
            _seconds(named_value(scores, _SECONDS[c]))
            for c in ("ttft_s", "first_call_byte_s", "call_complete_s")
        ),
        float(tps) if isinstance(tps, int | float) else math.nan,
        leak if isinstance(leak, bool) else None,
        float(chars) if isinstance(chars, int | float) else math.nan,
        _seconds(named_value(scores, "holdback_ms")),
        named_value(scores, "stream_error") is True,
        calls_signature(d),
    )


def calls_signature(d: dict[str, Any]) -> str:
    """The parsed calls of every turn (name and arguments), as canonical JSON."""
    turns = d.get("turns") if isinstance(d.get("turns"), list) else []
    sig = []
    for t in turns or ():
        parsed = t.get("parsed") if isinstance(t, dict) else None
        calls = parsed.get("calls") if isinstance(parsed, dict) else None
        sig.append([
            [c.get("name"), c.get("arguments")] for c in calls or () if isinstance(c, dict)
        ])  # fmt: skip
    return json.dumps(sig, sort_keys=True, ensure_ascii=False)


def stream_types(df: pd.DataFrame) -> None:
    """Give the streaming columns their types (in place)."""
    for col in ("ttft_s", "first_call_byte_s", "call_complete_s", "tokens_per_s",
                "leaked_chars", "holdback_s"):  # fmt: skip
        df[col] = df[col].astype("float64")
    for col in ("stream_leak", "stream_error"):
        df[col] = df[col].astype("boolean")
    df["calls_sig"] = df["calls_sig"].astype("string")


def _ok(column: str) -> PerTrial:
    def per_trial(df: pd.DataFrame) -> pd.Series[float]:
        return df[column].astype("Float64").astype("float64").where(df["status"] == "ok")

    return per_trial


def _consistency(df: pd.DataFrame) -> pd.Series[float]:
    """1/0 for a streamed ``ok`` trial whose non-streamed twin is ``ok``; NaN otherwise."""
    import pandas as pd  # slow to import: loaded only when a trial table is built

    out = pd.Series(math.nan, index=df.index, dtype="float64")
    ok = df[df["status"] == "ok"]
    if ok.empty:
        return out
    base = ok["format"].map(lambda f: split_stream(f)[0])
    streamed = ok["format"] != base
    if not streamed.any():
        return out
    plain = ok[~streamed]
    twins = {
        (m, f, s, int(k)): sig
        for m, f, s, k, sig in zip(
            plain["model"], plain["format"], plain["scenario_id"], plain["sample"],
            plain["calls_sig"], strict=True,
        )
    }  # fmt: skip
    for idx, row in ok[streamed].iterrows():
        key = (row["model"], base[idx], row["scenario_id"], int(row["sample"]))
        if key in twins:
            out[idx] = 1.0 if twins[key] == row["calls_sig"] else 0.0
    return out


def _mean(s: pd.Series[float]) -> float | None:
    v = s.mean()
    return None if v is None or math.isnan(v) else float(v)


def _seconds_p50(name: str, column: str, what: str) -> Metric:
    return Metric(
        name, f"median {what} of streamed trials, in seconds (from recorded chunk offsets)",
        _ok(column), f"value `{_SECONDS[column]}`, streamed `ok` trials, median",
        kind="value", reduce=quantile(0.5), direction="lower", unit="seconds",
    )  # fmt: skip


METRICS: tuple[Metric, ...] = (
    _seconds_p50("ttft_p50", "ttft_s", "time to first token"),
    _seconds_p50("first_call_byte_p50", "first_call_byte_s", "time to the first byte of a call"),
    _seconds_p50("call_complete_p50", "call_complete_s", "time until the first call was complete"),
    Metric(
        "tokens_per_s_p50",
        "median output tokens per second after the first token, streamed trials",
        _ok("tokens_per_s"), "value `tokens_per_s`, streamed `ok` trials with usage, median",
        kind="value", reduce=quantile(0.5), direction="higher", unit="number",
    ),
    Metric(
        "stream_leak_rate",
        "share of streamed text-format trials whose displayed text showed raw markup or part "
        "of a call before the call was recognised (under the trial's display policy)",
        _ok("stream_leak"), "value `stream_leak`, streamed `ok` text-format trials",
        direction="lower",
    ),
    Metric(
        "leaked_chars_mean",
        "mean characters of raw markup or call payload shown to a streaming user per trial",
        _ok("leaked_chars"), "value `leaked_chars`, streamed `ok` text-format trials, mean",
        kind="value", reduce=_mean, direction="lower", unit="number",
    ),
    _seconds_p50("holdback_p50", "holdback_s", "time text was held back by the display policy"),
    Metric(
        "stream_error_rate",
        "share of streamed trials whose delta sequence was broken (a `stream.*` code)",
        _ok("stream_error"), "value `stream_error`, streamed `ok` trials",
        direction="lower",
    ),
    Metric(
        "stream_consistency",
        "share of streamed trials that parsed the same calls as their non-streamed twin "
        "(same model, format without stream, scenario and sample)",
        _consistency, "`calls` of every turn, pairs of `ok` streamed and non-streamed trials",
    ),
)  # fmt: skip
