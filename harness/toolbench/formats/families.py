"""The model-family dialect formats: importing this module registers them all."""

from toolbench.formats import (  # noqa: F401
    claude_xml,
    deepseek,
    harmony,
    kimi_k2,
    llama3_json,
    mistral,
    pythonic,
    qwen3_coder,
)
