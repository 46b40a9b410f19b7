from __future__ import annotations

import re
from pathlib import Path

import pytest
from synthetic_runs import HOSTILE, make_trial, write_run

from toolbench.report import html as html_mod
from toolbench.report import render_report, write_report
from toolbench.report.baseline import diff, is_regression
from toolbench.report.markdown import markdown_summary
from toolbench.report.metrics import aggregate, load_table


def test_html_is_self_contained_and_escapes_model_output(run_dir: Path, tmp_path: Path) -> None:
    out = write_report(run_dir, tmp_path / "out" / "r1.html")
    assert out == tmp_path / "out" / "r1.html"
    page = out.read_text(encoding="utf-8")
    # The page itself carries no script, and the hostile reply appears only escaped.
    assert "<script" not in page.lower()
    assert "<img src=x" not in page
    assert "&lt;script&gt;window.__pwned=1;" in page
    assert "&lt;/textarea&gt;&lt;/pre&gt;&lt;script&gt;" in page
    # No external asset: every src/href is a data URI or an in-page anchor.
    for ref in re.findall(r'(?:src|href)="([^"]*)"', page):
        assert ref.startswith(("data:", "#")), ref
    assert page.count("data:image/png;base64,") >= 3
    for section in ("Summary per model", "Failure taxonomy", "Drill-down", "call.wrong_tool"):
        assert section in page
    assert "the expected tool was not the one called" in page  # codes.DESCRIPTIONS
    assert "HTTP 503 after 3 retries" in page  # the infra error's detail


def test_html_baseline_marks_regressions(run_dir: Path, regressed_run: Path) -> None:
    page = render_report(regressed_run, "html", baseline=run_dir)
    assert "Against baseline r1: 2 regression(s), 2 trial(s) changed outcome" in page
    assert "-50.0 pp ▼" in page


def test_drill_down_is_capped_failures_first(
    run_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(html_mod, "DETAIL_LIMIT", 3)
    page = render_report(run_dir, "html")
    assert "Showing 3 of 24 trials in full" in page
    assert "21 left out" in page
    # The 2 failures come first, then the infra error; no pass is detailed.
    assert page.count('class="trial fail"') == 2
    assert page.count('class="trial infra_error"') == 1
    assert 'class="trial pass"' not in page


def test_baseline_diff_changed_trials(run_dir: Path, regressed_run: Path) -> None:
    d = diff(load_table(regressed_run), load_table(run_dir))
    assert d.changed[["scenario_id", "sample", "outcome_base", "outcome_new"]].values.tolist() == [
        ["weather_basic", 0, "pass", "fail"],
        ["weather_basic", 1, "pass", "fail"],
    ]
    assert (d.only_new, d.only_base) == (0, 0)


@pytest.mark.parametrize(
    ("metric", "value", "base", "regressed"),
    [
        ("call_accuracy", 0.895, 0.9, False),  # within 1 pp
        ("call_accuracy", 0.88, 0.9, True),
        ("leak_rate", 0.12, 0.1, True),
        ("latency_p50", 1.05, 1.0, False),  # within 10%
        ("latency_p50", 1.2, 1.0, True),
        ("n_trials", 1.0, 100.0, False),
        ("call_accuracy", None, 0.9, False),
    ],
)
def test_is_regression(metric: str, value: float | None, base: float, regressed: bool) -> None:
    assert is_regression(metric, value, base) is regressed


def test_markdown_summary(run_dir: Path, regressed_run: Path) -> None:
    md = markdown_summary(
        load_table(regressed_run), diff(load_table(regressed_run), load_table(run_dir))
    )
    assert md.startswith("## toolbench run `r2`\n\n24 trials: 19 passed, 4 failed, 1 not scored")
    # Every rate: value, Wilson 95% interval, denominator (2 of 4 calls right).
    assert "| m-alpha / prompt-json | 50.0% [15.0, 85.0] n=4 (-50.0 pp ⚠) |" in md
    assert "- m-alpha / prompt-json: call_accuracy 100.0% → 50.0% (-50.0 pp)" in md
    assert "weather\\_basic #0: pass → fail" in md


def test_markdown_escapes_names(tmp_path: Path) -> None:
    run = write_run(tmp_path / "r", [make_trial("evil|<b>model", "xml", "s1", reply=HOSTILE)])
    md = render_report(run, "md")
    assert "evil\\|\\<b\\>model" in md
    assert "<b>" not in md


def test_unknown_latency_shows_as_na(tmp_path: Path) -> None:
    """A replayed cassette with no recorded time has latency None: shown as n/a, and
    left out of the percentiles rather than counted as zero."""
    timed = make_trial("m", "xml", "weather", 0, latency=2.0)
    untimed = make_trial("m", "xml", "weather", 1, latency=4.0)
    untimed.latency_s = None
    for turn in untimed.turns:
        turn.latency_s = None
    run = write_run(tmp_path / "run", [timed, untimed])
    page = render_report(run)
    assert "n/a" in page
    cells = {c.key: c for c in aggregate(load_table(run).df, overall=False)}
    assert cells[("m", "xml")].values["latency_p50"] == 2.0


def test_a_run_of_the_embedded_models_says_what_they_are(tmp_path: Path) -> None:
    """The header says what the run recorded of its models (``run.json``'s
    ``model_notes``), escaped; the report reads nothing else about them."""
    trials = [make_trial(m, "xml", "s1", ok=False) for m in ("local/gemma3-270m", "openai/x")]
    notes = ["local/gemma3-270m: Gemma 3 270M (Q4_K_M), a base model <b>", "not a toolbench fault"]
    page = render_report(write_run(tmp_path / "loc", trials, model_notes=notes), "html")
    header = page[page.index("<header>") : page.index("</header>")]
    assert "local/gemma3-270m: Gemma 3 270M (Q4_K_M), a base model &lt;b&gt;" in header
    assert "not a toolbench fault" in header


def test_an_older_run_of_the_embedded_models_reports_without_the_note(tmp_path: Path) -> None:
    trials = [make_trial("local/gemma3-270m", "xml", "s1", ok=False)]
    page = render_report(write_run(tmp_path / "old", trials), "html")
    assert 'model-notes"' not in page and "Gemma 3 270M" not in page


def test_a_run_without_embedded_models_has_no_model_note(run_dir: Path) -> None:
    page = render_report(run_dir, "html")
    assert 'model-notes"' not in page and "not a toolbench fault" not in page
