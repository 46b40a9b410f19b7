"""Leakage: raw format markers or chat special tokens in the text a reply shows.

The patterns are the union of every registered format's ``markers`` and the generic chat
special tokens below, so a model that writes another format's syntax (or its own
template's tokens) into its prose is caught whatever format is under test.

* ``leak_raw``: markup outside what the format under test allows in its visible text: a
  marker in any turn's ``raw_content`` (text outside the calls, before sanitizing) that
  the format's ``visible_markup`` does not cover, code ``leak.raw_markers``. ReAct
  declares its ``Thought:`` and ``Final Answer:`` labels there, so a compliant ReAct
  reply does not leak by definition; its ``Action:`` or ``Observation:`` outside the
  call, or another format's syntax, still does;
* ``leak_sanitized``: a marker in ``content``, what a user would actually see after the
  format's sanitizer ran, code ``leak.sanitized_markers``. No allowance applies: the
  sanitizer is there to remove markup, labels included.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache

from toolbench import codes
from toolbench.formats.base import Format
from toolbench.results import TurnRecord
from toolbench.scoring.matchers import Problem

CHAT_SPECIAL_TOKENS: tuple[str, ...] = (
    "<|im_start|>",
    "<|im_end|>",
    "<|eot_id|>",
    "<start_of_turn>",
    "<end_of_turn>",
    "[TOOL_CALLS]",
    "<|python_tag|>",
)


@lru_cache(maxsize=1)
def registered_markers() -> tuple[re.Pattern[str], ...]:
    """Every registered format's markers plus the chat special tokens (computed once)."""
    from toolbench.formats.registry import format_class, format_names

    patterns = [re.compile(re.escape(tok)) for tok in CHAT_SPECIAL_TOKENS]
    try:
        names = format_names()
    except ImportError:  # a built-in format missing from a partial install
        names = []
    for name in names:
        patterns.extend(format_class(name).markers)
    return _dedupe(patterns)


def _dedupe(patterns: Sequence[re.Pattern[str]]) -> tuple[re.Pattern[str], ...]:
    seen: dict[tuple[str, int], re.Pattern[str]] = {}
    for p in patterns:
        seen.setdefault((p.pattern, p.flags), p)
    return tuple(seen.values())


def markers_for(fmt: Format | None) -> tuple[re.Pattern[str], ...]:
    """The registered markers, plus those of ``fmt`` if it is not registered."""
    base = registered_markers()
    if fmt is None:
        return base
    return _dedupe([*base, *type(fmt).markers])


def find_marker(
    text: str,
    patterns: Sequence[re.Pattern[str]],
    allowed: Sequence[re.Pattern[str]] = (),
) -> str | None:
    """The first marker found in ``text`` (as it appears there) that no ``allowed``
    pattern covers (matches from the same position to at least the same end), or None.

    Linear: matches of one pattern do not overlap, and each is checked once against a
    few anchored patterns.
    """
    if not text:
        return None
    for p in patterns:
        if not allowed:
            m = p.search(text)
            if m:
                return m.group(0)
            continue
        for m in p.finditer(text):
            if not _covered(text, m, allowed):
                return m.group(0)
    return None


def _covered(text: str, m: re.Match[str], allowed: Sequence[re.Pattern[str]]) -> bool:
    for a in allowed:
        got = a.match(text, m.start())
        if got is not None and got.end() >= m.end():
            return True
    return False


def leakage(
    turns: Sequence[TurnRecord], fmt: Format | None = None
) -> tuple[bool, bool, list[Problem]]:
    """``(leak_raw, leak_sanitized, problems)`` over the given turns."""
    patterns = markers_for(fmt)
    allowed = tuple(type(fmt).visible_markup) if fmt is not None else ()
    raw = sanitized = False
    problems: list[Problem] = []
    for n, turn in enumerate(turns, 1):
        label = f"turn {n}: " if len(turns) > 1 else ""
        hit = find_marker(turn.parsed.raw_content, patterns, allowed) if not raw else None
        if hit is not None:
            raw = True
            problems.append((codes.LEAK_RAW, f"{label}marker {hit!r} in the reply's text"))
        hit = find_marker(turn.parsed.content, patterns) if not sanitized else None
        if hit is not None:
            sanitized = True
            problems.append((codes.LEAK_SANITIZED, f"{label}marker {hit!r} survives sanitizing"))
    return raw, sanitized, problems
