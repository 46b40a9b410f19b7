"""A schema-4 run (``tests/data/runs/v4``: streamed trials replayed from the committed
cassettes by toolbench at schema 4) reads as the current schema: each trial's ``stream``
record becomes the streaming scorer's named values, with the numbers it held (and, from
schema 6, its core checks the built-in scorers' named values), and rescoring the
migrated trials gives those values again."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from toolbench.cli.app import run_cli
from toolbench.results import RESULTS_SCHEMA_VERSION
from toolbench.store import iter_results, read_info
from toolbench.store.schema import upgrade

V4 = Path(__file__).resolve().parents[1] / "data" / "runs" / "v4"
STREAM_FIELDS = ("display", "ttft_ms", "first_call_byte_ms", "call_complete_ms",
                 "tokens_per_s", "stream_leak", "leaked_chars", "holdback_ms")  # fmt: skip


def _lines() -> list[dict[str, Any]]:
    text = (V4 / "results.jsonl").read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines()]


def test_the_fixture_is_schema_4_and_streamed() -> None:
    lines = _lines()
    assert {d["schema_version"] for d in lines} == {4}
    assert all(isinstance(d.get("stream"), dict) for d in lines)
    assert json.loads((V4 / "run.json").read_text())["schema_version"] == 4


def test_trials_4_migrate_their_stream_into_named_values() -> None:
    raw = {(d["format"], d["scenario_id"]): d for d in _lines()}
    trials = list(iter_results(V4))
    assert len(trials) == len(raw) == 4
    for t in trials:
        old = raw[(t.format, t.scenario_id)]
        assert t.schema_version == RESULTS_SCHEMA_VERSION and t.scores is not None
        assert "stream" not in t.model_dump()
        assert {k: t.scores.get(k) for k in STREAM_FIELDS} == {
            k: old["stream"][k] for k in STREAM_FIELDS
        }
        assert t.scores.get("stream_error") is False
        # everything else of the scores is as it was, by name
        checks = {k: v for k, v in old["scores"].items() if k not in ("errors", "reasons")}
        assert {k: t.scores.get(k) for k in checks} == checks and len(checks) >= 11
        assert (t.scores.errors, t.scores.reasons) == (
            old["scores"]["errors"],
            old["scores"]["reasons"],
        )
    info = read_info(V4)
    assert info is not None and info.schema_version == RESULTS_SCHEMA_VERSION


@pytest.mark.parametrize(
    ("stream", "scores", "values"),
    [
        (None, {"parse": "strict"}, {"parse": {"value": "strict"}}),
        ({"ttft_ms": 1.0}, None, None),
        (
            {"display": "naive", "ttft_ms": 5.5, "stream_leak": True, "leaked_chars": 3,
             "errors": ["stream.no_finish", "stream.bad_delta"]},
            {"parse": "strict"},
            {"parse": {"value": "strict"}, "display": {"value": "naive"}, "ttft_ms": {"value": 5.5},
             "first_call_byte_ms": {"value": None}, "call_complete_ms": {"value": None},
             "tokens_per_s": {"value": None}, "stream_leak": {"value": True},
             "leaked_chars": {"value": 3}, "holdback_ms": {"value": None},
             "stream_error": {"value": True, "reason": "stream.no_finish; stream.bad_delta"}},
        ),
    ],
    ids=["plain", "unscored", "streamed-with-errors"],
)  # fmt: skip
def test_the_trial_migration(
    stream: dict[str, Any] | None, scores: dict[str, Any] | None, values: dict[str, Any] | None
) -> None:
    record: dict[str, Any] = {"schema_version": 4, "scores": scores}
    if stream is not None:
        record["stream"] = stream
    out = upgrade("trial", record, "results.jsonl:1")
    assert "stream" not in out and out["schema_version"] == RESULTS_SCHEMA_VERSION
    got = (out["scores"] or {}).get("values")
    assert got == values


def test_rescoring_the_migrated_trials_gives_the_same_scores(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The streaming scorer, run again on the stored deltas, gives exactly the values the
    migration moved (and the core scores are unchanged)."""
    scenarios = V4.parents[3] / "scenarios"
    out = tmp_path / "re"
    assert run_cli(["rescore", str(V4), "-o", str(out), "--scenarios", str(scenarios)]) == 0
    assert "0 trial(s) changed scores" in capsys.readouterr().out
    before = {t.key: t.scores for t in iter_results(V4)}
    after = {t.key: t.scores for t in iter_results(out)}
    assert after == before and all(s is not None and s.values for s in after.values())
