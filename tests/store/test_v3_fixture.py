"""A schema-3 ``run.json`` (``tests/data/runs/v3``: ``scenario_hashes`` beside
``scenario_files``) reads as schema 4: the repeated hashes are dropped, the files kept
(merge, resume and rescore read them), and it is written back without the hashes."""

from __future__ import annotations

import json
from pathlib import Path

from toolbench.results import RESULTS_SCHEMA_VERSION, RunInfo
from toolbench.store import read_info, write_info
from toolbench.store.merge import scenario_contents
from toolbench.store.schema import upgrade

V3 = Path(__file__).resolve().parents[1] / "data" / "runs" / "v3"


def _raw() -> dict[str, object]:
    data: dict[str, object] = json.loads((V3 / "run.json").read_text())
    return data


def test_the_fixture_is_schema_3_with_both_copies_of_the_hashes() -> None:
    raw = _raw()
    assert raw["schema_version"] == 3
    assert isinstance(raw["scenario_hashes"], dict) and isinstance(raw["scenario_files"], list)
    assert sorted(raw["scenario_hashes"].values()) == sorted(
        f["sha256"] for f in raw["scenario_files"]
    )


def test_run_json_3_migrates_without_scenario_hashes(tmp_path: Path) -> None:
    info = read_info(V3)
    assert info is not None and info.schema_version == RESULTS_SCHEMA_VERSION >= 4
    assert "scenario_hashes" not in RunInfo.model_fields
    assert [f.ids for f in info.scenario_files] == [
        ["weather-paris", "irrelevant-joke"], ["mt-price-in-euros"],
    ]  # fmt: skip
    assert scenario_contents(info) == {"single.yaml": "3f1c" + "0" * 60,
                                       "multi.yaml": "9ab2" + "0" * 60}  # fmt: skip
    write_info(tmp_path, info)
    again = json.loads((tmp_path / "run.json").read_text())
    assert again["schema_version"] == RESULTS_SCHEMA_VERSION and "scenario_hashes" not in again
    assert again["scenario_files"] == _raw()["scenario_files"]


def test_the_run_migration_drops_only_the_hashes() -> None:
    raw = _raw()
    migrated = upgrade("run", dict(raw), "run.json")
    assert set(raw) - set(migrated) == {"scenario_hashes"}
    assert {k: v for k, v in raw.items() if k not in ("scenario_hashes", "schema_version")} == {
        k: v for k, v in migrated.items() if k != "schema_version"
    }
