"""The reports' streaming section, the gate on streaming metrics, stream_consistency."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.report.synthetic_runs import HOSTILE, make_trial, write_run

from toolbench.report.gate import GateConfig, evaluate
from toolbench.report.html import render_html
from toolbench.report.markdown import markdown_summary
from toolbench.report.metrics import aggregate, cell_map, load_table
from toolbench.results import ScoreValue, TrialResult

MODEL = "m<b>|x"  # markup and a table separator in a cell label


def _streamed(sid: str, sample: int, leak: bool, ttft: float, **kw: object) -> TrialResult:
    t = make_trial(MODEL, "xml:stream", sid, sample, **kw)  # type: ignore[arg-type]
    measured = dict(
        display="careful", ttft_ms=ttft, first_call_byte_ms=ttft + 10,
        call_complete_ms=ttft + 50, tokens_per_s=40.0, stream_leak=leak,
        leaked_chars=12 if leak else 0, holdback_ms=5.0, stream_error=False,
    )  # fmt: skip
    assert t.scores is not None
    t.scores.values = {k: ScoreValue(value=v) for k, v in measured.items()}
    return t


@pytest.fixture
def run(tmp_path: Path) -> Path:
    trials = [
        make_trial(MODEL, "xml", "weather_basic", 0),
        make_trial(MODEL, "xml", "weather_basic", 1),
        _streamed("weather_basic", 0, False, 100.0),
        # Sample 1 streamed parsed another call than its twin: not consistent.
        _streamed("weather_basic", 1, True, 300.0, reply=HOSTILE),
    ]
    trials[3].turns[0].parsed.calls[0].arguments = {"city": "Lyon"}
    return write_run(tmp_path / "run", trials)


def test_streaming_metrics_per_cell(run: Path) -> None:
    cell = cell_map(aggregate(load_table(run).df))[(MODEL, "xml:stream")]
    assert cell.values["ttft_p50"] == pytest.approx(0.2)
    assert cell.values["call_complete_p50"] == pytest.approx(0.25)
    assert cell.counts["stream_leak_rate"] == (1, 2)
    assert cell.values["leaked_chars_mean"] == 6.0
    assert cell.counts["stream_consistency"] == (1, 2)
    plain = cell_map(aggregate(load_table(run).df))[(MODEL, "xml")]
    assert plain.values["ttft_p50"] is None and plain.counts["stream_consistency"] == (0, 0)


def test_gate_on_streaming_metrics(run: Path) -> None:
    cells = aggregate(load_table(run).df)
    cfg = GateConfig(max={"stream_leak_rate": 0.0}, min={"stream_consistency": 0.9}, per_cell=True)
    failed = {(v.metric, v.value) for v in evaluate(cfg, cells)}
    assert failed == {("stream_leak_rate", 0.5), ("stream_consistency", 0.5)}


def test_html_streaming_section_is_escaped(run: Path) -> None:
    page = render_html(load_table(run))
    assert 'id="streaming"' in page
    assert "m&lt;b&gt;|x / xml:stream" in page
    assert "<b>|x" not in page and "<script>" not in page
    assert 'alt="heatmap of stream_leak_rate"' in page
    assert 'alt="distribution of time to first token"' in page
    assert "0.12s / 0.20s / 0.28s" in page  # p10 / p50 / p90 of 0.1 s and 0.3 s
    # the drill-down shows a trial's named values, the streaming scorer's among them
    assert "&#34;ttft_ms&#34;: 300.0," in page  # a value with no reason: shown bare


def test_markdown_streaming_section_is_escaped(run: Path) -> None:
    text = markdown_summary(load_table(run))
    assert "### Streaming (display policy: careful; p10 / p50 / p90)" in text
    row = next(
        line for line in text.splitlines() if line.startswith("| m\\<b\\>\\|x / xml:stream | 2")
    )
    assert "50.0%" in row


def test_no_streaming_section_without_streamed_trials(tmp_path: Path) -> None:
    run = write_run(tmp_path / "plain", [make_trial(MODEL, "xml", "weather_basic")])
    assert 'id="streaming"' not in render_html(load_table(run))
    assert "Streaming" not in markdown_summary(load_table(run))
