"""Choosing scenarios by tag: ``run --scenarios TAG[,TAG]`` and the per-tag counts."""

from __future__ import annotations

from pathlib import Path

import pytest

from toolbench.cli.app import run_cli
from toolbench.scenarios.loader import load_scenarios, select_scenarios, tag_counts

SUITE = """\
scenarios:
  - {id: a, tags: [demo, single], tools: [{name: f}], messages: [{role: user, content: hi}],
     expect: {calls: [{name: f}]}}
  - {id: b, tags: [demo], tools: [{name: f}], messages: [{role: user, content: hi}],
     expect: {no_call: true}}
  - {id: c, tags: [other], tools: [{name: f}], messages: [{role: user, content: hi}],
     expect: {no_call: true}}
"""


@pytest.fixture
def suite(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "s.yaml").write_text(SUITE)
    monkeypatch.setenv("TOOLBENCH_SCENARIOS", str(tmp_path))
    return tmp_path


def test_tags_select_the_union_of_their_scenarios(suite: Path) -> None:
    assert [sc.id for sc in select_scenarios(["demo"])] == ["a", "b"]
    assert [sc.id for sc in select_scenarios(["other", "demo"])] == ["c", "a", "b"]
    assert [sc.id for sc in select_scenarios(["demo", "a"])] == ["a", "b"]


def test_tag_counts_most_used_first(suite: Path) -> None:
    assert tag_counts(load_scenarios()) == {"demo": 2, "other": 1, "single": 1}


def test_an_unknown_tag_is_one_line_with_a_suggestion(
    suite: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run_cli(["run", "--quiet", "--record", "none", "--scenarios", "dem"]) == 2
    assert capsys.readouterr().err == (
        "error: unknown scenario or tag 'dem'. Did you mean 'demo'? Tags: demo, other, "
        "single; suites: (none); scenario ids: toolbench scenarios list\n"
    )


def test_the_bundled_suite_selects_each_theme_by_tag() -> None:
    for tag in ("reasoning", "tool-error", "long-conversation", "tools-30plus", "recorded"):
        picked = select_scenarios([tag])
        assert picked and all(tag in sc.tags for sc in picked)
        assert len(picked) == tag_counts(load_scenarios())[tag]
