"""Leakage: raw format markers or chat special tokens in the text a reply shows.

The patterns are the union of every format's ``markers`` and the generic chat special
tokens below, so a model that writes another format's syntax (or its own template's
tokens) into its prose is caught whatever format is under test. Which formats: those
installed when the run started, recorded in ``run.json`` (``RunInfo.markers``) and passed
to every scorer of that run, rescoring included, so the same replies score the same on
any machine and after any plugin is installed.

* ``leak_raw``: markup outside what the format under test allows in its visible text: a
  marker in any turn's ``raw_content`` (text outside the calls, before sanitizing) that
  the format's ``visible_markup`` does not cover, code ``leak.raw_markers``. ReAct
  declares its ``Thought:`` and ``Final Answer:`` labels there, so a compliant ReAct
  reply does not leak by definition; its ``Action:`` or ``Observation:`` outside the
  call, or another format's syntax, still does;
* ``leak_sanitized``: a marker in ``content``, what a user would actually see after the
  format's sanitizer ran, code ``leak.sanitized_markers``. No allowance applies: the
  sanitizer is there to remove markup, labels included.

The ``leakage`` scorer gives a trial both, over its effective turns.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from toolbench import codes
from toolbench.errors import UnknownNameError
from toolbench.formats.base import Format
from toolbench.formats.format_registry import builtin_format_names, format_class, format_names
from toolbench.results import TurnRecord
from toolbench.scoring.matchers import Problem
from toolbench.scoring.scorer import Scored, Scorer, TrialInput, named

CHAT_SPECIAL_TOKENS: tuple[str, ...] = (
    "<|im_start|>",
    "<|im_end|>",
    "<|eot_id|>",
    "<start_of_turn>",
    "<end_of_turn>",
    "[TOOL_CALLS]",
    "<|python_tag|>",
)


def installed_markers(names: Sequence[str] | None = None) -> tuple[re.Pattern[str], ...]:
    """The chat special tokens plus the markers of the given formats (default: every
    format installed now). A run fixes its set once (:func:`marker_texts`, recorded in
    ``run.json``) and scores every trial with it, so what is installed later does not
    change its scores."""
    patterns = [re.compile(re.escape(tok)) for tok in CHAT_SPECIAL_TOKENS]
    for name in format_names() if names is None else names:
        try:
            patterns.extend(format_class(name).markers)
        except UnknownNameError:
            continue
    return _dedupe(patterns)


def builtin_markers() -> tuple[re.Pattern[str], ...]:
    """The set of the formats toolbench ships: what a run recorded before ``run.json``
    held its marker set is rescored with (no plugin's markers)."""
    return installed_markers(builtin_format_names())


_INLINE_FLAGS = ((re.IGNORECASE, "i"), (re.MULTILINE, "m"), (re.DOTALL, "s"), (re.VERBOSE, "x"))


def marker_texts(patterns: Sequence[re.Pattern[str]]) -> list[str]:
    """Patterns as text for ``run.json``, flags written inline (``(?m)...``); a round trip
    through :func:`compile_markers` gives the same texts."""
    out: list[str] = []
    for p in patterns:
        own = re.compile(p.pattern).flags  # flags the text already sets inline
        flags = "".join(ch for flag, ch in _INLINE_FLAGS if p.flags & flag and not own & flag)
        out.append(f"(?{flags}){p.pattern}" if flags else p.pattern)
    return out


def compile_markers(texts: Sequence[str]) -> tuple[re.Pattern[str], ...]:
    """The patterns of a recorded marker set (see :func:`marker_texts`)."""
    return _dedupe([re.compile(t) for t in texts])


def _dedupe(patterns: Sequence[re.Pattern[str]]) -> tuple[re.Pattern[str], ...]:
    seen: dict[tuple[str, int], re.Pattern[str]] = {}
    for p in patterns:
        seen.setdefault((p.pattern, p.flags), p)
    return tuple(seen.values())


def markers_for(
    fmt: Format | None, base: Sequence[re.Pattern[str]] | None = None
) -> tuple[re.Pattern[str], ...]:
    """The marker set ``base`` (default: the installed formats'), plus ``fmt``'s own."""
    base = installed_markers() if base is None else tuple(base)
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
    turns: Sequence[TurnRecord],
    fmt: Format | None = None,
    markers: Sequence[re.Pattern[str]] | None = None,
) -> tuple[bool, bool, list[Problem]]:
    """``(leak_raw, leak_sanitized, problems)`` over the given turns, with the run's
    marker set ``markers`` (default: the formats installed now)."""
    patterns = markers_for(fmt, markers)
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


def _score(inp: TrialInput) -> Scored:
    raw, sanitized, problems = leakage(inp.effective, inp.fmt, inp.markers)
    return Scored(named(leak_raw=raw, leak_sanitized=sanitized), problems)


SCORER = Scorer(
    "leakage",
    {"leak_raw": "boolean", "leak_sanitized": "boolean"},
    _score,
    "whether format markers or chat special tokens show in the replies' text, before "
    "and after sanitizing",
)
