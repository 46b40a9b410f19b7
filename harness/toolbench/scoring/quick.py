"""Whether a trial's scoring is known to be quick: the runner may then score it on the
event loop rather than hand it to a worker thread.

The runner scores a trial in a worker thread while other trials may be waiting on a
server, so that a slow check cannot stall their I/O or skew a stream's arrival times.
Most trials' scoring is a parse and a few comparisons, and the handoff to the thread and
back cost a live trial a noticeable share of its CPU and several context switches
(``benchmarks/bench_live_cpu.py``, concurrency 16). What can take longer is
known, and any of it keeps the thread:

- a regular expression of the scenario's author (an argument matcher's ``regex``, the
  answer check's, a tool schema's ``pattern`` or ``patternProperties``): bounded by
  :mod:`toolbench.timedregex`, but at up to 0.25 s a match;
- a scorer that is not toolbench's own (a plugin's cost cannot be known);
- a long reply: parsing and the schema check grow with it (more than
  :data:`QUICK_REPLY_CHARS` characters of text and tool-call arguments in all turns).

A scenario that only looks like it has a pattern (a parameter named ``pattern``) is
scored in the thread, as every trial was before: a wrong "no" costs one handoff, a wrong
"yes" could stall every request in flight.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from toolbench.results import TurnRecord
from toolbench.scenarios.model import Scenario
from toolbench.scoring.scorer import all_scorers

QUICK_REPLY_CHARS = 16_000
"""The most characters of reply text and tool-call arguments, over a trial's turns, whose
scoring is taken as quick (a parse and a schema check of 16 KB: short beside a server's reply)."""

_PATTERN_KEYS = frozenset({"regex", "pattern", "patternProperties"})


def _has_pattern(data: Any) -> bool:
    """Whether ``data`` (a scenario as plain data) holds a key that names a pattern with
    a value set; every level is looked at, so a false alarm is possible, a miss is not."""
    stack = [data]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            for key, value in item.items():
                if key in _PATTERN_KEYS and value is not None:
                    return True
                stack.append(value)
        elif isinstance(item, list):
            stack.extend(item)
    return False


def scenario_scores_quickly(scenario: Scenario) -> bool:
    """Whether trials of ``scenario`` score quickly as far as the scenario and the
    registered scorers can tell (no pattern of its author's, toolbench's scorers only).
    Asked once per scenario of a run: it walks the whole scenario."""
    owners = (str(getattr(s.score, "__module__", "")) for s in all_scorers())
    if not all(owner.startswith("toolbench.") for owner in owners):
        return False
    try:
        data = scenario.model_dump(mode="json", exclude_none=True)
    except Exception:  # a scenario built in code with a value JSON cannot hold: the thread
        return False
    return not _has_pattern(data)


def replies_are_short(turns: Sequence[TurnRecord]) -> bool:
    """Whether the turns' reply text and tool-call arguments, together, are at most
    :data:`QUICK_REPLY_CHARS` characters."""
    left = QUICK_REPLY_CHARS
    for turn in turns:
        reply = turn.reply
        left -= len(reply.text)
        for call in reply.tool_calls:
            fn = call.get("function")
            args = fn.get("arguments") if isinstance(fn, dict) else None
            left -= len(args) if isinstance(args, str) else len(str(call))
        if left < 0:
            return False
    return True
