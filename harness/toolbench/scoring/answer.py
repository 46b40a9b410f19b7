"""The final answer of a multi-turn scenario.

After its tool rounds the conversation must end with a text answer: the last turn made
no call. Its text is ``parsed.final_answer`` when the format marks one (ReAct's
``Final Answer:``), else ``parsed.content``. The check passes when the text contains every
``contains`` substring and ``regex`` is found in it (a time-bounded search), both case-insensitive
unless ``ignore_case: false``. The facts to check should only be knowable from the
scripted tool results, so a model that ignores them fails.

Codes: ``turns.exhausted`` (the last turn still called and the conversation's effective
turn limit was reached: ``--max-turns`` when given, else the scenario's ``max_turns``),
``answer.missing`` (no text answer: it ended on a call, a failed parse or empty text),
``answer.mismatch`` (the text fails the check), ``answer.regex_timeout`` (the regex ran
out of time on this text: :mod:`toolbench.timedregex`).
"""

from __future__ import annotations

from collections.abc import Sequence

from toolbench import codes
from toolbench.results import TurnRecord
from toolbench.scenarios.model import AnswerCheck
from toolbench.scoring.matchers import Problem
from toolbench.timedregex import RegexTimeout, matches


def answer_text(turn: TurnRecord) -> str:
    parsed = turn.parsed
    return parsed.final_answer if parsed.final_answer is not None else parsed.content


def answer_problems(check: AnswerCheck | None, text: str) -> list[Problem]:
    """Why ``text`` fails ``check`` (empty: it passes)."""
    if not text.strip():
        return [(codes.ANSWER_MISSING, "the final answer is empty")]
    if check is None:
        return []
    out: list[Problem] = []
    hay = text.casefold() if check.ignore_case else text
    for needle in check.contains:
        if (needle.casefold() if check.ignore_case else needle) not in hay:
            out.append((codes.ANSWER_MISMATCH, f"the final answer does not contain {needle!r}"))
    if check.regex is not None:
        try:
            found = matches(check.regex, text, ignore_case=check.ignore_case, how="search")
        except RegexTimeout as exc:
            out.append((codes.ANSWER_REGEX_TIMEOUT, f"the final answer's check: {exc}"))
        else:
            if not found:
                why = f"the final answer does not match /{check.regex}/"
                out.append((codes.ANSWER_MISMATCH, why))
    return out


def final_answer(
    check: AnswerCheck | None, turns: Sequence[TurnRecord], max_turns: int
) -> tuple[bool, list[Problem]]:
    """Judge the last of the (effective) turns as the conversation's final answer."""
    if not turns:
        return False, [(codes.ANSWER_MISSING, "there was no reply")]
    last = turns[-1]
    if last.parsed.calls:
        if len(turns) >= max_turns:
            why = f"still calling tools after max_turns={max_turns} turns"
            return False, [(codes.TURNS_EXHAUSTED, why)]
        return False, [(codes.ANSWER_MISSING, "the conversation ended on a tool call")]
    if last.parsed.attempted or last.parsed.status == "failed":
        return False, [(codes.ANSWER_MISSING, "the last reply tried to call and did not parse")]
    problems = answer_problems(check, answer_text(last))
    return not problems, problems
