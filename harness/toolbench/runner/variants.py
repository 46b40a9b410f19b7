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
and ``-`` (it names a cassette directory as it is) and starts with a letter. How a name
splits is :mod:`toolbench.model_names` (the reports read names by the same rule).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from toolbench.errors import UserError
from toolbench.model_names import SEPARATOR, bare_model, split_variant, variant_of

__all__ = ["SEPARATOR", "bare_model", "check_models", "split_variant", "variant_of"]

_NAME = re.compile(r"[A-Za-z][A-Za-z0-9._-]{0,63}")


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
