"""Which tool-call dialect a model speaks, from its name (and its chat template if known).

Hand-rolled agents keep a ``GetFormatterForModel(name)`` function or a ``tool_format`` key
per model; this is that table, in one place, with the reason for every answer. It is a
pure function of the name and the registered formats: no network. Each format declares
its own name patterns and chat-template tokens (``Format.name_patterns``,
``template_tokens``), so a plugin dialect is detected like a built-in one. The chat
template, when a server reports it, is the stronger evidence (a fine-tune keeps its base
family's template but not its name), so its signature tokens are checked first.

The name is matched on its tokens, not on substrings (``llama`` is not inside
``ollama``): the provider prefix (everything up to the last ``/``) and a tag after ``:``
(``:30b``, ``:latest``, Bedrock's ``:0``) are removed, then the rest is lowercased and
split into words and version numbers (``Qwen3.5-4B`` -> ``qwen 3.5 4 b``, ``qwen-3-coder``
and ``qwen3-coder`` -> ``qwen 3 coder``). The patterns (:func:`name_patterns`) match whole
tokens; the lowest rank that matches wins, and fine-tunes' own markers come before
their base families (``Hermes-3-Llama-3.1``, ``DeepSeek-R1-Distill-Qwen``, ``Llama-xLAM``):

* ``gpt oss`` -> ``harmony`` (gpt-oss speaks harmony channels);
* ``xlam`` -> ``prompt-json`` (xLAM writes bare JSON call lists); ``toolace`` -> ``pythonic``;
* ``hermes`` -> ``xml``; ``deepseek`` and ``cogito`` -> ``deepseek`` (R1 distills and Deep
  Cogito keep DeepSeek's tokens);
* ``qwen 3 coder``, ``qwen 3.5``, ``qwen 3 next``, ``nemotron 3``, ``step 3.5`` ->
  ``qwen3-coder`` (Qwen3-Coder's ``<function=...>`` XML, reused by those templates);
* ``qwen``, ``qwq``, ``granite 4``, ``smollm`` -> ``xml`` (Hermes ``<tool_call>``);
* ``kimi``, ``moonshot`` -> ``kimi-k2``;
* ``llama 4``, ``llama 3.2``, ``olmo 3`` -> ``pythonic``; ``llama 3.1``, ``llama 3.3`` and an
  unversioned ``llama`` -> ``llama3-json``; Llama 1, 2 and 3.0 (``Meta-Llama-3-8B``,
  ``ollama/llama3``) have no tool-call format: ``prompt-json``, saying so
  (:data:`NO_TOOL_FORMAT`);
* ``mistral``, ``mixtral``, ``ministral``, ``magistral``, ``devstral``, ``codestral``,
  ``pixtral``, ``nemo`` -> ``mistral`` (``nemotron`` is not ``nemo``);
* ``claude`` -> ``claude-xml``.

Anything else gets :data:`DEFAULT_FORMAT`, with a reason that says so.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from toolbench.formats.format_registry import format_class, format_names

DEFAULT_FORMAT = "prompt-json"
"""The fallback: plain JSON in the prompt needs no model-specific syntax."""

NO_TOOL_FORMAT: tuple[tuple[int, str, str], ...] = (
    (
        105,  # after Llama 3.2 / 4 (pythonic, 100), before any other llama (llama3-json, 110)
        "llama (?:[0-2]|3(?! [13](?![^ ])))(?![^ ])",  # Bedrock's llama3-1 is 3.1, not 3.0
        "Llama 3.0 and earlier have no tool-call format in their chat template",
    ),
)
"""(rank, pattern, why) for families whose chat template has no tool-call syntax: a name
of theirs gets :data:`DEFAULT_FORMAT` with the reason (a known family, not an unknown
model), not a dialect their template never taught them. Ranked among the formats' own
patterns."""


def name_patterns() -> tuple[tuple[str, str, str], ...]:
    """(pattern over the name's tokens, format, why), first match wins, from every
    registered format's ``name_patterns`` in rank order. A pattern matches whole tokens:
    ``llama`` matches ``llama 3.1`` but not ``ollama``."""
    return tuple((p, f, why) for _, p, f, why in _declared()[0])


def template_signatures() -> tuple[tuple[tuple[str, ...], str], ...]:
    """Token sets a chat template uses to render tool calls, checked in order (all of one
    set must occur), from every registered format's ``template_tokens``."""
    return tuple((tokens, f) for _, tokens, f in _declared()[1])


def _declared() -> tuple[list[tuple[int, str, str, str]], list[tuple[int, tuple[str, ...], str]]]:
    names: list[tuple[int, str, str, str]] = []
    templates: list[tuple[int, tuple[str, ...], str]] = []
    for fmt in format_names():
        cls = format_class(fmt)
        names += [(p.rank, p.pattern, fmt, p.why) for p in cls.name_patterns]
        templates += [(cls.template_rank, tuple(t), fmt) for t in cls.template_tokens]
    names += [(rank, p, DEFAULT_FORMAT, why) for rank, p, why in NO_TOOL_FORMAT]
    names.sort(key=lambda n: (n[0], n[2]))
    templates.sort(key=lambda t: (t[0], t[2]))
    return names, templates


@lru_cache(maxsize=64)
def _compiled(pattern: str) -> re.Pattern[str]:
    return re.compile(rf"(?<![^ ])(?:{pattern})(?![^ ])")


_TOKEN = re.compile(r"[a-z]+|[0-9]+(?:\.[0-9]+)*")


def _tokenize(model: str) -> tuple[str, str, list[tuple[int, int]]]:
    """``(name, tokens joined by spaces, each token's span in name)``."""
    name = model.rsplit("/", 1)[-1]
    name = name.split(":", 1)[0] or name
    found = list(_TOKEN.finditer(name.lower()))
    return name, " ".join(m.group() for m in found), [m.span() for m in found]


def _matched_text(name: str, words: str, spans: list[tuple[int, int]], m: re.Match[str]) -> str:
    """The part of the name (as written) whose tokens the pattern matched."""
    first = words.count(" ", 0, m.start())
    last = words.count(" ", 0, m.end() - 1)
    return name[spans[first][0] : spans[last][1]]


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
        for tokens, fmt in template_signatures():
            if all(tok in chat_template for tok in tokens):
                shown = " and ".join(tokens)
                return Detection(model, fmt, f"its chat template renders tool calls with {shown}")
    name, words, spans = _tokenize(model)
    for pattern, fmt, why in name_patterns():
        m = _compiled(pattern).search(words)
        if m:
            shown = _matched_text(name, words, spans, m)
            return Detection(model, fmt, f"name matches '{shown}': {why}")
    return Detection(
        model,
        DEFAULT_FORMAT,
        f"no known model family in the name; using the default {DEFAULT_FORMAT}",
        default=True,
    )
