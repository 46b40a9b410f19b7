"""``auto`` resolution and the formats file ``recommend --to yaml`` writes (library level)."""

from __future__ import annotations

from pathlib import Path

import pytest

from toolbench.errors import UserError
from toolbench.formats.auto import (
    FormatsFile,
    ModelChoice,
    choose_format,
    read_formats_file,
    resolve_formats,
)
from toolbench.formats.detect import DEFAULT_FORMAT

# (models, specs, per-model file, expected specs per model, models that defaulted)
CASES = [
    (["ollama/qwen3-coder:30b"], ["auto"], None, {"ollama/qwen3-coder:30b": ["qwen3-coder"]}, []),
    (["m-x"], ["auto", "native"], None, {"m-x": [DEFAULT_FORMAT, "native"]}, ["m-x"]),
    (["mistral-large"], ["auto", "mistral"], None, {"mistral-large": ["mistral"]}, []),
    (["gpt-oss-20b", "a"], ["xml"], {"a": "react"}, {"gpt-oss-20b": ["xml"], "a": ["react"]}, []),
    (["llama-3.2-1b"], ["native|xml", "auto"], None,
     {"llama-3.2-1b": ["native|xml", "pythonic"]}, []),
]  # fmt: skip


@pytest.mark.parametrize(("models", "specs", "file", "want", "defaulted"), CASES)
def test_resolve(
    models: list[str],
    specs: list[str],
    file: dict[str, str] | None,
    want: dict[str, list[str]],
    defaulted: list[str],
) -> None:
    got = resolve_formats(models, specs, file)
    assert got.specs == want
    assert got.defaulted == defaulted
    assert (got.warning() is None) == (not defaulted)


def test_one_warning_names_every_unknown_model() -> None:
    got = resolve_formats(["a", "qwen2.5", "b"], ["auto"])
    assert got.warning() == (
        "warning: --formats auto: no known model family for a, b; using the default prompt-json"
    )


def test_choose_format_gives_the_reason() -> None:
    d = choose_format("openrouter/meta-llama/llama-3.3-70b-instruct")
    assert (d.format, d.reason.startswith("name matches 'llama'"), d.default) == (
        "llama3-json", True, False,
    )  # fmt: skip
    t = choose_format("my-finetune", "{% if tools %}[TOOL_CALLS]{% endif %}")
    assert t.format == "mistral" and "chat template" in t.reason


def test_formats_file_round_trip(tmp_path: Path) -> None:
    f = FormatsFile(models={"m": ModelChoice(tool_format="native|xml")})
    path = tmp_path / "f.yaml"
    path.write_text(f.dump())
    assert read_formats_file(path).formats() == {"m": "native|xml"}


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("models: {m: {tool_format: xml}}\n", "version: None is not a formats-file version"),
        ("version: 2\nmodels: {m: {tool_format: xml}}\n", "version: 2 is not a formats-file"),
        ("version: 1\nmodels: {}\n", "models: Dictionary should have at least 1 item"),
        ("version: 1\nmodels: {m: {format: xml}}\n", "models.m.tool_format: Field required"),
        ("version: 1\nmodels: {m: {tool_format: xml}}\nextra: 1\n", "extra: Extra inputs"),
        ("- a\n- b\n", "expected a mapping with version and models"),
        ("version: [1\n", "not YAML (line 2)"),
    ],
)
def test_bad_formats_file_is_one_user_error(tmp_path: Path, text: str, error: str) -> None:
    path = tmp_path / "f.yaml"
    path.write_text(text)
    with pytest.raises(UserError) as got:
        read_formats_file(path)
    assert str(got.value).startswith(f"--formats-from: {path}: ")
    assert error in str(got.value)
