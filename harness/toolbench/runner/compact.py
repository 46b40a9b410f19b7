"""What of a trial is written to ``results.jsonl``: every reply once, copies capped.

A reply reaches a result line several times: as the reply text, inside the provider's raw
message, in the parsed content (twice), and again in every later turn's request (the
conversation so far). A 5 MB reply used to become a 21 MB line, 80 MB for a 3-turn trial.
Scoring runs on the full trial first; only what is written is capped:

* ``turns[*].reply.text`` (what ``rescore`` re-parses) is kept up to
  :data:`REPLY_TEXT_CAP` characters;
* every other string (request messages and tools, the raw message, parsed content,
  call arguments, native tool calls) up to :data:`COPY_CAP` characters.

A cut string keeps its head and ends with a marker that gives the full length; the full
bytes stay in the trial's cassette. ``rescore`` re-parses the stored reply text, so only a
reply over :data:`REPLY_TEXT_CAP` characters could rescore differently (replay it from
the cassette instead).
"""

from __future__ import annotations

import operator
from typing import Any, TypeVar

from pydantic import BaseModel

from toolbench.results import TimedText, TrialResult, TurnRecord

REPLY_TEXT_CAP = 1_000_000
"""Characters of a reply's text kept in the result (far above any sane model reply)."""
COPY_CAP = 32_768
"""Characters kept of any other string of a turn (copies of replies, long prompts)."""
ERROR_CAP = 2_000
"""Characters kept of a trial's error message."""


def cut(text: str, cap: int) -> str:
    """``text`` if short enough, else its head and a marker with the full length."""
    if len(text) <= cap:
        return text
    return (
        f"{text[:cap]}…[toolbench: cut {len(text) - cap} of {len(text)} characters; "
        "full text in the cassette]"
    )


def _over(value: Any, cap: int) -> bool:
    """Whether any string of a JSON-like tree is longer than ``cap`` (iterative)."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if len(item) > cap:
                return True
        elif isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list | tuple):
            stack.extend(item)
    return False


def cap_tree(value: Any, cap: int = COPY_CAP) -> Any:
    """``value`` itself when no string in it is longer than ``cap`` (the common case: a
    reading walk allocates nothing), else a copy with every string cut to ``cap``
    characters.

    Iterative, so a deeply nested tree (a hostile tool schema) cannot overflow the stack.
    """
    if not _over(value, cap):
        return value
    root: list[Any] = [value]
    stack: list[tuple[Any, Any]] = [(root, 0)]
    while stack:
        parent, key = stack.pop()
        item = parent[key]
        if isinstance(item, str):
            parent[key] = cut(item, cap)
        elif isinstance(item, dict):
            new_d = dict(item)
            parent[key] = new_d
            stack.extend((new_d, k) for k in new_d)
        elif isinstance(item, list | tuple):
            new_l = list(item)
            parent[key] = new_l
            stack.extend((new_l, i) for i in range(len(new_l)))
    return root[0]


M = TypeVar("M", bound=BaseModel)


def _updated(model: M, update: dict[str, Any]) -> M:
    """``model`` itself when every value of ``update`` is the one it holds already
    (:func:`cut` and :func:`cap_tree` give back what they did not cut), else a copy with
    them: a trial with nothing over its caps is written as it is, not copied (copying
    every turn of every trial was a noticeable share of a replayed plain trial's CPU)."""
    if all(value is getattr(model, name) for name, value in update.items()):
        return model
    return model.model_copy(update=update)


def _same(items: list[Any], old: list[Any]) -> list[Any]:
    """``old`` when ``items`` are its own objects (none of them cut), else ``items``."""
    return old if all(map(operator.is_, items, old)) else items


def _turn(turn: TurnRecord) -> TurnRecord:
    r, p = turn.reply, turn.parsed
    reply = _updated(r, {
        "text": cut(r.text, REPLY_TEXT_CAP),
        "tool_calls": cap_tree(r.tool_calls),
        "raw_message": cap_tree(r.raw_message),
    })  # fmt: skip
    errors = [_updated(e, {"message": cut(e.message, COPY_CAP)}) for e in p.errors]
    calls = [_updated(c, {"arguments": cap_tree(c.arguments)}) for c in p.calls]
    parsed = _updated(p, {
        "content": cut(p.content, COPY_CAP),
        "raw_content": cut(p.raw_content, COPY_CAP),
        "reasoning": None if p.reasoning is None else cut(p.reasoning, COPY_CAP),
        "final_answer": None if p.final_answer is None else cut(p.final_answer, COPY_CAP),
        "errors": _same(errors, p.errors),
        "calls": _same(calls, p.calls),
    })  # fmt: skip
    update: dict[str, Any] = {"request": cap_tree(turn.request), "reply": reply, "parsed": parsed}
    if turn.stream is not None and len(turn.stream.deltas) > DELTA_CAP:
        update["stream"] = turn.stream.model_copy(update={"deltas": _merged(turn.stream.deltas)})
    return _updated(turn, update)


DELTA_CAP = 10_000
"""Text deltas kept per streamed turn; later ones are joined into the last kept delta (at
the offset of the last one), so a reply streamed a character at a time stays one line of
reasonable size. The full chunk sequence stays in the SSE cassette."""


def _merged(deltas: list[TimedText]) -> list[TimedText]:
    head, tail = deltas[: DELTA_CAP - 1], deltas[DELTA_CAP - 1 :]
    text = cut("".join(d.text for d in tail), REPLY_TEXT_CAP)
    return [*head, TimedText(offset_ms=tail[-1].offset_ms, text=text)]


def compact(result: TrialResult) -> TrialResult:
    """The trial as written to ``results.jsonl`` (see the module docstring): the trial
    itself when nothing of it is over its cap."""
    update: dict[str, Any] = {"turns": _same([_turn(t) for t in result.turns], result.turns)}
    if result.infra_error is not None:
        update["infra_error"] = cut(result.infra_error, ERROR_CAP)
    return _updated(result, update)
