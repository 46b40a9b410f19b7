"""Toolbench's verdict on one reply's calls, as a trial would judge them.

Used to measure agreement with BFCL's own ``ast_checker`` (tests/data/bfcl/): a reply
passes when its calls match the expected round, which is what a trial's
``call_accuracy`` (or ``no_call_correct``) says, by the same definitions. Schema validity
is a separate metric (``args_schema_valid``) that BFCL has no counterpart for: it never
checks ``enum``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from toolbench.formats.base import ParseResult, ToolCall
from toolbench.scenarios.model import Scenario
from toolbench.scoring.call_match import match_round
from toolbench.scoring.core import abstained


def verdict(
    scenario: Scenario, calls: Sequence[dict[str, Any]], *, attempted: bool = False
) -> bool:
    """Whether ``calls`` (``[{name: args}]``, BFCL's shape) pass ``scenario``.

    ``attempted``: the reply tried to call and what it wrote did not decode. A no-call
    (irrelevance) scenario is judged by :func:`~toolbench.scoring.core.abstained`, the
    definition a trial's ``no_call_correct`` uses: such a failed attempt fails it.
    """
    made = [ToolCall(name=name, arguments=args) for c in calls for name, args in c.items()]
    if scenario.expect.no_call:
        return abstained(ParseResult(calls=made, attempted=attempted or bool(made)))
    rounds = scenario.expect.expected_rounds()
    if len(rounds) != 1:
        return False
    return not match_round(rounds[0], made)
