"""Model variants: one model under several parameter sets in one run (``MODEL@NAME``).

``openai/gpt-5-mini@low`` and ``openai/gpt-5-mini@high`` are two rows of every table,
report, gate and export, each with its own parameters (``--model-param
'openai/gpt-5-mini@low:reasoning_effort=low'`` or ``[models."openai/gpt-5-mini@low"]``
in ``toolbench.toml``) and its own cassettes; the provider receives the bare model
name (``openai/gpt-5-mini``).

Vertex AI names hold an ``@`` of their own (``vertex_ai/claude-3-5-sonnet@20240620``,
``vertex_ai/gemini-1.5-pro@001``, ``vertex_ai/text-embedding@latest``). The rule,
which needs no network and no model list: the text after the LAST ``@`` is a variant
name only when it contains a letter and is not ``latest``; a suffix of digits (with
``-`` or ``.``: ``20240620``, ``001``, ``2024-06-20``) is a version and stays part of the
model. A variant of a versioned Vertex model is written with both:
``vertex_ai/gemini-1.5-pro@001@fast``. A variant name is letters, digits, ``.``, ``_``
and ``-`` (it names a cassette directory as it is) and starts with a letter.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from toolbench.errors import UserError

SEPARATOR = "@"
VERSION_WORDS = frozenset({"latest"})
"""Vertex AI version aliases that read like words: part of the model, not a variant."""
_NAME = re.compile(r"[A-Za-z][A-Za-z0-9._-]{0,63}")
_VERSION = re.compile(r"[0-9][0-9.-]*")


def split_variant(name: str) -> tuple[str, str | None]:
    """``(bare model, variant name)``; the variant is None for a plain (or versioned
    Vertex) model name. Never raises: a malformed suffix is left to :func:`check_models`."""
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


def check_models(given: Sequence[str], option: str = "--models") -> None:
    """Refuse, in one line, a variant whose name is not usable and two variants with the
    same name (the same ``MODEL@NAME`` twice, or names that differ only in case, which
    would share a cassette directory on a case-insensitive filesystem)."""
    seen: dict[str, str] = {}
    for raw in given:
        name = raw.strip()
        bare, at, suffix = name.rpartition(SEPARATOR)
        if at and not suffix:
            raise UserError(f"{option}: '{name}' has an '@' but no variant name (write MODEL@NAME)")
        variant = variant_of(name)
        if variant is None:
            continue
        if not _NAME.fullmatch(variant):
            raise UserError(
                f"{option}: '{name}': variant name '{variant}' must start with a letter and"
                " hold only letters, digits, '.', '_' and '-' (at most 64)"
            )
        key = f"{bare}{SEPARATOR}{variant}".casefold()
        if key in seen:
            first = seen[key]
            same = "twice" if first == name else f"twice ('{first}' and '{name}')"
            raise UserError(
                f"{option}: variant '{variant}' of {bare} is given {same}; give each variant"
                " its own name"
            )
        seen[key] = name
