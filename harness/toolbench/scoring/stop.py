"""How a reply ended: did the model stop where the format says to stop?

Each turn gets one class, checked in this order (the first that applies wins):

* ``length``: the provider cut the reply at the token limit (``finish_reason ==
  "length"``), code ``stop.length``;
* ``hallucinated_result``, ``multiple_actions``, ``text_after_call``: the parser saw
  that signal (``ParseResult.stop_signals`` holds the ``stop.*`` code);
* ``clean``: the reply made (or tried to make) calls and ended cleanly;
* ``no_call``: it made no call.

A trial's class is its worst turn's, in the order above (a ``clean`` turn outranks a
``no_call`` one, so a multi-turn trial that called and then answered is ``clean``).
``stop_compliant`` is true for ``clean`` and ``no_call``. The ``stop`` scorer gives a
trial both, over its effective turns.
"""

from __future__ import annotations

from collections.abc import Sequence

from toolbench import codes
from toolbench.results import StopClass, TurnRecord
from toolbench.scoring.matchers import Problem
from toolbench.scoring.scorer import Scored, Scorer, TrialInput, named

SEVERITY: tuple[StopClass, ...] = (
    "no_call",
    "clean",
    "text_after_call",
    "multiple_actions",
    "hallucinated_result",
    "length",
)
"""Stop classes from best to worst."""

_SIGNALS: tuple[tuple[str, StopClass, str], ...] = (
    (codes.STOP_HALLUCINATED_RESULT, "hallucinated_result", "invented a tool result"),
    (codes.STOP_MULTIPLE_ACTIONS, "multiple_actions", "wrote several actions"),
    (codes.STOP_TEXT_AFTER_CALL, "text_after_call", "went on writing after its call"),
)


def turn_stop(turn: TurnRecord) -> tuple[StopClass, Problem | None]:
    """One turn's stop class and, when it is not compliant, its code and reason."""
    if turn.reply.finish_reason == "length":
        return "length", (codes.STOP_LENGTH, "the reply hit the length limit")
    for code, cls, why in _SIGNALS:
        if code in turn.parsed.stop_signals:
            return cls, (code, f"the model {why}")
    if turn.parsed.calls or turn.parsed.attempted:
        return "clean", None
    return "no_call", None


def trial_stop(turns: Sequence[TurnRecord]) -> tuple[StopClass, list[Problem]]:
    """The worst turn's class, and a problem per non-compliant turn."""
    worst: StopClass = "no_call"
    problems: list[Problem] = []
    for n, turn in enumerate(turns, 1):
        cls, problem = turn_stop(turn)
        if SEVERITY.index(cls) > SEVERITY.index(worst):
            worst = cls
        if problem is not None:
            label = f"turn {n}: " if len(turns) > 1 else ""
            problems.append((problem[0], label + problem[1]))
    return worst, problems


def is_compliant(stop: StopClass) -> bool:
    return stop in ("clean", "no_call")


def _score(inp: TrialInput) -> Scored:
    stop, problems = trial_stop(inp.effective)
    return Scored(named(stop=stop, stop_compliant=is_compliant(stop)), problems)


SCORER = Scorer(
    "stop",
    {"stop": "label", "stop_compliant": "boolean"},
    _score,
    "how the replies ended: cleanly, or with text after the call, an invented result, "
    "several actions, or cut at the length limit",
)
