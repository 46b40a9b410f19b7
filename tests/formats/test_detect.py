"""detect_format: model name (and chat template) to dialect, with a reason."""

from __future__ import annotations

import pytest
from templates import TEMPLATES

from toolbench.formats.detect import DEFAULT_FORMAT, detect_format, name_patterns
from toolbench.formats.format_registry import format_names


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


# vLLM's documented --tool-call-parser per model (docs/features/tool_calling.md,
# vllm-project/vllm at commit 0064cc9cb1ae57b1308015d48a57462fa27a68f2, Apache-2.0), and
# the toolbench format that reads that parser's syntax (None: no dialect here, so the
# default prompt-json is the honest answer). docs/dialects.md reports this table.
VLLM_PARSERS: list[tuple[str, str, str | None]] = [
    ("NousResearch/Hermes-2-Pro-Llama-3-8B", "hermes", "xml"),
    ("NousResearch/Hermes-2-Theta-Llama-3-8B", "hermes", "xml"),
    ("NousResearch/Hermes-3-Llama-3.1-8B", "hermes", "xml"),
    ("mistralai/Mistral-7B-Instruct-v0.3", "mistral", "mistral"),
    ("meta-llama/Llama-3.1-8B-Instruct", "llama3_json", "llama3-json"),
    ("meta-llama/Llama-4-Scout-17B-16E-Instruct", "llama4_pythonic", "pythonic"),
    ("meta-llama/Llama-3.2-3B-Instruct", "pythonic", "pythonic"),
    ("Team-ACE/ToolACE-8B", "pythonic", "pythonic"),
    ("fixie-ai/ultravox-v0_4-ToolACE-8B", "pythonic", "pythonic"),
    ("ibm-granite/granite-4.0-h-small", "granite4", "xml"),
    ("ibm-granite/granite-3.1-8b-instruct", "granite", None),
    ("ibm-granite/granite-20b-functioncalling", "granite-20b-fc", None),
    ("internlm/internlm2_5-7b-chat", "internlm", None),
    ("ai21labs/AI21-Jamba-1.5-Mini", "jamba", None),
    ("Salesforce/Llama-xLAM-2-8B-fc-r", "xlam", None),
    ("Salesforce/Qwen-xLAM-32B-fc-r", "xlam", None),
    ("Qwen/Qwen2.5-7B-Instruct", "hermes", "xml"),
    ("Qwen/QwQ-32B", "hermes", "xml"),
    ("deepseek-ai/DeepSeek-V3-0324", "deepseek_v3", "deepseek"),
    ("deepseek-ai/DeepSeek-R1-0528", "deepseek_v3", "deepseek"),
    ("deepseek-ai/DeepSeek-V3.1", "deepseek_v31", "deepseek"),
    ("openai/gpt-oss-20b", "openai", "harmony"),
    ("openai/gpt-oss-120b", "openai", "harmony"),
    ("moonshotai/Kimi-K2-Instruct", "kimi_k2", "kimi-k2"),
    ("tencent/Hunyuan-A13B-Instruct", "hunyuan_a13b", None),
    ("CohereLabs/command-a-reasoning-08-2025", "cohere_command3", None),
    ("meituan-longcat/LongCat-Flash-Chat", "longcat", None),
    ("zai-org/GLM-4.5", "glm45", None),
    ("zai-org/GLM-4.7-Flash", "glm47", None),
    ("google/functiongemma-270m-it", "functiongemma", None),
    ("Qwen/Qwen3-Coder-480B-A35B-Instruct", "qwen3_xml", "qwen3-coder"),
    ("Qwen/Qwen3-Coder-30B-A3B-Instruct", "qwen3_xml", "qwen3-coder"),
    ("allenai/Olmo-3-7B-Instruct", "olmo3", "pythonic"),
    ("allenai/Olmo-3-32B-Think", "olmo3", "pythonic"),
    ("ai-sage/GigaChat3-10B-A1.8B", "gigachat3", None),
    ("swiss-ai/Apertus-8B-Instruct-2509", "apertus", None),
    ("upstage/Solar-Open2-250B", "solar_open2", None),
]


