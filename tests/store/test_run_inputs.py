"""Schema 7: ``run.json`` holds what the reports read of a run's inputs (the scenarios'
tags, the notes on its models), so no report reads scenario files or provider modules.
A schema-6 ``run.json`` reads with both empty ("not recorded"); empty ones stay out of
the file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from toolbench.cli.app import run_cli
from toolbench.report import render_report
from toolbench.results import RunInfo
from toolbench.store import SCHEMA_VERSION, read_info, write_info

V5 = Path(__file__).resolve().parents[1] / "data" / "runs" / "v5"


def _info(**fields: object) -> RunInfo:
    base = {"run_id": "r", "toolbench_version": "0", "created_at": "now", "models": ["m"],
            "formats": ["xml"], "scenarios": ["a", "b"]}  # fmt: skip
    return RunInfo.model_validate({**base, **fields})


def test_a_schema_6_run_json_reads_with_no_tags_and_no_notes(tmp_path: Path) -> None:
    assert SCHEMA_VERSION == 8
    old = json.loads((V5 / "run.json").read_text(encoding="utf-8"))
    (tmp_path / "run.json").write_text(json.dumps({**old, "schema_version": 6}))
    info = read_info(tmp_path)
    assert info is not None and info.schema_version == SCHEMA_VERSION
    assert (info.scenario_tags, info.model_notes) == ({}, [])


def test_tags_and_notes_round_trip_and_empty_ones_stay_out(tmp_path: Path) -> None:
    write_info(tmp_path, _info())
    written = json.loads((tmp_path / "run.json").read_text(encoding="utf-8"))
    assert "scenario_tags" not in written and "model_notes" not in written
    write_info(tmp_path, _info(scenario_tags={"a": ["weather", "simple"]}, model_notes=["tiny"]))
    info = read_info(tmp_path)
    assert info is not None
    assert (info.scenario_tags, info.model_notes) == ({"a": ["weather", "simple"]}, ["tiny"])


def test_a_replayed_run_records_what_its_reports_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A run writes its scenarios' tags and its embedded models' notes; the report's
    header and a workload selected by tag read them from there."""
    monkeypatch.chdir(Path(__file__).resolve().parents[2])  # the committed cassettes
    out = tmp_path / "run"
    argv = ["run", "--record", "none", "--quiet", "--no-report", "--out", str(out),
            "--models", "local/smollm2-135m", "--formats", "xml,react",
            "--scenarios", "weather-paris,calculate-product"]  # fmt: skip
    assert run_cli(argv) in (0, 3)
    info = read_info(out)
    assert info is not None and set(info.scenario_tags) == {"weather-paris", "calculate-product"}
    assert "regex" in info.scenario_tags["weather-paris"] + info.scenario_tags["calculate-product"]
    assert info.model_notes and info.model_notes[0].startswith("local/smollm2-135m: ")
    assert info.model_notes[0] in render_report(out, "html").replace("&#39;", "'")
    capsys.readouterr()
    assert run_cli(["recommend", str(out), "--json", "--scenarios", "easy"]) == 0
    assert run_cli(["recommend", str(out), "--json", "--scenarios", "no-such-tag"]) == 2
    assert "unknown scenario or tag of run 'run'" in capsys.readouterr().err
