"""How a run's model name splits into the model and its variant (``MODEL@NAME``).

``openai/gpt-5-mini@low`` is ``openai/gpt-5-mini`` under the parameter set ``low``: the
provider receives the bare name, and every table, report, gate and export keeps the
variant as a row of its own. A leaf, so that the runner (which sends the bare name) and
the reports (which pair the variants of one model) read names by one rule.

Vertex AI names hold an ``@`` of their own (``vertex_ai/claude-3-5-sonnet@20240620``,
``vertex_ai/gemini-1.5-pro@001``, ``vertex_ai/text-embedding@latest``). The rule,
which needs no network and no model list: the text after the LAST ``@`` is a variant
name only when it contains a letter and is not ``latest``; a suffix of digits (with
``-`` or ``.``: ``20240620``, ``001``, ``2024-06-20``) is a version and stays part of the
model. A variant of a versioned Vertex model is written with both:
``vertex_ai/gemini-1.5-pro@001@fast``.
"""

from __future__ import annotations

import re

SEPARATOR = "@"
VERSION_WORDS = frozenset({"latest"})
"""Vertex AI version aliases that read like words: part of the model, not a variant."""
_VERSION = re.compile(r"[0-9][0-9.-]*")


def split_variant(name: str) -> tuple[str, str | None]:
    """``(bare model, variant name)``; the variant is None for a plain (or versioned
    Vertex) model name. Never raises: a malformed suffix is left to the run's checks
    (:func:`toolbench.runner.variants.check_models`)."""
    bare, at, suffix = name.rpartition(SEPARATOR)
    if not at or not bare or not _is_variant_suffix(suffix):
        return name, None
    return bare, suffix


def _is_variant_suffix(suffix: str) -> bool:
    if suffix.lower() in VERSION_WORDS or _VERSION.fullmatch(suffix):
        return False
    return any(c.isalpha() for c in suffix)


def bare_model(name: str) -> str:
    """The model the provider is asked for (``openai/gpt-5-mini@low`` -> ``openai/gpt-5-mini``)."""
    return split_variant(name)[0]


def variant_of(name: str) -> str | None:
    """The variant name of a run model (None: the model under its own parameters)."""
    return split_variant(name)[1]
