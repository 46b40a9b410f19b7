"""The ``calls`` scorer: did the model make the calls the scenario expects (or abstain
when it expects none), and, in a conversation, give an acceptable final answer?

A ``calls`` scenario compares the first effective turn with the expected calls
(:mod:`.calls`); a multi-turn one compares effective turn *i* with round *i*, flags calls
in turns past the last round (``call.extra``) and needs the final answer (:mod:`.answer`):
its ``call_accuracy`` is every round matched and the answer ok (``final_answer_ok``). A
conversation still calling at the turn limit it ran with (``settings.max_turns``: the
``--max-turns`` flag, else the scenario's) is ``turns.exhausted``. No-call scenarios have
``call_accuracy`` None and ``no_call_correct``: true when no turn attempted a call
(``call.unexpected`` for a parsed call, ``nocall.decode_failure`` for an attempt that did
not parse, which is not an abstention).
"""

from __future__ import annotations

from collections.abc import Sequence

from toolbench import codes
from toolbench.results import TurnRecord
from toolbench.scenarios.model import Scenario
from toolbench.scoring import loop
from toolbench.scoring.answer import final_answer
from toolbench.scoring.call_match import match_round
from toolbench.scoring.core import abstained, label
from toolbench.scoring.matchers import Problem
from toolbench.scoring.scorer import Scored, Scorer, TrialInput, named


def call_problems(sc: Scenario, turns: Sequence[TurnRecord]) -> list[Problem]:
    """Round-by-round call matching for ``calls`` and multi-turn scenarios."""
    rounds = sc.expect.expected_rounds()
    multi = sc.expect.kind == "multi_turn"
    out: list[Problem] = []
    for i, rnd in enumerate(rounds):
        if i >= len(turns):
            names = ", ".join(c.name for c in rnd.calls)
            out.append(
                (codes.CALL_MISSING, f"round {i + 1}: the conversation ended before {names}")
            )
            continue
        turn = turns[i]
        prefix = f"round {i + 1}: " if multi else ""
        if not turn.parsed.calls and turn.parsed.status == "failed":
            prefix += "the reply did not parse; "
        out.extend((code, prefix + why) for code, why in match_round(rnd, turn.parsed.calls))
    if multi:
        # Calls in turns past the last round (the very last turn is the answer's business).
        for n in range(len(rounds), len(turns) - 1):
            for call in turns[n].parsed.calls:
                out.append(
                    (codes.CALL_EXTRA, f"turn {n + 1}: call to {call.name} after the last round")
                )
    return out


def no_call_problems(turns: Sequence[TurnRecord]) -> list[Problem]:
    """What makes a reply to a no-call scenario not an abstention, turn by turn."""
    out: list[Problem] = []
    for n, turn in enumerate(turns, 1):
        prefix = label(n, len(turns))
        if turn.parsed.calls:
            names = ", ".join(c.name for c in turn.parsed.calls)
            out.append((codes.CALL_UNEXPECTED, f"{prefix}called {names} instead of answering"))
        elif not abstained(turn.parsed):
            out.append(
                (codes.NO_CALL_DECODE_FAILURE, f"{prefix}tried to call a tool and did not parse")
            )
    return out


def _score(inp: TrialInput) -> Scored:
    sc, eff = inp.scenario, inp.effective
    kind = sc.expect.kind
    if kind == "loop":  # judged by the state each user turn leaves (scoring/loop.py)
        values = named(call_accuracy=loop.judged(inp).success, no_call_correct=None,
                       final_answer_ok=None)  # fmt: skip
        return Scored(values)
    if kind == "no_call":
        found = no_call_problems(eff)
        values = named(call_accuracy=None, no_call_correct=not found, final_answer_ok=None)
        return Scored(values, found)
    found = call_problems(sc, eff)
    answer_ok: bool | None = None
    if kind == "multi_turn":
        max_turns = inp.settings.max_turns if inp.settings is not None else sc.expect.max_turns
        answer_ok, answer_found = final_answer(sc.expect.final_answer, eff, max_turns)
        found.extend(answer_found)
    values = named(call_accuracy=not found, no_call_correct=None, final_answer_ok=answer_ok)
    return Scored(values, found)


SCORER = Scorer(
    "calls",
    {"call_accuracy": "boolean", "no_call_correct": "boolean", "final_answer_ok": "boolean"},
    _score,
    "whether the expected calls were made with matching arguments (or none, when none "
    "were expected), and the conversation's final answer",
)
