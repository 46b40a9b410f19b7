"""Regular-expression matching with a time bound.

Scenario authors write the patterns (argument matchers, answer checks, a tool schema's
``pattern``) and models write the text, so a catastrophic pattern such as ``(a|a)+$``
meets adversarial input: with ``re`` a 31-character argument held the event loop for a
minute. The ``regex`` package checks a deadline while it backtracks; past
:data:`REGEX_TIMEOUT_S` the match gives up with :class:`RegexTimeout`, which scorers turn
into a typed failure of that one check.

Patterns are validated with ``re.compile`` when a scenario loads; ``regex`` in its
default ``VERSION0`` mode reads them the same way.
"""

from __future__ import annotations

import re
from typing import Literal

import regex

REGEX_TIMEOUT_S = 0.25
"""Longest one match may run, in seconds."""


class RegexTimeout(Exception):
    """A match ran past :data:`REGEX_TIMEOUT_S`; the message names the pattern."""

    def __init__(self, pattern: str) -> None:
        shown = pattern if len(pattern) <= 60 else pattern[:57] + "..."
        super().__init__(f"regex /{shown}/ gave up after {REGEX_TIMEOUT_S} s")
        self.pattern = pattern


def matches(
    pattern: str,
    text: str,
    *,
    ignore_case: bool = False,
    how: Literal["fullmatch", "search"] = "fullmatch",
) -> bool:
    """Whether ``pattern`` matches ``text`` (whole, or anywhere); raises RegexTimeout."""
    flags = regex.IGNORECASE if ignore_case else 0
    fn = regex.fullmatch if how == "fullmatch" else regex.search
    try:
        # concurrent=True: the match releases the GIL, so scoring in a worker thread
        # (runner/drive.py) never holds up the event loop the other trials run on.
        found = fn(pattern, text, flags=flags, timeout=REGEX_TIMEOUT_S, concurrent=True)
        return found is not None
    except TimeoutError:
        raise RegexTimeout(pattern) from None
    except regex.error:
        # Scenario patterns are compiled with ``regex`` when they load (see
        # ``compile_problem``); only a schema ``pattern`` can get here: it matches nothing
        # rather than falling back to the unbounded ``re``.
        return False


def compile_problem(pattern: str) -> str | None:
    """Why ``pattern`` cannot be used (by ``re`` or by ``regex``), or ``None``."""
    for module in (re, regex):
        try:
            module.compile(pattern)
        except (re.error, regex.error) as exc:
            return f"invalid regex: {exc}"
    return None
