"""The redacting writer's fast paths give the same bytes as the full path: a record is
decoded for its error fields only when one holds text, and the environment's secrets are
recomputed only when the environment changed."""

from __future__ import annotations

import json

import pytest

from toolbench import redaction
from toolbench.redaction import (
    REDACTED,
    redact,
    redact_error_fields,
    redacted_json_line,
    secret_values,
)

SHAPED = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"  # a GitHub token's shape


def full_path(text: str) -> str:
    data = json.loads(text)
    scrubbed = redact_error_fields(data)
    if scrubbed != data:
        text = json.dumps(scrubbed, ensure_ascii=False, separators=(",", ":"))
    return redact(text) + "\n"


@pytest.mark.parametrize(
    "record",
    [
        {"errors": [], "error_code": None, "text": f"said {SHAPED}"},
        {"errors": [f"bad {SHAPED}"]},
        {"infra_error": f"HTTP 401 for {SHAPED}"},
        {"turns": [{"parsed": {"errors": [{"code": "x", "message": f"near {SHAPED}"}]}}]},
        {"detail": {"why": f"{SHAPED}"}},
        {"error": None, "message": "", "detail": {}, "exception": [], "n": 3},
        {"reply": '{"error": "' + SHAPED + '"}'},  # a key inside a string: not a field
        {"error": True, "errors": 0},
        {"x\"message": SHAPED, "message ": SHAPED},  # a key that ends like one: not a field
        {"turns": [{"stream": {"deltas": [{"offset_ms": i, "text": f"d{i}"} for i in range(50)],
                               "issues": [{"code": "s", "message": f"at {SHAPED}"}]}}],
         "scores": {"errors": ["call.missing"], "reasons": [SHAPED]},
         "error": {"message": SHAPED, "detail": [SHAPED, {"errors": [SHAPED]}]}},
        {"errors": ["x"], "infra_error": "y", "message": {"a": [1, 2.5, None, "z"]}},
    ],
)
def test_the_shortcut_equals_the_full_path(record: dict[str, object]) -> None:
    text = json.dumps(record, ensure_ascii=False, separators=(",", ":"))
    assert redacted_json_line(text) == full_path(text)


def test_an_error_field_with_a_credential_shape_is_still_redacted() -> None:
    line = redacted_json_line(json.dumps({"infra_error": f"denied: {SHAPED}"}))
    assert SHAPED not in line and REDACTED in line


def test_environment_secrets_follow_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MY_SERVICE_API_KEY", "first-secret-value-0001")
    assert "first-secret-value-0001" in secret_values()
    cached = redaction._env_cache
    assert "first-secret-value-0001" in secret_values() and redaction._env_cache is cached
    monkeypatch.setenv("MY_SERVICE_API_KEY", "second-secret-value-0002")
    values = secret_values()
    assert "second-secret-value-0002" in values and "first-secret-value-0001" not in values
    monkeypatch.delenv("MY_SERVICE_API_KEY")
    assert "second-secret-value-0002" not in secret_values()
