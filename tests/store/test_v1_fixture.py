"""A run written by schema-1 toolbench (``tests/data/runs/v1``, replayed from the committed
cassettes before schema 2) still reads, through every reader, the report and rescore.

``v1-cells.json`` holds every cell's metrics as schema-1 toolbench computed them from
that run; reading it today must give the same numbers.
"""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import pytest

from toolbench.cli.app import run_cli
from toolbench.report import render_report
from toolbench.report.metrics import aggregate, load_table
from toolbench.results import RESULTS_SCHEMA_VERSION, TrialResult
from toolbench.runner.rescore import rescore_run
from toolbench.store import iter_results, read_info, read_projected
from toolbench.store.merge import merge_runs

DATA = Path(__file__).resolve().parents[1] / "data" / "runs"
V1 = DATA / "v1"


def test_the_fixture_is_schema_1() -> None:
    lines = (V1 / "results.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(lines) == 12
    assert {json.loads(line)["schema_version"] for line in lines} == {1}
    assert json.loads((V1 / "run.json").read_text())["schema_version"] == 1
    assert RESULTS_SCHEMA_VERSION == 3


def test_validated_reader_migrates_every_line() -> None:
    trials = list(iter_results(V1))
    assert len(trials) == 12
    assert {t.schema_version for t in trials} == {RESULTS_SCHEMA_VERSION}
    assert [t.status for t in trials].count("cassette_missing") == 1
    assert trials[0].key == ("local/smollm2-135m", "react", "weather-paris", 0)
    assert all(t.scores is not None for t in trials if t.status == "ok")


def test_run_json_migrates() -> None:
    info = read_info(V1)
    assert info is not None
    assert (info.schema_version, info.merged_from, info.run_id) == (
        RESULTS_SCHEMA_VERSION,
        [],
        "v1",
    )
    assert info.formats == ["react", "native"]


def test_projected_reader_sees_the_migrated_dicts() -> None:
    read = read_projected(V1, lambda d: (d["schema_version"], d["scenario_id"]))
    assert len(read.rows) == 12 and read.duplicates == 0
    assert {v for v, _ in read.rows} == {RESULTS_SCHEMA_VERSION}
    assert read.offsets[0] == 0 and read.offsets == sorted(read.offsets)


def test_trial_table_and_metrics_equal_what_schema_1_computed() -> None:
    table = load_table(V1)
    assert len(table.df) == 12 and table.run_id == "v1"
    expected = json.loads((DATA / "v1-cells.json").read_text(encoding="utf-8"))
    got = {c.label: c.values for c in aggregate(table.df)}
    assert set(got) == set(expected)
    for label, values in expected.items():
        for metric, value in values.items():
            have = got[label][metric]
            if value is None:
                assert have is None, (label, metric)
            else:
                assert have is not None and math.isclose(have, value), (label, metric)
    # drill-down reads of full records at the table's offsets validate old lines too
    full = table.trials(table.df["_offset"].iloc[[0, 11]])
    assert all(isinstance(t, TrialResult) for t in full)
    assert full[1].status == "cassette_missing"


@pytest.mark.parametrize("fmt", ["html", "md", "junit"])
def test_every_report_renders(fmt: str) -> None:
    text = render_report(V1, fmt)
    assert "local/gemma3-270m" in text


def test_rescore_reproduces_the_stored_scores(tmp_path: Path) -> None:
    pytest.importorskip("toolbench.scoring")
    summary = rescore_run(V1, tmp_path / "rescored")
    assert (summary.total, summary.rescored, summary.copied) == (12, 11, 1)
    assert summary.scores_changed == 0
    old = {t.key: t for t in iter_results(V1)}
    new = list(iter_results(tmp_path / "rescored"))
    assert [t.scores for t in new] == [old[t.key].scores for t in new]
    lines = (tmp_path / "rescored" / "results.jsonl").read_text().splitlines()
    assert {json.loads(line)["schema_version"] for line in lines} == {RESULTS_SCHEMA_VERSION}


def test_merge_of_old_runs_writes_the_current_schema(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    shutil.copytree(V1, a)
    shutil.copytree(V1, b)
    summary = merge_runs([a, b], tmp_path / "m")
    assert (summary.trials, summary.duplicates) == (12, 12)
    info = json.loads((tmp_path / "m" / "run.json").read_text())
    assert (info["schema_version"], info["merged_from"]) == (RESULTS_SCHEMA_VERSION, ["v1", "v1"])


def test_cli_commands_read_the_old_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # away from the repository's toolbench.toml
    assert run_cli(["gate", str(V1), "--min", "no_call_accuracy=0.5"]) == 0
    assert run_cli(["export", str(V1), "--to", "csv", "-o", str(tmp_path / "t.csv")]) == 0
    assert len((tmp_path / "t.csv").read_text().splitlines()) == 13
    assert run_cli(["recommend", str(V1)]) == 0
    assert "error" not in capsys.readouterr().err
