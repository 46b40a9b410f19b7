"""Which tool-call dialect a model speaks, from its name (and its chat template if known).

Hand-rolled agents keep a ``GetFormatterForModel(name)`` function or a ``tool_format`` key
per model; this is that table, in one place, with the reason for every answer. It is a
pure function: no network, no registry look-up. The chat template, when a server reports
it, is the stronger evidence (a fine-tune keeps its base family's template but not its
name), so its signature tokens are checked first.

The name patterns (:data:`NAME_PATTERNS`), first match wins, matched case-insensitively
anywhere in the name, so ``openrouter/meta-llama/llama-3.3-70b-instruct`` and
``ollama/qwen3-coder:30b`` work:

* ``gpt-oss`` -> ``harmony`` (gpt-oss speaks harmony channels);
* ``qwen3-coder``, ``qwen3.5``, ``qwen3-next``, ``nemotron-3``, ``step-3.5`` ->
  ``qwen3-coder`` (Qwen3-Coder's ``<function=...>`` XML, reused by those templates);
* ``qwen``, ``qwq``, ``hermes``, ``granite-4``, ``smollm`` -> ``xml`` (Hermes ``<tool_call>``);
* ``kimi``, ``moonshot`` -> ``kimi-k2``; ``deepseek`` -> ``deepseek``;
* ``llama-4``, ``llama-3.2``, ``olmo-3`` -> ``pythonic``; any other ``llama`` -> ``llama3-json``;
* ``mistral``, ``mixtral``, ``ministral``, ``magistral``, ``devstral``, ``codestral``,
  ``pixtral``, ``nemo`` -> ``mistral``;
* ``claude`` -> ``claude-xml``.

Anything else gets :data:`DEFAULT_FORMAT`, with a reason that says so.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

DEFAULT_FORMAT = "prompt-json"
"""The fallback: plain JSON in the prompt needs no model-specific syntax."""

NAME_PATTERNS: tuple[tuple[str, str, str], ...] = (
    (r"gpt-oss", "harmony", "gpt-oss speaks the harmony channel format"),
    (r"qwen3-coder|qwen3\.5|qwen3-next", "qwen3-coder", "Qwen3-Coder/3.5 write XML calls"),
    (
        r"nemotron-(?:nano-)?3|step-?3\.5",
        "qwen3-coder",
        "its template reuses Qwen3-Coder's <function=...> XML calls",
    ),
    (r"qwen|qwq|hermes|granite-4|smollm", "xml", "Hermes/Qwen <tool_call> JSON family"),
    (r"kimi|moonshot", "kimi-k2", "Kimi writes <|tool_calls_section_begin|> sections"),
    (r"deepseek", "deepseek", "DeepSeek writes <｜tool▁calls▁begin｜> (or DSML) blocks"),
    (
        r"llama-?4|llama-?3\.2|olmo-?3",
        "pythonic",
        "Llama 3.2/4 and Olmo 3 were trained on pythonic call lists",
    ),
    (r"llama", "llama3-json", "Llama 3.x writes JSON calls and reads results as ipython"),
    (
        r"mistral|mixtral|ministral|magistral|devstral|codestral|pixtral|nemo",
        "mistral",
        "Mistral models write [TOOL_CALLS]",
    ),
    (r"claude", "claude-xml", "Claude was trained on <function_calls><invoke> prompts"),
)

TEMPLATE_SIGNATURES: tuple[tuple[tuple[str, ...], str], ...] = (
    (("<|channel|>", "<|message|>"), "harmony"),
    (("<function=", "<parameter="), "qwen3-coder"),
    (("tool_calls_section_begin",), "kimi-k2"),
    (("tool▁calls▁begin",), "deepseek"),
    (("｜DSML｜",), "deepseek"),
    (("[TOOL_CALLS]",), "mistral"),
    (("<function_calls>", "<invoke"), "claude-xml"),
    (("<tool_call>",), "xml"),
    (("<|python_start|>",), "pythonic"),
    (("<|python_tag|>",), "llama3-json"),
)
"""Tokens a chat template uses to render tool calls, checked in order (all must occur)."""

_COMPILED = tuple((re.compile(p, re.IGNORECASE), f, why) for p, f, why in NAME_PATTERNS)


@dataclass(frozen=True, slots=True)
class Detection:
    """The dialect chosen for a model and why."""

    model: str
    format: str
    reason: str
    default: bool = False
    """True when nothing matched and :data:`DEFAULT_FORMAT` was used."""


def detect_format(model: str, chat_template: str | None = None) -> Detection:
    """The tool-call format for ``model``: from its chat template if given, else its name."""
    if chat_template:
        for tokens, fmt in TEMPLATE_SIGNATURES:
            if all(tok in chat_template for tok in tokens):
                shown = " and ".join(tokens)
                return Detection(model, fmt, f"its chat template renders tool calls with {shown}")
    for pattern, fmt, why in _COMPILED:
        m = pattern.search(model)
        if m:
            return Detection(model, fmt, f"name matches '{m.group(0)}': {why}")
    return Detection(
        model,
        DEFAULT_FORMAT,
        f"no known model family in the name; using the default {DEFAULT_FORMAT}",
        default=True,
    )
