"""``--max-turns`` through ``toolbench run`` and ``rescore``: the limit the conversation ran
with is the one scoring uses, stored on each trial, and honoured when rescored."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.runner.conftest import MT_SCENARIO, run_fake
from tests.support.fake_openai import FakeOpenAI
from toolbench import codes
from toolbench.results import RunInfo, TrialSettings
from toolbench.runner.rescore import rescore_run
from toolbench.scenarios.loader import load_scenarios
from toolbench.scoring.leakage import installed_markers, marker_texts
from toolbench.store import load_results

CALL = '{"tool": "get_weather", "arguments": {"city": "Lisbon"}}'


pytestmark = pytest.mark.usefixtures("openai_key")


@pytest.fixture
def scen(tmp_path: Path) -> Path:
    path = tmp_path / "mt.yaml"
    path.write_text(MT_SCENARIO, encoding="utf-8")
    return path


def _run(fake: FakeOpenAI, tmp: Path, scen: Path, *extra: str, out: str = "run") -> int:
    return run_fake(fake, tmp, scen, *extra, out=out)


def test_max_turns_flag_raises_the_scenario_limit(
    fake: FakeOpenAI, tmp_path: Path, scen: Path
) -> None:
    fake.enqueue(CALL, CALL, CALL, CALL, "It is 23 degrees.")
    assert _run(fake, tmp_path, scen, "--max-turns", "5") == 0
    (trial,) = load_results(tmp_path / "run")
    assert len(trial.turns) == 5 and len(fake.received) == 5
    assert trial.settings == TrialSettings(max_turns=5, retry_on_parse_error=False)
    assert trial.scores is not None and trial.scores.get("final_answer_ok") is True


def test_capped_conversation_is_turns_exhausted(
    fake: FakeOpenAI, tmp_path: Path, scen: Path
) -> None:
    fake.enqueue(CALL, CALL, CALL)
    assert _run(fake, tmp_path, scen, "--max-turns", "2") == 0
    (trial,) = load_results(tmp_path / "run")
    assert len(trial.turns) == 2 and trial.settings is not None
    assert trial.settings.max_turns == 2
    assert trial.scores is not None
    assert codes.TURNS_EXHAUSTED in trial.scores.errors
    assert codes.ANSWER_MISSING not in trial.scores.errors


def test_run_json_records_the_marker_set(fake: FakeOpenAI, tmp_path: Path, scen: Path) -> None:
    fake.enqueue("It is 23 degrees.")
    assert _run(fake, tmp_path, scen) == 0
    info = RunInfo.model_validate_json((tmp_path / "run" / "run.json").read_bytes())
    assert info.markers == marker_texts(installed_markers())


def _capped_run(fake: FakeOpenAI, tmp_path: Path, scen: Path) -> Path:
    fake.enqueue(CALL, CALL, CALL)
    assert _run(fake, tmp_path, scen, "--max-turns", "2") == 0
    return tmp_path / "run"


def test_rescore_uses_the_stored_limit(fake: FakeOpenAI, tmp_path: Path, scen: Path) -> None:
    run = _capped_run(fake, tmp_path, scen)
    rescore_run(run, tmp_path / "new", load_scenarios([scen]))
    (trial,) = load_results(tmp_path / "new")
    assert trial.scores is not None and codes.TURNS_EXHAUSTED in trial.scores.errors
    assert codes.ANSWER_MISSING not in trial.scores.errors


def test_rescore_of_a_line_without_settings_takes_run_json_limit(
    fake: FakeOpenAI, tmp_path: Path, scen: Path
) -> None:
    run = _capped_run(fake, tmp_path, scen)
    # As written before settings were stored: drop the field from the line.
    lines = (run / "results.jsonl").read_text(encoding="utf-8").splitlines()
    old = [json.loads(line) for line in lines]
    for row in old:
        del row["settings"]
    (run / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in old))
    assert json.loads((run / "run.json").read_text())["max_turns"] == 2
    rescore_run(run, tmp_path / "new", load_scenarios([scen]))
    (trial,) = load_results(tmp_path / "new")
    assert trial.scores is not None and codes.TURNS_EXHAUSTED in trial.scores.errors


def test_a_resumed_run_keeps_the_marker_set_it_recorded(tmp_path: Path) -> None:
    from toolbench.runner.plan import planned_markers
    from toolbench.scoring.leakage import builtin_markers

    info = RunInfo(
        run_id="r", toolbench_version="0", created_at="", models=[], formats=[], scenarios=[],
        markers=["<<X>>", "(?m)^Y:"],
    )  # fmt: skip
    (tmp_path / "run.json").write_text(info.model_dump_json(), encoding="utf-8")
    assert marker_texts(planned_markers(tmp_path, resume=True)) == ["<<X>>", "(?m)^Y:"]
    # A new run takes what is installed; a resumed run from before markers were
    # recorded takes the built-in formats' set.
    assert planned_markers(tmp_path, resume=False) == installed_markers()
    (tmp_path / "run.json").write_text(
        info.model_copy(update={"markers": None}).model_dump_json(), encoding="utf-8"
    )
    assert planned_markers(tmp_path, resume=True) == builtin_markers()
