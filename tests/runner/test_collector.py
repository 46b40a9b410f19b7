"""The garbage collector's settings while a run's trials execute
(:mod:`toolbench.runner.collector`): raised for the run, the caller's given back."""

from __future__ import annotations

import gc
from pathlib import Path
from typing import Any

import pytest

from tests.runner.conftest import GOOD_CALL, SCENARIO, run_fake
from toolbench.providers.fake import FakeServer, by_last_user
from toolbench.runner import collector, drive
from toolbench.scoring import score_trial


def test_the_block_collects_less_often_and_gives_back_the_caller_s_settings() -> None:
    before = gc.get_threshold()
    with collector.run_collector():
        inside = gc.get_threshold()
        assert gc.get_freeze_count() > 0  # what existed is out of the collector's sight
    assert inside == (collector.YOUNG_THRESHOLD, collector.MIDDLE_THRESHOLD, before[2])
    assert gc.get_threshold() == before
    assert gc.get_freeze_count() == 0


def test_settings_are_given_back_when_the_block_raises() -> None:
    before = gc.get_threshold()
    with pytest.raises(RuntimeError), collector.run_collector():
        raise RuntimeError("a run that fails")
    assert gc.get_threshold() == before
    assert gc.get_freeze_count() == 0


@pytest.mark.usefixtures("openai_key")
def test_a_run_s_trials_are_scored_under_the_run_s_settings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[tuple[int, int, int]] = []

    def score(*args: Any, **kwargs: Any) -> Any:
        seen.append(gc.get_threshold())
        return score_trial(*args, **kwargs)

    monkeypatch.setattr(drive, "score_trial", score)
    before = gc.get_threshold()
    scenario_file = tmp_path / "mini.yaml"
    scenario_file.write_text(SCENARIO, encoding="utf-8")
    replies = {"Weather in Paris?": GOOD_CALL, "Tell me a joke.": "No."}
    with FakeServer(by_last_user(replies)) as fake:
        assert run_fake(fake, tmp_path, scenario_file) == 0
    assert seen == [(collector.YOUNG_THRESHOLD, collector.MIDDLE_THRESHOLD, before[2])] * 2
    assert gc.get_threshold() == before
