"""A trial's outcome: ``pass``, ``fail``, or its status when it never got an answer.

Defined once, in the ground layer, because the reports count passes
(:mod:`toolbench.report.metrics`) and ``rescore`` (runner layer) counts the trials whose
outcome a new parser or scorer changed; importing it costs nothing (no scorer imports).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

FAIL_FLAGS: tuple[str, ...] = ("call_accuracy", "no_call_correct", "final_answer_ok", "parse_ok")
"""A trial that reached the model passes when none of these score flags is false."""


def trial_outcome(status: str, flags: Mapping[str, Any]) -> str:
    if status != "ok":
        return status
    return "fail" if any(flags.get(f) is False for f in FAIL_FLAGS) else "pass"