@pytest.mark.parametrize(("model", "parser", "expected"), VLLM_PARSERS)
def test_names_agree_with_the_parser_vllm_documents(
    model: str, parser: str, expected: str | None
) -> None:
    got = detect_format(model)
    assert got.format == (expected or DEFAULT_FORMAT), parser


@pytest.mark.parametrize(
    ("model", "expected"),
    [
        # issue 20: a provider prefix or tag is not part of the name ("llama" is not in "ollama")
        ("ollama/mistral-small3.2", "mistral"),
        ("ollama_chat/devstral:24b", "mistral"),
        ("ollama/magistral", "mistral"),
        ("ollama/gemma3:12b", DEFAULT_FORMAT),
        ("ollama/phi4", DEFAULT_FORMAT),
        ("ollama_chat/granite3.3:8b", DEFAULT_FORMAT),
        ("ollama/llama3.1:8b", "llama3-json"),
        ("ollama/gpt-oss:20b", "harmony"),
        ("qwen-3-coder", "qwen3-coder"),
        ("Qwen/Qwen2.5-Coder-7B-Instruct", "xml"),
        ("deepseek-ai/DeepSeek-R1-Distill-Qwen-32B", "deepseek"),
        ("nvidia/NVIDIA-Nemotron-Nano-9B-v2", DEFAULT_FORMAT),
        ("nvidia/Llama-3.1-Nemotron-70B-Instruct", "llama3-json"),
        ("bedrock/us.meta.llama3-2-3b-instruct-v1:0", "pythonic"),
        ("hf.co/bartowski/Qwen2.5-7B-Instruct-GGUF:Q4_K_M", "xml"),
        # issue 34: Llama 3.0 (and 1, 2) has no tool-call format; Bedrock writes 3.1 as 3-1
        ("meta-llama/Meta-Llama-3-8B-Instruct", DEFAULT_FORMAT),
        ("openrouter/meta-llama/llama-3-70b-instruct", DEFAULT_FORMAT),
        ("ollama/llama3:70b", DEFAULT_FORMAT),
        ("bedrock/meta.llama3-8b-instruct-v1:0", DEFAULT_FORMAT),
        ("meta-llama/Llama-2-7b-chat-hf", DEFAULT_FORMAT),
        ("bedrock/meta.llama3-1-70b-instruct-v1:0", "llama3-json"),
        ("bedrock/us.meta.llama3-3-70b-instruct-v1:0", "llama3-json"),
        ("groq/llama-3.3-70b-versatile", "llama3-json"),
        # issue 34: Deep Cogito's templates write DeepSeek's tokens, whatever the base model
        ("deepcogito/cogito-v2.1-671B", "deepseek"),
        ("ollama/cogito:14b", "deepseek"),
        ("deepcogito/cogito-v1-preview-llama-8B", "deepseek"),
    ],
)
def test_names_are_matched_on_tokens_not_substrings(model: str, expected: str) -> None:
    assert detect_format(model).format == expected


@pytest.mark.parametrize("model", ["meta-llama/Meta-Llama-3-8B-Instruct", "ollama/llama3"])
def test_a_family_without_a_tool_format_is_named_not_defaulted(model: str) -> None:
    """Llama 3.0 is a known family: prompt-json because its template has no tool syntax,
    said in the reason, and not reported as an unknown model."""
    got = detect_format(model)
    assert (got.format, got.default) == (DEFAULT_FORMAT, False)
    assert "Llama 3.0 and earlier have no tool-call format" in got.reason


def test_unknown_model_falls_back_to_the_documented_default_and_says_so() -> None:
    got = detect_format("acme/frobnicator-7b")
    assert (got.format, got.default) == (DEFAULT_FORMAT, True)
    assert got.reason == "no known model family in the name; using the default prompt-json"


def test_every_answer_is_a_registered_format() -> None:
    names = set(format_names())
    assert DEFAULT_FORMAT in names
    assert {fmt for _, fmt, _ in name_patterns()} <= names


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
