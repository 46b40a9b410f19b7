"""A cell whose knob the provider did not take says "not applied" in the reports."""

from __future__ import annotations

from pathlib import Path

from synthetic_runs import make_trial, write_run

from toolbench.report.html import render_html
from toolbench.report.knobs import not_applied, not_applied_lines
from toolbench.report.markdown import markdown_summary
from toolbench.report.metrics import load_table
from toolbench.results import RequestParams

FORCED = "native:tool_choice=required"
WHY = "ollama model qwen3 does not take tool_choice (LiteLLM's supported parameters)"


def _run(tmp_path: Path) -> Path:
    dropped = make_trial("ollama/qwen3", FORCED, "call_0")
    dropped.params = RequestParams(asked={"tool_choice": "required"}, sent=[],
                                   dropped={"tool_choice": WHY})  # fmt: skip
    applied = make_trial("openai/gpt-4o", FORCED, "call_0")
    applied.params = RequestParams(asked={"tool_choice": "required"}, sent=["tool_choice"])
    plain = make_trial("ollama/qwen3", "native", "call_0")
    plain.params = RequestParams(asked={"seed": 1}, dropped={"tool_choice": "not a knob here"})
    return write_run(tmp_path / "r", [dropped, applied, plain])


def test_only_the_cell_whose_knob_was_dropped_is_marked(tmp_path: Path) -> None:
    table = load_table(_run(tmp_path))
    assert not_applied(table) == {("ollama/qwen3", FORCED): {"tool_choice": WHY}}
    (line,) = not_applied_lines(table)
    assert line == f"ollama/qwen3 / {FORCED}: not applied (tool_choice: {WHY})"
    md = markdown_summary(table)
    assert "**Knobs not applied**" in md
    assert "- ollama/qwen3 / native:tool\\_choice=required: not applied (tool\\_choice:" in md
    assert f"ollama/qwen3 / {FORCED}: not applied" in render_html(table)


def test_a_run_without_knobs_has_no_note(tmp_path: Path) -> None:
    run = write_run(tmp_path / "p", [make_trial("m", "xml", "call_0")])
    assert not_applied_lines(load_table(run)) == []
    assert "not applied" not in markdown_summary(load_table(run))
