"""detect_format: model name (and chat template) to dialect, with a reason."""

from __future__ import annotations

import pytest
from templates import TEMPLATES

from toolbench.formats.detect import DEFAULT_FORMAT, NAME_PATTERNS, detect_format
from toolbench.formats.registry import format_names


@pytest.mark.parametrize(
    ("model", "expected"),
    [
        ("openai/gpt-oss-120b", "harmony"),
        ("ollama/qwen3-coder:30b", "qwen3-coder"),
        ("Qwen/Qwen3.5-4B", "qwen3-coder"),
        ("nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B", "qwen3-coder"),
        ("stepfun-ai/Step-3.5-Flash", "qwen3-coder"),
        ("Qwen/Qwen2.5-7B-Instruct", "xml"),
        ("NousResearch/Hermes-3-Llama-3.1-8B", "xml"),
        ("local/smollm2-135m", "xml"),
        ("moonshotai/Kimi-K2-Instruct", "kimi-k2"),
        ("deepseek-ai/DeepSeek-V3.1", "deepseek"),
        ("deepseek-ai/DeepSeek-R1-Distill-Llama-8B", "deepseek"),
        ("meta-llama/Llama-4-Scout-17B-16E-Instruct", "pythonic"),
        ("meta-llama/Llama-3.2-3B-Instruct", "pythonic"),
        ("allenai/Olmo-3-7B-Instruct", "pythonic"),
        ("openrouter/meta-llama/llama-3.3-70b-instruct", "llama3-json"),
        ("meta-llama/Meta-Llama-3.1-8B-Instruct", "llama3-json"),
        ("mistralai/Mistral-Small-3.2-24B-Instruct-2506", "mistral"),
        ("mistralai/Devstral-Small-2507", "mistral"),
        ("mistralai/Mistral-Nemo-Instruct-2407", "mistral"),
        ("anthropic/claude-sonnet-4", "claude-xml"),
    ],
)
def test_name_table(model: str, expected: str) -> None:
    got = detect_format(model)
    assert (got.format, got.default) == (expected, False)
    assert got.reason.startswith("name matches '")


def test_unknown_model_falls_back_to_the_documented_default_and_says_so() -> None:
    got = detect_format("acme/frobnicator-7b")
    assert (got.format, got.default) == (DEFAULT_FORMAT, True)
    assert got.reason == "no known model family in the name; using the default prompt-json"


def test_every_answer_is_a_registered_format() -> None:
    names = set(format_names())
    assert DEFAULT_FORMAT in names
    assert {fmt for _, fmt, _ in NAME_PATTERNS} <= names


@pytest.mark.parametrize(
    ("template", "expected"),
    [
        ("openai-gpt-oss-120b.jinja", "harmony"),
        ("Qwen3-Coder.jinja", "qwen3-coder"),
        ("moonshotai-Kimi-K2.jinja", "kimi-k2"),
        ("deepseek-ai-DeepSeek-V3.1.jinja", "deepseek"),
        ("deepseek-ai-DeepSeek-V3.2.jinja", "deepseek"),
        ("Mistral-Small-3.2-24B-Instruct-2506.jinja", "mistral"),
        ("Qwen-Qwen2.5-7B-Instruct.jinja", "xml"),
        ("meta-llama-Llama-3.1-8B-Instruct.jinja", "llama3-json"),
    ],
)
def test_the_chat_template_decides_over_the_name(template: str, expected: str) -> None:
    """A fine-tune keeps its base family's template, not its name."""
    path = TEMPLATES / template
    if not path.is_file():
        pytest.skip(f"chat template not found: {path}")
    got = detect_format("my-finetune-v2", path.read_text(encoding="utf-8"))
    assert (got.format, got.default) == (expected, False)
    assert got.reason.startswith("its chat template renders tool calls with ")
