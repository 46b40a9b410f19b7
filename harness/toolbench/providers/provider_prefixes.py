"""LiteLLM's provider prefixes, as the pinned LiteLLM version lists them, checked in.

Telling whether ``anthropic/claude-...`` names a provider LiteLLM speaks is all a replay's
preflight asks of LiteLLM, and importing LiteLLM to ask costs more CPU than the
rest of a small replay. A model whose prefix is in this table is known without LiteLLM; any
other model string (no prefix, an unknown one, a bare model name only LiteLLM's tables can
resolve) is still resolved by LiteLLM, which gives the did-you-mean of an unknown prefix.
``tests/providers/test_provider_prefixes.py`` holds the table equal to the installed
LiteLLM's lists, so an upgrade that changes them fails until the table is written again:
``python -m toolbench.providers.provider_prefixes --write``.
"""

from __future__ import annotations

import sys
from pathlib import Path

from toolbench.providers.lazy_litellm import litellm

PROVIDER_LIST: tuple[str, ...] = (
    # generated: provider_list
    "a2a",
    "a2a_agent",
    "ai21",
    "ai21_chat",
    "aiml",
    "aiohttp_openai",
    "amazon_nova",
    "anthropic",
    "anthropic_text",
    "apertis",
    "assemblyai",
    "auto_router",
    "aws_polly",
    "aws_textract",
    "azure",
    "azure_ai",
    "azure_speech",
    "azure_text",
    "baseten",
    "bedrock",
    "bedrock_mantle",
    "black_forest_labs",
    "bytez",
    "cerebras",
    "charity_engine",
    "chatgpt",
    "chutes",
    "clarifai",
    "cloudflare",
    "codestral",
    "cognition",
    "cohere",
    "cohere_chat",
    "cometapi",
    "compactifai",
    "cortecs",
    "cursor",
    "custom",
    "custom_openai",
    "darkbloom",
    "dashscope",
    "databricks",
    "datarobot",
    "deepgram",
    "deepinfra",
    "deepseek",
    "docker_model_runner",
    "dotprompt",
    "edenai",
    "elevenlabs",
    "empower",
    "fal_ai",
    "featherless_ai",
    "fireworks_ai",
    "friendliai",
    "galadriel",
    "gdc",
    "gemini",
    "gigachat",
    "github",
    "github_copilot",
    "gradient_ai",
    "groq",
    "helicone",
    "heroku",
    "hosted_vllm",
    "huggingface",
    "humanloop",
    "hyperbolic",
    "inception",
    "infinity",
    "jina_ai",
    "lambda_ai",
    "langflow",
    "langfuse",
    "langgraph",
    "lemonade",
    "libertai",
    "litellm_agent",
    "litellm_proxy",
    "llamafile",
    "lm_studio",
    "manus",
    "maritalk",
    "meta",
    "meta_llama",
    "milvus",
    "minimax",
    "mistral",
    "modelscope",
    "mongodb",
    "moonshot",
    "morph",
    "nadir",
    "nano-gpt",
    "nebius",
    "neosantara",
    "nlp_cloud",
    "novita",
    "nscale",
    "nvidia_nim",
    "nvidia_riva",
    "oci",
    "ollama",
    "ollama_chat",
    "oobabooga",
    "openai",
    "openai_like",
    "openrouter",
    "ovhcloud",
    "parasail",
    "perplexity",
    "petals",
    "pg_vector",
    "pinstripes",
    "poe",
    "predibase",
    "prism",
    "publicai",
    "qwen_ai_platform",
    "qwencloud",
    "ragflow",
    "recraft",
    "reducto",
    "reka",
    "replicate",
    "runwayml",
    "s3_vectors",
    "sagemaker",
    "sagemaker_chat",
    "sagemaker_nova",
    "sail",
    "sambanova",
    "sap",
    "scaleway",
    "scx-ai",
    "snowflake",
    "soniox",
    "stability",
    "strands_decider",
    "synthetic",
    "tencent",
    "tensormesh",
    "text-completion-codestral",
    "text-completion-inception",
    "text-completion-openai",
    "together_ai",
    "topaz",
    "transcribe",
    "triton",
    "typesafe",
    "v0",
    "valkey",
    "vercel_ai_gateway",
    "vertex_ai",
    "vertex_ai_beta",
    "vllm",
    "volcengine",
    "voyage",
    "wandb",
    "watsonx",
    "watsonx_text",
    "xai",
    "xiaomi_mimo",
    "xinference",
    "zai",
)
"""``litellm.provider_list``: the prefixes LiteLLM resolves (and its did-you-mean reads)."""
JSON_PROVIDERS: tuple[str, ...] = (
    # generated: json_providers
    "abliteration",
    "aihubmix",
    "apertis",
    "assemblyai",
    "charity_engine",
    "chutes",
    "cognition",
    "cortecs",
    "crusoe",
    "darkbloom",
    "empiriolabs",
    "gmi",
    "helicone",
    "libertai",
    "llamagate",
    "meta",
    "nano-gpt",
    "neosantara",
    "parasail",
    "pinstripes",
    "poe",
    "prism",
    "publicai",
    "reka",
    "sail",
    "sarvam",
    "scaleway",
    "scx-ai",
    "synthetic",
    "tensormesh",
    "veniceai",
    "xiaomi_mimo",
)
"""The OpenAI-compatible providers LiteLLM configures from JSON (its
``JSONProviderRegistry``), which it resolves by prefix before ``provider_list``."""
PREFIXES = frozenset(PROVIDER_LIST) | frozenset(JSON_PROVIDERS)


def known_prefix(model: str) -> bool:
    """True when ``model`` is ``<prefix>/<name>`` with a prefix LiteLLM resolves itself."""
    prefix, sep, rest = model.partition("/")
    return bool(sep and rest) and prefix in PREFIXES


def installed() -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The installed LiteLLM's provider list and JSON-configured providers, sorted."""
    lm = litellm()  # first: it sets the switches LiteLLM's import reads
    from litellm.llms.openai_like.json_loader import JSONProviderRegistry  # deferred, as LiteLLM

    listed = tuple(sorted({getattr(p, "value", str(p)) for p in lm.provider_list}))
    return listed, tuple(sorted(JSONProviderRegistry.list_providers()))


def _block(names: tuple[str, ...]) -> str:
    return "".join(f'    "{n}",\n' for n in names)


def write(path: Path = Path(__file__)) -> None:
    """Write the installed LiteLLM's lists into this module's tables."""
    listed, json_providers = installed()
    text = path.read_text(encoding="utf-8")
    for tag, names in (("provider_list", listed), ("json_providers", json_providers)):
        marker = f"    # generated: {tag}\n"
        head, _, rest = text.partition(marker)
        _, _, tail = rest.partition(")\n")
        text = f"{head}{marker}{_block(names)}){chr(10)}{tail}"
    path.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    if sys.argv[1:] != ["--write"]:
        raise SystemExit("usage: python -m toolbench.providers.provider_prefixes --write")
    write()
