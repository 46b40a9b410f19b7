"""A trial's outcome: ``pass``, ``fail``, or its status when it never got an answer.

Defined once, in the ground layer, because the reports count passes
(:mod:`toolbench.report.metrics`) and ``rescore`` (runner layer) counts the trials whose
outcome a new parser or scorer changed; importing it costs nothing (no scorer imports).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

FAIL_FLAGS: tuple[str, ...] = ("call_accuracy", "no_call_correct", "final_answer_ok", "parse_ok")
"""A trial that reached the model passes when none of these named values is false
(whichever registered scorer gave them: a plugin that replaces the built-in ``calls``
scorer decides ``call_accuracy`` here too)."""


def trial_outcome(status: str, value: Callable[[str], Any]) -> str:
    """``pass``/``fail`` for an ``ok`` trial, by its named values (``value(name)``: the
    value called ``name``, None when absent); else its status."""
    if status != "ok":
        return status
    return "fail" if any(value(f) is False for f in FAIL_FLAGS) else "pass"
