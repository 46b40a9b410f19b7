"""Schema 7: ``run.json`` holds what the reports read of a run's inputs (the scenarios'
tags, the notes on its models), so no report reads scenario files or provider modules.
A schema-6 ``run.json`` reads with both empty ("not recorded"); empty ones stay out of
the file."""

from __future__ import annotations

import json
from pathlib import Path

from toolbench.results import RunInfo
from toolbench.store import SCHEMA_VERSION, read_info, write_info

V5 = Path(__file__).resolve().parents[1] / "data" / "runs" / "v5"


def _info(**fields: object) -> RunInfo:
    base = {"run_id": "r", "toolbench_version": "0", "created_at": "now", "models": ["m"],
            "formats": ["xml"], "scenarios": ["a", "b"]}  # fmt: skip
    return RunInfo.model_validate({**base, **fields})


def test_a_schema_6_run_json_reads_with_no_tags_and_no_notes(tmp_path: Path) -> None:
    assert SCHEMA_VERSION == 7
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
