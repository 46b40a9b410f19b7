"""A trial's cassette under ``--record new``: what is recorded already replays."""

from __future__ import annotations

from pathlib import Path

from tests.runner.conftest import GOOD_CALL
from tests.support.fake_openai import FakeOpenAI


def test_record_new_replays_a_trial_whose_cassette_matches(
    fake: FakeOpenAI, tmp_path: Path, scenario_file: Path
) -> None:
    """``--record new`` over a directory that already holds a trial's cassette asks the
    server nothing for it and leaves the file's bytes as they were."""
    from tests.runner.conftest import run_fake, trials_by_id

    fake.enqueue(GOOD_CALL, "ok")
    assert run_fake(fake, tmp_path, scenario_file, "--record", "new", out="first") == 0
    asked = len(fake.received)
    assert asked >= 1
    before = {p: p.read_bytes() for p in (tmp_path / "cas").rglob("*.json")}
    assert before
    fake.enqueue("a different reply the second run must not see")
    assert run_fake(fake, tmp_path, scenario_file, "--record", "new", out="second") == 0
    assert len(fake.received) == asked
    assert {p: p.read_bytes() for p in (tmp_path / "cas").rglob("*.json")} == before
    first, second = trials_by_id(tmp_path / "first"), trials_by_id(tmp_path / "second")
    assert {k: v.scores for k, v in second.items()} == {k: v.scores for k, v in first.items()}
