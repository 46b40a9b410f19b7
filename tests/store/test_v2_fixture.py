"""A schema-2 ``run.json`` (``tests/data/runs/v2``, before run records were complete) reads
as schema 3 with every new field "not recorded", and is written back at schema 3."""

from __future__ import annotations

import json
from pathlib import Path

from toolbench.results import RESULTS_SCHEMA_VERSION
from toolbench.store import read_info, write_info

V2 = Path(__file__).resolve().parents[1] / "data" / "runs" / "v2"


def test_the_fixture_is_schema_2() -> None:
    assert json.loads((V2 / "run.json").read_text())["schema_version"] == 2


def test_run_json_2_migrates_with_nothing_recorded(tmp_path: Path) -> None:
    info = read_info(V2)
    assert info is not None and info.schema_version == RESULTS_SCHEMA_VERSION >= 3
    assert (info.cells, info.format_options, info.scenario_files, info.model_params) == (
        {}, {}, [], {},
    )  # fmt: skip
    assert (info.api_base, info.cassette_api_base, info.cassette_dir) == (None, None, None)
    assert info.auto_formats == {"local/smollm2-135m": "react"}
    assert info.formats == ["react", "native"] and info.record == "none"
    write_info(tmp_path, info)
    again = json.loads((tmp_path / "run.json").read_text())
    assert again["schema_version"] == RESULTS_SCHEMA_VERSION
    assert again["auto_formats"] == {"local/smollm2-135m": "react"}
