"""A streamed turn's deltas are named tuples in memory and the same JSON objects on disk
(``results.Deltas``): written byte for byte as the models wrote them, read back equal,
an unknown key or a missing one refused from JSON and from Python alike."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest
from pydantic import ValidationError

from toolbench.record_redaction import _ERROR_FIELD_TEXT, _error_fields
from toolbench.results import StreamTurn, TimedText


def test_deltas_written_as_objects_and_read_back_as_tuples() -> None:
    turn = StreamTurn(deltas=[TimedText(1.5, "a"), TimedText(2.0, '"b"')])
    text = turn.model_dump_json()
    assert text.startswith(
        '{"deltas":[{"offset_ms":1.5,"text":"a"},{"offset_ms":2.0,"text":"\\"b\\""}]'
    )
    back = StreamTurn.model_validate_json(text)
    assert back == turn and all(type(d) is TimedText for d in back.deltas)
    assert turn.model_dump()["deltas"] == [{"offset_ms": 1.5, "text": "a"},
                                           {"offset_ms": 2.0, "text": '"b"'}]  # fmt: skip


def test_deltas_from_python_objects_tuples_or_both() -> None:
    mixed = StreamTurn(deltas=[TimedText(1.0, "x"), {"offset_ms": 2, "text": "y"}])
    assert mixed.deltas == [TimedText(1.0, "x"), TimedText(2.0, "y")]
    assert type(mixed.deltas[1].offset_ms) is float


@pytest.mark.parametrize(
    "deltas",
    [[{"offset_ms": 1, "text": "a", "extra": 1}], [{"offset_ms": 1}], [[1, "a"]], ["a"]],
    ids=["unknown-key", "missing-text", "an-array", "a-string"],
)
def test_a_malformed_delta_is_refused(deltas: list[Any]) -> None:
    with pytest.raises(ValidationError):
        StreamTurn.model_validate({"deltas": deltas})
    with pytest.raises(ValidationError):
        StreamTurn.model_validate_json(json.dumps({"deltas": deltas}))


def test_the_error_field_scan_finds_what_the_pattern_finds() -> None:
    """The keys found by substring search, then matched where they stand, are the
    pattern's own matches, on random texts of keys, quotes, escapes and values."""
    pieces = ['"', "error", "errors", "message", "detail", ":", " ", '"x"', "[", "]", "null",
              "1", "\\", "{", "}", '""', "infra_error", "exception"]  # fmt: skip
    rnd = random.Random(21)
    for _ in range(3000):
        text = "".join(rnd.choice(pieces) for _ in range(rnd.randint(1, 24)))
        want = [m.span() for m in _ERROR_FIELD_TEXT.finditer(text)]
        assert [m.span() for m in _error_fields(text)] == want, text


def test_deltas_are_written_as_the_objects_they_always_were() -> None:
    turn = StreamTurn(deltas=[TimedText(1.0, "a"), TimedText(2.5, 'b"\n')])
    assert '"deltas":[{"offset_ms":1.0,"text":"a"},{"offset_ms":2.5,"text":"b\\"\\n"}]' in (
        turn.model_dump_json()
    )
    assert StreamTurn.model_validate_json(turn.model_dump_json()) == turn
