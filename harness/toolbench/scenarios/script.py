"""Scripted tool results: what the runner feeds back after a turn's calls.

Each made call gets the ``result`` of an expected call with the same tool name: the first
not yet used in the current round, else the first such call in any round (a model may
legitimately call a little early or late). A tool that was not offered gets
``{"error": "unknown tool '<name>'"}`` and an offered tool no expected call scripts gets
``{"error": "no result scripted for '<name>'"}``, both as JSON text, so the model sees an
error it can react to rather than an invented fact. Deterministic: the same calls always
get the same results.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from toolbench.formats.base import ParseResult, ToolCall
from toolbench.scenarios.model import ExpectedCall, Scenario


def _error(message: str) -> str:
    return json.dumps({"error": message}, ensure_ascii=False)


def tool_results(
    scenario: Scenario, round_index: int, calls: Sequence[ToolCall]
) -> list[tuple[ToolCall, str]]:
    """The scripted result for each of ``calls``, made in round ``round_index`` (0-based)."""
    rounds = scenario.expect.expected_rounds()
    current: list[ExpectedCall] = (
        list(rounds[round_index].calls) if 0 <= round_index < len(rounds) else []
    )
    used: set[int] = set()
    out: list[tuple[ToolCall, str]] = []
    for call in calls:
        hit = next(
            (i for i, e in enumerate(current) if e.name == call.name and i not in used), None
        )
        if hit is not None:
            used.add(hit)
            out.append((call, current[hit].result_text()))
            continue
        anywhere = next((e for r in rounds for e in r.calls if e.name == call.name), None)
        if anywhere is not None:
            out.append((call, anywhere.result_text()))
        elif scenario.tool(call.name) is None:
            out.append((call, _error(f"unknown tool '{call.name}'")))
        else:
            out.append((call, _error(f"no result scripted for '{call.name}'")))
    return out


def should_continue(
    scenario: Scenario, turn_index: int, parsed: ParseResult, max_turns: int | None = None
) -> bool:
    """Whether the engine sends another turn after turn ``turn_index`` (0-based).

    Only multi-turn scenarios go on, and only while the last reply made calls and the
    next turn stays within the effective limit: ``max_turns`` (the trial's setting, e.g.
    ``--max-turns``, which may lower or raise the scenario's) else ``expect.max_turns``.
    """
    limit = max_turns if max_turns is not None else scenario.expect.max_turns
    return scenario.expect.kind == "multi_turn" and bool(parsed.calls) and turn_index + 1 < limit
