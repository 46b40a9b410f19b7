"""The redacting writer's fast paths give the same bytes as the full path: a record is
decoded for its error fields only when one holds text, and the environment's secrets are
recomputed only when the environment changed."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolbench import redaction
from toolbench.record_redaction import redact_error_fields, redacted_json_line
from toolbench.redaction import REDACTED, redact, secret_values

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
        {'x"message': SHAPED, "message ": SHAPED},  # a key that ends like one: not a field
        {
            "turns": [
                {
                    "stream": {
                        "deltas": [{"offset_ms": i, "text": f"d{i}"} for i in range(50)],
                        "issues": [{"code": "s", "message": f"at {SHAPED}"}],
                    }
                }
            ],
            "scores": {"errors": ["call.missing"], "reasons": [SHAPED]},
            "error": {"message": SHAPED, "detail": [SHAPED, {"errors": [SHAPED]}]},
        },
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


_CHARS = st.characters(codec="utf-8", exclude_categories=("Cs",))
_TEXT = st.text(_CHARS, max_size=40)
_SECRET = st.text(st.sampled_from('sk-Ab9"\\/\n\t\x01é€😀<&% +'), min_size=8, max_size=20)


@st.composite
def _planted(draw: st.DrawFn) -> tuple[object, list[str]]:
    """JSON-like data, some of whose keys and strings hold one of the secrets (in clear,
    between any characters: quotes, backslashes, control characters, emoji)."""
    secrets = draw(st.lists(_SECRET, min_size=1, max_size=2, unique=True))
    text = st.one_of(_TEXT, st.builds(lambda a, s, b: a + s + b, _TEXT,
                                      st.sampled_from(secrets), _TEXT))  # fmt: skip
    leaf = st.one_of(st.none(), st.booleans(), st.integers(), text)

    def nest(kids: st.SearchStrategy[object]) -> st.SearchStrategy[object]:
        return st.one_of(st.lists(kids, max_size=4), st.dictionaries(text, kids, max_size=4))

    data = draw(st.recursive(leaf, nest, max_leaves=12))
    return data, secrets


@settings(max_examples=400, deadline=None)
@given(_planted())
def test_redact_data_s_screen_misses_no_secret_the_walk_finds(
    planted: tuple[object, list[str]],
) -> None:
    data, secrets = planted
    values = sorted(secrets, key=len, reverse=True)
    assert redaction.redact_data(data, values) == redaction._redact_data(data, values)
    assert redaction.redact_data(data, []) is data
