from __future__ import annotations

from pathlib import Path

import pytest

from toolbench.errors import UserError
from toolbench.report.metrics import CellStats, load_table
from toolbench.report.recommend import emit_yaml, rank_key, recommend, render


def cell(fmt: str, acc: float | None, leak: float, stop: float, tokens: float) -> CellStats:
    return CellStats(
        "m",
        fmt,
        {
            "call_accuracy": acc,
            "leak_rate": leak,
            "stop_compliance": stop,
            "prompt_tokens_mean": tokens,
        },
    )


@pytest.mark.parametrize(
    ("a", "b", "winner"),
    [
        (cell("a", 0.9, 0.5, 0.1, 900), cell("b", 0.8, 0.0, 1.0, 10), "a"),  # accuracy first
        (cell("a", 0.9, 0.2, 1.0, 10), cell("b", 0.9, 0.1, 0.1, 900), "b"),  # then leakage
        (cell("a", 0.9, 0.1, 0.8, 10), cell("b", 0.9, 0.1, 0.9, 900), "b"),  # then stop
        (cell("a", 0.9, 0.1, 0.9, 200), cell("b", 0.9, 0.1, 0.9, 100), "b"),  # then tokens
        (cell("b", 0.9, 0.1, 0.9, 100), cell("a", 0.9, 0.1, 0.9, 100), "a"),  # then name
        (cell("a", None, 0.0, 1.0, 10), cell("b", 0.1, 0.9, 0.0, 900), "b"),  # n/a ranks last
    ],
)
def test_rule_tie_breaks(a: CellStats, b: CellStats, winner: str) -> None:
    assert min([a, b], key=rank_key).format == winner


def test_recommend_on_run(run_dir: Path) -> None:
    recs = {r.model: r for r in recommend(load_table(run_dir))}
    assert recs["m-beta"].winner.format == "prompt-json"
    assert recs["m-beta"].decided_by == "call_accuracy"
    # 2 discordant pairs: not significant.
    assert recs["m-beta"].significant is False
    assert recs["m-alpha"].winner.format == "xml"  # tie on accuracy; fewer prompt tokens
    assert recs["m-alpha"].decided_by == "prompt_tokens_mean"
    # Neither leader beats its runner-up significantly: both are ties, none a recommendation.
    assert recs["m-beta"].outcome == recs["m-alpha"].outcome == "tie"
    assert recs["m-alpha"].tie_broken_by == "prompt_tokens_mean"
    text = render(list(recs.values()))
    assert (
        "m-beta: tie between prompt-json, xml (no significant call_accuracy difference; "
        "broken by call_accuracy: prompt-json first)"
    ) in text
    assert (
        "m-alpha: tie between xml, prompt-json (no significant call_accuracy difference; "
        "broken by prompt_tokens_mean: xml first)"
    ) in text
    assert "warning: prompt-json's call-accuracy advantage over xml is not significant" in text
    assert "warning: xml and prompt-json tie on call accuracy (McNemar p=1, 3 paired" in text
    # Each warning says what the pairs could detect (Connor's formula, alpha 0.05, power 0.8).
    from toolbench.report.paired_stats import detectable_difference

    d4, d3 = detectable_difference(4, 2 / 4), detectable_difference(3, 0.0)
    assert d4 is not None and d3 is None
    assert (
        f"  at 4 paired trials the suite could detect a call-accuracy difference of "
        f"{100 * d4:.1f} points or more (alpha 0.05, power 0.8)"
    ) in text
    assert "  3 paired trials are too few to detect even a 100-point difference: more" in text


def test_emit_yaml_refused_without_a_recommendation(run_dir: Path) -> None:
    """Both models tie on the standard run: there is no format to fix for either."""
    with pytest.raises(UserError, match="no model has a recommendation"):
        emit_yaml(recommend(load_table(run_dir)))
