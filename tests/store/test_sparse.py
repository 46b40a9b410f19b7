"""Fields left out of stored records while empty: one rule (:mod:`toolbench.sparse`) for
every model that had its own serializer, so records that do not use a field stay
byte-identical to those written before the field existed."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel

from toolbench.formats.base import ModelReply, ParseResult, ToolCall
from toolbench.results import (
    RunInfo,
    ScoreValue,
    Shard,
    StreamTurn,
    TrialResult,
    TrialSettings,
    TurnRecord,
)
from toolbench.sparse import SparseModel, is_empty

_TURN: dict[str, Any] = dict(request={}, reply=ModelReply(), parsed=ParseResult())
_TRIAL: dict[str, Any] = dict(
    run_id="r", toolbench_version="0", model="m", format="xml", scenario_id="s"
)
_RUN: dict[str, Any] = dict(
    run_id="r", toolbench_version="0", created_at="t", models=[], formats=[], scenarios=[]
)

# (model, its fields, the field left out while empty, a value that is kept)
CASES: list[tuple[type[BaseModel], dict[str, Any], str, Any]] = [
    (ToolCall, {"name": "f"}, "notes", ["args.null"]),
    (ParseResult, {}, "via", "fallback"),
    (TurnRecord, _TURN, "stream", StreamTurn()),
    (TrialSettings, {"max_turns": 1}, "display", "naive"),
    (ScoreValue, {"value": True}, "reason", "why"),
    (RunInfo, _RUN, "auto_formats", {"m": "xml"}),
    (RunInfo, _RUN, "shard", Shard(index=1, count=2)),
]
IDS = [f"{model.__name__}.{name}" for model, _, name, _ in CASES]


@pytest.mark.parametrize(("model", "fields", "name", "kept"), CASES, ids=IDS)
def test_empty_field_left_out_of_every_dump(
    model: type[BaseModel], fields: dict[str, Any], name: str, kept: Any
) -> None:
    empty = model(**fields)
    assert name not in empty.model_dump()
    assert name not in empty.model_dump(mode="json")
    assert f'"{name}"' not in empty.model_dump_json()
    full = model(**fields, **{name: kept})
    assert name in full.model_dump()
    assert f'"{name}":' in full.model_dump_json()
    assert model.model_validate_json(full.model_dump_json()) == full


@pytest.mark.parametrize(("model", "fields", "name", "kept"), CASES, ids=IDS)
def test_models_name_the_field(
    model: type[BaseModel], fields: dict[str, Any], name: str, kept: Any
) -> None:
    if model in (ScoreValue, TurnRecord):
        # Many per trial, or holding a stream's deltas: pydantic's own exclude_if, which
        # does not turn the model into Python data before writing it.
        assert model.model_fields[name].exclude_if is not None
        return
    assert issubclass(model, SparseModel) and name in model.omit_when_empty


@pytest.mark.parametrize(
    ("value", "empty"),
    [(None, True), ([], True), ({}, True), (False, False), (0, False), ("", False), ([0], False)],
    ids=["none", "list", "dict", "false", "zero", "empty-text", "list-of-zero"],
)
def test_what_counts_as_empty(value: Any, empty: bool) -> None:
    assert is_empty(value) is empty


def test_nested_empty_fields_left_out_inside_a_trial() -> None:
    """A trial line holds parses and calls: the rule applies at every depth."""
    parsed = ParseResult(calls=[ToolCall(name="f")])
    trial = TrialResult(**_TRIAL, turns=[TurnRecord(**{**_TURN, "parsed": parsed})])
    text = trial.model_dump_json()
    assert text.count('"notes":') == 1  # the trial's own (always written), not the call's
    assert '"via"' not in text and '"stream"' not in text
